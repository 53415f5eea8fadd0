// engine/dense_matrix.h — a weight matrix [rows, cols] for the dense path: read where it lies (the
// row-major F32, BF16 or F16 bytes of a memory-mapped checkpoint tensor, or fp32 values held in
// memory, for tests and hand-built weights) and upcast to fp32 as it is multiplied, or, for F32
// tensors by default, copied at load into fp32 panels (packed_matrix.h), which multiply faster and
// cost no more memory than the F32 file. A BF16 model therefore takes 2 bytes per weight, in the page
// cache, instead of the 4 an fp32 copy would.
//
// Reference order (part of the engine's numerical contract, docs/engine.md): every output is
//   y[r] = ((((+0 + W[r][0]·x[0]) + W[r][1]·x[1]) + ...) + W[r][cols-1]·x[cols-1])
// in fp32, one rounding per product and per sum, no FMA. Starting from +0 makes skipping any term
// whose product is ±0 bit-exact (with finite x), so sparse fast paths can reproduce it exactly.
// The kernels put eight rows in SIMD lanes (transposing 8×8 blocks of the row-major weights); each
// lane keeps this order, so which kernel, and which thread, computes a row never changes its bits.
// They skip a block whose 64 weights are all ±0 where its eight inputs are finite: its products are
// then ±0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/dtype.h"

namespace rvformer::engine {

struct CheckpointTensor;
class PackedMatrix;
class Workers;

class DenseMatrix {
 public:
  DenseMatrix() = default;
  // Views a checkpoint tensor's mapped bytes (rows = shape[0], cols = the product of the rest);
  // the mapping must outlive the matrix. Throws rvformer::Error for a dtype that is not a weight dtype.
  static DenseMatrix view(const CheckpointTensor& tensor);
  // view(), except that an F32 tensor is copied into fp32 panels unless `f32_in_place`.
  static DenseMatrix load(const CheckpointTensor& tensor, bool f32_in_place);
  // Views little-endian row-major `bytes` of `dtype` (rows · cols elements), which must outlive it.
  DenseMatrix(DType dtype, std::size_t rows, std::size_t cols, std::span<const std::uint8_t> bytes);
  // Holds row-major fp32 values (rows · cols of them).
  DenseMatrix(std::size_t rows, std::size_t cols, std::vector<float> values);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  DType dtype() const { return dtype_; }
  bool packed() const { return packed_ != nullptr; }

  void copy_row(std::size_t row, std::span<float> out) const;

  // y = W·x (x has cols() values, y has rows() values) in the reference order above, on the
  // calling thread; or with the rows split between the workers' threads (bit-identical).
  void multiply(std::span<const float> x, std::span<float> y) const;
  void multiply(std::span<const float> x, std::span<float> y, Workers& workers) const;
  // Rows [first, end) of y = W·x.
  void multiply_rows(std::span<const float> x, std::span<float> y, std::size_t first, std::size_t end) const;
  // y_i = W·x_i for `count` inputs at once (x: count × cols() values, y: count × rows(), input by
  // input), each bit-identical to multiply(x_i, y_i): the AVX2 kernel multiplies every 8×8 block of
  // weights it loads with every input. Rows split between the workers' threads.
  void multiply_batch(std::span<const float> x, std::span<float> y, std::size_t count, Workers& workers) const;

 private:
  void multiply_rows_batch(std::span<const float> x, std::span<float> y, std::size_t count, std::size_t first,
                           std::size_t end) const;
  // Calls rows(first, end) on row ranges that cover [0, rows()), one per worker when `count` products
  // of the matrix are worth splitting.
  void split_rows(Workers& workers, std::size_t count, const std::function<void(std::size_t, std::size_t)>& rows) const;

  DType dtype_ = DType::F32;
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  const std::uint8_t* data_ = nullptr;
  std::shared_ptr<const std::vector<float>> owned_;  // the values of a matrix built in memory
  std::shared_ptr<const PackedMatrix> packed_;       // the panels of a packed F32 matrix
};

}  // namespace rvformer::engine
