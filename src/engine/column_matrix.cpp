// engine/column_matrix.cpp — see column_matrix.h.
#include "engine/column_matrix.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>

#include "support/error.h"

namespace rvformer::engine {

namespace {

// Rows decoded from a checkpoint tensor at a time (bounded memory for the 200K-row embedding).
constexpr std::size_t rows_per_read = 256;

// Calls visit(first_row, row_major_values) for consecutive groups of rows [begin, end) of a 2-D
// tensor (all of them by default).
void for_each_row_group(const CheckpointTensor& tensor,
                        const std::function<void(std::size_t, std::span<const float>)>& visit, std::size_t begin = 0,
                        std::size_t end = ~std::size_t{0}) {
  if (tensor.shape.size() != 2) fail("{} is not a matrix", tensor.name);
  const std::size_t rows = std::min(end, tensor.shape[0]);
  const std::size_t row_bytes = tensor.shape[1] * dtype_size(tensor.dtype);
  std::vector<float> values(rows_per_read * tensor.shape[1]);
  for (std::size_t first = begin; first < rows; first += rows_per_read) {
    const std::size_t count = std::min(rows_per_read, rows - first);
    const auto group = std::span(values).first(count * tensor.shape[1]);
    decode_floats(tensor.dtype, tensor.bytes.subspan(first * row_bytes, count * row_bytes), group);
    visit(first, group);
  }
}

// The non-zero entries of a matrix, column by column, in increasing row order.
struct Columns {
  std::vector<std::vector<std::uint32_t>> rows;
  std::vector<std::vector<float>> values;

  explicit Columns(std::size_t cols) : rows(cols), values(cols) {}
  // `kept`: when not empty, the columns to hold (others only for their non-finite weights).
  void add_rows(std::size_t first_row, std::span<const float> row_major, const std::vector<bool>& kept = {}) {
    const std::size_t cols = rows.size();
    for (std::size_t i = 0; i < row_major.size(); ++i) {
      if (row_major[i] == 0.0f) continue;
      if (!kept.empty() && !kept[i % cols] && std::isfinite(row_major[i])) continue;
      rows[i % cols].push_back(static_cast<std::uint32_t>(first_row + i / cols));
      values[i % cols].push_back(row_major[i]);
    }
  }
};

std::vector<std::size_t> part_bounds(std::size_t rows, std::span<const std::size_t> part_starts) {
  std::vector<std::size_t> bounds{0};
  for (std::size_t start : part_starts) {
    if (start % block_lanes != 0 || start <= bounds.back() || start >= rows) {
      fail("matrix part starts must increase inside the rows in whole blocks (got {})", start);
    }
    bounds.push_back(start);
  }
  bounds.push_back(rows);
  return bounds;
}

// A column's record; the counts must fit its fields (16-bit per column and part, 32-bit offsets).
ColumnRange column_range(std::size_t first_block, std::size_t end_block, bool bfloat16, std::size_t first_entry,
                         std::size_t end_entry, std::size_t nonzeros) {
  constexpr std::size_t max_count = std::numeric_limits<std::uint16_t>::max();
  constexpr std::size_t max_offset = std::numeric_limits<std::uint32_t>::max();
  if (end_block - first_block > max_count || end_entry - first_entry > max_count || end_block > max_offset ||
      end_entry > max_offset) {
    fail("a matrix column holds too many weights for the fast executor's column records");
  }
  return {static_cast<std::uint32_t>(first_block), static_cast<std::uint32_t>(first_entry),
          static_cast<std::uint32_t>(nonzeros),    bfloat16,
          static_cast<std::uint16_t>(end_block - first_block), static_cast<std::uint16_t>(end_entry - first_entry)};
}

// True when every value is a bfloat16 value: its float's lower 16 bits are zero.
bool all_bfloat16(std::span<const float> values) {
  return std::all_of(values.begin(), values.end(), [](float value) { return (std::bit_cast<std::uint32_t>(value) & 0xffffu) == 0; });
}

}  // namespace

ColumnMatrix::ColumnMatrix(std::size_t rows, std::size_t cols, std::span<const float> row_major,
                           std::span<const std::size_t> part_starts)
    : rows_(rows), cols_(cols), part_begin_(part_bounds(rows, part_starts)) {
  Columns columns(cols);
  if (cols != 0) columns.add_rows(0, row_major);
  build(columns.rows, columns.values);
}

ColumnMatrix ColumnMatrix::from_tensor(const CheckpointTensor& tensor, std::span<const std::size_t> part_starts) {
  return from_tensor(tensor, part_starts, {});
}

ColumnMatrix ColumnMatrix::from_tensor(const CheckpointTensor& tensor, std::span<const std::size_t> part_starts,
                                       const std::vector<bool>& kept) {
  ColumnMatrix matrix;
  matrix.rows_ = tensor.shape.at(0);
  matrix.cols_ = tensor.shape.size() == 2 ? tensor.shape[1] : 0;
  matrix.part_begin_ = part_bounds(matrix.rows_, part_starts);
  if (!kept.empty() && kept.size() != matrix.cols_) fail("{}: a column mask of {} for {} columns", tensor.name, kept.size(), matrix.cols_);
  Columns columns(matrix.cols_);
  if (matrix.cols_ != 0) {
    for_each_row_group(tensor,
                       [&](std::size_t first, std::span<const float> values) { columns.add_rows(first, values, kept); });
  }
  matrix.build(columns.rows, columns.values);
  return matrix;
}

void ColumnMatrix::build(std::span<const std::vector<std::uint32_t>> column_rows,
                         std::span<const std::vector<float>> column_values) {
  std::vector<bool> reachable(block_count(rows_), false);
  std::vector<double> row_magnitude(rows_, 0.0);
  for (std::size_t col = 0; col < cols_; ++col) {
    const auto& rows = column_rows[col];
    const auto& values = column_values[col];
    nonzero_count_ += rows.size();
    std::size_t k = 0;
    for (std::size_t part = 0; part < parts(); ++part) {
      const std::size_t first_block = block_index_.size();
      const std::size_t first_entry = entries_.size();
      const std::size_t begin = part_begin_[part];
      const std::size_t first_in_part = k;
      while (k < rows.size() && rows[k] < part_begin_[part + 1]) {
        // The column's entries in the block of rows[k]: dense when there are enough of them.
        const std::size_t block = rows[k] / block_lanes;
        std::size_t end = k;
        while (end < rows.size() && rows[end] / block_lanes == block) ++end;
        for (std::size_t e = k; e < end; ++e) {
          has_nonfinite_weights_ = has_nonfinite_weights_ || !std::isfinite(values[e]);
          row_magnitude[rows[e]] += std::fabs(static_cast<double>(values[e]));
        }
        reachable[block] = true;
        if (end - k >= dense_block_min_nonzeros) {
          block_index_.push_back(static_cast<std::uint32_t>(block - begin / block_lanes));
          block_values_.resize(block_values_.size() + block_lanes, 0.0f);
          float* dense = block_values_.data() + block_values_.size() - block_lanes;
          for (std::size_t e = k; e < end; ++e) dense[rows[e] % block_lanes] = values[e];
        } else {
          for (std::size_t e = k; e < end; ++e) entries_.push_back({static_cast<std::uint32_t>(rows[e] - begin), values[e]});
        }
        k = end;
      }
      ranges_.push_back(record_part(first_block, first_entry, k - first_in_part));
    }
  }
  for (std::size_t part = 0; part < parts(); ++part) {
    part_column_begin_.push_back(part_columns_.size());
    for (std::size_t col = 0; col < cols_; ++col) {
      const std::size_t i = index(col, part);
      if (ranges_[i].nonzeros != 0) {
        part_columns_.push_back(static_cast<std::uint32_t>(col));
      }
    }
  }
  part_column_begin_.push_back(part_columns_.size());
  for (std::size_t block = 0; block < reachable.size(); ++block) {
    if (reachable[block]) reachable_blocks_.push_back(static_cast<std::uint32_t>(block));
  }
  for (double magnitude : row_magnitude) max_row_magnitude_ = std::max(max_row_magnitude_, magnitude);
}

// The record of the column part whose blocks and entries were just appended; its blocks move to the
// bfloat16 storage when every weight in them is a bfloat16 value.
ColumnRange ColumnMatrix::record_part(std::size_t first_block, std::size_t first_entry, std::size_t nonzeros) {
  const std::span<const float> values = std::span(block_values_).subspan(first_block * block_lanes);
  if (values.empty() || !all_bfloat16(values)) {
    return column_range(first_block, block_index_.size(), false, first_entry, entries_.size(), nonzeros);
  }
  const std::size_t first_narrow = bfloat16_block_index_.size();
  bfloat16_block_index_.insert(bfloat16_block_index_.end(), block_index_.begin() + first_block, block_index_.end());
  for (float value : values) bfloat16_block_values_.push_back(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(value) >> 16));
  block_index_.resize(first_block);
  block_values_.resize(first_block * block_lanes);
  return column_range(first_narrow, bfloat16_block_index_.size(), true, first_entry, entries_.size(), nonzeros);
}

double ColumnMatrix::output_bound(const SparseInput& x) const {
  if (has_nonfinite_weights_ || cols_ > (std::size_t{1} << 20)) return INFINITY;
  // Each rounded product and partial sum of a row is at most (1 + 2^-24)^(cols + 1) ≤ 1.07 times
  // Σ|w|·|x| for cols ≤ 2^20; a margin of 2 covers that.
  return 2.0 * static_cast<double>(x.nonzeros.largest_magnitude()) * max_row_magnitude_;
}

std::size_t ColumnMatrix::multiply(const SparseInput& x, BlockVector& y) const {
  y.clear();
  if (parts() == 1 && !needs_every_row(x)) {
    // Only the blocks written can hold anything but +0.
    const std::size_t touched = accumulate_part(x, 0, y.data(), &y.written());
    y.mark_written();
    return touched;
  }
  if (needs_every_row(x)) {
    y.mark_all();
  } else {
    y.mark(reachable_blocks_);
  }
  std::size_t touched = 0;
  for (std::size_t part = 0; part < parts(); ++part) touched += accumulate_part(x, part, y.data() + part_begin(part), nullptr);
  return touched;
}

ColumnStorage ColumnMatrix::storage() const {
  return {parts(),
          ranges_.data(),
          {block_index_.data(), block_values_.data()},
          {bfloat16_block_index_.data(), bfloat16_block_values_.data()},
          entries_.data()};
}

std::size_t ColumnMatrix::accumulate_nonzeros_from(const SparseInput& x, std::size_t first, float* y_rows) const {
  if (parts() != 1 || needs_every_row(x) || first > x.nonzeros.size()) {
    fail("accumulate_nonzeros_from needs a matrix of one part, finite weights and inputs, and a start inside the input");
  }
  return fast_kernels().accumulate(storage(), 0, x.nonzeros.indices().data() + first, x.nonzeros.values().data() + first,
                                   nullptr, x.nonzeros.size() - first, y_rows, nullptr);
}

std::size_t ColumnMatrix::accumulate_part(const SparseInput& x, std::size_t part, float* y_rows, BlockSet* written) const {
  const FastKernels& kernels = fast_kernels();
  const ColumnStorage storage = this->storage();
  std::uint64_t* written_words = written != nullptr ? written->words().data() : nullptr;
  if (!needs_every_row(x)) {
    const std::span<const std::uint32_t> columns = part_columns(part);
    if (columns.size() <= x.nonzeros.size()) {
      return kernels.accumulate(storage, part, columns.data(), nullptr, x.values.data(), columns.size(), y_rows,
                                written_words);
    }
    return kernels.accumulate(storage, part, x.nonzeros.indices().data(), x.nonzeros.values().data(), nullptr,
                              x.nonzeros.size(), y_rows, written_words);
  }
  std::size_t touched = 0;
  // A non-finite input, or a zero input times a non-finite weight, is NaN: such columns reach every row.
  const std::size_t count = has_nonfinite_weights_ ? cols_ : x.nonzeros.size();
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t col = has_nonfinite_weights_ ? static_cast<std::uint32_t>(k) : x.nonzeros.index(k);
    const float value = has_nonfinite_weights_ ? x.values[k] : x.nonzeros.value(k);
    touched += ranges_[index(col, part)].nonzeros;
    if (std::isfinite(value)) {
      kernels.accumulate(storage, part, &col, &value, nullptr, 1, y_rows, written_words);
      continue;
    }
    accumulate_every_row(col, value, part, y_rows);
    if (written != nullptr) {
      for (std::size_t block = 0; block < block_count(part_end(part) - part_begin(part)); ++block) written->insert(block);
    }
  }
  return touched;
}

void ColumnMatrix::accumulate_every_row(std::size_t col, float x, std::size_t part, float* y_rows) const {
  const std::vector<float> weights = dense_column_part(col, part);
  for (std::size_t row = 0; row < weights.size(); ++row) y_rows[row] += weights[row] * x;
}

std::vector<float> ColumnMatrix::dense_column(std::size_t col) const {
  if (parts() != 1 || col >= cols_) fail("dense_column needs a matrix of one part and a column inside it");
  return dense_column_part(col, 0);
}

std::vector<float> ColumnMatrix::dense_column_part(std::size_t col, std::size_t part) const {
  std::vector<float> weights(part_end(part) - part_begin(part), 0.0f);
  for_each_stored_weight(col, part, [&](std::size_t row, float weight) { weights[row] = weight; });
  return weights;
}

void ColumnMatrix::for_each_stored_weight(std::size_t col, std::size_t part,
                                          const std::function<void(std::size_t, float)>& visit) const {
  const std::size_t part_rows = part_end(part) - part_begin(part);
  const ColumnRange& range = ranges_[index(col, part)];
  for (std::size_t b = range.block_begin; b < range.block_begin + range.block_count; ++b) {
    const std::uint32_t block = range.bfloat16 ? bfloat16_block_index_[b] : block_index_[b];
    for (std::size_t lane = 0; lane < block_lanes; ++lane) {
      const std::size_t row = block * block_lanes + lane;
      const std::size_t at = b * block_lanes + lane;
      if (row >= part_rows) continue;
      visit(row, range.bfloat16 ? std::bit_cast<float>(std::uint32_t{bfloat16_block_values_[at]} << 16) : block_values_[at]);
    }
  }
  for (std::size_t e = range.entry_begin; e < range.entry_begin + range.entry_count; ++e) {
    visit(entries_[e].row, entries_[e].value);
  }
}

SparseRows SparseRows::from_tensor(const CheckpointTensor& tensor) {
  return from_tensor(tensor, 0, tensor.shape.empty() ? 0 : tensor.shape[0]);
}

SparseRows SparseRows::from_tensor(const CheckpointTensor& tensor, std::size_t first, std::size_t count) {
  SparseRows rows;
  const std::size_t cols = tensor.shape.size() == 2 ? tensor.shape[1] : 0;
  if (tensor.shape.size() == 2 && first + count > tensor.shape[0]) {
    fail("{}: rows {} to {} of {}", tensor.name, first, first + count, tensor.shape[0]);
  }
  for_each_row_group(
      tensor,
      [&](std::size_t, std::span<const float> values) {
        for (std::size_t i = 0; i < values.size(); ++i) {
          if (values[i] != 0.0f) {
            rows.cols_.push_back(static_cast<std::uint32_t>(i % cols));
            rows.values_.push_back(values[i]);
          }
          if ((i + 1) % cols == 0) rows.row_begin_.push_back(rows.cols_.size());
        }
      },
      first, first + count);
  return rows;
}

std::vector<bool> nonzero_rows(const CheckpointTensor& tensor) {
  std::vector<bool> nonzero(tensor.shape.at(0), false);
  const std::size_t cols = tensor.shape.size() == 2 ? tensor.shape[1] : 0;
  if (cols == 0) return nonzero;
  for_each_row_group(tensor, [&](std::size_t first, std::span<const float> values) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] != 0.0f) nonzero[first + i / cols] = true;
    }
  });
  return nonzero;
}

std::size_t SparseRows::max_row_nonzeros() const {
  std::size_t most = 0;
  for (std::size_t row = 0; row < rows(); ++row) most = std::max(most, row_begin_[row + 1] - row_begin_[row]);
  return most;
}

PaddedRows::PaddedRows(const SparseRows& rows)
    : width_(rows.max_row_nonzeros()), entries_(rows.rows() * width_, RowEntry{0, 0.0f}) {
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const auto columns = rows.columns(r);
    const auto values = rows.values(r);
    for (std::size_t e = 0; e < columns.size(); ++e) entries_[r * width_ + e] = {columns[e], values[e]};
  }
}

}  // namespace rvformer::engine
