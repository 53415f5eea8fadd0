// support/test_main.cpp — the main of every test executable: GoogleTest's, with ::testing::TempDir()
// private to the process. ctest runs each test in a process of its own, several at once, and the
// tests of one suite name the same scratch files, so a shared /tmp lets one test delete what
// another is reading.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const fs::path scratch = fs::temp_directory_path() / ("rvformer-test-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  ::setenv("TEST_TMPDIR", scratch.c_str(), 1);
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  return status;
}
