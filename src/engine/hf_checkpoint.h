// engine/hf_checkpoint.h — the Hugging Face layout in which Qwen3.5 checkpoints are published
// (Qwen/Qwen3.5-4B: Qwen3_5ForConditionalGeneration): config.json with the text model under
// "text_config" and the vision tower under "vision_config"; generation_config.json; the tensors in
// shards model-0000i-of-0000n.safetensors listed by model.safetensors.index.json, the text tower
// under "model.language_model." in BF16 (A_log in F32), the vision tower under "model.visual." and
// the multi-token-prediction head under "mtp." (docs/qwen35-forward.md §1–§2, docs/engine.md).
// Writing streams tensor by tensor, so a multi-GB checkpoint is written in little memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/config.h"
#include "engine/safetensors.h"

namespace rvformer::engine {

// The vision tower's shape (vision_config); Qwen3.5-4B's by default. Only its tensor shapes matter
// here: the engine runs the text model.
struct VisionConfig {
  std::size_t depth = 24;
  std::size_t hidden_size = 1024;
  std::size_t intermediate_size = 4096;
  std::size_t num_heads = 16;
  std::size_t in_channels = 3;
  std::size_t patch_size = 16;
  std::size_t temporal_patch_size = 2;
  std::size_t spatial_merge_size = 2;
  std::size_t num_position_embeddings = 2304;  // a square: the position grid is 48 × 48
};

// The special tokens the config files name.
struct SpecialTokens {
  std::uint32_t end_of_text = 248044;   // <|endoftext|>: bos, pad, the text config's eos
  std::uint32_t im_end = 248046;        // <|im_end|>: the chat turn's end, first eos of generation
  std::uint32_t vision_start = 248053;  // <|vision_start|>
  std::uint32_t vision_end = 248054;    // <|vision_end|>
  std::uint32_t image = 248056;         // <|image_pad|>
  std::uint32_t video = 248057;         // <|video_pad|>
};

// The ids of the Qwen3 tokenizer (151,669 ids), for vocabularies that hold it but not Qwen3.5's.
SpecialTokens qwen3_special_tokens();

// The published text_config object for `config` (every key of the released Qwen3.5 configs:
// layer_types, rope_parameters with mrope_section, attn_output_gate, mamba_ssm_dtype, mtp_*, ...).
nlohmann::ordered_json text_config_json(const Config& config, const SpecialTokens& tokens);
// The whole config.json of a Qwen3_5ForConditionalGeneration checkpoint.
nlohmann::ordered_json multimodal_config_json(const Config& config, const VisionConfig& vision,
                                              const SpecialTokens& tokens);
// generation_config.json as published for the family (sampling defaults included).
nlohmann::ordered_json generation_config_json(const SpecialTokens& tokens);

// Every tensor of the published layout, with its stored name, dtype and shape: the text tower
// (checkpoint_tensor_specs order; BF16, A_log F32), lm_head.weight when untied, the 15 mtp.*
// tensors (one full-attention layer with its MLP, fc over [embedding | hidden], three norms) and the
// vision tower (patch embedding, position embedding, blocks, merger).
std::vector<TensorLayout> multimodal_tensor_layouts(const Config& config, const VisionConfig& vision);

struct ShardOptions {
  // A shard takes tensors in order until the next one would pass this size (a larger tensor gets a
  // shard of its own).
  std::uint64_t max_shard_bytes = std::uint64_t{4} << 30;
  // Called as the data is written: bytes written so far, bytes in all.
  std::function<void(std::uint64_t written, std::uint64_t total)> progress = {};
};

// Writes model-0000i-of-0000n.safetensors (each atomically, metadata {"format": "pt"}) and then
// model.safetensors.index.json (metadata.total_size, weight_map) into `directory`, which must exist.
// Returns the shard file names. Throws rvformer::Error.
std::vector<std::string> write_sharded_safetensors(const std::filesystem::path& directory,
                                                   std::span<const TensorLayout> tensors, const TensorBytes& bytes,
                                                   const ShardOptions& options = {});

}  // namespace rvformer::engine
