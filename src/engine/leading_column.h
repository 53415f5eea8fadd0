// engine/leading_column.h — an MLP's gate product computed only at the neurons that can be on, for
// gates whose lowest column reaches most neurons (a compiled MLP's bias: every neuron reads the
// constant 1 there, and most neurons see nothing else on most tokens).
//
// The lowest column with a weight (the leading column) gives every row its first term, so a row
// that no other non-zero input reaches sums to exactly +0 + w·x_lead. Where SiLU of that is ±0 the
// neuron is off whatever up is (±0·finite up is ±0, which down_proj skips), so its gate need not be
// computed at all. The blocks where SiLU(+0 + w·x_lead) is not ±0 depend only on x_lead's bits and
// are remembered for the last value seen (the compiled machine's constant reads as 1 on every token).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/block_vector.h"
#include "engine/column_matrix.h"

namespace rvformer::engine {

class LeadingColumn {
 public:
  // For a gate matrix of one part with finite weights whose leading column reaches at least half
  // the blocks the matrix reaches; otherwise nothing (the plain product is as good).
  static std::optional<LeadingColumn> of(const ColumnMatrix& gate);

  // gate = W·x, exactly at every row whose SiLU(gate) may not be ±0, with the blocks written marked;
  // the other blocks are left +0 and unmarked although the reference's value there is w·x_lead.
  // Only for an MLP whose up is certainly finite (so that a neuron with SiLU(gate) = ±0 is off).
  // Returns the number of non-zero weights multiplied, or nothing (and leaves y alone) for an input
  // that is not finite or is ±0 at the leading column: such a product must be computed in full.
  std::optional<std::size_t> multiply(const ColumnMatrix& gate, const SparseInput& x, BlockVector& y);

 private:
  LeadingColumn(const ColumnMatrix& gate, std::uint32_t column);
  // The blocks where SiLU(+0 + w·x_lead) is not ±0, for this x_lead.
  const BlockSet& blocks_on_alone(float x_lead);

  static constexpr std::size_t word_group = 4;  // words or-ed together in registers

  std::uint32_t column_;
  std::size_t words_;         // 64-block words of a block set over the gate's rows (whole groups)
  BlockFloats weights_;       // the leading column, dense over whole blocks (+0 where it has no weight)
  std::vector<std::uint8_t> block_weights_;      // per block: the leading column's weights in it
  std::vector<std::uint64_t> reached_;           // per column: the blocks its weights reach (words_ each)
  BlockSet on_alone_;                            // blocks_on_alone() for x_lead with bits on_alone_bits_
  std::optional<std::uint32_t> on_alone_bits_;
  BlockSet needed_;                              // scratch: the blocks to compute ...
  std::vector<std::uint32_t> needed_blocks_;     // ... and their list
};

}  // namespace rvformer::engine
