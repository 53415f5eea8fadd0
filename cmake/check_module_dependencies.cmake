# check_module_dependencies.cmake — fails when module MODULE depends on a module it must stay apart
# from: a source under SOURCE_DIR (tests, *_test.cpp, excepted: they may compare against anything)
# includes a header of a module in FORBIDDEN, or LINK_LIST (one library per line) names rvformer_<m>
# for a module m in FORBIDDEN.
#   cmake -DMODULE=driver -DSOURCE_DIR=src/driver -DFORBIDDEN=emulator -DLINK_LIST=FILE -P this file
cmake_minimum_required(VERSION 3.25)
file(GLOB sources ${SOURCE_DIR}/*.h ${SOURCE_DIR}/*.cpp)
set(violations)
foreach(source IN LISTS sources)
  if(source MATCHES "_test\\.cpp$")
    continue()
  endif()
  file(STRINGS ${source} include_lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line IN LISTS include_lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*$" "\\1" header "${line}")
    if(header MATCHES "^([^/]+)/" AND CMAKE_MATCH_1 IN_LIST FORBIDDEN)
      list(APPEND violations "${source} includes ${header}")
    endif()
  endforeach()
endforeach()

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
