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
// The greedy token is a pure function of the hidden state's non-zero (index, bits) pairs (the ±0
// entries' products are skipped alike), so argmax() remembers it for recent hidden states: a
// compiled model returns to the same few final states over and over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/block_vector.h"
#include "engine/checkpoint.h"
#include "engine/column_matrix.h"
#include "engine/memo.h"

namespace rvformer::engine {

class FastLmHead {
 public:
  // weights: [vocab, hidden], the LM head or the tied embedding.
  explicit FastLmHead(const CheckpointTensor& weights);
  FastLmHead(std::size_t vocab, std::size_t hidden, std::span<const float> row_major);

  std::size_t nonzero_count() const { return matrix_.nonzero_count(); }

  // All vocab logits, bit-identical to the reference; `weights` counts the weights multiplied.
  std::vector<float> logits(const SparseInput& hidden, std::uint64_t& weights) const;
  // The greedy token (remembered, or computed).
  std::uint32_t argmax(const SparseInput& hidden, std::uint64_t& weights);

 private:
  explicit FastLmHead(ColumnMatrix matrix);
  std::uint32_t compute_argmax(const SparseInput& hidden, std::uint64_t& weights);

  ColumnMatrix matrix_;
  BlockFloats scores_;  // +0 between calls
  BlockSet written_;    // blocks of scores_ written by the current call
  Memo memo_;           // greedy tokens of recent hidden states
  std::vector<std::uint32_t> memo_key_;
};

}  // namespace rvformer::engine
