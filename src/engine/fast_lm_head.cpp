// engine/fast_lm_head.cpp — see fast_lm_head.h.
#include "engine/fast_lm_head.h"

#include <algorithm>
#include <numeric>

#include "engine/ops.h"
#include "support/error.h"

namespace rvformer::engine {

namespace {
// Hidden states with at most this many non-zero entries are remembered, in 2^memo_slots_log2 slots.
constexpr std::size_t memo_max_nonzeros = 128;
constexpr std::size_t memo_slots_log2 = 8;

std::vector<std::size_t> part_starts(std::size_t rows, std::size_t part_rows) {
  if (part_rows == 0 || part_rows % block_lanes != 0 || part_rows > FastLmHead::default_part_rows) {
    fail("LM head parts must be a positive multiple of {} rows, at most {} (got {})", block_lanes,
         FastLmHead::default_part_rows, part_rows);
  }
  std::vector<std::size_t> starts;
  for (std::size_t start = part_rows; start < rows; start += part_rows) starts.push_back(start);
  return starts;
}
}  // namespace

FastLmHead::FastLmHead(const CheckpointTensor& weights, std::size_t part_rows)
    : FastLmHead(ColumnMatrix::from_tensor(weights, part_starts(weights.shape.at(0), part_rows))) {}

FastLmHead::FastLmHead(const CheckpointTensor& weights, const std::vector<bool>& kept)
    : FastLmHead(ColumnMatrix::from_tensor(weights, part_starts(weights.shape.at(0), default_part_rows), kept)) {}

FastLmHead::FastLmHead(std::size_t vocab, std::size_t hidden, std::span<const float> row_major, std::size_t part_rows)
    : FastLmHead(ColumnMatrix(vocab, hidden, row_major, part_starts(vocab, part_rows))) {}

FastLmHead::FastLmHead(ColumnMatrix matrix)
    : matrix_(std::move(matrix)),
      reach_(matrix_.cols()),
      every_part_(matrix_.parts()),
      scores_(block_count(matrix_.rows()) * block_lanes, 0.0f),
      written_(default_part_rows / block_lanes),
      part_bounds_(matrix_.parts(), 0.0f),
      memo_(2 * memo_max_nonzeros, 1, memo_slots_log2) {
  std::iota(every_part_.begin(), every_part_.end(), 0u);
  for (std::size_t col = 0; col < matrix_.cols(); ++col) {
    ColumnReach& reach = reach_[col];
    for (std::uint32_t part : every_part_) {
      if (matrix_.column_part_nonzeros(col, part) == 0) continue;
      reach.parts.push_back(part);
      float least = 0.0f, largest = 0.0f;
      matrix_.for_each_stored_weight(col, part, [&](std::size_t, float weight) {
        least = std::min(least, weight);
        largest = std::max(largest, weight);
      });
      reach.part_least.push_back(least);
      reach.part_largest.push_back(largest);
      reach.least = std::min(reach.least, least);
      reach.largest = std::max(reach.largest, largest);
    }
  }
}

std::vector<float> FastLmHead::logits(const SparseInput& hidden, std::uint64_t& weights) const {
  std::vector<float> result(block_count(matrix_.rows()) * block_lanes, 0.0f);  // whole blocks while accumulating
  for (std::uint32_t part : every_part_) {
    weights += matrix_.accumulate_part(hidden, part, result.data() + matrix_.part_begin(part), nullptr);
  }
  result.resize(matrix_.rows());
  return result;
}

std::uint32_t FastLmHead::argmax(const SparseInput& hidden, LmHeadCounters& counters) {
  if (matrix_.needs_every_row(hidden)) return static_cast<std::uint32_t>(engine::argmax(logits(hidden, counters.weights)));
  memo_key_.clear();
  hidden.nonzeros.append_words(memo_key_);
  if (const auto token = memo_.find(memo_key_)) {
    ++counters.remembered;
    return (*token)[0];
  }
  const std::uint32_t token = compute_argmax(hidden, counters);
  memo_.remember(memo_key_, std::span(&token, 1));
  return token;
}

FastLmHead::PartsArgmax FastLmHead::scan_parts(std::span<const std::uint32_t> parts, const SparseInput& hidden,
                                               std::uint64_t& weights) {
  PartsArgmax best;
  for (std::uint32_t part : parts) {
    const std::size_t begin = matrix_.part_begin(part);
    const std::size_t rows = matrix_.part_end(part) - begin;
    float* scores = scores_.data() + begin;
    weights += matrix_.accumulate_part(hidden, part, scores, &written_);
    const std::size_t missing = written_.first_missing() * block_lanes;
    if (!best.unwritten && missing < rows) best.unwritten = begin + missing;
    const BlockArgmax scanned = fast_kernels().argmax_written(scores, written_.words().data(), written_.words().size(), rows);
    if (!scanned.found) continue;
    // The first NaN in row order wins; the parts after it need not be computed.
    if (scanned.is_nan) return {true, true, scanned.value, begin + scanned.row, best.unwritten};
    // The higher score wins; equal scores (−0 equals +0) go to the lower row, in an earlier part.
    if (!best.found || scanned.value > best.value) {
      best.found = true;
      best.value = scanned.value;
      best.row = begin + scanned.row;
    }
  }
  return best;
}

std::optional<std::size_t> FastLmHead::pivot_of(const SparseVector& x) const {
  std::optional<std::size_t> pivot;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const std::size_t reached = reach_[x.index(k)].parts.size();
    if (reached != 0 && (!pivot || reached < reach_[x.index(*pivot)].parts.size())) pivot = k;
  }
  return pivot;
}

namespace {

// The largest term a weight in [least, largest] makes with input x, or +0 when that is below +0 (a
// row without a weight in the column adds +0).
float largest_term(float least, float largest, float x) {
  const float term = x > 0.0f ? largest * x : least * x;
  return term > 0.0f ? term : 0.0f;
}

}  // namespace

// A row outside the pivot's parts sums the other inputs' terms, in the same column order from +0;
// each term is at most its column's largest term (a missing one counts as +0), and a rounded
// product or sum never decreases when an operand grows.
float FastLmHead::bound_without(const SparseVector& x, std::size_t pivot) const {
  float bound = 0.0f;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const ColumnReach& reach = reach_[x.index(k)];
    if (k == pivot || reach.parts.empty()) continue;
    bound += largest_term(reach.least, reach.largest, x.value(k));
  }
  return bound;
}

// The same bound part by part: a row of part p sums, in column order, the terms of the columns
// that reach p, each at most that column's largest term in p.
std::vector<std::uint32_t> FastLmHead::parts_reaching(const SparseVector& x, std::span<const std::uint32_t> pivot_parts,
                                                      float best) {
  std::fill(part_bounds_.begin(), part_bounds_.end(), 0.0f);
  for (std::size_t k = 0; k < x.size(); ++k) {
    const ColumnReach& reach = reach_[x.index(k)];
    for (std::size_t i = 0; i < reach.parts.size(); ++i) {
      part_bounds_[reach.parts[i]] += largest_term(reach.part_least[i], reach.part_largest[i], x.value(k));
    }
  }
  std::vector<std::uint32_t> reaching;
  for (std::uint32_t part : every_part_) {
    if (part_bounds_[part] >= best && !std::binary_search(pivot_parts.begin(), pivot_parts.end(), part)) {
      reaching.push_back(part);
    }
  }
  return reaching;
}

FastLmHead::PartsArgmax FastLmHead::better(const PartsArgmax& a, const PartsArgmax& b) {
  if (!b.found) return a;
  if (!a.found) return b;
  if (b.value > a.value || (b.value == a.value && b.row < a.row)) return b;
  return a;
}

std::optional<std::uint32_t> FastLmHead::argmax_from_pivot(const SparseInput& hidden, LmHeadCounters& counters) {
  // Certainly finite: no product or sum overflows, so no score is ±∞ or NaN.
  if (!matrix_.output_certainly_finite(hidden)) return std::nullopt;
  const std::optional<std::size_t> pivot = pivot_of(hidden.nonzeros);
  if (!pivot) return std::nullopt;
  const std::vector<std::uint32_t>& parts = reach_[hidden.nonzeros.index(*pivot)].parts;
  if (2 * parts.size() > matrix_.parts()) return std::nullopt;  // (as for a head of one part)
  const float bound = bound_without(hidden.nonzeros, *pivot);
  // Strictly above the bound (≥ +0): above every row outside, so no tie crosses the parts' edge.
  const PartsArgmax best = scan_parts(parts, hidden, counters.weights);
  if (!best.found || best.is_nan || !(best.value > 0.0f)) return std::nullopt;
  if (best.value > bound) {
    ++counters.from_pivot;
    return static_cast<std::uint32_t>(best.row);
  }
  // Above +0, the best score beats every row no weight reached, and every part whose bound is
  // below it; the parts whose bound reaches it (ties included) are computed.
  const std::vector<std::uint32_t> reaching = parts_reaching(hidden.nonzeros, parts, best.value);
  const PartsArgmax overall = better(best, scan_parts(reaching, hidden, counters.weights));
  ++counters.from_bounds;
  return static_cast<std::uint32_t>(overall.row);
}

std::uint32_t FastLmHead::compute_argmax(const SparseInput& hidden, LmHeadCounters& counters) {
  if (const auto token = argmax_from_pivot(hidden, counters)) return *token;
  const PartsArgmax scanned = scan_parts(every_part_, hidden, counters.weights);
  // Rows never written score +0; the first of them stands for all of them.
  const std::size_t unwritten = scanned.unwritten.value_or(matrix_.rows());
  if (!scanned.found) return static_cast<std::uint32_t>(unwritten);
  if (unwritten >= matrix_.rows() || scanned.is_nan) return static_cast<std::uint32_t>(scanned.row);
  if (scanned.value > 0.0f || (scanned.value == 0.0f && scanned.row < unwritten)) {
    return static_cast<std::uint32_t>(scanned.row);
  }
  return static_cast<std::uint32_t>(unwritten);
}

}  // namespace rvformer::engine
