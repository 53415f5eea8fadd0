// engine/leading_column.cpp — see leading_column.h.
#include "engine/leading_column.h"

#include <algorithm>
#include <array>
#include <bit>

#include "engine/fast_ops.h"

namespace rvformer::engine {

std::optional<LeadingColumn> LeadingColumn::of(const ColumnMatrix& gate) {
  if (gate.parts() != 1 || gate.has_nonfinite_weights() || gate.part_columns(0).empty()) return std::nullopt;
  const std::uint32_t column = gate.part_columns(0).front();
  LeadingColumn leading(gate, column);
  std::size_t leading_blocks = 0;
  std::size_t reached_blocks = 0;
  for (std::size_t w = 0; w < leading.words_; ++w) {
    std::uint64_t any = 0;
    for (const std::uint32_t col : gate.part_columns(0)) any |= leading.reached_[col * leading.words_ + w];
    leading_blocks += static_cast<std::size_t>(std::popcount(leading.reached_[column * leading.words_ + w]));
    reached_blocks += static_cast<std::size_t>(std::popcount(any));
  }
  if (2 * leading_blocks < reached_blocks) return std::nullopt;
  return leading;
}

LeadingColumn::LeadingColumn(const ColumnMatrix& gate, std::uint32_t column)
    : column_(column),
      words_((block_count(gate.rows()) + 64 * word_group - 1) / (64 * word_group) * word_group),
      weights_(block_count(gate.rows()) * block_lanes, 0.0f),
      block_weights_(block_count(gate.rows()), 0),
      reached_(gate.cols() * words_, 0),
      on_alone_(words_ * 64),
      needed_(words_ * 64) {
  needed_blocks_.reserve(block_count(gate.rows()));
  for (const std::uint32_t col : gate.part_columns(0)) {
    const std::vector<float> weights = gate.dense_column(col);
    for (std::size_t row = 0; row < weights.size(); ++row) {
      if (weights[row] == 0.0f) continue;
      const std::size_t block = row / block_lanes;
      reached_[col * words_ + block / 64] |= std::uint64_t{1} << (block % 64);
      if (col != column) continue;
      weights_[row] = weights[row];
      ++block_weights_[block];
    }
  }
}

const BlockSet& LeadingColumn::blocks_on_alone(float x_lead) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x_lead);
  if (on_alone_bits_ == bits) return on_alone_;
  on_alone_.clear();
  for (std::size_t row = 0; row < weights_.size(); ++row) {
    // As the product computes it: the first term of a sum that starts at +0.
    const float gate = 0.0f + weights_[row] * x_lead;
    if ((std::bit_cast<std::uint32_t>(fast_silu(gate)) & 0x7fffffffu) == 0) continue;
    on_alone_.insert(row / block_lanes);
  }
  on_alone_bits_ = bits;
  return on_alone_;
}

std::optional<std::size_t> LeadingColumn::multiply(const ColumnMatrix& gate, const SparseInput& x, BlockVector& y) {
  const SparseVector& nonzeros = x.nonzeros;
  // Inputs below the leading column meet no weight.
  std::size_t lead = 0;
  while (lead < nonzeros.size() && nonzeros.index(lead) < column_) ++lead;
  if (gate.needs_every_row(x) || lead == nonzeros.size() || nonzeros.index(lead) != column_) return std::nullopt;
  const float x_lead = nonzeros.value(lead);
  needed_ = blocks_on_alone(x_lead);
  const std::span<const std::uint32_t> columns = nonzeros.indices().subspan(lead + 1);
  const std::span<std::uint64_t> needed = needed_.words();
  for (std::size_t first = 0; first < words_; first += word_group) {
    // One group of words in registers while every column's words are or-ed in.
    std::array<std::uint64_t, word_group> group{};
    std::copy_n(needed.begin() + static_cast<std::ptrdiff_t>(first), word_group, group.begin());
    for (const std::uint32_t col : columns) {
      const std::uint64_t* reached = reached_.data() + col * words_ + first;
      for (std::size_t w = 0; w < word_group; ++w) group[w] |= reached[w];
    }
    std::copy(group.begin(), group.end(), needed.begin() + static_cast<std::ptrdiff_t>(first));
  }
  needed_.list(needed_blocks_);
  // Each needed row starts with the leading column's term, as the reference's sum does.
  y.clear();
  y.mark(needed_blocks_);
  float* const values = y.data();
  std::size_t multiplied = 0;
  for (const std::uint32_t block : needed_blocks_) {
    float* const out = values + block * block_lanes;
    const float* const weights = weights_.data() + block * block_lanes;
    for (std::size_t lane = 0; lane < block_lanes; ++lane) out[lane] = 0.0f + weights[lane] * x_lead;
    multiplied += block_weights_[block];
  }
  return multiplied + gate.accumulate_nonzeros_from(x, lead + 1, values);
}

}  // namespace rvformer::engine
