// End-to-end tests of `rvformer merge`: a synthetic base (the 4B's per-layer widths, hidden 64) and a
// small machine compiled after its 64 dimensions merge into a checkpoint the model commands load;
// bad inputs end with one `rvformer: error:` line and status 2.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_testing.h"
#include "compiler/toy_machine_testing.h"
#include "driver/compiled_machine.h"
#include "engine/checkpoint.h"
#include "engine/synthetic_checkpoint.h"

namespace rvformer::cli {
namespace {

using namespace std::chrono_literals;

class MergeCommandTest : public CommandTest {
 protected:
  std::string base() {
    engine::write_synthetic_checkpoint(path("base"), engine::synthetic_preset("narrow"));
    return path("base");
  }
  std::string machine() {
    compiler::toy::ToyMachine toy;
    driver::compile_circuit(toy.c, path("machine"), [](const std::string&) {}, {.base_hidden = 64});
    return path("machine");
  }
};

TEST_F(MergeCommandTest, MergesIntoACheckpointTheModelCommandsLoad) {
  const auto result = run_rvformer({"merge", "--base", base(), "--machine", machine(), "-o", path("merged")}, 120s);
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_NE(result.standard_output.find("compiled layers + 4 base layers, hidden 64 + "), std::string::npos)
      << result.standard_output;
  EXPECT_NE(result.standard_error.find("100%"), std::string::npos) << "a progress bar";
  const engine::Checkpoint merged = engine::Checkpoint::open(path("merged"));
  EXPECT_GT(merged.config().hidden_size, 64u);
  const auto generate = run_rvformer({"model", "generate", path("merged"), "--tokens", "1,2,3", "--steps", "2"}, 120s);
  EXPECT_EQ(generate.exit_status, 0) << generate.standard_error;
}

TEST_F(MergeCommandTest, BadInputsEndWithOneErrorLine) {
  const std::string machine_dir = machine();
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"merge", "--base", path("nowhere"), "--machine", machine_dir, "-o", path("out")},
        std::vector<std::string>{"merge", "--base", base(), "--machine", path("base"), "-o", path("out")}}) {
    const auto result = run_rvformer(arguments, 120s);
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_TRUE(result.standard_error.starts_with("rvformer: error: ")) << result.standard_error;
    EXPECT_EQ(result.standard_error.find('\n'), result.standard_error.size() - 1) << result.standard_error;
    EXPECT_FALSE(std::filesystem::exists(path("out")));
  }
}

}  // namespace
}  // namespace rvformer::cli
