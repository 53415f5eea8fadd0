# hash_sources_test.cmake — hash_sources.cmake must give a different hash when any byte of a listed
# source changes or a source is added, and the same hash for the same sources in another checkout.
#   cmake -DWORK_DIR=DIR -P hash_sources_test.cmake
cmake_minimum_required(VERSION 3.25)
set(script ${CMAKE_CURRENT_LIST_DIR}/hash_sources.cmake)

function(hash_of root files result)
  set(list_file ${WORK_DIR}/sources.txt)
  list(TRANSFORM files PREPEND ${root}/)
  string(JOIN "\n" lines ${files})
  file(WRITE ${list_file} "${lines}\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_LIST=${list_file} -DROOT=${root} -DNAME=kHash
                          -DOUTPUT=${WORK_DIR}/hash.h -P ${script} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "hash_sources.cmake failed")
  endif()
  file(READ ${WORK_DIR}/hash.h header)
  string(REGEX MATCH "0x[0-9a-f]+ull" hash "${header}")
  set(${result} ${hash} PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
foreach(checkout a b)
  file(WRITE ${WORK_DIR}/${checkout}/compiler/placement.cpp "int rounds = 4;\n")
  file(WRITE ${WORK_DIR}/${checkout}/cpu/decode.cpp "int width = 32;\n")
endforeach()
set(sources compiler/placement.cpp cpu/decode.cpp)
hash_of(${WORK_DIR}/a "${sources}" original)
hash_of(${WORK_DIR}/b "${sources}" elsewhere)
file(WRITE ${WORK_DIR}/a/compiler/placement.cpp "int rounds = 5;\n")
hash_of(${WORK_DIR}/a "${sources}" edited)
file(WRITE ${WORK_DIR}/a/cpu/fetch.cpp "\n")
hash_of(${WORK_DIR}/a "${sources};cpu/fetch.cpp" added)

string(LENGTH "${original}" length)
if(NOT length EQUAL 21)  # 0x, 16 hex digits, ull
  message(FATAL_ERROR "no 64-bit hash in the header: '${original}'")
endif()
if(NOT original STREQUAL elsewhere)
  message(FATAL_ERROR "the same sources in another checkout hash differently (${original}, ${elsewhere})")
endif()
if(original STREQUAL edited OR edited STREQUAL added)
  message(FATAL_ERROR "a changed or added source left the hash unchanged (${original}, ${edited}, ${added})")
endif()
