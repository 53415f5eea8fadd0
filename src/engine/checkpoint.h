// engine/checkpoint.h — a Qwen3.5 checkpoint directory: config.json plus model.safetensors or shards
// listed in model.safetensors.index.json. Reading checks the tensor set and every shape against the
// config; writing emits a standard Qwen3_5ForCausalLM checkpoint.
//
// Tensors are named canonically as in the text tower, without prefix ("embed_tokens.weight",
// "layers.0.linear_attn.A_log", ...), plus "lm_head.weight" when untied. In files the text tower sits
// under "model.language_model." (multimodal release) or "model." (Qwen3_5ForCausalLM); the vision
// tower ("model.visual.") and multi-token-prediction head ("mtp.") are ignored, as transformers does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config.h"
#include "engine/dtype.h"
#include "engine/safetensors.h"

namespace rvformer::engine {

struct TensorSpec {
  std::string name;  // canonical
  std::vector<std::size_t> shape;
};

// Every tensor a model with this config has, in a fixed order (globals, then layer by layer).
std::vector<TensorSpec> checkpoint_tensor_specs(const Config& config);

struct CheckpointTensor {
  std::string name;         // canonical
  std::string stored_name;  // as in the file
  DType dtype = DType::F32;
  std::vector<std::size_t> shape;
  std::span<const std::uint8_t> bytes;  // memory-mapped, little-endian
  const SafetensorsFile* file = nullptr;

  std::size_t element_count() const;
  // The values upcast to fp32 (exact for F32, BF16 and F16).
  std::vector<float> to_floats() const;
};

class Checkpoint {
 public:
  // Opens and validates a checkpoint directory. Throws rvformer::Error naming the bad file, key or tensor.
  static Checkpoint open(const std::filesystem::path& directory);

  const std::filesystem::path& directory() const { return directory_; }
  const Config& config() const { return config_; }
  // In checkpoint_tensor_specs order.
  const std::vector<CheckpointTensor>& tensors() const { return tensors_; }
  const CheckpointTensor& tensor(std::string_view name) const;  // throws if absent
  std::size_t ignored_tensor_count() const { return other_tensors_.size(); }
  // The tensors outside the text tower (vision tower, mtp head), which the model ignores; their
  // `name` is the stored one. In file order.
  const std::vector<CheckpointTensor>& other_tensors() const { return other_tensors_; }

 private:
  std::filesystem::path directory_;
  Config config_;
  std::vector<std::shared_ptr<const SafetensorsFile>> files_;
  std::vector<CheckpointTensor> tensors_;
  std::vector<CheckpointTensor> other_tensors_;
};

// Writes config.json and model.safetensors (each atomically) into `directory`, creating it if
// needed. `tensors` use canonical names and must be exactly the set checkpoint_tensor_specs(config)
// lists, with those shapes; they are stored as "model.<name>" (and "lm_head.weight").
void write_checkpoint(const std::filesystem::path& directory, const Config& config,
                      std::span<const TensorToWrite> tensors);

}  // namespace rvformer::engine
