// story/quantiser.h — rvformer's own quantisation of a llama2.c model for the story program
// (firmware/story/): int8 weights with one scale per row, folded into fixed-point requantisation
// parameters for the activation formats of story_ops.h; the RMSNorm gains and the attention's
// 1/sqrt(head_size) folded into the matrices; RoPE cos/sin tables; the vocabulary. Writes the blob
// story_model.h describes (docs/story.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "story/llama2_checkpoint.h"

namespace rvformer::story {

// Throws rvformer::Error when the model does not fit the blob's limits (story_model.h).
std::vector<std::uint8_t> quantise_story(const Llama2Checkpoint& checkpoint, const Llama2Vocabulary& vocabulary);

// The blob of llama2.c's model file and tokenizer file.
std::vector<std::uint8_t> quantise_story_files(const std::filesystem::path& checkpoint,
                                               const std::filesystem::path& tokenizer);

// models/stories260K/ in the source tree (RVFORMER_SOURCE_DIR overrides its compiled-in path).
std::filesystem::path stories260k_checkpoint();
std::filesystem::path stories260k_tokenizer();

}  // namespace rvformer::story
