// engine/fast_lm_head.h — the logits and the greedy token of the fast executor (fast_model.h).
//
// The final hidden state of a compiled model has a handful of non-zero dimensions, each reaching a
// few hundred to a few thousand vocabulary rows of the (column-stored) head. argmax() accumulates
// only those rows, in the reference order, into a vocabulary-sized scratch that is +0 everywhere
// else, and scans only the 16-row blocks it wrote. Every other row scores exactly +0 (a sum of ±0
// products from +0) and is accounted for without being touched: it wins only when the best touched
// score is below +0, or equal to it at a higher index (torch.argmax: the lowest index among equal
// maxima, −0 equal to +0; the first NaN wins).
//
// The head is stored in parts of consecutive rows, and most hidden states need only the parts of
// one column: the *pivot*, the non-zero input column whose weights lie in the fewest parts. Every
// row outside the pivot's parts sums the other columns' terms alone, and as fp32 products and sums
// are monotonic, no such row scores above the bound summed the same way from each column's largest
// term (its largest or smallest weight times the input, or +0 when that is below +0). When the best
// row of the pivot's parts, computed exactly, scores strictly above that bound, it is the greedy
// token. Otherwise, when that best score is above +0, each other part gets a bound of its own,
// summed the same way from each column's largest term in that part, and only the parts whose bound
// reaches the best score are computed; otherwise every part is.
//
// The greedy token is a pure function of the hidden state's non-zero (index, bits) pairs (the ±0
// entries' products are skipped alike), so argmax() remembers it for recent hidden states: a
// compiled model returns to the same few final states over and over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/block_vector.h"
#include "engine/checkpoint.h"
#include "engine/column_matrix.h"
#include "engine/memo.h"

namespace rvformer::engine {

struct LmHeadCounters {
  std::uint64_t weights = 0;     // weights multiplied
  std::uint64_t remembered = 0;  // greedy tokens recalled from the memo
  std::uint64_t from_pivot = 0;  // greedy tokens computed from the pivot column's parts alone
  std::uint64_t from_bounds = 0;  // ... from the pivot's parts and the parts whose bound reaches them
};

class FastLmHead {
 public:
  // Rows per part of the stored head: a part's 64 blocks are one word of a block set.
  static constexpr std::size_t default_part_rows = 64 * block_lanes;

  // weights: [vocab, hidden], the LM head or the tied embedding. part_rows: a multiple of 16, at most
  // the default.
  explicit FastLmHead(const CheckpointTensor& weights, std::size_t part_rows = default_part_rows);
  // Holding only the `kept` input columns (ColumnMatrix::from_tensor): for hidden states that are
  // zero in every other column.
  FastLmHead(const CheckpointTensor& weights, const std::vector<bool>& kept);
  FastLmHead(std::size_t vocab, std::size_t hidden, std::span<const float> row_major,
             std::size_t part_rows = default_part_rows);

  std::size_t nonzero_count() const { return matrix_.nonzero_count(); }

  // All vocab logits, bit-identical to the reference; `weights` counts the weights multiplied.
  std::vector<float> logits(const SparseInput& hidden, std::uint64_t& weights) const;
  // The greedy token (remembered, or computed).
  std::uint32_t argmax(const SparseInput& hidden, LmHeadCounters& counters);

 private:
  // Per input column: the parts holding its weights (increasing), and its least and largest weight,
  // in all of them and in each.
  struct ColumnReach {
    std::vector<std::uint32_t> parts;
    float least = 0.0f;
    float largest = 0.0f;
    std::vector<float> part_least, part_largest;  // per entry of parts
  };
  // The best score among the rows of some parts, and the first row there that no weight reached.
  struct PartsArgmax {
    bool found = false;
    bool is_nan = false;
    float value = 0.0f;
    std::size_t row = 0;
    std::optional<std::size_t> unwritten;
  };

  explicit FastLmHead(ColumnMatrix matrix);
  std::uint32_t compute_argmax(const SparseInput& hidden, LmHeadCounters& counters);
  // The greedy token when the pivot's parts decide it.
  std::optional<std::uint32_t> argmax_from_pivot(const SparseInput& hidden, LmHeadCounters& counters);
  // The non-zero input (its position in x) whose column's weights lie in the fewest parts; none when
  // no input's column holds a weight.
  std::optional<std::size_t> pivot_of(const SparseVector& x) const;
  // A bound on the score of every row outside the pivot's parts.
  float bound_without(const SparseVector& x, std::size_t pivot) const;
  // With the pivot's best row `best` (above +0): the parts outside `pivot_parts` that a row scoring
  // at least best.value may lie in, by each part's own bound (increasing).
  std::vector<std::uint32_t> parts_reaching(const SparseVector& x, std::span<const std::uint32_t> pivot_parts,
                                            float best);
  // The better of two results of scan_parts over disjoint parts (the higher score; the lower row on
  // equal scores).
  static PartsArgmax better(const PartsArgmax& a, const PartsArgmax& b);
  // Accumulates and scans the listed parts (increasing), leaving their scores +0 again.
  PartsArgmax scan_parts(std::span<const std::uint32_t> parts, const SparseInput& hidden, std::uint64_t& weights);

  ColumnMatrix matrix_;
  std::vector<ColumnReach> reach_;    // per input column
  std::vector<std::uint32_t> every_part_;
  BlockFloats scores_;  // +0 between calls
  BlockSet written_;    // blocks of scores_ written in the part being scanned (relative to the part)
  std::vector<float> part_bounds_;  // per part, while computing a greedy token
  Memo memo_;           // greedy tokens of recent hidden states
  std::vector<std::uint32_t> memo_key_;
};

}  // namespace rvformer::engine
