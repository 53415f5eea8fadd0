// engine/state.h — everything a Qwen3.5 model carries from one token to the next: per Gated DeltaNet
// layer its convolution window and fp32 recurrent state, per full-attention layer its KV cache, and
// per layer the number of tokens it has seen. Saved to and loaded from versioned, checksummed state
// files.
//
// Positions are per layer because a token may run through a prefix of the layers only (Model's
// layer_count): a layer sees only the tokens that pass through it, so an attention layer's KV cache
// and its RoPE positions count those tokens alone (the next token's position in a layer is the number
// of tokens the layer has seen), and a GDN layer's window holds its own last inputs. Since every run
// starts at layer 0, the counts never increase with the layer index and layer 0's is the number of
// tokens fed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <variant>
#include <vector>

#include "engine/config.h"

namespace rvformer::engine {

struct GatedDeltaNetState {
  // The previous kernel-1 inputs of the causal convolution, oldest first: [kernel-1][conv_dim].
  std::vector<float> conv;
  // S_h[m][i] for every value head h, key index m, value index i: [value_heads][key_dim][value_dim].
  std::vector<float> recurrent;

  bool operator==(const GatedDeltaNetState&) const = default;
};

struct AttentionCache {
  // Post-norm, post-RoPE keys and raw values of every past position: [position][kv_heads][head_dim].
  std::vector<float> keys;
  std::vector<float> values;

  bool operator==(const AttentionCache&) const = default;
};

// Read access to the Gated DeltaNet recurrent states, which State and the fast executor's FastState
// both give without copying (FastState without first bringing its conv windows up to date).
class RecurrentStateView {
 public:
  // The recurrent state of one value head of a Gated DeltaNet layer, [key_dim][value_dim] row-major:
  // entry (m, i) is S[m][i], the memory row m that a one-hot key at m writes and a query at m reads.
  // Throws rvformer::Error when `layer` is not a Gated DeltaNet layer.
  virtual std::span<const float> recurrent_head(std::size_t layer, std::size_t value_head) const = 0;

 protected:
  RecurrentStateView() = default;
  RecurrentStateView(const RecurrentStateView&) = default;
  RecurrentStateView& operator=(const RecurrentStateView&) = default;
  ~RecurrentStateView() = default;
};

class State : public RecurrentStateView {
 public:
  explicit State(const Config& config);  // zero state at position 0

  const Config& config() const { return config_; }
  std::uint64_t shape_fingerprint() const { return shape_fingerprint_; }
  // The tokens fed to the model (through any layer range): layer 0's count.
  std::size_t position() const { return positions_.front(); }
  // The tokens layer `layer` has seen: for an attention layer, the RoPE position of its next token.
  std::size_t layer_position(std::size_t layer) const { return positions_.at(layer); }
  // One more token seen by layers [0, layer_count) (all layers without an argument).
  void advance(std::size_t layer_count);
  void advance() { advance(positions_.size()); }

  // Throw rvformer::Error when `layer` is not of that type.
  const GatedDeltaNetState& gated_delta_net(std::size_t layer) const;
  GatedDeltaNetState& gated_delta_net(std::size_t layer);
  const AttentionCache& attention(std::size_t layer) const;
  AttentionCache& attention(std::size_t layer);

  std::span<const float> recurrent_head(std::size_t layer, std::size_t value_head) const override;

  // The state file image: header (magic, version, model shape fingerprint, position, payload size,
  // CRC-32) and payload (each layer's token count, then each layer's floats in order).
  std::vector<std::uint8_t> serialize() const;
  // Parses a state file image for this model shape. Throws rvformer::Error naming `source`.
  static State deserialize(const Config& config, std::span<const std::uint8_t> bytes, std::string_view source);

  // Atomic write (temporary file + fsync + rename).
  void save(const std::filesystem::path& path) const;
  // Replaces this state with the file's; on any error this state is left untouched.
  void load(const std::filesystem::path& path);

  bool operator==(const State& other) const {
    return positions_ == other.positions_ && layers_ == other.layers_;
  }

 private:
  template <typename LayerState>
  const LayerState& layer_state(std::size_t layer, LayerType type) const;

  Config config_;
  std::uint64_t shape_fingerprint_ = 0;
  std::vector<std::size_t> positions_;  // per layer
  std::vector<std::variant<GatedDeltaNetState, AttentionCache>> layers_;
};

}  // namespace rvformer::engine
