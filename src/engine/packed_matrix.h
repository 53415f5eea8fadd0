// engine/packed_matrix.h — an fp32 copy of a weight matrix [rows, cols] in panels of 8 rows, column
// by column ([rows/8][cols][8]), so that y = W·x runs 8 rows at once in SIMD lanes reading one
// contiguous stream, while each row keeps the reference summation order of dense_matrix.h. This is
// how DenseMatrix keeps F32 checkpoint weights by default: for them a copy costs no more memory than
// the checkpoint itself, and this layout multiplies about twice as fast as reading the row-major
// file in place (which needs an 8×8 transpose per block).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <span>

namespace rvformer::engine {

class PackedMatrix {
 public:
  static constexpr std::size_t panel_rows = 8;

  PackedMatrix() = default;
  PackedMatrix(std::size_t rows, std::size_t cols);  // all zero (calloc: fresh pages cost no memset)

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }

  // Sets rows [first_row, first_row + values.size() / cols) of one panel (first_row a multiple of
  // panel_rows) from row-major values.
  void set_panel_rows(std::size_t first_row, std::span<const float> values);
  void copy_row(std::size_t row, std::span<float> out) const;

  // Rows [first, end) of y = W·x (x has cols() values) in the reference order; the other rows of y
  // are left alone.
  void multiply_rows(std::span<const float> x, std::span<float> y, std::size_t first, std::size_t end) const;

 private:
  struct Free {
    void operator()(float* values) const { std::free(values); }
  };

  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::unique_ptr<float[], Free> panels_;
};

}  // namespace rvformer::engine
