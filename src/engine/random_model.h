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

// Every tensor of checkpoint_tensor_specs(config), filled by random_tensor_values
// (synthetic_checkpoint.h: linear weights ~U(-1,1)/sqrt(fan_in), zero-centred norms near 0, the
// gated norm near 1, A_log = log U(1,16)). Each tensor depends only on the seed and its name, and
// equals the text tensor of that name in a synthetic checkpoint of the same seed.
std::vector<OwnedTensor> random_model_tensors(const Config& config, std::uint64_t seed);

// Views of `tensors` to store as `dtype`.
std::vector<TensorToWrite> tensors_to_write(std::span<const OwnedTensor> tensors, DType dtype);

void write_random_model(const std::filesystem::path& directory, const Config& config, std::uint64_t seed,
                        DType dtype = DType::F32);

// How random_sparse_model_tensors thins out a model.
struct SparseModelOptions {
  double row_fraction = 0.3;  // projection rows that hold any non-zero weight
  double row_density = 0.1;   // non-zero weights within such a row
  std::size_t embedding_row_min_nonzeros = 3;  // per embedding (and untied LM head) row
  std::size_t embedding_row_max_nonzeros = 20;
};

// random_model_tensors thinned out to look like a compiled model, for the fast executor's tests
// and benchmarks: most projection weights exactly zero (whole rows, and within rows); embedding
// (and untied LM head) rows with a few non-zeros; MLP gates large enough that most neurons are
// exactly off (SiLU = −0) or in SiLU's identity range; some norm weights exactly −1. Gated DeltaNet
// value head h decays by h mod 4: 0 — exactly 1 (A_log = −∞); 1 — a plain decay (α < 1); 2 — a decay
// that switches between exactly 1 and (nearly) 0 from token to token (A_log = 5, dt_bias = −100, a
// large in_proj_a row), which leaves −0 in the state; 3 — exactly 1 by a zero in_proj_a row and
// dt_bias = −200. Heads with h mod 3 = 0 have β = ½ (zero in_proj_b row), 1 a large β row. Key head 0
// has an all-zero key (it never writes). Conv channel c passes the current input (c mod 3 = 0), the
// previous one (1), or mixes every tap (2).
std::vector<OwnedTensor> random_sparse_model_tensors(const Config& config, std::uint64_t seed,
                                                     const SparseModelOptions& options = {});

void write_random_sparse_model(const std::filesystem::path& directory, const Config& config, std::uint64_t seed,
                               const SparseModelOptions& options = {}, DType dtype = DType::F32);

// hidden 64, intermediate 96, vocab 101, layers linear×3 + full; GDN 2 key heads × 16, 4 value
// heads × 16, conv 4; attention 4 heads × 16, 2 KV heads, rotary 8 of 16, theta 1e4; untied.
Config tiny_test_config();

}  // namespace rvformer::engine
