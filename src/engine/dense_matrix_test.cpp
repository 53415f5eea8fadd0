// engine/dense_matrix_test.cpp — matrix-vector products read in place from F32, BF16 and F16 bytes,
// and from F32 copied into panels, against plain sequential dot products (the reference order, from
// +0), bit for bit: every shape around the kernels' 8×8 blocks and 8-row panels, row ranges that
// start and end anywhere, non-finite values, and the rows split between 2 and 3 threads.
#include "engine/dense_matrix.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "engine/bitwise_comparison.h"
#include "engine/checkpoint.h"
#include "engine/synthetic_checkpoint.h"
#include "engine/workers.h"

namespace rvformer::engine {
namespace {

std::uint32_t bits(float value) { return std::bit_cast<std::uint32_t>(value); }

// Deterministic pseudo-random floats in [-scale, scale), rounded to what `dtype` holds.
std::vector<float> random_values(std::size_t count, std::uint32_t seed, DType dtype, float scale = 1.0f) {
  std::vector<float> values(count);
  RandomStream random(seed);
  for (float& value : values) value = random.uniform(-scale, scale);
  std::vector<std::uint8_t> stored(count * dtype_size(dtype));
  encode_floats(dtype, values, stored);
  decode_floats(dtype, stored, values);
  return values;
}

std::vector<float> plain_product(const std::vector<float>& w, std::size_t cols, const std::vector<float>& x) {
  std::vector<float> y(w.size() / cols);
  for (std::size_t r = 0; r < y.size(); ++r) {
    float sum = 0.0f;
    for (std::size_t k = 0; k < cols; ++k) sum = sum + w[r * cols + k] * x[k];
    y[r] = sum;
  }
  return y;
}

// A matrix of `dtype` holding `values` (exactly representable), viewed in place, or for F32 with
// `packed` copied into panels as Model loads F32 checkpoints.
struct StoredMatrix {
  StoredMatrix(DType dtype, std::size_t rows, std::size_t cols, const std::vector<float>& values, bool packed)
      : bytes(values.size() * dtype_size(dtype)) {
    encode_floats(dtype, values, bytes);
    const CheckpointTensor tensor{"w", "w", dtype, {rows, cols}, bytes, nullptr};
    matrix = DenseMatrix::load(tensor, /*f32_in_place=*/!packed);
  }
  std::vector<std::uint8_t> bytes;
  DenseMatrix matrix;
};

void expect_identical(const std::vector<float>& actual, const std::vector<float>& expected, const std::string& what) {
  const auto difference = first_difference(actual, expected);
  EXPECT_FALSE(difference) << what << ": " << *difference;
}

// The dtype, and for F32 whether it is packed into panels.
class DenseMatrixTest : public ::testing::TestWithParam<std::pair<DType, bool>> {};

TEST_P(DenseMatrixTest, ProductsMatchSequentialDotProductsForEveryShape) {
  const auto [dtype, packed] = GetParam();
  Workers two(2, 0), three(3, 0);
  for (std::size_t rows : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 24u, 33u, 47u}) {
    for (std::size_t cols : {1u, 3u, 7u, 8u, 9u, 16u, 17u, 31u}) {
      const auto w = random_values(rows * cols, static_cast<std::uint32_t>(rows * 100 + cols), dtype);
      auto x = random_values(cols, static_cast<std::uint32_t>(cols), DType::F32, 2.0f);
      x[0] = -0.0f;
      const StoredMatrix stored(dtype, rows, cols, w, packed);
      ASSERT_EQ(stored.matrix.packed(), packed);
      const auto expected = plain_product(w, cols, x);
      const std::string what = std::string(dtype_name(dtype)) + " " + std::to_string(rows) + "x" + std::to_string(cols);

      std::vector<float> y(rows, NAN);
      stored.matrix.multiply(x, y);
      expect_identical(y, expected, what);
      for (Workers* workers : {&two, &three}) {
        std::fill(y.begin(), y.end(), NAN);
        stored.matrix.multiply(x, y, *workers);
        expect_identical(y, expected, what + " threads " + std::to_string(workers->threads()));
      }
      // A row range that starts and ends inside the SIMD groups leaves the other rows alone.
      if (rows > 3) {
        std::fill(y.begin(), y.end(), NAN);
        stored.matrix.multiply_rows(x, y, 1, rows - 2);
        for (std::size_t r = 0; r < rows; ++r) {
          if (r >= 1 && r < rows - 2) {
            EXPECT_EQ(bits(y[r]), bits(expected[r])) << what << " row " << r;
          } else {
            EXPECT_TRUE(std::isnan(y[r])) << what << " row " << r << " was written";
          }
        }
      }
      std::vector<float> row(cols);
      stored.matrix.copy_row(rows - 1, row);
      expect_identical(row, std::vector<float>(w.end() - static_cast<std::ptrdiff_t>(cols), w.end()), what + " row");
    }
  }
}

TEST_P(DenseMatrixTest, NonFiniteWeightsAndInputsPropagateAsInTheReference) {
  const auto [dtype, packed] = GetParam();
  const std::size_t rows = 19, cols = 21;
  auto w = random_values(rows * cols, 7, dtype);
  w[3 * cols + 5] = INFINITY;
  w[9 * cols + 20] = -INFINITY;
  w[12 * cols + 8] = NAN;
  w[17 * cols + 0] = 0.0f;  // meets the infinite input: NaN
  for (std::size_t r = 0; r < 8; ++r)  // an all-zero block meeting it too: not skipped
    for (std::size_t c = 0; c < 8; ++c) w[(8 + r) * cols + c] = 0.0f;
  auto x = random_values(cols, 8, DType::F32);
  x[0] = INFINITY;
  const StoredMatrix stored(dtype, rows, cols, w, packed);
  const auto expected = plain_product(w, cols, x);
  std::vector<float> y(rows);
  stored.matrix.multiply(x, y);
  expect_identical(y, expected, "one thread");
  Workers two(2, 0);
  stored.matrix.multiply(x, y, two);
  expect_identical(y, expected, "two threads");
  EXPECT_TRUE(std::isnan(y[17]));
  EXPECT_TRUE(std::isnan(y[8]));
  std::vector<float> batched(2 * rows);
  std::vector<float> inputs(x);
  inputs.insert(inputs.end(), x.begin(), x.end());
  stored.matrix.multiply_batch(inputs, batched, 2, two);
  expect_identical(std::vector<float>(batched.begin(), batched.begin() + rows), expected, "batched");
}

TEST_P(DenseMatrixTest, BatchedProductsEqualEachInputsOwnProduct) {
  const auto [dtype, packed] = GetParam();
  Workers one(1, 0), two(2, 0);
  for (std::size_t rows : {1u, 8u, 9u, 17u, 33u}) {
    for (std::size_t cols : {3u, 8u, 17u, 40u}) {
      auto w = random_values(rows * cols, static_cast<std::uint32_t>(rows * 31 + cols), dtype);
      // Blocks of zeros, of −0 and of both, where the batched kernel skips whole 8×8 blocks.
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
          if ((r / 8 + c / 8) % 3 == 0) w[r * cols + c] = (r + c) % 2 == 0 ? 0.0f : -0.0f;
        }
      }
      const StoredMatrix stored(dtype, rows, cols, w, packed);
      for (std::size_t count : {1u, 2u, 7u, 8u, 9u, 11u}) {
        auto x = random_values(count * cols, static_cast<std::uint32_t>(count * 7 + cols), DType::F32, 2.0f);
        x[0] = -0.0f;
        std::vector<float> expected;
        for (std::size_t i = 0; i < count; ++i) {
          const auto product = plain_product(w, cols, std::vector<float>(x.begin() + i * cols, x.begin() + (i + 1) * cols));
          expected.insert(expected.end(), product.begin(), product.end());
        }
        for (Workers* workers : {&one, &two}) {
          std::vector<float> y(count * rows, NAN);
          stored.matrix.multiply_batch(x, y, count, *workers);
          expect_identical(y, expected, std::string(dtype_name(dtype)) + " " + std::to_string(rows) + "x" +
                                            std::to_string(cols) + " count " + std::to_string(count) + " threads " +
                                            std::to_string(workers->threads()));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Storage, DenseMatrixTest,
                         ::testing::Values(std::pair{DType::F32, true}, std::pair{DType::F32, false},
                                           std::pair{DType::BF16, false}, std::pair{DType::F16, false}),
                         [](const auto& info) {
                           return std::string(dtype_name(info.param.first)) + (info.param.second ? "Packed" : "InPlace");
                         });

TEST(DenseMatrix, SkippingZeroProductsCannotChangeTheResult) {
  // The +0 start makes the reference order sparse-safe: an all-cancelling or all-zero row is +0.
  const DenseMatrix matrix(2, 3, {-0.0f, -0.0f, -0.0f, 1.0f, -1.0f, 0.0f});
  std::vector<float> y(2);
  matrix.multiply(std::vector<float>{1.0f, 1.0f, 1.0f}, y);
  EXPECT_EQ(bits(y[0]), 0u);
  EXPECT_EQ(bits(y[1]), 0u);
}

TEST(Workers, EveryPartRunsOnceAndConcurrentCallersStillGetAllParts) {
  Workers workers(3);
  for (int round = 0; round < 100; ++round) {
    std::vector<int> seen(3, 0);
    workers.run([&](std::size_t part) { ++seen[part]; });
    EXPECT_EQ(seen, std::vector<int>({1, 1, 1}));
  }
  // A job that runs a job on the same team (as two threads sharing a model would) gets its parts
  // on its own thread.
  std::vector<int> inner(3, 0);
  workers.run([&](std::size_t part) {
    if (part == 0) workers.run([&](std::size_t i) { ++inner[i]; });
  });
  EXPECT_EQ(inner, std::vector<int>({1, 1, 1}));
  EXPECT_GE(Workers::available_cores(), 1u);
}

}  // namespace
}  // namespace rvformer::engine
