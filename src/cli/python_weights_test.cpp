// cli/python_weights_test.cpp — Python inside the weights (label weights): examples/python/hello.py
// and a one-liner print what they print on the golden emulator, with the same exit status. Each run
// is about 60,000 instructions and 190,000 passes that load the interpreter's image (docs/python.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli_testing.h"
#include "toolchain/source_tree.h"

namespace rvformer::cli {
namespace {

using toolchain::ProcessResult;

// The first use compiles the large machine and builds the interpreter into the build tree's cache.
ProcessResult rvformer(std::vector<std::string> arguments) { return run_rvformer(std::move(arguments), std::chrono::seconds(1500)); }

// Runs `arguments` (a script or -c CODE) on both machines; returns the output in the weights.
std::string same_on_both_machines(const std::vector<std::string>& arguments) {
  std::vector<std::string> golden_command = {"run", "--on", "emulator"};
  std::vector<std::string> weights_command = {"run", "--progress", "0"};
  golden_command.insert(golden_command.end(), arguments.begin(), arguments.end());
  weights_command.insert(weights_command.end(), arguments.begin(), arguments.end());
  ProcessResult golden = rvformer(golden_command);
  EXPECT_EQ(golden.exit_status, 0) << golden.standard_error;
  ProcessResult weights = rvformer(weights_command);
  EXPECT_EQ(weights.exit_status, 0) << weights.standard_error;
  EXPECT_EQ(weights.standard_output, golden.standard_output);
  return weights.standard_output;
}

TEST(PythonInTheWeights, HelloPrintsAsOnTheEmulator) {
  EXPECT_EQ(same_on_both_machines({(toolchain::examples_directory() / "python" / "hello.py").string()}), "hello\n");
}

TEST(PythonInTheWeights, BigIntegerOneLinerPrintsAsOnTheEmulator) {
  EXPECT_EQ(same_on_both_machines({"-c", "print(2**100)"}), "1267650600228229401496703205376\n");
}

}  // namespace
}  // namespace rvformer::cli
