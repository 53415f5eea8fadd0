// engine/fast_lm_head.cpp — see fast_lm_head.h.
#include "engine/fast_lm_head.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "engine/ops.h"

namespace rvformer::engine {

namespace {
// Hidden states with at most this many non-zero entries are remembered, in 2^memo_slots_log2 slots.
constexpr std::size_t memo_max_nonzeros = 128;
constexpr std::size_t memo_slots_log2 = 8;
}  // namespace

FastLmHead::FastLmHead(const CheckpointTensor& weights) : FastLmHead(ColumnMatrix::from_tensor(weights)) {}

FastLmHead::FastLmHead(std::size_t vocab, std::size_t hidden, std::span<const float> row_major)
    : FastLmHead(ColumnMatrix(vocab, hidden, row_major)) {}

FastLmHead::FastLmHead(ColumnMatrix matrix)
    : matrix_(std::move(matrix)),
      scores_(block_count(matrix_.rows()) * block_lanes, 0.0f),
      written_(block_count(matrix_.rows())),
      memo_(2 * memo_max_nonzeros, 1, memo_slots_log2) {}

std::vector<float> FastLmHead::logits(const SparseInput& hidden, std::uint64_t& weights) const {
  std::vector<float> result(block_count(matrix_.rows()) * block_lanes, 0.0f);  // whole blocks while accumulating
  weights += matrix_.accumulate_part(hidden, 0, result.data(), nullptr);
  result.resize(matrix_.rows());
  return result;
}

std::uint32_t FastLmHead::argmax(const SparseInput& hidden, std::uint64_t& weights) {
  if (matrix_.needs_every_row(hidden)) return static_cast<std::uint32_t>(engine::argmax(logits(hidden, weights)));
  memo_key_.clear();
  hidden.nonzeros.append_words(memo_key_);
  if (const auto token = memo_.find(memo_key_)) return (*token)[0];
  const std::uint32_t token = compute_argmax(hidden, weights);
  memo_.remember(memo_key_, std::span(&token, 1));
  return token;
}

std::uint32_t FastLmHead::compute_argmax(const SparseInput& hidden, std::uint64_t& weights) {
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
