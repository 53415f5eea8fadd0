// cli/python_weights_test.cpp — Python inside the weights (label weights): examples/python/hello.py
// prints what it prints on the golden emulator, with the same exit status.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli_testing.h"
#include "toolchain/source_tree.h"

namespace rvformer::cli {
namespace {

using toolchain::ProcessResult;

// The first use compiles the large machine and builds the interpreter into the build tree's cache.
ProcessResult rvformer(std::vector<std::string> arguments) { return run_rvformer(std::move(arguments), std::chrono::seconds(1500)); }

TEST(PythonInTheWeights, HelloPrintsAsOnTheEmulator) {
  const std::string hello = (toolchain::examples_directory() / "python" / "hello.py").string();
  ProcessResult golden = rvformer({"run", "--on", "emulator", hello});
  ASSERT_EQ(golden.exit_status, 0) << golden.standard_error;
  ProcessResult weights = rvformer({"run", "--progress", "0", hello});
  EXPECT_EQ(weights.exit_status, 0) << weights.standard_error;
  EXPECT_EQ(weights.standard_output, "hello\n");
  EXPECT_EQ(weights.standard_output, golden.standard_output);
}

}  // namespace
}  // namespace rvformer::cli
