// engine/dense_matrix.cpp — see dense_matrix.h. Two kernels compute the same sums: a scalar one
// (any CPU, and the rows and columns that do not fill an 8×8 block) and, on x86-64 CPUs with AVX2,
// one that loads 8×8 blocks of weights (eight rows, eight columns), upcasts and transposes them so
// that each SIMD lane holds one row, and adds the eight columns' products lane by lane in column
// order. Lane-wise mul and add round exactly like the scalar operations (the build forbids FMA
// contraction), so both kernels give the same bits.
#include "engine/dense_matrix.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "engine/checkpoint.h"
#include "engine/fast_kernels.h"
#include "engine/packed_matrix.h"
#include "engine/workers.h"
#include "support/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rvformer::engine {

namespace {

// One weight as fp32, exactly (the upcasts of dtype.h).
template <DType dtype>
float weight_at(const std::uint8_t* row, std::size_t col) {
  if constexpr (dtype == DType::F32) {
    float value;
    std::memcpy(&value, row + 4 * col, sizeof value);
    return value;
  } else {
    std::uint16_t bits;
    std::memcpy(&bits, row + 2 * col, sizeof bits);
    if constexpr (dtype == DType::BF16) return std::bit_cast<float>(std::uint32_t{bits} << 16);
    return f16_to_float(bits);
  }
}

// Rows [first, end), columns from `col` on, continuing the sums in `sums` (one per row).
template <DType dtype>
void continue_rows(const std::uint8_t* data, std::size_t cols, const float* x, std::size_t first, std::size_t end,
                   std::size_t col, float* sums) {
  const std::size_t row_bytes = cols * dtype_size(dtype);
  for (std::size_t row = first; row < end; ++row) {
    const std::uint8_t* weights = data + row * row_bytes;
    float sum = sums[row - first];
    for (std::size_t c = col; c < cols; ++c) sum += weight_at<dtype>(weights, c) * x[c];
    sums[row - first] = sum;
  }
}

template <DType dtype>
void scalar_rows(const std::uint8_t* data, std::size_t cols, const float* x, float* y, std::size_t first,
                 std::size_t end) {
  std::fill(y + first, y + end, 0.0f);  // +0, see the header
  continue_rows<dtype>(data, cols, x, first, end, 0, y + first);
}

}  // namespace

#if defined(__x86_64__)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,bmi,bmi2,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
#endif

// Everything in this region calls only intrinsics and out-of-line functions: an inline function of
// another header compiled here for AVX2 could be picked by the linker for baseline callers.
namespace avx2 {
namespace {

constexpr std::size_t lanes = 8;

// Eight consecutive weights of one row, upcast (F16 through the exact software conversion, as
// vcvtph2ps would quiet a signalling NaN).
template <DType dtype>
[[gnu::always_inline]] inline __m256 load_eight(const std::uint8_t* row, std::size_t col) {
  if constexpr (dtype == DType::F32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + col);
  } else if constexpr (dtype == DType::BF16) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * col));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16));
  } else {
    alignas(32) float values[lanes];
    for (std::size_t i = 0; i < lanes; ++i) {
      std::uint16_t bits;
      __builtin_memcpy(&bits, row + 2 * (col + i), sizeof bits);
      values[i] = f16_to_float(bits);
    }
    return _mm256_load_ps(values);
  }
}

// r[i] = row i's columns 0..7  →  r[k] = column k's rows 0..7.
[[gnu::always_inline]] inline void transpose(__m256 r[lanes]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// Loads the 8×8 block of eight rows at columns col..col+7; false when its weights are all ±0. Such a
// block multiplied with finite inputs adds only ±0 products, which leave a sum that started at +0 as
// it is, so the kernels skip it then: a merged model's compiled layers are zero on the base's
// dimensions and its base layers on the machine's.
template <DType dtype>
[[gnu::always_inline]] inline bool load_block(__m256 block[lanes], const std::uint8_t* rows, std::size_t row_bytes,
                                              std::size_t col) {
  __m256 any = _mm256_setzero_ps();
#pragma GCC unroll 8
  for (std::size_t i = 0; i < lanes; ++i) {
    block[i] = load_eight<dtype>(rows + i * row_bytes, col);
    any = _mm256_or_ps(any, block[i]);
  }
  const __m256i magnitudes = _mm256_castps_si256(_mm256_and_ps(any, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF))));
  return !_mm256_testz_si256(magnitudes, magnitudes);
}

// Whether x[0..7] are all finite.
[[gnu::always_inline]] inline bool finite_eight(const float* x) {
  const __m256 magnitudes = _mm256_and_ps(_mm256_loadu_ps(x), _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
  return _mm256_movemask_ps(_mm256_cmp_ps(magnitudes, _mm256_set1_ps(INFINITY), _CMP_LT_OQ)) == 0xFF;
}

// acc (eight rows' sums, one per lane) plus the products of their columns col..col+7, in column
// order.
template <DType dtype>
[[gnu::always_inline]] inline __m256 add_block(__m256 acc, const std::uint8_t* rows, std::size_t row_bytes,
                                               const float* x, std::size_t col) {
  __m256 block[lanes];
  if (!load_block<dtype>(block, rows, row_bytes, col) && finite_eight(x + col)) return acc;
  transpose(block);
#pragma GCC unroll 8
  for (std::size_t k = 0; k < lanes; ++k) acc = _mm256_add_ps(acc, _mm256_mul_ps(block[k], _mm256_broadcast_ss(x + col + k)));
  return acc;
}

// Eight rows from `first`: their sums over the columns that fill whole blocks, lane by lane in
// column order from +0. (Two groups of eight at once, to hide the add latency, ran slower: real
// models' row strides are multiples of 512 bytes, so sixteen rows' current lines fall into a few L1
// sets and evict each other.)
template <DType dtype>
void eight_rows(const std::uint8_t* data, std::size_t cols, const float* x, std::size_t first, float* sums) {
  const std::size_t row_bytes = cols * dtype_size(dtype);
  const std::uint8_t* rows = data + first * row_bytes;
  __m256 acc = _mm256_setzero_ps();
  for (std::size_t col = 0; col + lanes <= cols; col += lanes) acc = add_block<dtype>(acc, rows, row_bytes, x, col);
  _mm256_storeu_ps(sums, acc);
}

template <DType dtype>
void rows(const std::uint8_t* data, std::size_t cols, const float* x, float* y, std::size_t first, std::size_t end) {
  const std::size_t block_cols = cols / lanes * lanes;
  std::size_t row = first;
  for (; row + lanes <= end; row += lanes) {
    eight_rows<dtype>(data, cols, x, row, y + row);
    continue_rows<dtype>(data, cols, x, row, row + lanes, block_cols, y + row);
  }
  if (row < end) scalar_rows<dtype>(data, cols, x, y, row, end);
}

// Rows [first, first + 8) for G inputs at once (x: G rows of `cols`, y: G rows of `y_stride`): each
// 8×8 weight block is loaded and transposed once and multiplied with every input, whose sums stay
// lane by lane in column order as in eight_rows.
// Whether columns col..col+7 of all G inputs (rows of `cols` values) are finite.
template <std::size_t G>
[[gnu::always_inline]] inline bool all_finite(const float* x, std::size_t cols, std::size_t col) {
  bool finite = true;
#pragma GCC unroll 8
  for (std::size_t g = 0; g < G; ++g) finite = finite && finite_eight(x + g * cols + col);
  return finite;
}

template <DType dtype, std::size_t G>
void eight_rows_of_group(const std::uint8_t* data, std::size_t cols, const float* x, std::size_t first, float* y,
                         std::size_t y_stride) {
  const std::size_t row_bytes = cols * dtype_size(dtype);
  const std::uint8_t* rows = data + first * row_bytes;
  __m256 acc[G];
#pragma GCC unroll 8
  for (std::size_t g = 0; g < G; ++g) acc[g] = _mm256_setzero_ps();
  for (std::size_t col = 0; col + lanes <= cols; col += lanes) {
    __m256 block[lanes];
    if (!load_block<dtype>(block, rows, row_bytes, col) && all_finite<G>(x, cols, col)) continue;
    transpose(block);
#pragma GCC unroll 8
    for (std::size_t k = 0; k < lanes; ++k) {
#pragma GCC unroll 8
      for (std::size_t g = 0; g < G; ++g) {
        acc[g] = _mm256_add_ps(acc[g], _mm256_mul_ps(block[k], _mm256_broadcast_ss(x + g * cols + col + k)));
      }
    }
  }
#pragma GCC unroll 8
  for (std::size_t g = 0; g < G; ++g) _mm256_storeu_ps(y + g * y_stride + first, acc[g]);
}

template <DType dtype>
void eight_rows_of_inputs(const std::uint8_t* data, std::size_t cols, const float* x, std::size_t count,
                          std::size_t first, float* y, std::size_t y_stride) {
  for (std::size_t input = 0; input < count; input += lanes) {
    const float* xs = x + input * cols;
    float* ys = y + input * y_stride;
    switch (std::min(lanes, count - input)) {
      case 1: eight_rows_of_group<dtype, 1>(data, cols, xs, first, ys, y_stride); break;
      case 2: eight_rows_of_group<dtype, 2>(data, cols, xs, first, ys, y_stride); break;
      case 3: eight_rows_of_group<dtype, 3>(data, cols, xs, first, ys, y_stride); break;
      case 4: eight_rows_of_group<dtype, 4>(data, cols, xs, first, ys, y_stride); break;
      case 5: eight_rows_of_group<dtype, 5>(data, cols, xs, first, ys, y_stride); break;
      case 6: eight_rows_of_group<dtype, 6>(data, cols, xs, first, ys, y_stride); break;
      case 7: eight_rows_of_group<dtype, 7>(data, cols, xs, first, ys, y_stride); break;
      default: eight_rows_of_group<dtype, 8>(data, cols, xs, first, ys, y_stride); break;
    }
  }
}

// Rows [first, end) of y_i = W·x_i for `count` inputs: whole groups of eight rows through the batched
// blocks, then their leftover columns and the leftover rows as in rows().
template <DType dtype>
void rows_of_inputs(const std::uint8_t* data, std::size_t cols, const float* x, std::size_t count, float* y,
                    std::size_t y_stride, std::size_t first, std::size_t end) {
  const std::size_t block_cols = cols / lanes * lanes;
  std::size_t row = first;
  for (; row + lanes <= end; row += lanes) {
    eight_rows_of_inputs<dtype>(data, cols, x, count, row, y, y_stride);
    for (std::size_t input = 0; input < count; ++input) {
      continue_rows<dtype>(data, cols, x + input * cols, row, row + lanes, block_cols, y + input * y_stride + row);
    }
  }
  for (std::size_t input = 0; input < count && row < end; ++input) {
    scalar_rows<dtype>(data, cols, x + input * cols, y + input * y_stride, row, end);
  }
}

}  // namespace
}  // namespace avx2

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif  // __x86_64__

namespace {

template <DType dtype>
void multiply_rows_of(const std::uint8_t* data, std::size_t cols, const float* x, float* y, std::size_t first,
                      std::size_t end) {
#if defined(__x86_64__)
  static const bool avx2 = cpu_runs_x86_64_v3();
  if (avx2) return avx2::rows<dtype>(data, cols, x, y, first, end);
#endif
  scalar_rows<dtype>(data, cols, x, y, first, end);
}

// The batched product where a kernel for it exists (AVX2, weights read in place); false otherwise.
template <DType dtype>
bool multiply_rows_of_inputs(const std::uint8_t* data, std::size_t cols, const float* x, std::size_t count, float* y,
                             std::size_t y_stride, std::size_t first, std::size_t end) {
#if defined(__x86_64__)
  static const bool avx2 = cpu_runs_x86_64_v3();
  if (avx2) {
    avx2::rows_of_inputs<dtype>(data, cols, x, count, y, y_stride, first, end);
    return true;
  }
#endif
  return false;
}

}  // namespace

DenseMatrix DenseMatrix::view(const CheckpointTensor& tensor) {
  const std::size_t rows = tensor.shape.empty() ? 1 : tensor.shape.front();
  const std::size_t cols = rows == 0 ? 0 : tensor.element_count() / rows;
  if (!is_weight_dtype(tensor.dtype)) {
    fail("tensor '{}' has dtype {}; weights must be F32, BF16 or F16", tensor.stored_name, dtype_name(tensor.dtype));
  }
  return DenseMatrix(tensor.dtype, rows, cols, tensor.bytes);
}

DenseMatrix DenseMatrix::load(const CheckpointTensor& tensor, bool f32_in_place) {
  DenseMatrix matrix = view(tensor);
  if (matrix.dtype_ != DType::F32 || f32_in_place) return matrix;
  auto packed = std::make_shared<PackedMatrix>(matrix.rows_, matrix.cols_);
  std::vector<float> panel(PackedMatrix::panel_rows * matrix.cols_);
  for (std::size_t first = 0; first < matrix.rows_; first += PackedMatrix::panel_rows) {
    const std::size_t count = std::min(PackedMatrix::panel_rows, matrix.rows_ - first);
    const auto values = std::span(panel).first(count * matrix.cols_);
    std::memcpy(values.data(), matrix.data_ + first * matrix.cols_ * sizeof(float), values.size_bytes());
    packed->set_panel_rows(first, values);
  }
  matrix.packed_ = std::move(packed);
  matrix.data_ = nullptr;
  return matrix;
}

DenseMatrix::DenseMatrix(DType dtype, std::size_t rows, std::size_t cols, std::span<const std::uint8_t> bytes)
    : dtype_(dtype), rows_(rows), cols_(cols), data_(bytes.data()) {
  if (!is_weight_dtype(dtype) || bytes.size() != rows * cols * dtype_size(dtype)) {
    throw std::logic_error("DenseMatrix: the bytes do not hold rows × cols weights of a weight dtype");
  }
}

DenseMatrix::DenseMatrix(std::size_t rows, std::size_t cols, std::vector<float> values)
    : rows_(rows), cols_(cols), owned_(std::make_shared<const std::vector<float>>(std::move(values))) {
  if (owned_->size() != rows * cols) throw std::logic_error("DenseMatrix: values do not hold rows × cols floats");
  data_ = reinterpret_cast<const std::uint8_t*>(owned_->data());
}

void DenseMatrix::copy_row(std::size_t row, std::span<float> out) const {
  if (packed_) return packed_->copy_row(row, out);
  const std::size_t row_bytes = cols_ * dtype_size(dtype_);
  decode_floats(dtype_, std::span(data_ + row * row_bytes, row_bytes), out.first(cols_));
}

void DenseMatrix::multiply_rows(std::span<const float> x, std::span<float> y, std::size_t first,
                                std::size_t end) const {
  if (packed_) return packed_->multiply_rows(x, y, first, end);
  switch (dtype_) {
    case DType::F32:
      return multiply_rows_of<DType::F32>(data_, cols_, x.data(), y.data(), first, end);
    case DType::BF16:
      return multiply_rows_of<DType::BF16>(data_, cols_, x.data(), y.data(), first, end);
    default:
      return multiply_rows_of<DType::F16>(data_, cols_, x.data(), y.data(), first, end);
  }
}

void DenseMatrix::multiply(std::span<const float> x, std::span<float> y) const { multiply_rows(x, y, 0, rows_); }

void DenseMatrix::multiply_rows_batch(std::span<const float> x, std::span<float> y, std::size_t count,
                                      std::size_t first, std::size_t end) const {
  bool batched = false;
  if (!packed_ && dtype_ == DType::BF16) {
    batched = multiply_rows_of_inputs<DType::BF16>(data_, cols_, x.data(), count, y.data(), rows_, first, end);
  } else if (!packed_ && dtype_ == DType::F32) {
    batched = multiply_rows_of_inputs<DType::F32>(data_, cols_, x.data(), count, y.data(), rows_, first, end);
  }
  if (batched) return;
  for (std::size_t input = 0; input < count; ++input) {
    multiply_rows(x.subspan(input * cols_, cols_), y.subspan(input * rows_, rows_), first, end);
  }
}

void DenseMatrix::multiply_batch(std::span<const float> x, std::span<float> y, std::size_t count,
                                 Workers& workers) const {
  if (x.size() != count * cols_ || y.size() != count * rows_) {
    throw std::logic_error("DenseMatrix::multiply_batch: the inputs or outputs do not hold count vectors");
  }
  if (count == 1) return multiply(x, y, workers);
  split_rows(workers, count, [&](std::size_t first, std::size_t end) { multiply_rows_batch(x, y, count, first, end); });
}

void DenseMatrix::multiply(std::span<const float> x, std::span<float> y, Workers& workers) const {
  split_rows(workers, 1, [&](std::size_t first, std::size_t end) { multiply_rows(x, y, first, end); });
}

void DenseMatrix::split_rows(Workers& workers, std::size_t count,
                             const std::function<void(std::size_t, std::size_t)>& rows) const {
  const std::size_t parts = workers.threads();
  if (parts == 1 || count * rows_ * cols_ < workers.min_parallel_work() || rows_ < 2 * parts) return rows(0, rows_);
  // Whole groups of eight rows per thread, so that each computes full SIMD blocks.
  const std::size_t share = (rows_ + parts - 1) / parts;
  const std::size_t chunk = (share + 7) / 8 * 8;
  workers.run([&](std::size_t part) {
    const std::size_t first = std::min(rows_, part * chunk);
    rows(first, std::min(rows_, first + chunk));
  });
}

}  // namespace rvformer::engine
