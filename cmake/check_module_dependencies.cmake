# check_module_dependencies.cmake — fails when module MODULE depends on a module it must stay apart
# from: a source under SOURCE_DIR (tests, *_test.cpp, excepted: they may compare against anything)
# includes a header of a module in FORBIDDEN, or LINK_LIST (one library per line) names rvformer_<m>
# for a module m in FORBIDDEN.
#   cmake -DMODULE=driver -DSOURCE_DIR=src/driver -DFORBIDDEN=emulator -DLINK_LIST=FILE -P this file
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/forbidden_includes.cmake)
file(GLOB sources ${SOURCE_DIR}/*.h ${SOURCE_DIR}/*.cpp)
list(FILTER sources EXCLUDE REGEX "_test\\.cpp$")
forbidden_includes(violations SOURCES ${sources} MODULES ${FORBIDDEN})

file(STRINGS ${LINK_LIST} libraries)
foreach(module IN LISTS FORBIDDEN)
  if("rvformer_${module}" IN_LIST libraries)
    list(APPEND violations "rvformer_${MODULE} links rvformer_${module}")
  endif()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "${MODULE} must not depend on ${FORBIDDEN}:\n  ${text}")
endif()
