// engine/config.cpp — see config.h. Every rejected value names its key and the file it came from.
#include "engine/config.h"

#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "support/error.h"
#include "support/file.h"

namespace rvformer::engine {

namespace {

using nlohmann::json;

// Bounds that keep every derived size (tensor elements, state floats) far from overflow.
constexpr std::size_t max_dimension = std::size_t{1} << 20;
constexpr std::size_t max_layers = 4096;
constexpr std::size_t max_state_floats_per_layer = std::size_t{1} << 30;

// The integer keys of config.json. Those of one layer kind may be omitted when the model has no
// such layer (the Config defaults, Hugging Face's, stand in); the others are always required.
struct DimensionKey {
  const char* key;
  std::size_t Config::*member;
  std::optional<LayerType> needed_by;
  std::size_t limit = max_dimension;
};

const DimensionKey dimension_keys[] = {
    {"hidden_size", &Config::hidden_size, std::nullopt},
    {"intermediate_size", &Config::intermediate_size, std::nullopt},
    {"vocab_size", &Config::vocab_size, std::nullopt},
    {"num_hidden_layers", &Config::num_hidden_layers, std::nullopt, max_layers},
    {"linear_num_key_heads", &Config::linear_num_key_heads, LayerType::linear_attention},
    {"linear_num_value_heads", &Config::linear_num_value_heads, LayerType::linear_attention},
    {"linear_key_head_dim", &Config::linear_key_head_dim, LayerType::linear_attention},
    {"linear_value_head_dim", &Config::linear_value_head_dim, LayerType::linear_attention},
    {"linear_conv_kernel_dim", &Config::linear_conv_kernel_dim, LayerType::linear_attention},
    {"num_attention_heads", &Config::num_attention_heads, LayerType::full_attention},
    {"num_key_value_heads", &Config::num_key_value_heads, LayerType::full_attention},
    {"head_dim", &Config::head_dim, LayerType::full_attention},
};

// Reads typed keys of one JSON object; `fallback` is the outer config of a multimodal file, consulted
// only for keys that Hugging Face keeps there (tie_word_embeddings).
class KeyReader {
 public:
  KeyReader(const json& object, const json* fallback, std::string_view source)
      : object_(object), fallback_(fallback), source_(source) {}

  const json* find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  std::size_t dimension(const char* key, std::size_t limit = max_dimension) const {
    const json* value = find(key);
    if (!value) fail("{}: missing key '{}'", source_, key);
    return positive_integer(*value, key, limit);
  }

  std::size_t dimension_or(const char* key, std::size_t fallback_value, bool required,
                           std::size_t limit = max_dimension) const {
    if (required || find(key)) return dimension(key, limit);
    return fallback_value;
  }

  std::size_t positive_integer(const json& value, const std::string& key, std::size_t limit) const {
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1 ||
        static_cast<std::uint64_t>(value.get<std::int64_t>()) > limit) {
      fail("{}: key '{}' must be an integer from 1 to {} (got {})", source_, key, limit, value.dump());
    }
    return static_cast<std::size_t>(value.get<std::int64_t>());
  }

  static double number(const json& value, const std::string& key, std::string_view source) {
    if (!value.is_number() || !std::isfinite(value.get<double>())) {
      fail("{}: key '{}' must be a finite number (got {})", source, key, value.dump());
    }
    return value.get<double>();
  }

  double number_or(const char* key, double fallback_value) const {
    const json* value = find(key);
    return value ? number(*value, key, source_) : fallback_value;
  }

  bool boolean_or(const char* key, bool fallback_value) const {
    const json* value = find(key);
    if (!value && fallback_ && fallback_->contains(key)) value = &(*fallback_)[key];
    if (!value) return fallback_value;
    if (!value->is_boolean()) fail("{}: key '{}' must be true or false (got {})", source_, key, value->dump());
    return value->get<bool>();
  }

  void require_string_if_present(const char* key, std::string_view expected) const {
    const json* value = find(key);
    if (value && !(value->is_string() && value->get<std::string>() == expected)) {
      fail("{}: key '{}' is {}; only \"{}\" is supported", source_, key, value->dump(), expected);
    }
  }

  std::string_view source() const { return source_; }

 private:
  const json& object_;
  const json* fallback_;
  std::string_view source_;
};

std::vector<LayerType> read_layer_types(const KeyReader& keys, std::size_t layers) {
  std::vector<LayerType> types;
  if (const json* listed = keys.find("layer_types")) {
    if (!listed->is_array() || listed->size() != layers) {
      fail("{}: key 'layer_types' must be a list of {} layer types (num_hidden_layers)", keys.source(), layers);
    }
    for (const auto& entry : *listed) {
      if (entry == "linear_attention") {
        types.push_back(LayerType::linear_attention);
      } else if (entry == "full_attention") {
        types.push_back(LayerType::full_attention);
      } else {
        fail("{}: key 'layer_types' has {}; expected \"linear_attention\" or \"full_attention\"", keys.source(),
             entry.dump());
      }
    }
    return types;
  }
  // Hugging Face: layer i is full attention when (i + 1) is a multiple of the interval.
  const std::size_t interval = keys.dimension_or("full_attention_interval", 4, false);
  for (std::size_t i = 0; i < layers; ++i) {
    types.push_back((i + 1) % interval == 0 ? LayerType::full_attention : LayerType::linear_attention);
  }
  return types;
}

// rope_parameters (or the older rope_scaling) may hold rope_theta and partial_rotary_factor; a value
// there wins over the top-level key, as in Hugging Face's rope standardisation.
void read_rope(const KeyReader& keys, Config& config, bool required) {
  const json* rope = keys.find("rope_parameters");
  const char* rope_key = "rope_parameters";
  if (!rope || rope->is_null()) {
    rope = keys.find("rope_scaling");
    rope_key = "rope_scaling";
  }
  if (rope && rope->is_null()) rope = nullptr;
  if (rope && !rope->is_object()) fail("{}: key '{}' must be an object", keys.source(), rope_key);

  auto rope_value = [&](const char* key) -> const json* {
    if (rope && rope->contains(key)) return &(*rope)[key];
    return keys.find(key);
  };
  for (const char* type_key : {"rope_type", "type"}) {
    if (rope && rope->contains(type_key) && (*rope)[type_key] != "default") {
      fail("{}: key '{}.{}' is {}; only \"default\" rotary embeddings are supported", keys.source(), rope_key,
           type_key, (*rope)[type_key].dump());
    }
  }
  if (const json* theta = rope_value("rope_theta")) {
    config.rope_theta = KeyReader::number(*theta, "rope_theta", keys.source());
  } else if (required) {
    fail("{}: missing key 'rope_theta' (top level or in rope_parameters)", keys.source());
  }
  if (const json* factor = rope_value("partial_rotary_factor")) {
    config.partial_rotary_factor = KeyReader::number(*factor, "partial_rotary_factor", keys.source());
  }
}

std::optional<std::size_t> checked_product(std::initializer_list<std::size_t> factors) {
  std::size_t product = 1;
  for (std::size_t factor : factors) {
    if (factor != 0 && product > std::numeric_limits<std::size_t>::max() / factor) return std::nullopt;
    product *= factor;
  }
  return product;
}

void require_state_size(std::optional<std::size_t> floats, const char* what, std::string_view source) {
  if (!floats || *floats > max_state_floats_per_layer) {
    fail("{}: the {} of one layer would exceed {} floats", source, what, max_state_floats_per_layer);
  }
}

}  // namespace

std::string_view layer_type_name(LayerType type) {
  return type == LayerType::linear_attention ? "linear_attention" : "full_attention";
}

std::size_t Config::rotary_dim() const {
  return static_cast<std::size_t>(static_cast<double>(head_dim) * partial_rotary_factor);
}

std::size_t Config::count_layers(LayerType type) const {
  std::size_t count = 0;
  for (LayerType layer : layer_types) count += layer == type ? 1 : 0;
  return count;
}

std::string Config::shape_description() const {
  std::string layers;
  for (LayerType type : layer_types) layers += type == LayerType::linear_attention ? 'L' : 'F';
  return fmt::format(
      "qwen3_5_text hidden={} intermediate={} vocab={} layers={} gdn=[k {}x{} v {}x{} conv {}] "
      "attention=[q {}x{} kv {} rotary {}] tied={}",
      hidden_size, intermediate_size, vocab_size, layers, linear_num_key_heads, linear_key_head_dim,
      linear_num_value_heads, linear_value_head_dim, linear_conv_kernel_dim, num_attention_heads, head_dim,
      num_key_value_heads, rotary_dim(), tie_word_embeddings);
}

std::uint64_t Config::shape_fingerprint() const {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a, 64 bit
  for (unsigned char c : shape_description()) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

void validate_config(const Config& config, std::string_view source) {
  for (const DimensionKey& dimension : dimension_keys) {
    const std::size_t value = config.*dimension.member;
    if (value < 1 || value > dimension.limit) {
      fail("{}: key '{}' must be from 1 to {} (got {})", source, dimension.key, dimension.limit, value);
    }
  }
  if (config.layer_types.size() != config.num_hidden_layers) {
    fail("{}: key 'layer_types' lists {} layers but num_hidden_layers is {}", source, config.layer_types.size(),
         config.num_hidden_layers);
  }
  if (!std::isfinite(config.rms_norm_eps) || config.rms_norm_eps < 0) {
    fail("{}: key 'rms_norm_eps' must be a finite number >= 0", source);
  }

  if (config.linear_num_value_heads % config.linear_num_key_heads != 0) {
    fail("{}: linear_num_value_heads ({}) must be a multiple of linear_num_key_heads ({})", source,
         config.linear_num_value_heads, config.linear_num_key_heads);
  }
  require_state_size(checked_product({config.linear_num_value_heads, config.linear_key_head_dim,
                                      config.linear_value_head_dim}),
                     "Gated DeltaNet recurrent state", source);
  require_state_size(checked_product({config.linear_conv_kernel_dim - 1, config.linear_conv_dim()}),
                     "Gated DeltaNet convolution state", source);

  if (config.num_attention_heads % config.num_key_value_heads != 0) {
    fail("{}: num_attention_heads ({}) must be a multiple of num_key_value_heads ({})", source,
         config.num_attention_heads, config.num_key_value_heads);
  }
  if (!std::isfinite(config.rope_theta) || config.rope_theta <= 0) {
    fail("{}: key 'rope_theta' must be a finite number > 0", source);
  }
  if (!(config.partial_rotary_factor > 0 && config.partial_rotary_factor <= 1)) {
    fail("{}: key 'partial_rotary_factor' must be in (0, 1] (got {})", source, config.partial_rotary_factor);
  }
  if (config.rotary_dim() % 2 != 0) {
    fail("{}: the rotary dimension head_dim * partial_rotary_factor = {} must be even", source, config.rotary_dim());
  }
}

Config parse_config(const json& document, std::string_view source) {
  if (!document.is_object()) fail("{}: the config must be a JSON object", source);
  const json* fallback = nullptr;
  const json* text = &document;
  if (auto nested = document.find("text_config"); nested != document.end()) {
    if (!nested->is_object()) fail("{}: key 'text_config' must be an object", source);
    text = &*nested;
    fallback = &document;
  }
  const KeyReader keys(*text, fallback, source);
  Config config;
  config.num_hidden_layers = keys.dimension("num_hidden_layers", max_layers);
  config.layer_types = read_layer_types(keys, config.num_hidden_layers);
  for (const DimensionKey& dimension : dimension_keys) {
    const bool required = !dimension.needed_by || config.count_layers(*dimension.needed_by) > 0;
    config.*dimension.member = keys.dimension_or(dimension.key, config.*dimension.member, required, dimension.limit);
  }
  read_rope(keys, config, /*required=*/config.count_layers(LayerType::full_attention) > 0);

  config.rms_norm_eps = keys.number_or("rms_norm_eps", config.rms_norm_eps);
  config.tie_word_embeddings = keys.boolean_or("tie_word_embeddings", config.tie_word_embeddings);
  keys.require_string_if_present("hidden_act", "silu");
  if (const json* bias = keys.find("attention_bias"); bias && *bias != false) {
    fail("{}: key 'attention_bias' is {}; attention biases are not supported", source, bias->dump());
  }
  validate_config(config, source);
  return config;
}

Config parse_config_text(std::string_view text, std::string_view source) {
  json document = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) fail("{}: not valid JSON", source);
  return parse_config(document, source);
}

Config load_config(const std::filesystem::path& path) {
  return parse_config_text(read_file_text(path), path.string());
}

json config_to_json(const Config& config) {
  json layer_types = json::array();
  for (LayerType type : config.layer_types) layer_types.push_back(layer_type_name(type));
  return json{
      {"architectures", {"Qwen3_5ForCausalLM"}},
      {"model_type", "qwen3_5_text"},
      {"hidden_size", config.hidden_size},
      {"intermediate_size", config.intermediate_size},
      {"num_hidden_layers", config.num_hidden_layers},
      {"vocab_size", config.vocab_size},
      {"layer_types", layer_types},
      {"linear_num_key_heads", config.linear_num_key_heads},
      {"linear_num_value_heads", config.linear_num_value_heads},
      {"linear_key_head_dim", config.linear_key_head_dim},
      {"linear_value_head_dim", config.linear_value_head_dim},
      {"linear_conv_kernel_dim", config.linear_conv_kernel_dim},
      {"num_attention_heads", config.num_attention_heads},
      {"num_key_value_heads", config.num_key_value_heads},
      {"head_dim", config.head_dim},
      {"rope_parameters",
       {{"rope_type", "default"},
        {"rope_theta", config.rope_theta},
        {"partial_rotary_factor", config.partial_rotary_factor}}},
      {"partial_rotary_factor", config.partial_rotary_factor},
      {"rms_norm_eps", config.rms_norm_eps},
      {"tie_word_embeddings", config.tie_word_embeddings},
      {"hidden_act", "silu"},
      {"attention_bias", false},
  };
}

}  // namespace rvformer::engine
