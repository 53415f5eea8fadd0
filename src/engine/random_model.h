// engine/random_model.h — deterministic random Qwen3.5 checkpoints of any shape, for tests and
// benchmarks (library rvformer_engine_testing, not part of the engine itself).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/dtype.h"
#include "engine/safetensors.h"

namespace rvformer::engine {

struct OwnedTensor {
  std::string name;  // canonical
  std::vector<std::size_t> shape;
  std::vector<float> values;
};

// Every tensor of checkpoint_tensor_specs(config), filled with values of a plausible scale
// (linear weights ~U(-1,1)/sqrt(fan_in), zero-centred norms near 0, the gated norm near 1,
// A_log = log U(1,16)). Each tensor depends only on the seed and its name.
std::vector<OwnedTensor> random_model_tensors(const Config& config, std::uint64_t seed);

// Views of `tensors` to store as `dtype`.
std::vector<TensorToWrite> tensors_to_write(std::span<const OwnedTensor> tensors, DType dtype);

void write_random_model(const std::filesystem::path& directory, const Config& config, std::uint64_t seed,
                        DType dtype = DType::F32);

// hidden 64, intermediate 96, vocab 101, layers linear×3 + full; GDN 2 key heads × 16, 4 value
// heads × 16, conv 4; attention 4 heads × 16, 2 KV heads, rotary 8 of 16, theta 1e4; untied.
Config tiny_test_config();

}  // namespace rvformer::engine
