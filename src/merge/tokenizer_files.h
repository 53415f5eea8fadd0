// merge/tokenizer_files.h — the merged checkpoint's tokenizer: the base's tokenizer.json and
// tokenizer_config.json with the trace tokens added as special tokens. Hugging Face numbers added
// tokens on from the highest id it has (it ignores the ids the file lists), so every unassigned id
// below the base's vocabulary size first gets a filler token; trace token i then gets id
// base_vocab + i, the embedding row the merge gives it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

namespace rvformer::merge {

// True for the files write_tokenizer_files writes (the merge copies the others).
bool is_tokenizer_file(std::string_view name);

// Writes `output`/tokenizer.json and tokenizer_config.json from the base's (when it has them).
// Returns the first filler id (base_vocab when there are none, or no tokenizer). Throws
// rvformer::Error if the tokenizer's ids do not fit the base's vocabulary.
std::size_t write_tokenizer_files(const std::filesystem::path& base, const std::filesystem::path& output,
                                  std::size_t base_vocab, std::size_t trace_tokens);

}  // namespace rvformer::merge
