// engine/packed_matrix.h — an fp32 weight matrix [rows, cols] stored in panels of 8 rows, column by
// column ([rows/8][cols][8]), so that y = W·x runs 8 rows at once in SIMD lanes while each row
// keeps the reference summation order.
//
// Reference order (part of the engine's numerical contract, docs/engine.md): every output is
//   y[r] = ((((+0 + W[r][0]·x[0]) + W[r][1]·x[1]) + ...) + W[r][cols-1]·x[cols-1])
// in fp32, one rounding per product and per sum, no FMA. Starting from +0 makes skipping any term
// whose product is ±0 bit-exact (with finite x), so sparse fast paths can reproduce it exactly.
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

  void set_row(std::size_t row, std::span<const float> values);
  // Sets rows [first_row, first_row + values.size() / cols) of one panel (first_row a multiple of
  // panel_rows) from row-major values; the fast way to fill a large matrix.
  void set_panel_rows(std::size_t first_row, std::span<const float> values);
  void copy_row(std::size_t row, std::span<float> out) const;

  // y = W·x (x has cols() values, y has rows() values) in the reference order above.
  void multiply(std::span<const float> x, std::span<float> y) const;

 private:
  struct Free {
    void operator()(float* values) const { std::free(values); }
  };

  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::unique_ptr<float[], Free> panels_;
};

}  // namespace rvformer::engine
