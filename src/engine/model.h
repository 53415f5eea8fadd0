// engine/model.h — a loaded Qwen3.5 text model and its decode API: feed one token with a State, get
// the logits or the greedy token. This is the dense reference path: every step in fp32 (BF16 and F16
// weights are read from the memory-mapped checkpoint and upcast exactly as they are used; F32
// weights are copied into fp32 panels at load, or read in place too), fixed summation orders, no
// data-dependent shortcuts. Matrix-vector products split their rows
// between threads (ModelOptions::threads); every output is computed as on one thread, so results
// never depend on the thread count.
//
// A token can run through the first `layer_count` layers only, then the final norm and the LM head
// (the merged chat model's computer mode: trace tokens skip the base model's layers). The layers
// from layer_count on then neither see the token nor change their state (see state.h for positions).
//
// Prefill runs the same per-token recurrence as decode, so feeding tokens together or one by one is
// bit-identical. (Hugging Face prefills Gated DeltaNet layers with a chunked algorithm that rounds
// differently; the compiled computer relies on the recurrent form, see docs/engine.md.)
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <variant>
#include <vector>

#include "engine/attention.h"
#include "engine/checkpoint.h"
#include "engine/config.h"
#include "engine/gated_delta_net.h"
#include "engine/dense_matrix.h"
#include "engine/state.h"
#include "engine/workers.h"

namespace rvformer::engine {

using TokenId = std::uint32_t;

struct MlpWeights {
  DenseMatrix gate_proj;  // [intermediate, hidden]
  DenseMatrix up_proj;    // [intermediate, hidden]
  DenseMatrix down_proj;  // [hidden, intermediate]
};

struct ModelOptions {
  // Threads for matrix-vector products; 0: every CPU this process may run on. 1 computes everything
  // on the calling thread.
  std::size_t threads = 0;
  // Products of fewer weights run on the calling thread.
  std::size_t min_parallel_work = Workers::default_min_parallel_work;
  // F32 matrices are copied into fp32 panels at load (no more memory than the file, and faster to
  // multiply) unless this is set; BF16 and F16 matrices are always read in place.
  bool f32_in_place = false;
};

struct DecoderLayerWeights {
  std::vector<float> input_layernorm;           // zero-centred
  std::vector<float> post_attention_layernorm;  // zero-centred
  std::variant<GatedDeltaNetWeights, AttentionWeights> mixer;
  MlpWeights mlp;
};

class Model {
 public:
  // Throws rvformer::Error. The model keeps the checkpoint's files mapped.
  static Model load(const std::filesystem::path& directory, const ModelOptions& options = {});
  explicit Model(const Checkpoint& checkpoint, const ModelOptions& options = {});

  const Config& config() const { return config_; }
  State new_state() const { return State(config_); }
  std::size_t threads() const { return workers_->threads(); }

  // Feeds one token through every layer and advances the state; returns the vocab_size logits.
  std::vector<float> decode(State& state, TokenId token) const;
  // Through layers [0, layer_count) only (1 ≤ layer_count ≤ num_hidden_layers), then the final norm
  // and the LM head; the state of the other layers is left as it was.
  std::vector<float> decode(State& state, TokenId token, std::size_t layer_count) const;
  // decode() followed by argmax (ties go to the lowest token id, as torch.argmax).
  TokenId decode_argmax(State& state, TokenId token) const;
  TokenId decode_argmax(State& state, TokenId token, std::size_t layer_count) const;
  // One token for each of several sequences at once (tokens[i] fed to *states[i], the states
  // distinct), through every layer: their logits one after another (states.size() × vocab_size
  // values), each bit-identical to decode(*states[i], tokens[i]). Every weight is read once for the
  // whole batch, so many sequences decode faster together than one by one.
  std::vector<float> decode_batch(std::span<State* const> states, std::span<const TokenId> tokens) const;
  // Feeds every token in order (at least one); returns the logits after the last.
  std::vector<float> prefill(State& state, std::span<const TokenId> tokens) const;
  std::vector<float> prefill(State& state, std::span<const TokenId> tokens, std::size_t layer_count) const;

  // For inspection (tools and tests): called with the residual stream after each sublayer of each
  // layer — `after_mlp` false after the mixer, true after the MLP. Does not change any result.
  using ResidualObserver = std::function<void(std::size_t layer, bool after_mlp, std::span<const float> residual)>;
  void set_residual_observer(ResidualObserver observer) { observer_ = std::move(observer); }

 private:
  void check_input(const State& state, TokenId token, std::size_t layer_count) const;
  // Runs tokens[i] through layers [0, layer_count) of *states[i] and the final norm: the normed
  // hidden vectors, one per state.
  std::vector<float> final_hidden(std::span<State* const> states, std::span<const TokenId> tokens,
                                  std::size_t layer_count) const;
  std::vector<float> final_hidden(State& state, TokenId token, std::size_t layer_count) const;
  // The logits of `count` hidden vectors, one after another.
  std::vector<float> logits(std::span<const float> hidden, std::size_t count) const;

  Checkpoint checkpoint_;  // keeps the mapped files the matrices read
  Config config_;
  std::uint64_t shape_fingerprint_ = 0;
  DenseMatrix embed_tokens_;
  std::vector<float> norm_;
  DenseMatrix lm_head_;  // empty when tied to embed_tokens_
  std::vector<DecoderLayerWeights> layers_;
  std::vector<float> rope_inverse_frequencies_;
  std::unique_ptr<Workers> workers_;
  ResidualObserver observer_;
};

}  // namespace rvformer::engine
