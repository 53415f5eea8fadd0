// engine/fast_model.h — the fast exact executor: a second implementation of Model's decode step that
// exploits the sparsity of compiled models (zero weights, mostly-zero activations, one-hot or zero
// GDN keys and queries, decay exactly 1, neurons that are off) and is bit-identical to the dense
// reference path (model.h) for any checkpoint: the same logits, the same greedy tokens and the same
// State after every step. It keeps every sum in the reference order and leaves out only terms that
// cannot change a result; where an input is not finite it computes the step the reference way.
// docs/engine.md ("Fast exact executor") lists every shortcut and why it is exact.
//
//   FastModel model = FastModel::load(directory);
//   FastState state = model.new_state();           // or model.adopt(state) for an existing State
//   TokenId next = model.decode_argmax(state, token);
//   const State& reference_state = state.state();  // what Model::decode would have left
//
// A FastModel holds scratch memory and caches: use it from one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "engine/checkpoint.h"
#include "engine/fast_gated_delta_net.h"
#include "engine/fast_lm_head.h"
#include "engine/model.h"
#include "engine/state.h"

namespace rvformer::engine {

struct FastCounters {
  std::uint64_t tokens = 0;
  GatedDeltaNetCounters gated_delta_net;  // summed over layers
  // Weights multiplied: the non-zero ones of sparse matrices, every one of attention's dense ones.
  std::uint64_t attention_weights = 0;
  std::uint64_t mlp_weights = 0;
  LmHeadCounters lm_head;
  std::uint64_t remembered_mlps = 0;  // MLP outputs recalled from their memo (not computed)
  std::uint64_t up_by_rows_mlps = 0;  // MLPs computed with up by rows, for the neurons that are on
  std::uint64_t leading_column_mlps = 0;  // MLPs whose gate was computed only where a neuron can be on
  std::uint64_t reference_norms = 0;  // RMSNorms computed the reference way (non-finite scale)
  std::uint64_t reused_norms = 0;     // RMSNorms whose output was already there (same input, same weights)
  // With set_timing(true), seconds spent in each part of the step.
  double embedding_seconds = 0;
  double norm_seconds = 0;
  double gated_delta_net_seconds = 0;
  double attention_seconds = 0;
  double mlp_seconds = 0;
  double lm_head_seconds = 0;

  std::uint64_t weights() const {
    return gated_delta_net.weights + attention_weights + mlp_weights + lm_head.weights;
  }
};

// A State plus what the fast executor knows about it (which GDN heads hold a clean state) and the
// GDN conv windows, which it keeps as rings instead of shifting them every token. Created by
// FastModel::new_state or adopt.
class FastState : public RecurrentStateView {
 public:
  // The reference State; the first call after a step writes the conv windows into it (O(windows)).
  const State& state() const;
  // Always current, with no window writing: cheap enough to read after every step.
  std::span<const float> recurrent_head(std::size_t layer, std::size_t value_head) const override {
    return state_.recurrent_head(layer, value_head);
  }
  std::size_t position() const { return state_.position(); }

 private:
  friend class FastModel;
  FastState(State state, std::vector<GatedDeltaNetTracking> tracking)
      : state_(std::move(state)), tracking_(std::move(tracking)) {}

  mutable State state_;
  std::vector<GatedDeltaNetTracking> tracking_;  // per layer (empty for attention layers)
  mutable bool windows_stale_ = false;           // state_'s conv windows lag behind tracking_
};

struct FastModelOptions {
  // Load only layers [0, layers) (0: all of them). A merged checkpoint's computer runs through its
  // first layers only, so the base's layers need not be loaded for it; decoding through more
  // layers than were loaded is an error.
  std::size_t layers = 0;
  // Only tokens [first, first + count) will be fed (count 0: any token); feeding another is an
  // error. Then the hidden state is zero in every column that neither their embedding rows nor the
  // loaded layers' outputs reach, and the head holds only the other columns (the same logits): a
  // merged checkpoint's computer, fed trace tokens only, needs none of the base's columns of the
  // tied embedding.
  TokenId first_fed_token = 0;
  std::size_t fed_token_count = 0;
};

class FastModel {
 public:
  static FastModel load(const std::filesystem::path& directory, const FastModelOptions& options = {});
  explicit FastModel(const Checkpoint& checkpoint, const FastModelOptions& options = {});
  FastModel(FastModel&&) noexcept;
  FastModel& operator=(FastModel&&) noexcept;
  ~FastModel();

  const Config& config() const;
  // Non-zero weights stored (all matrices; the tied embedding counted once as the LM head).
  std::uint64_t weight_count() const;

  FastState new_state() const;
  // Takes over any State of this model's shape (for example one loaded from a file); scans it once.
  FastState adopt(State state) const;

  // The layers loaded (FastModelOptions::layers, else all): what decode without a layer count runs.
  std::size_t loaded_layers() const;

  // Model::decode and Model::decode_argmax, bit for bit, through every loaded layer or through
  // layers [0, layer_count) only. Throw rvformer::Error on a bad token, layer count or a state of another
  // shape, before the state changes.
  std::vector<float> decode(FastState& state, TokenId token);
  std::vector<float> decode(FastState& state, TokenId token, std::size_t layer_count);
  TokenId decode_argmax(FastState& state, TokenId token);
  TokenId decode_argmax(FastState& state, TokenId token, std::size_t layer_count);
  // Model::prefill: the tokens in order, the logits after the last one only (the head runs once).
  std::vector<float> prefill(FastState& state, std::span<const TokenId> tokens);

  const FastCounters& counters() const;
  void reset_counters();
  // Timing the parts of a step costs a clock read per part (off by default).
  void set_timing(bool timing);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rvformer::engine
