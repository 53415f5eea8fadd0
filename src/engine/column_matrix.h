// engine/column_matrix.h — weight matrices stored for sparse products in the reference order:
//
// * ColumnMatrix: column by column (CSC). Each column keeps its 16-row blocks that hold several
//   non-zero weights as dense blocks (the zero weights in them stored as +0, so one block is one
//   vector operation) and its other non-zero weights as single entries. y = W·x visits only the
//   columns whose input is not ±0, in increasing column order, so every output still receives its
//   terms in the reference order of dense_matrix.h; the terms left out are products with a zero
//   weight or a zero input, which are ±0 (for finite factors) and cannot change a sum that started
//   at +0 (such a sum is never −0). A non-finite input, or a matrix holding a non-finite weight,
//   takes every term instead, as the reference does (0·∞ = NaN). A column part whose dense-block
//   weights are all bfloat16 values keeps those blocks as their upper 16 bits, which widen back to
//   the same floats exactly: half the bytes for the kernel to stream.
// * SparseRows: row by row (CSR), for the token embedding lookup.
// * PaddedRows: rows of a few weights each, padded to one length, for products at a few rows.
//
// Rows may be split into parts (contiguous ranges of whole blocks) that can be computed
// independently, for example on two threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "engine/block_vector.h"
#include "engine/checkpoint.h"

namespace rvformer::engine {

// A matrix product's input: the whole vector, and its entries that are not ±0 (increasing index).
struct SparseInput {
  std::span<const float> values;
  const SparseVector& nonzeros;
};

class ColumnMatrix {
 public:
  // A 16-row block with at least this many non-zero weights is stored dense.
  static constexpr std::size_t dense_block_min_nonzeros = 3;

  ColumnMatrix() = default;
  // `row_major` holds rows × cols values; part_starts lists the first row of every part after the
  // first (increasing multiples of block_lanes).
  ColumnMatrix(std::size_t rows, std::size_t cols, std::span<const float> row_major,
               std::span<const std::size_t> part_starts = {});
  // A 2-D checkpoint tensor (any weight dtype), read a few rows at a time.
  static ColumnMatrix from_tensor(const CheckpointTensor& tensor, std::span<const std::size_t> part_starts = {});
  // The same, holding only the columns `kept` marks (and any column with a weight that is not finite,
  // which no zero input cancels): for inputs that are zero in every other column, the same products.
  static ColumnMatrix from_tensor(const CheckpointTensor& tensor, std::span<const std::size_t> part_starts,
                                  const std::vector<bool>& kept);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t nonzero_count() const { return nonzero_count_; }
  // Dense 16-row blocks stored as fp32 and as bfloat16.
  std::size_t float_blocks() const { return block_index_.size(); }
  std::size_t bfloat16_blocks() const { return bfloat16_block_index_.size(); }
  std::size_t parts() const { return part_begin_.size() - 1; }
  std::size_t part_begin(std::size_t part) const { return part_begin_[part]; }
  std::size_t part_end(std::size_t part) const { return part_begin_[part + 1]; }
  // The columns with a weight in a part, increasing.
  std::span<const std::uint32_t> part_columns(std::size_t part) const {
    return {part_columns_.data() + part_column_begin_[part], part_column_begin_[part + 1] - part_column_begin_[part]};
  }

  // y = W·x: clears y (rows() values), fills it and marks the blocks it wrote (a matrix in parts, or
  // a non-finite product: the blocks the product can reach).
  // Returns the number of non-zero weights multiplied.
  std::size_t multiply(const SparseInput& x, BlockVector& y) const;
  // Adds W·x to the rows of one part, y_rows[r − part_begin] for row r (whole blocks: y_rows is
  // padded to a multiple of 16), which must hold +0 beforehand for the reference order. When
  // `written` is given, the blocks written (relative to the part) are inserted into it. Returns the
  // number of non-zero weights multiplied.
  std::size_t accumulate_part(const SparseInput& x, std::size_t part, float* y_rows, BlockSet* written) const;
  // Adds the terms of x's non-zero entries from the `first`-th on to y_rows (a matrix of one part,
  // finite weights and inputs), in column order, without recording the blocks written. Returns the
  // number of non-zero weights multiplied.
  std::size_t accumulate_nonzeros_from(const SparseInput& x, std::size_t first, float* y_rows) const;
  // Column `col` of a matrix of one part as a dense vector of rows() values (+0 where it has no weight).
  std::vector<float> dense_column(std::size_t col) const;
  // The non-zero weights column `col` holds in one part.
  std::size_t column_part_nonzeros(std::size_t col, std::size_t part) const { return ranges_[index(col, part)].nonzeros; }
  // Calls visit(row, weight) for every weight stored for a column part (rows relative to the part),
  // the +0 weights that fill its dense blocks included.
  void for_each_stored_weight(std::size_t col, std::size_t part,
                              const std::function<void(std::size_t, float)>& visit) const;
  bool has_nonfinite_weights() const { return has_nonfinite_weights_; }
  // True when a product over x may need every row (a non-finite input or weight).
  bool needs_every_row(const SparseInput& x) const { return has_nonfinite_weights_ || !x.nonzeros.all_finite(); }
  // A bound on every |(W·x)_r| and every partial sum of it, as computed in fp32: twice
  // max_r Σ|w|·max|x|; +∞ when W or x is not finite.
  double output_bound(const SparseInput& x) const;
  // True when W·x provably has only finite values.
  bool output_certainly_finite(const SparseInput& x) const {
    return output_bound(x) < static_cast<double>(std::numeric_limits<float>::max());
  }

 private:
  // Fills the storage from each column's non-zero entries (increasing rows).
  void build(std::span<const std::vector<std::uint32_t>> column_rows, std::span<const std::vector<float>> column_values);
  ColumnRange record_part(std::size_t first_block, std::size_t first_entry, std::size_t nonzeros);
  std::size_t index(std::size_t col, std::size_t part) const { return col * parts() + part; }
  ColumnStorage storage() const;
  // The weights of one column part, dense over the part's rows.
  std::vector<float> dense_column_part(std::size_t col, std::size_t part) const;
  // Every row of the part: W[:, col]·x for a non-finite x (zero weights give NaN, as the reference).
  void accumulate_every_row(std::size_t col, float x, std::size_t part, float* y_rows) const;

  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::size_t nonzero_count_ = 0;
  bool has_nonfinite_weights_ = false;
  double max_row_magnitude_ = 0;  // max over rows of Σ|w|
  std::vector<std::size_t> part_begin_{0, 0};
  // Per (column, part): where its dense blocks (block index relative to the part, 16 values each)
  // and single entries (row relative to the part, value) start, and how many there are.
  std::vector<ColumnRange> ranges_;
  std::vector<std::uint32_t> block_index_;
  BlockFloats block_values_;
  // The blocks of column parts whose block weights are all bfloat16 values, as their upper halves.
  std::vector<std::uint32_t> bfloat16_block_index_;
  std::vector<std::uint16_t, BlockAllocator<std::uint16_t>> bfloat16_block_values_;
  std::vector<ColumnEntry> entries_;
  std::vector<std::uint32_t> reachable_blocks_;  // blocks of y any weight reaches (all parts)
  // Per part, the columns with a weight in it (increasing): a part with fewer of them than the
  // input has non-zeros walks these instead.
  std::vector<std::size_t> part_column_begin_;
  std::vector<std::uint32_t> part_columns_;
};

// The rows of a 2-D tensor with a non-zero weight (a non-finite one included).
std::vector<bool> nonzero_rows(const CheckpointTensor& tensor);

// Each row's non-zero entries.
class SparseRows {
 public:
  SparseRows() = default;
  static SparseRows from_tensor(const CheckpointTensor& tensor);
  // Rows [first, first + count) of the tensor only.
  static SparseRows from_tensor(const CheckpointTensor& tensor, std::size_t first, std::size_t count);

  std::size_t rows() const { return row_begin_.size() - 1; }
  // The non-zero entries of one row: their columns (increasing) and values.
  std::span<const std::uint32_t> columns(std::size_t row) const {
    return {cols_.data() + row_begin_[row], row_begin_[row + 1] - row_begin_[row]};
  }
  std::span<const float> values(std::size_t row) const {
    return {values_.data() + row_begin_[row], row_begin_[row + 1] - row_begin_[row]};
  }
  std::size_t max_row_nonzeros() const;

 private:
  std::vector<std::size_t> row_begin_{0};
  std::vector<std::uint32_t> cols_;
  std::vector<float> values_;
};

// A weight in a row: its column and value.
struct RowEntry {
  std::uint32_t column;
  float value;
};

// The rows of a matrix whose rows hold few non-zero weights, each padded with +0 weights (at column
// 0) to the longest row's count, so that one row is one short run of entries. A row's sum over its
// entries from +0, in column order, is the reference's dot product with a finite input: the terms
// left out and the padding's terms are ±0, which cannot change a sum that started at +0.
class PaddedRows {
 public:
  explicit PaddedRows(const SparseRows& rows);

  std::size_t width() const { return width_; }
  std::span<const RowEntry> row(std::size_t r) const { return {entries_.data() + r * width_, width_}; }

 private:
  std::size_t width_;
  std::vector<RowEntry> entries_;
};

}  // namespace rvformer::engine
