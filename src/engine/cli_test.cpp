// engine/cli_test.cpp — `rvformer model info`, `rvformer model generate` and `rvformer model synth`
// run as a user would, on a random tiny checkpoint: output format, agreement with the engine API,
// thread counts, state resume, a synthetic checkpoint that the other commands read, clear errors.
#include <bit>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model.h"
#include "engine/ops.h"
#include "engine/random_model.h"

namespace rvformer::engine {
namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int status = 0;
  std::string output;
};

CommandResult run_cli(const std::string& arguments) {
  const std::string command = std::string(RVFORMER_BINARY) + " " + arguments + " 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  char buffer[65536];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

class ModelCommands : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    directory_ = new fs::path(fs::path(::testing::TempDir()) / "cli_model");
    write_random_model(*directory_, tiny_test_config(), 5, DType::BF16);
  }
  static void TearDownTestSuite() { delete directory_; }
  static fs::path* directory_;
};

fs::path* ModelCommands::directory_ = nullptr;

TEST_F(ModelCommands, InfoPrintsShapeLayersAndCounts) {
  const auto result = run_cli("model info " + directory_->string());
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("hidden 64, intermediate 96, vocab 101, 4 layers"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("linear_attention ×3, full_attention ×1 (LLLF)"), std::string::npos);
  EXPECT_NE(result.output.find("parameters      155944 in 56 tensors"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("exact zeros"), std::string::npos);
  EXPECT_NE(result.output.find("BF16 ×56"), std::string::npos);
}

TEST_F(ModelCommands, GenerateTeacherForcesThenFeedsBackTheGreedyToken) {
  const auto result = run_cli("model generate " + directory_->string() + " --tokens 5,17,3 --steps 4 --logits");
  ASSERT_EQ(result.status, 0) << result.output;
  const auto lines = lines_of(result.output);
  ASSERT_EQ(lines.size(), 7u);

  const Model model = Model::load(*directory_);
  State state = model.new_state();
  std::vector<TokenId> fed{5, 17, 3};
  for (std::size_t position = 0; position < lines.size(); ++position) {
    const auto logits = model.decode(state, fed[position]);
    std::istringstream fields(lines[position]);
    TokenId printed;
    fields >> printed;
    EXPECT_EQ(printed, argmax(logits));
    std::vector<float> values;
    for (std::string field; fields >> field;) values.push_back(std::stof(field));
    ASSERT_EQ(values.size(), logits.size());
    for (std::size_t i = 0; i < logits.size(); ++i) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(values[i]), std::bit_cast<std::uint32_t>(logits[i]));  // %.9g is exact
    }
    if (position + 1 >= fed.size()) fed.push_back(printed);
  }
}

TEST_F(ModelCommands, ThreadCountsPrintTheSameLogits) {
  const std::string command = "model generate " + directory_->string() + " --tokens 5,17,3 --steps 3 --logits";
  const auto one = run_cli(command + " --threads 1");
  const auto two = run_cli(command + " --threads 2");
  ASSERT_EQ(one.status, 0) << one.output;
  EXPECT_EQ(two.output, one.output);
}

TEST(SynthCommand, WritesAHuggingFaceCheckpointTheOtherCommandsRead) {
  const fs::path directory = fs::path(::testing::TempDir()) / "cli_synth";
  fs::remove_all(directory);
  auto result = run_cli("model synth --shape tiny --seed 4 --layers 5 --untied --shard-mb 2 -o " + directory.string());
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("100%"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("wrote " + directory.string() + ": qwen3_5_text hidden=32"), std::string::npos)
      << result.output;
  EXPECT_TRUE(fs::exists(directory / "model.safetensors.index.json"));
  // The embedding and the head (9.7 MB each) take shards of their own; the final norm sits between them.
  for (const char* shard : {"model-00001-of-00004.safetensors", "model-00004-of-00004.safetensors"}) {
    EXPECT_TRUE(fs::exists(directory / shard)) << shard;
  }
  result = run_cli("model info " + directory.string());
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("vocab 151936, 5 layers"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("linear_attention ×4, full_attention ×1 (LLLFL)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("untied (lm_head.weight)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("BF16 ×"), std::string::npos);
  EXPECT_NE(result.output.find("F32 ×4"), std::string::npos) << "one A_log per GDN layer";
  result = run_cli("model generate " + directory.string() + " --tokens 151644,872 --steps 2");
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_EQ(lines_of(result.output).size(), 4u);

  result = run_cli("model synth --shape tiny -o " + directory.string());
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.output.find("rvformer: error: " + directory.string() + " already exists"), std::string::npos)
      << result.output;
  result = run_cli("model synth --shape 7b -o " + (directory / "other").string());
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.output.find("rvformer: error: unknown model shape '7b'"), std::string::npos) << result.output;
}

TEST_F(ModelCommands, SavedStateResumesExactly) {
  const fs::path state = fs::path(::testing::TempDir()) / "cli.state";
  const auto whole = run_cli("model generate " + directory_->string() + " --tokens 5,17,3,9 --steps 3");
  const auto first = run_cli("model generate " + directory_->string() + " --tokens 5,17 --save-state " + state.string());
  const auto rest = run_cli("model generate " + directory_->string() + " --tokens 3,9 --steps 3 --load-state " +
                            state.string());
  ASSERT_EQ(first.status, 0) << first.output;
  ASSERT_EQ(rest.status, 0) << rest.output;
  EXPECT_EQ(first.output + rest.output, whole.output);
}

TEST_F(ModelCommands, BadInputGivesOneLineErrorsAndStatusTwo) {
  auto result = run_cli("model generate " + directory_->string() + " --tokens 5,101");
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.output.find("rvformer: error: token id 101 is out of range (vocab_size 101)"), std::string::npos)
      << result.output;
  for (const char* tokens : {"\"\"", "1,,2", "1,x", "-1", "1,"}) {
    result = run_cli("model generate " + directory_->string() + " --tokens " + tokens);
    EXPECT_EQ(result.status, 2) << tokens;
    EXPECT_NE(result.output.find("rvformer: error: --tokens: '"), std::string::npos) << result.output;
  }
  result = run_cli("model info " + (fs::path(::testing::TempDir()) / "no_such_model").string());
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.output.find("no_such_model: no such directory"), std::string::npos) << result.output;
  const fs::path garbage = fs::path(::testing::TempDir()) / "garbage.state";
  std::FILE* file = std::fopen(garbage.c_str(), "wb");
  std::fputs("not a state", file);
  std::fclose(file);
  result = run_cli("model generate " + directory_->string() + " --tokens 1 --load-state " + garbage.string());
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.output.find("truncated state file"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace rvformer::engine
