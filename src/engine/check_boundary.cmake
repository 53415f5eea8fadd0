# engine/check_boundary.cmake — the engine must stay a generic Qwen3.5 implementation (DESIGN.md §3.1).
# Fails when a source under ENGINE_DIR (testdata/ excepted unless ENGINE_DIR is inside it) includes a
# header of another rvformer module (any folder of MODULES_DIR except engine/ and support/), or when
# LINK_LIST (one library per line) names an rvformer library other than rvformer_support.
cmake_minimum_required(VERSION 3.25)
file(GLOB_RECURSE sources ${ENGINE_DIR}/*.h ${ENGINE_DIR}/*.cpp)
file(GLOB entries LIST_DIRECTORIES true RELATIVE ${MODULES_DIR} ${MODULES_DIR}/*)
set(forbidden_modules)
foreach(entry IN LISTS entries)
  if(IS_DIRECTORY ${MODULES_DIR}/${entry} AND NOT entry STREQUAL "engine" AND NOT entry STREQUAL "support")
    list(APPEND forbidden_modules ${entry})
  endif()
endforeach()

set(checked)
foreach(source IN LISTS sources)
  file(RELATIVE_PATH relative ${ENGINE_DIR} ${source})
  if(NOT relative MATCHES "^testdata/")
    list(APPEND checked ${source})
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/forbidden_includes.cmake)
forbidden_includes(violations SOURCES ${checked} MODULES ${forbidden_modules})

file(STRINGS ${LINK_LIST} libraries)
foreach(library IN LISTS libraries)
  if(library MATCHES "rvformer_" AND NOT library STREQUAL "rvformer_support")
    list(APPEND violations "rvformer_engine links ${library}")
  endif()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "The engine must not depend on CPU-specific modules (DESIGN.md §3.1):\n  ${text}")
endif()
