// engine/fast_lm_head.cpp — see fast_lm_head.h.
#include "engine/fast_lm_head.h"

#include <cmath>
#include <cstring>
#include <optional>

#include "engine/ops.h"

namespace rvformer::engine {

namespace {

// The second part starts at the block boundary nearest the middle of the vocabulary.
std::vector<std::size_t> halves(std::size_t rows) {
  const std::size_t middle = rows / 2 / block_lanes * block_lanes;
  if (middle == 0) return {};
  return {middle};
}

// Picks the better of two candidates where `first` has the lower row: higher value, then lower row.
template <typename Best>
Best better(const Best& first, const Best& second) {
  if (first.is_nan) return first;
  if (second.is_nan) return second;
  return second.value > first.value ? second : first;
}

}  // namespace

FastLmHead::FastLmHead(const CheckpointTensor& weights)
    : FastLmHead(ColumnMatrix::from_tensor(weights, halves(weights.shape.at(0)))) {}

FastLmHead::FastLmHead(std::size_t vocab, std::size_t hidden, std::span<const float> row_major)
    : FastLmHead(ColumnMatrix(vocab, hidden, row_major, halves(vocab))) {}

FastLmHead::FastLmHead(ColumnMatrix matrix)
    : matrix_(std::move(matrix)), scores_(block_count(matrix_.rows()) * block_lanes, 0.0f) {
  for (std::size_t part = 0; part < matrix_.parts(); ++part) {
    written_.emplace_back(block_count(matrix_.part_end(part) - matrix_.part_begin(part)));
  }
}

std::vector<float> FastLmHead::logits(const SparseInput& hidden, std::uint64_t& weights) const {
  std::vector<float> result(block_count(matrix_.rows()) * block_lanes, 0.0f);  // whole blocks while accumulating
  for (std::size_t part = 0; part < matrix_.parts(); ++part) {
    weights += matrix_.accumulate_part(hidden, part, result.data() + matrix_.part_begin(part), nullptr);
  }
  result.resize(matrix_.rows());
  return result;
}

std::uint32_t FastLmHead::argmax(const SparseInput& hidden, HelperThread* helper, std::uint64_t& weights) {
  if (matrix_.needs_every_row(hidden)) return static_cast<std::uint32_t>(engine::argmax(logits(hidden, weights)));
  if (helper != nullptr && matrix_.parts() > 1) {
    PartJob job{this, &hidden, 1, {}, 0};
    helper->start(&FastLmHead::run_part, &job);
    const Best first = argmax_part(hidden, 0, weights);
    helper->wait();
    weights += job.weights;
    return static_cast<std::uint32_t>(better(first, job.best).row);
  }
  Best best = argmax_part(hidden, 0, weights);
  for (std::size_t part = 1; part < matrix_.parts(); ++part) best = better(best, argmax_part(hidden, part, weights));
  return static_cast<std::uint32_t>(best.row);
}

void FastLmHead::run_part(void* argument) {
  auto& job = *static_cast<PartJob*>(argument);
  job.best = job.head->argmax_part(*job.hidden, job.part, job.weights);
}

FastLmHead::Best FastLmHead::argmax_part(const SparseInput& hidden, std::size_t part, std::uint64_t& weights) {
  const std::size_t begin = matrix_.part_begin(part);
  const std::size_t rows = matrix_.part_end(part) - begin;
  BlockSet& written = written_[part];
  weights += matrix_.accumulate_part(hidden, part, scores_.data() + begin, &written);

  // Rows never written score +0; the first of them stands for all.
  std::optional<Best> unwritten_best;
  if (const std::size_t block = written.first_missing(); block * block_lanes < rows) {
    unwritten_best = Best{.value = 0.0f, .row = begin + block * block_lanes, .is_nan = false};
  }
  const BlockArgmax scanned =
      fast_kernels().argmax_written(scores_.data() + begin, written.words().data(), written.words().size(), rows);
  if (!scanned.found) return *unwritten_best;
  const Best written_best{.value = scanned.value, .row = begin + scanned.row, .is_nan = scanned.is_nan};
  if (!unwritten_best) return written_best;
  return unwritten_best->row < written_best.row ? better(*unwritten_best, written_best)
                                                : better(written_best, *unwritten_best);
}

}  // namespace rvformer::engine
