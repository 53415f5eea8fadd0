// engine/fast_lm_head.cpp — see fast_lm_head.h.
#include "engine/fast_lm_head.h"

#include <cmath>
#include <cstring>

#include "engine/ops.h"

namespace rvformer::engine {


FastLmHead::FastLmHead(const CheckpointTensor& weights) : FastLmHead(ColumnMatrix::from_tensor(weights)) {}

FastLmHead::FastLmHead(std::size_t vocab, std::size_t hidden, std::span<const float> row_major)
    : FastLmHead(ColumnMatrix(vocab, hidden, row_major)) {}

FastLmHead::FastLmHead(ColumnMatrix matrix)
    : matrix_(std::move(matrix)),
      scores_(block_count(matrix_.rows()) * block_lanes, 0.0f),
      written_(block_count(matrix_.rows())) {}

std::vector<float> FastLmHead::logits(const SparseInput& hidden, std::uint64_t& weights) const {
  std::vector<float> result(block_count(matrix_.rows()) * block_lanes, 0.0f);  // whole blocks while accumulating
  weights += matrix_.accumulate_part(hidden, 0, result.data(), nullptr);
  result.resize(matrix_.rows());
  return result;
}

std::uint32_t FastLmHead::argmax(const SparseInput& hidden, std::uint64_t& weights) {
  if (matrix_.needs_every_row(hidden)) return static_cast<std::uint32_t>(engine::argmax(logits(hidden, weights)));
  const std::size_t rows = matrix_.rows();
  weights += matrix_.accumulate_part(hidden, 0, scores_.data(), &written_);
  // Rows never written score +0; the first of them stands for all of them.
  const std::size_t unwritten = written_.first_missing() * block_lanes;
  const BlockArgmax scanned =
      fast_kernels().argmax_written(scores_.data(), written_.words().data(), written_.words().size(), rows);
  if (!scanned.found) return static_cast<std::uint32_t>(unwritten);
  if (unwritten >= rows || scanned.is_nan) return static_cast<std::uint32_t>(scanned.row);
  // The higher score wins; equal scores (−0 equals +0) go to the lower row.
  if (scanned.value > 0.0f || (scanned.value == 0.0f && scanned.row < unwritten)) {
    return static_cast<std::uint32_t>(scanned.row);
  }
  return static_cast<std::uint32_t>(unwritten);
}

}  // namespace rvformer::engine
