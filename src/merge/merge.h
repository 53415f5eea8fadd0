// merge/merge.h — the computer merged into a Qwen3.5 chat model: one checkpoint in the base's own
// Hugging Face layout whose first layers are the compiled machine's and whose residual stream is
// the base's hidden size widened by the machine's dimensions (docs/merge.md).
//
// The machine must have been compiled to sit after the base's hidden dimensions
// (`rvformer compile --base-hidden H`): its tensors then hold only its own dimensions, and the merge
// places them after the base's. Everything else is the base's: its tensors keep their values and
// dtypes, padded with zeros in the new dimensions, except the RMSNorm weights over the residual,
// which absorb the wider mean. Trace tokens get the embedding rows after the base's vocabulary.
// The merge streams tensor by tensor from the mapped files into the new shards.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/checkpoint.h"
#include "engine/config.h"
#include "engine/safetensors.h"

namespace rvformer::merge {

// What rvformer-merge.json (beside config.json) records for the driver.
struct MergeInfo {
  std::size_t machine_layers = 0;      // layers [0, machine_layers) are the computer's
  std::size_t base_layers = 0;         // the base's layers follow them, in order
  std::size_t machine_first_dim = 0;   // the machine's residual dimensions start here (the base's hidden size)
  std::size_t machine_hidden = 0;      // and there are this many
  std::size_t base_vocab = 0;          // the base's embedding rows: trace token i has id base_vocab + i
  std::size_t trace_tokens = 0;
  std::size_t first_reserved_token = 0;  // tokenizer ids [first_reserved_token, base_vocab) are fillers
  double norm_scale = 1;               // √(H/(H+W)), folded into the base's residual RMSNorm weights
  std::uint64_t parameters = 0;        // in the merged checkpoint
  std::uint64_t bytes = 0;             // of tensor data
  nlohmann::json machine;              // the machine's rvformer-machine.json
};

MergeInfo read_merge_info(const std::filesystem::path& directory);

// One tensor of the merged checkpoint: stored name, dtype and shape, and where its values come
// from. Seen as [rows, cols] (rows = the first extent, 1 for a vector), it is zero except for the
// blocks, each a source tensor (or computed values) of [rows, cols] at (row, col).
struct MergedTensor {
  struct Block {
    const engine::CheckpointTensor* source = nullptr;  // values from these bytes, or else from `values`
    std::vector<float> values;
    std::size_t rows = 0, cols = 0;
    std::size_t row = 0, col = 0;
  };
  engine::TensorLayout layout;
  std::size_t rows = 0, cols = 0;
  std::vector<Block> blocks;
};

// The merge worked out from the opened checkpoints, before anything is written.
struct MergePlan {
  engine::Config config;              // the merged text model
  nlohmann::ordered_json config_json;  // the merged config.json
  std::vector<MergedTensor> tensors;   // in file order
  MergeInfo info;
};

// Checks that the machine fits the base (compiled for its hidden size; the same GDN and attention
// geometry; an MLP no wider) and plans every tensor. `machine_info` is the machine's
// rvformer-machine.json. The plan points into both checkpoints. Throws rvformer::Error.
MergePlan plan_merge(const engine::Checkpoint& base, const nlohmann::ordered_json& base_config_json,
                     const engine::Checkpoint& machine, const nlohmann::json& machine_info);

struct MergeOptions {
  std::uint64_t max_shard_bytes = std::uint64_t{4} << 30;
  std::function<void(std::uint64_t written, std::uint64_t total)> progress = {};
};

// Merges the checkpoint directory `base` with the compiled machine in `machine` into `output`
// (which must not exist, or be empty; written beside it and renamed into place when complete): the
// shards and their index, config.json, rvformer-merge.json, the tokenizer files with the trace tokens
// added, and every other file of the base copied. Throws rvformer::Error.
MergeInfo merge_checkpoints(const std::filesystem::path& base, const std::filesystem::path& machine,
                            const std::filesystem::path& output, const MergeOptions& options = {});

// The name of trace token i in the merged tokenizer, and of a filler for an unassigned id.
std::string trace_token_name(std::size_t index);
std::string reserved_token_name(std::size_t id);

}  // namespace rvformer::merge
