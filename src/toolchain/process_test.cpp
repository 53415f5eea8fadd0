// toolchain/process_test.cpp — running child processes: exit status, captured output, time limits.
#include "toolchain/process.h"

#include <gtest/gtest.h>

#include "support/error.h"

namespace rvformer::toolchain {
namespace {

TEST(Process, CapturesOutputAndExitStatus) {
  ProcessResult result = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"},
                                     {.capture_output = true, .timeout = std::nullopt});
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_EQ(result.standard_output, "out\n");
  EXPECT_EQ(result.standard_error, "err\n");
  EXPECT_FALSE(result.timed_out);
}

TEST(Process, CapturesLargeOutput) {
  ProcessResult result = run_process({"sh", "-c", "head -c 1000000 /dev/zero"},
                                     {.capture_output = true, .timeout = std::nullopt});
  EXPECT_EQ(result.standard_output.size(), 1000000u);
}

TEST(Process, KillsAChildThatRunsTooLong) {
  auto start = std::chrono::steady_clock::now();
  for (bool capture : {true, false}) {
    ProcessResult result = run_process(
        {"sleep", "10"}, {.capture_output = capture, .timeout = std::chrono::milliseconds(100)});
    EXPECT_TRUE(result.timed_out);
    EXPECT_EQ(result.exit_status, 128 + 9);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Process, StandardInputIsEmpty) {
  ProcessResult result =
      run_process({"cat"}, {.capture_output = true, .timeout = std::chrono::seconds(5)});
  EXPECT_EQ(result.standard_output, "");
  EXPECT_EQ(result.exit_status, 0);
}

TEST(Process, ReportsProgramsThatDoNotExist) {
  EXPECT_THROW(run_process({"rvformer-no-such-program"}), Error);
  EXPECT_FALSE(find_executable("rvformer-no-such-program"));
  EXPECT_TRUE(find_executable("sh"));
}

TEST(Process, TemporaryDirectoryIsRemoved) {
  std::filesystem::path path;
  {
    TemporaryDirectory directory;
    path = directory.path();
    std::filesystem::create_directories(path / "a" / "b");
    EXPECT_TRUE(std::filesystem::is_directory(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace rvformer::toolchain
