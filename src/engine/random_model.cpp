// engine/random_model.cpp — see random_model.h.
#include "engine/random_model.h"

#include <algorithm>
#include <cmath>

#include "engine/checkpoint.h"
#include "engine/synthetic_checkpoint.h"

namespace rvformer::engine {

namespace {

// The layer-local part of a layer tensor's name ("mlp.gate_proj.weight"), or "" for a global one.
std::string_view layer_part(const std::string& name) {
  if (!name.starts_with("layers.")) return {};
  const std::size_t dot = name.find('.', 7);
  return std::string_view(name).substr(dot + 1);
}

class Sparsifier {
 public:
  Sparsifier(const Config& config, const SparseModelOptions& options, RandomStream& random)
      : config_(config), options_(options), random_(random) {}

  void apply(OwnedTensor& tensor) {
    const std::string_view part = layer_part(tensor.name);
    layer_ = tensor.name.starts_with("layers.") ? std::stoul(tensor.name.substr(7)) : 0;
    if (tensor.name == "embed_tokens.weight" || tensor.name == "lm_head.weight") {
      embedding_rows(tensor);
    } else if (part.ends_with("layernorm.weight") || tensor.name == "norm.weight" || part.ends_with("_norm.weight")) {
      for (float& value : tensor.values) value = random_.uniform(0, 1) < 0.1f ? -1.0f : value;
    } else if (part == "linear_attn.A_log") {
      for (std::size_t head = 0; head < tensor.values.size(); ++head) {
        if (head % 4 == 0 || head % 4 == 3) tensor.values[head] = -INFINITY;
        if (head % 4 == 2) tensor.values[head] = 5.0f;
      }
    } else if (part == "linear_attn.dt_bias") {
      for (std::size_t head = 0; head < tensor.values.size(); ++head) {
        if (head % 4 == 2) tensor.values[head] = -100.0f;
        if (head % 4 == 3) tensor.values[head] = -200.0f;
      }
    } else if (part == "linear_attn.conv1d.weight") {
      conv(tensor);
    } else if (part.ends_with("proj.weight") || part.ends_with("in_proj_qkv.weight") || part.ends_with("in_proj_z.weight") ||
               part.ends_with("in_proj_a.weight") || part.ends_with("in_proj_b.weight")) {
      projection(tensor, part);
    }
  }

 private:
  void embedding_rows(OwnedTensor& tensor) {
    const std::size_t cols = tensor.shape[1];
    std::fill(tensor.values.begin(), tensor.values.end(), 0.0f);
    const auto range = static_cast<float>(options_.embedding_row_max_nonzeros - options_.embedding_row_min_nonzeros + 1);
    for (std::size_t row = 0; row < tensor.shape[0]; ++row) {
      const auto count = options_.embedding_row_min_nonzeros + static_cast<std::size_t>(random_.uniform(0, range));
      for (std::size_t k = 0; k < count; ++k) {
        const auto col = static_cast<std::size_t>(random_.uniform(0, static_cast<float>(cols)));
        tensor.values[row * cols + std::min(col, cols - 1)] = random_.uniform(0.5f, 2.0f) * (k % 2 == 0 ? 1.0f : -1.0f);
      }
    }
  }

  // Per group of key_head_dim channels (a query or key head, a value head's first half, ...).
  void conv(OwnedTensor& tensor) {
    const std::size_t kernel = config_.linear_conv_kernel_dim;
    for (std::size_t channel = 0; channel < tensor.shape[0]; ++channel) {
      float* taps = tensor.values.data() + channel * kernel;
      const std::size_t group = channel / config_.linear_key_head_dim;
      if (group % 3 == 2) continue;
      const std::size_t passed = group % 3 == 0 || kernel < 2 ? kernel - 1 : kernel - 2;
      for (std::size_t tap = 0; tap < kernel; ++tap) taps[tap] = tap == passed ? 1.0f : 0.0f;
    }
  }

  void projection(OwnedTensor& tensor, std::string_view part) {
    const std::size_t rows = tensor.shape[0];
    const std::size_t cols = tensor.shape[1];
    const float scale = 1.0f / std::sqrt(static_cast<float>(options_.row_density));
    const std::size_t key_dim = config_.linear_key_dim();
    const bool qkv = part == "linear_attn.in_proj_qkv.weight";
    for (std::size_t row = 0; row < rows; ++row) {
      float* values = tensor.values.data() + row * cols;
      // Key head 0 neither reads nor writes, layer 0 reads nothing; the other query and key rows are
      // denser than the rest.
      const bool query_or_key = qkv && row < 2 * key_dim;
      const bool head_zero = query_or_key && row % key_dim < config_.linear_key_head_dim;
      const bool first_layer_query = qkv && layer_ == 0 && row < key_dim;
      const bool zero_row = head_zero || first_layer_query || (part == "linear_attn.in_proj_a.weight" && row % 4 == 3) ||
                            (part == "linear_attn.in_proj_b.weight" && row % 3 == 0);
      if (part == "linear_attn.in_proj_a.weight" && row % 4 == 2) {
        for (std::size_t col = 0; col < cols; ++col) values[col] *= 300.0f;  // a swings across −104
        continue;
      }
      const double row_fraction = query_or_key ? 0.6 : options_.row_fraction;
      const bool keep_row = !zero_row && random_.uniform(0, 1) < row_fraction;
      const float row_scale = part == "mlp.gate_proj.weight" ? 60.0f * std::sqrt(static_cast<float>(cols))
                              : part == "linear_attn.in_proj_b.weight" && row % 3 == 1 ? 100.0f * scale
                                                                                      : scale;
      for (std::size_t col = 0; col < cols; ++col) {
        values[col] = keep_row && random_.uniform(0, 1) < options_.row_density ? values[col] * row_scale : 0.0f;
      }
    }
  }

  const Config& config_;
  const SparseModelOptions& options_;
  RandomStream& random_;
  std::size_t layer_ = 0;
};

}  // namespace

std::vector<OwnedTensor> random_model_tensors(const Config& config, std::uint64_t seed) {
  std::vector<OwnedTensor> tensors;
  for (const TensorSpec& spec : checkpoint_tensor_specs(config)) {
    std::size_t count = 1;
    for (std::size_t extent : spec.shape) count *= extent;
    OwnedTensor tensor{spec.name, spec.shape, std::vector<float>(count)};
    random_tensor_values(tensor.name, tensor.shape, seed, 0, tensor.values);
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

std::vector<TensorToWrite> tensors_to_write(std::span<const OwnedTensor> tensors, DType dtype) {
  std::vector<TensorToWrite> views;
  for (const OwnedTensor& tensor : tensors) views.push_back({tensor.name, dtype, tensor.shape, tensor.values});
  return views;
}

std::vector<OwnedTensor> random_sparse_model_tensors(const Config& config, std::uint64_t seed,
                                                     const SparseModelOptions& options) {
  std::vector<OwnedTensor> tensors = random_model_tensors(config, seed);
  for (OwnedTensor& tensor : tensors) {
    RandomStream random(tensor_seed(seed ^ 0x5eed5eedull, tensor.name));
    Sparsifier(config, options, random).apply(tensor);
  }
  return tensors;
}

void write_random_sparse_model(const std::filesystem::path& directory, const Config& config, std::uint64_t seed,
                               const SparseModelOptions& options, DType dtype) {
  const auto tensors = random_sparse_model_tensors(config, seed, options);
  write_checkpoint(directory, config, tensors_to_write(tensors, dtype));
}

void write_random_model(const std::filesystem::path& directory, const Config& config, std::uint64_t seed,
                        DType dtype) {
  const auto tensors = random_model_tensors(config, seed);
  write_checkpoint(directory, config, tensors_to_write(tensors, dtype));
}

Config tiny_test_config() {
  Config config = synthetic_preset("tiny").config;
  config.hidden_size = 64;
  config.intermediate_size = 96;
  config.vocab_size = 101;
  config.rope_theta = 10000.0;
  config.partial_rotary_factor = 0.5;
  config.tie_word_embeddings = false;
  return config;
}

}  // namespace rvformer::engine
