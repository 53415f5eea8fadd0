// engine/model.h — a loaded Qwen3.5 text model and its decode API: feed one token with a State, get
// the logits or the greedy token. This is the dense reference path: every step in fp32 (BF16/F16
// weights are upcast exactly at load), fixed summation orders, no data-dependent shortcuts.
//
// Prefill runs the same per-token recurrence as decode, so feeding tokens together or one by one is
// bit-identical. (Hugging Face prefills Gated DeltaNet layers with a chunked algorithm that rounds
// differently; the compiled computer relies on the recurrent form, see docs/engine.md.)
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <variant>
#include <vector>

#include "engine/attention.h"
#include "engine/checkpoint.h"
#include "engine/config.h"
#include "engine/gated_delta_net.h"
#include "engine/packed_matrix.h"
#include "engine/state.h"

namespace rvformer::engine {

using TokenId = std::uint32_t;

struct MlpWeights {
  PackedMatrix gate_proj;  // [intermediate, hidden]
  PackedMatrix up_proj;    // [intermediate, hidden]
  PackedMatrix down_proj;  // [hidden, intermediate]
};

struct DecoderLayerWeights {
  std::vector<float> input_layernorm;           // zero-centred
  std::vector<float> post_attention_layernorm;  // zero-centred
  std::variant<GatedDeltaNetWeights, AttentionWeights> mixer;
  MlpWeights mlp;
};

class Model {
 public:
  static Model load(const std::filesystem::path& directory);  // throws rvformer::Error
  explicit Model(const Checkpoint& checkpoint);

  const Config& config() const { return config_; }
  State new_state() const { return State(config_); }

  // Feeds one token at state.position() and advances the state; returns the vocab_size logits.
  std::vector<float> decode(State& state, TokenId token) const;
  // decode() followed by argmax (ties go to the lowest token id, as torch.argmax).
  TokenId decode_argmax(State& state, TokenId token) const;
  // Feeds every token in order (at least one); returns the logits after the last.
  std::vector<float> prefill(State& state, std::span<const TokenId> tokens) const;

  // For inspection (tools and tests): called with the residual stream after each sublayer of each
  // layer — `after_mlp` false after the mixer, true after the MLP. Does not change any result.
  using ResidualObserver = std::function<void(std::size_t layer, bool after_mlp, std::span<const float> residual)>;
  void set_residual_observer(ResidualObserver observer) { observer_ = std::move(observer); }

 private:
  void check_input(const State& state, TokenId token) const;
  // Runs one token through every layer and the final norm.
  std::vector<float> final_hidden(State& state, TokenId token) const;
  std::vector<float> logits(std::span<const float> hidden) const;

  Config config_;
  std::uint64_t shape_fingerprint_ = 0;
  PackedMatrix embed_tokens_;
  std::vector<float> norm_;
  PackedMatrix lm_head_;  // empty when tied to embed_tokens_
  std::vector<DecoderLayerWeights> layers_;
  std::vector<float> rope_inverse_frequencies_;
  ResidualObserver observer_;
};

}  // namespace rvformer::engine
