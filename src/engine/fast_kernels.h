// engine/fast_kernels.h — the inner loops of the fast executor (fast_model.h), on raw arrays cut into
// 16-lane blocks. fast_kernels.cpp compiles them once per x86-64 level (AVX-512, AVX2, baseline) and
// fast_kernels() picks the best one the CPU runs. Every kernel does lane-wise IEEE arithmetic and
// keeps each sequential sum in index order, so the choice never changes a result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/fast_ops.h"

namespace rvformer::engine {

// One column's weights in one part of a ColumnMatrix: where its dense blocks and single entries
// start, how many there are and how many non-zero weights they hold, in one 16-byte record, so
// that a product's visit to a column reads one place before the weights themselves. A column whose
// block weights are all bfloat16 values (the low 16 bits of each float are zero) keeps its blocks
// in bfloat16, half the bytes, which widen back to the same floats exactly.
struct ColumnRange {
  std::uint32_t block_begin;  // in the fp32 or the bfloat16 blocks, as `bfloat16` says
  std::uint32_t entry_begin;
  std::uint32_t nonzeros : 31;
  std::uint32_t bfloat16 : 1;
  std::uint16_t block_count;
  std::uint16_t entry_count;
};

// A single non-zero weight: its row (relative to the part) and value, side by side.
struct ColumnEntry {
  std::uint32_t row;
  float value;
};

// Dense 16-row blocks: each block's index (relative to the part) and its 16 weights.
template <typename Weight>
struct DenseBlocks {
  const std::uint32_t* index;
  const Weight* values;  // 16 per block
};

// A ColumnMatrix's storage as the kernels read it (see column_matrix.h).
struct ColumnStorage {
  std::size_t parts;
  const ColumnRange* ranges;  // per column·parts + part
  DenseBlocks<float> blocks;
  DenseBlocks<std::uint16_t> bfloat16_blocks;  // the upper halves of the floats
  const ColumnEntry* entries;
};

// Where a kernel appends the entries of its output that are not ±0 (capacity is the caller's duty).
struct NonzeroSink {
  std::uint32_t* index;
  float* value;
};

struct ConvolveArgs {
  const std::uint32_t* blocks;  // the channel blocks to compute, increasing
  std::size_t block_count;
  const float* const* tap_inputs;  // per tap: the conv input it reads (window slot or current)
  const float* tap_weights;        // [kernel][tap_stride]
  std::size_t tap_stride;
  const std::uint32_t* block_taps;  // per block: bit j set when tap j has a weight there
  std::uint32_t extra_taps;         // taps that count in every block
  float* out;                       // SiLU(conv), written on the listed blocks
  NonzeroSink nonzeros;
  SiluShortcuts silu;
};

struct ConvolveResult {
  std::size_t nonzeros;
  bool finite;
};

// The best score among written blocks: the lowest row among the highest, or the first NaN.
struct BlockArgmax {
  bool found;  // false when no block was written
  bool is_nan;
  float value;
  std::size_t row;
};

// What FastKernels::delta_rule_write did.
struct DeltaRuleWrite {
  bool delta_finite;  // false: δ has a non-finite value and no row was written
  bool rows_finite;   // every row written holds only finite values
};

struct FastKernels {
  // y_rows += W[:, cols[k]]·x_k for k < count, over one part (finite x_k only), where x_k is
  // values[k], or dense[cols[k]] when values is null (then zeros are skipped). When `written` is not
  // null, sets the bit of every block written (relative to the part). Returns the number of non-zero
  // weights multiplied.
  std::size_t (*accumulate)(const ColumnStorage& matrix, std::size_t part, const std::uint32_t* cols,
                            const float* values, const float* dense, std::size_t count, float* y_rows,
                            std::uint64_t* written);
  // out = SiLU(Σ_tap w_tap·input_tap from +0, in tap order), on the listed blocks, over the taps of
  // block_taps | extra_taps; appends the non-zero outputs.
  ConvolveResult (*convolve)(const ConvolveArgs& args);
  // out = SiLU(gate)·up on the listed blocks; appends the non-zero products; returns their count.
  std::size_t (*silu_product)(const float* gate, const float* up, const std::uint32_t* blocks, std::size_t block_count,
                              float* out, NonzeroSink nonzeros, SiluShortcuts silu);
  // out = SiLU(gate) on the listed blocks; appends the non-zero outputs; returns their count.
  std::size_t (*silu)(const float* gate, const std::uint32_t* blocks, std::size_t block_count, float* out,
                      NonzeroSink nonzeros, SiluShortcuts silu);
  // Appends the non-zero values of the listed blocks; returns their count.
  std::size_t (*gather)(const float* values, const std::uint32_t* blocks, std::size_t block_count, NonzeroSink nonzeros);
  // out[i] = Σ_k factors[k]·rows[indices[k]·dim + i] for i < dim, each lane summed from +0 in k order
  // (row·factor, then the add): the delta rule's recall and read over a head state's rows.
  void (*sum_scaled_rows)(const float* rows, std::size_t dim, const std::uint32_t* indices, const float* factors,
                          std::size_t count, float* out);
  // The delta rule's write: δ = (value − recall)·β for i < dim; when every δ is finite,
  // rows[indices[k]·dim + i] += factors[k]·δ_i for each k.
  DeltaRuleWrite (*delta_rule_write)(float* rows, std::size_t dim, const std::uint32_t* indices, const float* factors,
                                     std::size_t count, const float* value, const float* recall, float beta,
                                     float* delta);
  // The best score among the blocks whose bit is set in `written` (rows < row_count); zeroes those
  // blocks of `scores` and clears `written`.
  BlockArgmax (*argmax_written)(float* scores, std::uint64_t* written, std::size_t words, std::size_t row_count);
};

// The kernels for this CPU (decided once).
const FastKernels& fast_kernels();

// Every compiled variant, best first, for tests that compare them.
struct KernelVariant {
  const char* name;
  const FastKernels* kernels;
  bool supported;  // this CPU can run it
};
std::span<const KernelVariant> kernel_variants();

#if defined(__x86_64__)
// The features of the x86-64-v3 (AVX2) regions of this file and of dense_matrix.cpp.
bool cpu_runs_x86_64_v3();
#endif

}  // namespace rvformer::engine
