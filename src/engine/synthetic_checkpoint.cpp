// engine/synthetic_checkpoint.cpp — see synthetic_checkpoint.h.
#include "engine/synthetic_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/file.h"

namespace rvformer::engine {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view text_prefix = "model.language_model.";

std::size_t fan_in(std::span<const std::size_t> shape) {
  std::size_t product = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) product *= shape[i];
  return shape.size() == 1 ? shape[0] : product;
}

// The range [low, high) of a tensor's uniform values, or nullopt for A_log (log of a uniform).
std::optional<std::pair<float, float>> value_range(std::string_view name, std::span<const std::size_t> shape) {
  const bool vector = shape.size() == 1;
  if (name.ends_with("linear_attn.norm.weight")) return std::pair{0.9f, 1.1f};
  if (name.starts_with("model.visual.")) {
    if (name.ends_with(".bias")) return std::pair{-0.01f, 0.01f};
    if (vector) return std::pair{0.9f, 1.1f};  // LayerNorm weights
  } else if (vector && name.find("norm") != std::string_view::npos) {
    return std::pair{-0.1f, 0.1f};  // zero-centred RMSNorm weights
  }
  if (name.ends_with("A_log")) return std::nullopt;
  if (name.ends_with("dt_bias")) return std::pair{0.0f, 1.0f};
  if (name.ends_with("embed_tokens.weight") || name == "lm_head.weight") {
    const float bound = std::min(1.0f, 8.0f / std::sqrt(static_cast<float>(shape.back())));
    return std::pair{-bound, bound};
  }
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in(shape)));
  return std::pair{-bound, bound};
}

// The ids the config files name, from the tokenizer's added tokens.
SpecialTokens special_tokens_of(const nlohmann::json& tokenizer, const std::string& source) {
  const auto added = tokenizer.find("added_tokens");
  const auto id_of = [&](std::string_view content) -> std::uint32_t {
    if (added != tokenizer.end() && added->is_array()) {
      for (const auto& token : *added) {
        if (token.is_object() && token.value("content", "") == content && token.contains("id") &&
            token["id"].is_number_unsigned()) {
          return token["id"].get<std::uint32_t>();
        }
      }
    }
    fail("{}: no added token '{}' (a Qwen tokenizer has it)", source, content);
  };
  return {.end_of_text = id_of("<|endoftext|>"),
          .im_end = id_of("<|im_end|>"),
          .vision_start = id_of("<|vision_start|>"),
          .vision_end = id_of("<|vision_end|>"),
          .image = id_of("<|image_pad|>"),
          .video = id_of("<|video_pad|>")};
}

// The largest id of the tokenizer's vocabulary and added tokens.
std::uint64_t largest_token_id(const nlohmann::json& tokenizer, const std::string& source) {
  std::uint64_t largest = 0;
  bool any = false;
  const auto consider = [&](const nlohmann::json& id) {
    if (!id.is_number_unsigned()) fail("{}: a token id is not a non-negative integer ({})", source, id.dump());
    largest = std::max(largest, id.get<std::uint64_t>());
    any = true;
  };
  if (const auto model = tokenizer.find("model"); model != tokenizer.end() && model->is_object()) {
    if (const auto vocab = model->find("vocab"); vocab != model->end() && vocab->is_object()) {
      for (const auto& [token, id] : vocab->items()) consider(id);
    }
  }
  if (const auto added = tokenizer.find("added_tokens"); added != tokenizer.end() && added->is_array()) {
    for (const auto& token : *added) {
      if (token.is_object() && token.contains("id")) consider(token["id"]);
    }
  }
  if (!any) fail("{}: no token ids in model.vocab or added_tokens", source);
  return largest;
}

SpecialTokens default_special_tokens(std::size_t vocab_size) {
  if (vocab_size >= 248320) return SpecialTokens{};
  if (vocab_size >= 151669) return qwen3_special_tokens();
  fail("a vocabulary of {} rows holds neither Qwen3.5's nor Qwen3's special tokens; give at least 151669 rows or a "
       "tokenizer directory",
       vocab_size);
}

// Reads and checks the tokenizer; copies its files into `directory`. Returns its special tokens.
SpecialTokens copy_tokenizer(const fs::path& from, const fs::path& directory, std::size_t vocab_size) {
  const fs::path tokenizer_path = from / "tokenizer.json";
  const std::string source = tokenizer_path.string();
  const std::string text = read_file_text(tokenizer_path);
  const nlohmann::json tokenizer = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (tokenizer.is_discarded() || !tokenizer.is_object()) fail("{}: not a JSON object", source);
  const std::uint64_t largest = largest_token_id(tokenizer, source);
  if (largest >= vocab_size) {
    fail("{}: holds token id {}, but the model's vocabulary has {} rows", source, largest, vocab_size);
  }
  const SpecialTokens tokens = special_tokens_of(tokenizer, source);
  write_file_atomic(directory / "tokenizer.json", text);
  for (const char* name : {"tokenizer_config.json", "chat_template.jinja"}) {
    if (fs::exists(from / name)) write_file_atomic(directory / name, read_file_bytes(from / name));
  }
  return tokens;
}

void prepare_directory(const fs::path& directory) {
  std::error_code error;
  if (fs::exists(directory, error) && !(fs::is_directory(directory, error) && fs::is_empty(directory, error))) {
    fail("{} already exists and is not an empty directory; choose a new one", directory.string());
  }
  fs::create_directories(directory, error);
  if (error) fail("cannot create {}: {}", directory.string(), error.message());
}

Config tiny_text_config() {
  Config config = qwen35_shaped_config(32, 4, 151936);
  config.intermediate_size = 64;
  config.linear_num_key_heads = 2;
  config.linear_num_value_heads = 4;
  config.linear_key_head_dim = 16;
  config.linear_value_head_dim = 16;
  config.num_attention_heads = 4;
  config.num_key_value_heads = 2;
  config.head_dim = 16;
  return config;
}

VisionConfig tiny_vision() {
  return {.depth = 2, .hidden_size = 32, .intermediate_size = 64, .num_heads = 2, .num_position_embeddings = 16};
}

}  // namespace

std::uint64_t RandomStream::next() {
  std::uint64_t z = (state_ += increment);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::uint64_t tensor_seed(std::uint64_t seed, std::string_view name) {
  std::uint64_t hash = seed ^ 0xcbf29ce484222325ull;
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

void random_tensor_values(std::string_view name, std::span<const std::size_t> shape, std::uint64_t seed,
                          std::size_t first, std::span<float> out) {
  RandomStream random(tensor_seed(seed, name), first);
  const auto range = value_range(name, shape);
  if (!range) {
    for (float& value : out) value = std::log(random.uniform(1.0f, 16.0f));
    return;
  }
  for (float& value : out) value = random.uniform(range->first, range->second);
}

std::vector<LayerType> qwen35_layer_types(std::size_t layers) {
  std::vector<LayerType> types;
  for (std::size_t i = 0; i < layers; ++i) {
    types.push_back((i + 1) % 4 == 0 ? LayerType::full_attention : LayerType::linear_attention);
  }
  return types;
}

// The Config defaults are Qwen3.5-4B's per-layer widths.
Config qwen35_shaped_config(std::size_t hidden, std::size_t layers, std::size_t vocab) {
  Config config;
  config.hidden_size = hidden;
  config.intermediate_size = 9216;
  config.vocab_size = vocab;
  config.num_hidden_layers = layers;
  config.layer_types = qwen35_layer_types(layers);
  config.tie_word_embeddings = true;
  return config;
}

SyntheticModel synthetic_preset(std::string_view shape) {
  if (shape == "tiny") return {.config = tiny_text_config(), .vision = tiny_vision(), .max_shard_bytes = 4 << 20};
  if (shape == "narrow") {
    return {.config = qwen35_shaped_config(64, 4, 151936), .vision = tiny_vision(), .max_shard_bytes = 16 << 20};
  }
  if (shape == "4b") return {.config = qwen35_shaped_config(2560, 32, 248320), .vision = VisionConfig{}};
  fail("unknown model shape '{}' (tiny, narrow or 4b)", shape);
}

void write_synthetic_checkpoint(const fs::path& directory, const SyntheticModel& model,
                                const SyntheticWrite& options) {
  validate_config(model.config, "the synthetic model's config");
  prepare_directory(directory);
  const SpecialTokens tokens = options.tokenizer_directory
                                   ? copy_tokenizer(*options.tokenizer_directory, directory, model.config.vocab_size)
                                   : default_special_tokens(model.config.vocab_size);
  const std::vector<TensorLayout> layouts = multimodal_tensor_layouts(model.config, model.vision);
  std::vector<float> values;
  const auto fill = [&](std::size_t index, std::size_t offset, std::span<std::uint8_t> bytes) {
    const TensorLayout& layout = layouts[index];
    std::string_view name = layout.name;
    if (name.starts_with(text_prefix)) name.remove_prefix(text_prefix.size());
    const std::size_t element = dtype_size(layout.dtype);
    values.resize(bytes.size() / element);
    random_tensor_values(name, layout.shape, model.seed, offset / element, values);
    encode_floats(layout.dtype, values, bytes);
  };
  write_sharded_safetensors(directory, layouts, fill, {.max_shard_bytes = model.max_shard_bytes, .progress = options.progress});
  write_file_atomic(directory / "generation_config.json", generation_config_json(tokens).dump(2) + "\n");
  write_file_atomic(directory / "config.json", multimodal_config_json(model.config, model.vision, tokens).dump(2) + "\n");
}

}  // namespace rvformer::engine
