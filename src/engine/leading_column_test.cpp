// engine/leading_column_test.cpp — the gate product computed only where a neuron can be on
// (leading_column.h) against the reference sums: exact in every block it marks, and everywhere else
// a row whose SiLU is ±0.
#include "engine/leading_column.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "engine/fast_ops.h"

namespace rvformer::engine {
namespace {

constexpr std::size_t rows = 200;
constexpr std::size_t cols = 40;

// Rows whose only weight sits in the leading column `lead`: on alone (r % 5 == 0: +2), without it
// (r % 5 == 1) or off alone (−200, SiLU −0); the other columns reach only the first 80 rows.
std::vector<float> gate_weights(std::size_t lead) {
  std::mt19937 random(11);
  std::uniform_real_distribution<float> uniform(-4.0f, 4.0f);
  std::vector<float> weights(rows * cols, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    weights[r * cols + lead] = r % 5 == 0 ? 2.0f : r % 5 == 1 ? 0.0f : -200.0f;
    for (std::size_t c = lead + 1; c < cols && r < 80; ++c) {
      if ((r + 3 * c) % 7 == 0) weights[r * cols + c] = uniform(random);
    }
  }
  return weights;
}

struct Input {
  std::vector<float> values = std::vector<float>(cols, 0.0f);
  SparseVector nonzeros{cols};

  void set(std::size_t col, float value) {
    values[col] = value;
    nonzeros.clear();
    for (std::size_t c = 0; c < cols; ++c) {
      if (values[c] != 0.0f) nonzeros.push(static_cast<std::uint32_t>(c), values[c]);
    }
  }
};

// Every marked row holds the reference sum bit for bit; every other row is +0 where the reference's
// SiLU is ±0. Returns the number of blocks left out.
std::size_t expect_exact_where_needed(const std::vector<float>& weights, const Input& x, const BlockVector& y) {
  std::vector<bool> marked(block_count(rows), false);
  for (std::uint32_t block : y.blocks()) marked[block] = true;
  for (std::size_t r = 0; r < rows; ++r) {
    float expected = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) expected += weights[r * cols + c] * x.values[c];
    const std::uint32_t got = std::bit_cast<std::uint32_t>(y.values()[r]);
    if (marked[r / block_lanes]) {
      EXPECT_EQ(got, std::bit_cast<std::uint32_t>(expected)) << "row " << r;
    } else {
      EXPECT_EQ(got, 0u) << "row " << r;
      EXPECT_EQ(std::bit_cast<std::uint32_t>(fast_silu(expected)) & 0x7fffffffu, 0u) << "row " << r << " is on";
    }
  }
  return static_cast<std::size_t>(std::count(marked.begin(), marked.end(), false));
}

TEST(LeadingColumnTest, GateIsExactWhereverANeuronCanBeOn) {
  for (const std::size_t lead : {0, 3}) {
    const std::vector<float> weights = gate_weights(lead);
    const ColumnMatrix gate(rows, cols, weights);
    std::optional<LeadingColumn> leading = LeadingColumn::of(gate);
    ASSERT_TRUE(leading.has_value());
    Input x;
    std::mt19937 random(4);
    std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
    for (std::size_t c = 0; c < cols; c += 3) x.set(c, uniform(random));  // below the lead too when it is 3
    BlockVector y(rows);
    // x_lead changes (and overflows: +2·3e38 = ∞, SiLU ∞; −200·3e38 = −∞, SiLU NaN) and comes back.
    for (const float x_lead : {1.0f, 0.75f, -1.0f, 3e38f, 1.0f}) {
      x.set(lead, x_lead);
      ASSERT_TRUE(leading->multiply(gate, {x.values, x.nonzeros}, y).has_value());
      const std::size_t left_out = expect_exact_where_needed(weights, x, y);
      // Rows 80.. see only the lead: off alone for x_lead > 0 except the r % 5 == 0 rows (on alone).
      if (x_lead == 1.0f) {
        EXPECT_EQ(left_out, 0u);
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(LeadingColumnTest, SkipsTheBlocksWhereEveryNeuronIsOffAlone) {
  std::vector<float> weights = gate_weights(0);
  for (std::size_t r = 80; r < rows; ++r) weights[r * cols] = -200.0f;  // no neuron on alone past row 80
  const ColumnMatrix gate(rows, cols, weights);
  std::optional<LeadingColumn> leading = LeadingColumn::of(gate);
  ASSERT_TRUE(leading.has_value());
  Input x;
  x.set(0, 1.0f);
  x.set(7, 0.5f);
  BlockVector y(rows);
  ASSERT_TRUE(leading->multiply(gate, {x.values, x.nonzeros}, y).has_value());
  EXPECT_EQ(expect_exact_where_needed(weights, x, y), block_count(rows) - 80 / block_lanes);
  // A negative x_lead turns them all on alone.
  x.set(0, -1.0f);
  ASSERT_TRUE(leading->multiply(gate, {x.values, x.nonzeros}, y).has_value());
  EXPECT_EQ(expect_exact_where_needed(weights, x, y), 0u);
}

TEST(LeadingColumnTest, InputsItCannotServeTakeThePlainProduct) {
  const std::vector<float> weights = gate_weights(0);
  const ColumnMatrix gate(rows, cols, weights);
  std::optional<LeadingColumn> leading = LeadingColumn::of(gate);
  ASSERT_TRUE(leading.has_value());
  BlockVector y(rows);
  Input x;
  x.set(5, 1.0f);  // ±0 at the leading column
  EXPECT_FALSE(leading->multiply(gate, {x.values, x.nonzeros}, y).has_value());
  x.set(0, 1.0f);
  x.set(9, NAN);  // not finite: every row counts
  EXPECT_FALSE(leading->multiply(gate, {x.values, x.nonzeros}, y).has_value());
  // A lowest column that reaches few of the rows the matrix reaches is not worth it.
  std::vector<float> few = weights;
  for (std::size_t r = 16; r < rows; ++r) few[r * cols] = 0.0f;
  for (std::size_t r = 0; r < rows; ++r) few[r * cols + 1] = 1.0f;
  EXPECT_FALSE(LeadingColumn::of(ColumnMatrix(rows, cols, few)).has_value());
}

}  // namespace
}  // namespace rvformer::engine
