# Shared helpers for module CMakeLists.

# rvformer_test(NAME SOURCES... LIBS lib... [LABELS label...] [COST seconds]) adds a GoogleTest
# executable and registers its tests (label unit by default). Its main (support/test_main.cpp) gives
# each test process a scratch directory of its own.
function(rvformer_test name)
  cmake_parse_arguments(ARG "" "COST" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} rvformer_test_main GTest::gtest)
  set(labels ${ARG_LABELS})
  if(NOT labels)
    set(labels unit)
  endif()
  # COST: a rough run time, so that ctest -j starts the longest tests first.
  set(cost 0)
  if(ARG_COST)
    set(cost ${ARG_COST})
  endif()
  # Tests that need the compiled machine share one cache in the build tree.
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${labels}" COST ${cost}
                       ENVIRONMENT "RVFORMER_CACHE=${PROJECT_BINARY_DIR}/machine-cache")
endfunction()
