// engine/random_model.cpp — see random_model.h.
#include "engine/random_model.h"

#include <cmath>

#include "engine/checkpoint.h"

namespace rvformer::engine {

namespace {

// splitmix64: tiny, fast and identical on every platform (unlike std:: distributions).
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [low, high), on a 2^-24 grid of the unit interval.
  float uniform(float low, float high) {
    return low + (high - low) * static_cast<float>(next() >> 40) * 0x1p-24f;
  }

 private:
  std::uint64_t state_;
};

std::uint64_t name_seed(std::uint64_t seed, const std::string& name) {
  std::uint64_t hash = seed ^ 0xcbf29ce484222325ull;
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

bool ends_with(const std::string& name, std::string_view suffix) { return name.ends_with(suffix); }

void fill(OwnedTensor& tensor, Random& random) {
  const std::string& name = tensor.name;
  auto fill_uniform = [&](float low, float high) {
    for (float& value : tensor.values) value = random.uniform(low, high);
  };
  if (ends_with(name, "linear_attn.norm.weight")) {
    fill_uniform(0.9f, 1.1f);
  } else if (ends_with(name, "norm.weight")) {
    fill_uniform(-0.1f, 0.1f);
  } else if (ends_with(name, "A_log")) {
    for (float& value : tensor.values) value = std::log(random.uniform(1.0f, 16.0f));
  } else if (ends_with(name, "dt_bias")) {
    fill_uniform(0.0f, 1.0f);
  } else if (ends_with(name, "embed_tokens.weight") || name == "lm_head.weight") {
    fill_uniform(-1.0f, 1.0f);
  } else {
    const std::size_t fan_in = tensor.shape.back() * (tensor.shape.size() == 3 ? tensor.shape[1] : 1);
    const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    fill_uniform(-bound, bound);
  }
}

}  // namespace

std::vector<OwnedTensor> random_model_tensors(const Config& config, std::uint64_t seed) {
  std::vector<OwnedTensor> tensors;
  for (const TensorSpec& spec : checkpoint_tensor_specs(config)) {
    std::size_t count = 1;
    for (std::size_t extent : spec.shape) count *= extent;
    OwnedTensor tensor{spec.name, spec.shape, std::vector<float>(count)};
    Random random(name_seed(seed, spec.name));
    fill(tensor, random);
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

std::vector<TensorToWrite> tensors_to_write(std::span<const OwnedTensor> tensors, DType dtype) {
  std::vector<TensorToWrite> views;
  for (const OwnedTensor& tensor : tensors) views.push_back({tensor.name, dtype, tensor.shape, tensor.values});
  return views;
}

void write_random_model(const std::filesystem::path& directory, const Config& config, std::uint64_t seed,
                        DType dtype) {
  const auto tensors = random_model_tensors(config, seed);
  write_checkpoint(directory, config, tensors_to_write(tensors, dtype));
}

Config tiny_test_config() {
  Config config;
  config.hidden_size = 64;
  config.intermediate_size = 96;
  config.vocab_size = 101;
  config.num_hidden_layers = 4;
  config.layer_types = {LayerType::linear_attention, LayerType::linear_attention, LayerType::linear_attention,
                        LayerType::full_attention};
  config.linear_num_key_heads = 2;
  config.linear_num_value_heads = 4;
  config.linear_key_head_dim = 16;
  config.linear_value_head_dim = 16;
  config.linear_conv_kernel_dim = 4;
  config.num_attention_heads = 4;
  config.num_key_value_heads = 2;
  config.head_dim = 16;
  config.rope_theta = 10000.0;
  config.partial_rotary_factor = 0.5;
  config.rms_norm_eps = 1e-6;
  config.tie_word_embeddings = false;
  return config;
}

}  // namespace rvformer::engine
