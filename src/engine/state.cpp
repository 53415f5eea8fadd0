// engine/state.cpp — see state.h.
//
// State file, version 2, little-endian:
//   0  "RVFSTATE"                 8 bytes
//   8  version (2)                u32
//   12 CRC-32 of bytes 16..end    u32
//   16 model shape fingerprint    u64 (Config::shape_fingerprint)
//   24 position                   u64 (tokens fed: layer 0's count)
//   32 payload size in bytes      u64
//   40 payload: per layer in order, the tokens it has seen (u64); then per layer in order, fp32
//      values — Gated DeltaNet: conv window, recurrent state; full attention: keys, values
//      (that layer's count × kv_heads × head_dim each).
// Version 1 (still read) had no per-layer counts: every layer had seen `position` tokens.
#include "engine/state.h"

#include <array>
#include <cstring>

#include "engine/crc32.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::engine {

namespace {

constexpr std::array<char, 8> magic{'R', 'V', 'F', 'S', 'T', 'A', 'T', 'E'};
constexpr std::uint32_t version = 2;
constexpr std::uint32_t version_without_layer_counts = 1;
constexpr std::size_t header_size = 40;
constexpr std::size_t checksummed_from = 16;

template <typename T>
void put(std::vector<std::uint8_t>& out, std::size_t offset, T value) {
  std::memcpy(out.data() + offset, &value, sizeof value);
}

template <typename T>
T get(std::span<const std::uint8_t> bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

std::size_t kv_floats_per_position(const Config& config) {
  return config.num_key_value_heads * config.head_dim;
}

// Floats the payload holds independently of the position (every Gated DeltaNet layer).
std::size_t fixed_payload_floats(const Config& config) {
  const std::size_t per_layer = (config.linear_conv_kernel_dim - 1) * config.linear_conv_dim() +
                                config.linear_num_value_heads * config.linear_key_head_dim *
                                    config.linear_value_head_dim;
  return per_layer * config.count_layers(LayerType::linear_attention);
}

// Reads consecutive float arrays out of the payload.
class PayloadReader {
 public:
  explicit PayloadReader(std::span<const std::uint8_t> payload) : payload_(payload) {}
  void read(std::vector<float>& values) {
    std::memcpy(values.data(), payload_.data() + offset_, values.size() * sizeof(float));
    offset_ += values.size() * sizeof(float);
  }

 private:
  std::span<const std::uint8_t> payload_;
  std::size_t offset_ = 0;
};

}  // namespace

State::State(const Config& config)
    : config_(config), shape_fingerprint_(config.shape_fingerprint()), positions_(config.num_hidden_layers, 0) {
  for (LayerType type : config.layer_types) {
    if (type == LayerType::linear_attention) {
      GatedDeltaNetState layer;
      layer.conv.assign((config.linear_conv_kernel_dim - 1) * config.linear_conv_dim(), 0.0f);
      layer.recurrent.assign(
          config.linear_num_value_heads * config.linear_key_head_dim * config.linear_value_head_dim, 0.0f);
      layers_.emplace_back(std::move(layer));
    } else {
      layers_.emplace_back(AttentionCache{});
    }
  }
}

void State::advance(std::size_t layer_count) {
  for (std::size_t layer = 0; layer < layer_count; ++layer) ++positions_[layer];
}

template <typename LayerState>
const LayerState& State::layer_state(std::size_t layer, LayerType type) const {
  if (layer >= layers_.size() || !std::holds_alternative<LayerState>(layers_[layer])) {
    fail("layer {} is not a {} layer", layer, layer_type_name(type));
  }
  return std::get<LayerState>(layers_[layer]);
}

const GatedDeltaNetState& State::gated_delta_net(std::size_t layer) const {
  return layer_state<GatedDeltaNetState>(layer, LayerType::linear_attention);
}

GatedDeltaNetState& State::gated_delta_net(std::size_t layer) {
  return const_cast<GatedDeltaNetState&>(layer_state<GatedDeltaNetState>(layer, LayerType::linear_attention));
}

const AttentionCache& State::attention(std::size_t layer) const {
  return layer_state<AttentionCache>(layer, LayerType::full_attention);
}

AttentionCache& State::attention(std::size_t layer) {
  return const_cast<AttentionCache&>(layer_state<AttentionCache>(layer, LayerType::full_attention));
}

std::span<const float> State::recurrent_head(std::size_t layer, std::size_t value_head) const {
  const std::size_t size = config_.linear_key_head_dim * config_.linear_value_head_dim;
  if (value_head >= config_.linear_num_value_heads) {
    fail("value head {} is out of range ({} value heads)", value_head, config_.linear_num_value_heads);
  }
  return std::span(gated_delta_net(layer).recurrent).subspan(value_head * size, size);
}

std::vector<std::uint8_t> State::serialize() const {
  std::vector<const std::vector<float>*> arrays;
  for (const auto& layer : layers_) {
    if (const auto* gdn = std::get_if<GatedDeltaNetState>(&layer)) {
      arrays.insert(arrays.end(), {&gdn->conv, &gdn->recurrent});
    } else {
      const auto& cache = std::get<AttentionCache>(layer);
      arrays.insert(arrays.end(), {&cache.keys, &cache.values});
    }
  }
  std::size_t payload_size = positions_.size() * sizeof(std::uint64_t);
  for (const auto* array : arrays) payload_size += array->size() * sizeof(float);

  std::vector<std::uint8_t> bytes(header_size + payload_size);
  std::memcpy(bytes.data(), magic.data(), magic.size());
  put<std::uint32_t>(bytes, 8, version);
  put<std::uint64_t>(bytes, 16, shape_fingerprint_);
  put<std::uint64_t>(bytes, 24, position());
  put<std::uint64_t>(bytes, 32, payload_size);
  std::size_t offset = header_size;
  for (std::size_t count : positions_) {
    put<std::uint64_t>(bytes, offset, count);
    offset += sizeof(std::uint64_t);
  }
  for (const auto* array : arrays) {
    std::memcpy(bytes.data() + offset, array->data(), array->size() * sizeof(float));
    offset += array->size() * sizeof(float);
  }
  put<std::uint32_t>(bytes, 12, crc32(std::span(bytes).subspan(checksummed_from)));
  return bytes;
}

namespace {

// Per layer the tokens it has seen, from a version 2 payload (or `position` for every layer in
// version 1); checks that they can describe a state (non-increasing, layer 0's equal to the
// header's position) and that the payload holds exactly the floats they imply.
std::vector<std::size_t> read_layer_positions(const Config& config, std::uint32_t file_version,
                                              std::uint64_t position, std::span<const std::uint8_t> payload,
                                              std::string_view source) {
  const std::size_t layers = config.num_hidden_layers;
  std::vector<std::uint64_t> counts(layers, position);
  std::size_t counts_bytes = 0;
  if (file_version != version_without_layer_counts) {
    counts_bytes = layers * sizeof(std::uint64_t);
    if (payload.size() < counts_bytes) fail("{}: truncated state file (no room for the layers' token counts)", source);
    for (std::size_t layer = 0; layer < layers; ++layer) counts[layer] = get<std::uint64_t>(payload, layer * 8);
  }
  if (counts[0] != position) {
    fail("{}: layer 0 has seen {} tokens but the position is {}", source, counts[0], position);
  }
  for (std::size_t layer = 1; layer < layers; ++layer) {
    if (counts[layer] > counts[layer - 1]) {
      fail("{}: layer {} has seen more tokens ({}) than layer {} ({}), which no layer range gives", source, layer,
           counts[layer], layer - 1, counts[layer - 1]);
    }
  }
  const std::size_t per_position = 2 * kv_floats_per_position(config) * sizeof(float);
  const std::size_t fixed = counts_bytes + fixed_payload_floats(config) * sizeof(float);
  bool consistent = payload.size() >= fixed;
  std::size_t remaining = consistent ? payload.size() - fixed : 0;
  for (std::size_t layer = 0; consistent && layer < layers; ++layer) {
    if (config.layer_types[layer] != LayerType::full_attention) continue;
    consistent = counts[layer] <= remaining / per_position;
    if (consistent) remaining -= counts[layer] * per_position;
  }
  consistent = consistent && remaining == 0;
  if (!consistent) {
    fail("{}: payload size {} does not match position {} for this model", source, payload.size(), position);
  }
  return {counts.begin(), counts.end()};
}

}  // namespace

State State::deserialize(const Config& config, std::span<const std::uint8_t> bytes, std::string_view source) {
  if (bytes.size() < header_size) {
    fail("{}: truncated state file ({} bytes; the header alone is {})", source, bytes.size(), header_size);
  }
  if (std::memcmp(bytes.data(), magic.data(), magic.size()) != 0) fail("{}: not an rvformer state file", source);
  const auto file_version = get<std::uint32_t>(bytes, 8);
  if (file_version != version && file_version != version_without_layer_counts) {
    fail("{}: state file version {} is not supported (this build reads versions {} and {})", source, file_version,
         version_without_layer_counts, version);
  }
  const auto payload_size = get<std::uint64_t>(bytes, 32);
  if (payload_size != bytes.size() - header_size) {
    fail("{}: truncated or padded state file (the header announces {} payload bytes, the file holds {})", source,
         payload_size, bytes.size() - header_size);
  }
  if (crc32(bytes.subspan(checksummed_from)) != get<std::uint32_t>(bytes, 12)) {
    fail("{}: checksum mismatch: the state file is corrupted", source);
  }
  if (get<std::uint64_t>(bytes, 16) != config.shape_fingerprint()) {
    fail("{}: the state was saved for a model of another shape (this model: {})", source, config.shape_description());
  }

  const std::span<const std::uint8_t> payload = bytes.subspan(header_size);
  State state(config);
  state.positions_ = read_layer_positions(config, file_version, get<std::uint64_t>(bytes, 24), payload, source);
  PayloadReader reader(payload.subspan(file_version == version_without_layer_counts ? 0 : config.num_hidden_layers * 8));
  for (std::size_t layer = 0; layer < state.layers_.size(); ++layer) {
    if (auto* gdn = std::get_if<GatedDeltaNetState>(&state.layers_[layer])) {
      reader.read(gdn->conv);
      reader.read(gdn->recurrent);
    } else {
      auto& cache = std::get<AttentionCache>(state.layers_[layer]);
      cache.keys.resize(state.positions_[layer] * kv_floats_per_position(config));
      cache.values.resize(state.positions_[layer] * kv_floats_per_position(config));
      reader.read(cache.keys);
      reader.read(cache.values);
    }
  }
  return state;
}

void State::save(const std::filesystem::path& path) const { write_file_atomic(path, serialize()); }

void State::load(const std::filesystem::path& path) {
  State loaded = deserialize(config_, read_file_bytes(path), path.string());
  *this = std::move(loaded);
}

}  // namespace rvformer::engine
