// engine/fast_gated_delta_net.h — one token through a Gated DeltaNet mixer for the fast executor
// (fast_model.h): the math of gated_delta_net.h, bit for bit, with the work that cannot change a
// result left out (docs/engine.md, "Fast exact executor"):
//
// * projections over the non-zero inputs only (column_matrix.h), and only for the channels a
//   result needs: when bounds prove every conv output finite, the query and key channels of every
//   head, the value channels of heads that write or run the reference, the channels later conv taps
//   read, and z of the heads that are read;
// * the causal conv keeps its window as a ring of past inputs, each replayable from the projection's
//   input (the State's window is written from it on request) and, with finite inputs, sums only the
//   taps that have a non-zero weight in a 16-channel block, only over blocks where such a tap may
//   have an input that is not +0: the other products are ±0, the sum starts at +0, SiLU(+0) = +0;
// * a value head whose decay α is exactly 1 and whose state is *clean* (only finite values, no −0)
//   skips the decay, recalls and writes only the rows m where its key is not ±0 and reads only the
//   rows where its query is not ±0: every other term is S·(±0) = ±0 or S + (±0) = S. A head with a
//   zero key and a zero query is not touched at all, and its read-out is ±0, which out_proj skips.
//   Any other head (α ≠ 1, a state that is not clean, a non-finite input) runs the reference
//   delta_rule_step and has its state re-checked afterwards.
// * query and key heads whose conv reads only the current token are pure functions of the input's
//   non-zero (column, bits) pairs at the columns they read; heads reading the same columns share a
//   memo of their outputs (a compiled model's heads of one layer mostly read the same address bits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/block_vector.h"
#include "engine/checkpoint.h"
#include "engine/column_matrix.h"
#include "engine/config.h"
#include "engine/memo.h"
#include "engine/state.h"

namespace rvformer::engine {

// One past conv input of a GDN layer's window.
struct WindowSlot {
  // Replayable: the qkv projection's input of that token, which gives the whole slot again
  // (projections are deterministic); `kept` then holds only the blocks some earlier conv tap reads.
  // Otherwise `kept` holds the whole slot.
  bool replayable = false;
  SparseVector input;
  BlockVector kept;
  double bound = 0;  // at least every |value| of the slot; +∞ when a value may not be finite
};

// What the fast executor keeps about one GDN layer's state beyond the State itself.
struct GatedDeltaNetTracking {
  // The conv window: the last kernel−1 conv inputs as a ring, `oldest` first. Stepping replaces the
  // oldest slot instead of shifting the window, and the State's copy is written only on request.
  std::vector<WindowSlot> window;
  std::size_t oldest = 0;
  std::shared_ptr<const ColumnMatrix> qkv;  // replays slots
  // Per value head: 1 when the head's recurrent state holds only finite values and no −0.
  std::vector<std::uint8_t> clean_heads;

  // conv = the window in the State's layout [kernel−1][conv_dim], oldest first.
  void write_window(std::vector<float>& conv) const;
};

struct GatedDeltaNetCounters {
  std::uint64_t weights = 0;          // non-zero projection weights multiplied
  std::uint64_t remembered_heads = 0;  // query or key heads whose outputs came from the memo
  std::uint64_t computed_heads = 0;    // query or key heads projected and convolved
  std::uint64_t idle_heads = 0;       // value heads with a zero key and a zero query: untouched
  std::uint64_t silent_layers = 0;    // layers whose every head was idle by construction (see step)
  std::uint64_t sparse_heads = 0;     // written and/or read row by row
  std::uint64_t reference_heads = 0;  // run through delta_rule_step
};

// A key head's normalised query (times the query scale) and key: the entries that are not ±0, by
// index within the head.
struct KeyHeadInput {
  explicit KeyHeadInput(std::size_t key_head_dim) : query(key_head_dim), key(key_head_dim) {}
  SparseVector query;
  SparseVector key;
};

// Working memory of one step, shared by all layers of a model.
struct GatedDeltaNetScratch {
  explicit GatedDeltaNetScratch(const Config& config);

  BlockVector raw;    // qkv projection (the conv input)
  std::vector<std::uint32_t> raw_parts;  // parts of raw projected one by one (zeroed at the next step)
  std::vector<std::uint8_t> part_done;   // per qkv part
  std::vector<std::uint8_t> part_projected;  // per qkv part: some input reached it
  std::vector<std::uint8_t> part_convolved;  // per qkv part: its conv outputs are in `mixed`
  std::vector<std::uint32_t> memo_key;  // room for every input column's (index, bits)
  std::vector<std::uint32_t> memo_result;
  BlockVector mixed;  // conv + SiLU output
  SparseVector mixed_nonzeros;  // of the query and key channels, when every channel is convolved
  SparseVector part_nonzeros;   // of one query or key part
  SparseVector value_nonzeros;  // of value channels (unused, but the conv reports them)
  bool mixed_finite = true;
  std::vector<std::uint8_t> value_ready;  // per value head: its value channels are in `mixed`
  BlockVector z, b, a;
  bool b_ready = false;  // b holds this step's projection
  BlockVector gated;  // gated RMSNorm output (out_proj input)
  SparseVector gated_nonzeros;
  std::vector<KeyHeadInput> key_heads;
  BlockSet active_blocks;
  std::vector<std::uint32_t> active_list;
  std::vector<const float*> tap_inputs;  // per conv tap: the window slot or raw
  std::vector<float> recall, delta;
  std::vector<float> read;  // a head's read-out, padded with +0 to whole blocks
  std::vector<float> dense_key, dense_query;
  std::vector<std::uint32_t> read_blocks;  // every block of `read`
  std::vector<std::uint32_t> every_key_row;  // 0, 1, …, key_head_dim − 1
  SparseVector read_nonzeros;
};

class FastGatedDeltaNet {
 public:
  FastGatedDeltaNet(const Config& config, const Checkpoint& checkpoint, std::size_t layer);

  // Non-zero weights of the projections.
  std::uint64_t weight_count() const;

  // What the executor needs to know about a state it has not produced itself (scans it once).
  GatedDeltaNetTracking track(const GatedDeltaNetState& state) const;

  // x: the input_layernorm output; out: the mixer output (cleared and filled). The State's conv
  // window is left as it was; `tracking` holds the current one.
  void step(GatedDeltaNetState& state, GatedDeltaNetTracking& tracking, const SparseInput& x,
            GatedDeltaNetScratch& scratch, BlockVector& out, GatedDeltaNetCounters& counters) const;

 private:
  // Fills key_groups_ and computed_key_parts_ (at load).
  void group_key_parts();
  // True when every value head is idle this step without looking at any head (see silent_).
  bool all_heads_idle(const GatedDeltaNetTracking& tracking, const SparseInput& x, double raw_bound) const;
  // Projects and convolves every channel (inputs that may not be finite, heads not in whole blocks).
  void project_all(const GatedDeltaNetTracking& tracking, const SparseInput& x, GatedDeltaNetScratch& s,
                   GatedDeltaNetCounters& counters, double& raw_bound) const;
  // Projects and convolves the query and key channels (or recalls them from the memos) into
  // s.key_heads and projects the channels later taps read.
  void project_keys(const GatedDeltaNetTracking& tracking, const SparseInput& x, GatedDeltaNetScratch& s,
                    GatedDeltaNetCounters& counters) const;
  // One query or key part projected and convolved; its non-zero outputs go to s.key_heads.
  void compute_key_part(std::size_t part, const GatedDeltaNetTracking& tracking, const SparseInput& x,
                        GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const;
  // The parts of a memo group, recalled or computed (and then remembered).
  void recall_key_group(std::size_t group, const GatedDeltaNetTracking& tracking, const SparseInput& x,
                        GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const;
  // The non-zero outputs of a query or key part (indices within the part), in s.key_heads.
  SparseVector& key_part_outputs(GatedDeltaNetScratch& s, std::size_t part) const;
  // Projects one part of qkv into s.raw (once per step); false when no input reaches it (it is +0).
  bool project_part(std::size_t part, const SparseInput& x, GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const;
  // Convolves the blocks of one part that can be non-zero (all of them, or only those an earlier tap
  // reads when the part's projection is +0).
  void convolve_part(std::size_t part, bool projected, const GatedDeltaNetTracking& tracking, GatedDeltaNetScratch& s,
                     SparseVector& nonzeros) const;
  // The taps whose input may not be finite: they count in every block.
  std::uint32_t every_block_taps(const GatedDeltaNetTracking& tracking, bool raw_finite) const;
  // The conv outputs of a part in `mixed`, when project_keys recalled only their non-zeros.
  void ensure_convolved(std::size_t part, const GatedDeltaNetTracking& tracking, const SparseInput& x,
                        GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const;
  // The value channels of one head, when projected lazily.
  void project_value_head(std::size_t head, const GatedDeltaNetTracking& tracking, const SparseInput& x,
                          GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const;
  // s.mixed = SiLU(conv(window, s.raw)) on `blocks` (increasing, after those done so far this step);
  // appends the non-zero outputs to `nonzeros`; returns whether every output is finite.
  bool convolve(const GatedDeltaNetTracking& tracking, std::span<const std::uint32_t> blocks, bool raw_finite,
                GatedDeltaNetScratch& s, SparseVector& nonzeros) const;
  // A bound on every conv output, from the bounds of its inputs (+∞ when unknown).
  double conv_bound(const GatedDeltaNetTracking& tracking, double raw_bound) const;
  // s.raw becomes the newest window slot, in place of the oldest.
  void push_window(GatedDeltaNetTracking& tracking, const SparseInput& x, double raw_bound, bool lazy,
                   GatedDeltaNetScratch& s) const;
  // s.key_heads from s.mixed_nonzeros (after project_all).
  void select_key_heads(GatedDeltaNetScratch& s) const;
  // l2-normalises every key head's query (and scales it) and key.
  void normalise_key_heads(GatedDeltaNetScratch& s) const;
  float decay(std::size_t head, float a) const;
  std::span<float> head_state(GatedDeltaNetState& state, std::size_t head) const;
  const float* head_value(const GatedDeltaNetScratch& s, std::size_t head) const;
  std::size_t value_part(std::size_t head) const { return 2 * key_heads_ + head; }
  // The clean-state path; false (state untouched) when δ turns out not finite.
  bool sparse_head(std::size_t head, const KeyHeadInput& input, std::span<float> state, std::uint8_t& clean,
                   GatedDeltaNetScratch& s, bool& read_is_zero) const;
  void reference_head(std::size_t head, float alpha, std::span<float> state, const GatedDeltaNetTracking& tracking,
                      const SparseInput& x, GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const;
  // The gated RMSNorm of one head's read-out into s.gated. With z_by_head, s.z is +0 and this
  // head's rows of z are computed here (and cleared again).
  void gate_head(std::size_t head, bool read_is_zero, bool z_finite, bool z_by_head, const SparseInput& x,
                 GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const;

  std::size_t key_heads_, value_heads_, key_head_dim_, value_head_dim_, kernel_, conv_dim_;
  float eps_, query_scale_;
  // With heads in whole blocks (by_head_), qkv_ has one part per query, key and value head and z_
  // one per value head, so that they can be projected one by one.
  bool by_head_ = false;
  std::shared_ptr<const ColumnMatrix> qkv_;
  ColumnMatrix z_, b_, a_, out_;
  std::vector<std::size_t> window_parts_;  // qkv parts holding channels some earlier tap reads
  // Query and key parts whose conv reads only the current token, grouped by the input columns they
  // read (compiled models give many heads the same ones), each group with a memo of its parts'
  // non-zero outputs keyed by the input's non-zero (column, bits) pairs at those columns. A cache
  // of a pure function of the weights, so it belongs to no State.
  struct KeyPartGroup {
    std::vector<std::uint32_t> parts;    // increasing
    std::vector<std::uint32_t> columns;  // what every part of the group reads, increasing
    Memo memo;
  };
  mutable std::vector<KeyPartGroup> key_groups_;
  std::vector<std::uint32_t> computed_key_parts_;  // the query and key parts in no group
  // Per value head: α is exactly 1 when a = ±0.
  std::vector<std::uint8_t> unit_decay_at_zero_;
  BlockFloats conv_taps_;           // [kernel][conv_dim in whole blocks], tap-major
  std::vector<std::uint32_t> block_taps_;  // per channel block: bit j set when tap j has a weight there
  std::uint32_t current_tap_;             // the bit of the last tap (the current input)
  double conv_gain_ = 0;              // max over channels of Σ_tap |w| (+∞ for non-finite weights)
  bool replayable_ = false;           // window slots can be replayed (finite qkv and conv weights)
  bool conv_finite_ = true;
  std::vector<float> dt_bias_, A_log_, norm_;
  bool norm_finite_ = true;
  std::vector<float> alpha_at_zero_;  // per value head: α when a = ±0
  bool zero_reads_vanish_ = true;     // the gated RMSNorm of an all-zero read-out is ±0 (given finite z)
  // No query or key channel has a projection weight, `a` has none (α = α at a = 0, which is 1 for
  // every head) and no value channel is read by an earlier conv tap: with finite inputs, clean states
  // and replayable window slots, every head is idle and the mixer adds nothing. Compiled models have
  // many such layers (those that hold no memory bank).
  bool silent_ = false;
};

}  // namespace rvformer::engine
