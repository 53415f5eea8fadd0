// engine/config.h — the shape and hyper-parameters of a Qwen3.5 text model (config.json), parsed
// with strict validation and written back in the Hugging Face `qwen3_5_text` form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rvformer::engine {

enum class LayerType { linear_attention, full_attention };

std::string_view layer_type_name(LayerType type);

struct Config {
  std::size_t hidden_size = 0;
  std::size_t intermediate_size = 0;
  std::size_t num_hidden_layers = 0;
  std::size_t vocab_size = 0;
  std::vector<LayerType> layer_types;  // one per layer

  // Gated DeltaNet ("linear_attention") layers. When the model has none, config.json may omit
  // these keys and the Hugging Face defaults (16, 32, 128, 128, 4) stand in.
  std::size_t linear_num_key_heads = 16;
  std::size_t linear_num_value_heads = 32;
  std::size_t linear_key_head_dim = 128;
  std::size_t linear_value_head_dim = 128;
  std::size_t linear_conv_kernel_dim = 4;

  // Gated full-attention layers (same rule for omitted keys; rope_theta is always required then).
  std::size_t num_attention_heads = 16;
  std::size_t num_key_value_heads = 4;
  std::size_t head_dim = 256;
  double rope_theta = 10000000.0;
  double partial_rotary_factor = 0.25;

  double rms_norm_eps = 1e-6;
  bool tie_word_embeddings = false;

  // Derived sizes.
  std::size_t linear_key_dim() const { return linear_num_key_heads * linear_key_head_dim; }
  std::size_t linear_value_dim() const { return linear_num_value_heads * linear_value_head_dim; }
  std::size_t linear_conv_dim() const { return 2 * linear_key_dim() + linear_value_dim(); }
  std::size_t rotary_dim() const;  // int(head_dim * partial_rotary_factor), as Hugging Face computes it
  std::size_t count_layers(LayerType type) const;

  // A one-line description of everything that determines tensor and state shapes, and its hash;
  // state files carry the hash so that they cannot be loaded into a model of another shape.
  std::string shape_description() const;
  std::uint64_t shape_fingerprint() const;

  bool operator==(const Config&) const = default;
};

// Parses a config.json document: flat, or a multimodal config with the text model under
// "text_config". `source` names the file in error messages. Throws rvformer::Error.
Config parse_config(const nlohmann::json& document, std::string_view source);
Config parse_config_text(std::string_view text, std::string_view source);
Config load_config(const std::filesystem::path& path);

// Checks the invariants parse_config enforces (for configs built in code). Throws rvformer::Error.
void validate_config(const Config& config, std::string_view source);

// A flat `qwen3_5_text` config.json document (model_type and architectures included).
nlohmann::json config_to_json(const Config& config);

}  // namespace rvformer::engine
