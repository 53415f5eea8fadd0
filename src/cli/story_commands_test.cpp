// cli/story_commands_test.cpp — `rvformer story` end to end on the golden emulator (label
// toolchain): the host reference's story for 16 steps from the vector unit's build (the default) and
// from the plain build (--plain), the --stats line with its story token count and build, the prompt,
// the blob it writes, and --on weights refused with one line.
#include <gmock/gmock.h>
#include <algorithm>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_testing.h"
#include "story/quantiser.h"
#include "story/reference.h"
#include "support/file.h"

namespace rvformer::cli {
namespace {

using ::testing::HasSubstr;
using toolchain::ProcessResult;

ProcessResult story(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), "story");
  return run_rvformer(std::move(arguments), std::chrono::seconds(120));
}

const story::ReferenceStory& reference() {
  static const story::ReferenceStory model(
      story::quantise_story_files(story::stories260k_checkpoint(), story::stories260k_tokenizer()));
  return model;
}

TEST(StoryCommand, PrintsTheReferenceStoryAndItsStats) {
  ProcessResult result = story({"--steps", "16", "--stats"});
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_EQ(result.standard_output, reference().generate({1}, 16).text + "\n");
  nlohmann::json stats = nlohmann::json::parse(last_line(result.standard_error));
  EXPECT_EQ(stats["on"], "emulator");
  EXPECT_EQ(stats["build"], "vector");
  EXPECT_EQ(stats["story_tokens"], 16);
  EXPECT_GT(stats["instructions"].get<std::uint64_t>(), 0u);
  EXPECT_GT(stats["seconds"].get<double>(), 0.0);
  EXPECT_EQ(stats["exit_code"], 0);
}

// The plain RV32IM build tells the same story with more instructions (a million and more a token).
TEST(StoryCommand, ThePlainBuildTellsTheSameStory) {
  ProcessResult vector = story({"--steps", "16", "--stats"});
  ProcessResult plain = story({"--plain", "--steps", "16", "--stats"});
  ASSERT_EQ(plain.exit_status, 0) << plain.standard_error;
  EXPECT_EQ(plain.standard_output, vector.standard_output);
  nlohmann::json plain_stats = nlohmann::json::parse(last_line(plain.standard_error));
  nlohmann::json vector_stats = nlohmann::json::parse(last_line(vector.standard_error));
  EXPECT_EQ(plain_stats["build"], "plain");
  EXPECT_EQ(plain_stats["story_tokens"], 16);
  EXPECT_GT(plain_stats["instructions"].get<std::uint64_t>(), 16u * 1'000'000);
  EXPECT_LT(vector_stats["instructions"].get<std::uint64_t>(), plain_stats["instructions"].get<std::uint64_t>());
}

TEST(StoryCommand, StartsWithThePrompt) {
  ProcessResult result = story({"--steps", "12", "--prompt", "Lily saw a big"});
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  const std::vector<int> prompt = reference().encode("Lily saw a big");
  EXPECT_EQ(result.standard_output, reference().generate(prompt, 12).text + "\n");
  EXPECT_EQ(result.standard_output.rfind("Lily saw a big ", 0), 0u) << result.standard_output;
}

TEST(StoryCommand, WritesTheBlobItRuns) {
  toolchain::TemporaryDirectory directory;
  const std::string path = (directory.path() / "stories260K.stq").string();
  ProcessResult result = story({"--write-blob", path});
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_EQ(read_file_bytes(path), story::quantise_story_files(story::stories260k_checkpoint(),
                                                               story::stories260k_tokenizer()));
}

TEST(StoryCommand, InsideTheWeightsIsRefusedWithOneLine) {
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"--on", "weights"}, {"--on", "weights", "--plain"}}) {
    ProcessResult result = story(arguments);
    EXPECT_NE(result.exit_status, 0);
    EXPECT_EQ(result.standard_output, "");
    EXPECT_THAT(result.standard_error, HasSubstr("needs the vector unit"));
    EXPECT_EQ(std::count(result.standard_error.begin(), result.standard_error.end(), '\n'), 1);
  }
}

}  // namespace
}  // namespace rvformer::cli
