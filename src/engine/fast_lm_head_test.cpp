// engine/fast_lm_head_test.cpp — the fast executor's LM head (fast_lm_head.h) against the dense
// reference product and torch.argmax's rule: logits bit for bit, and the greedy token on crafted
// score patterns, from memory, from the pivot column's parts, and on random heads cut into parts,
// where both the pivot's parts and the scan of every part must decide.
#include "engine/fast_lm_head.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "engine/bitwise_comparison.h"
#include "engine/ops.h"
#include "engine/dense_matrix.h"
#include "support/error.h"

namespace rvformer::engine {
namespace {

// The dense reference for an LM head given as row-major weights.
DenseMatrix dense_rows(std::size_t vocab, std::size_t hidden, const std::vector<float>& weights) {
  return DenseMatrix(vocab, hidden, weights);
}

SparseVector nonzeros_of(const std::vector<float>& x) {
  SparseVector nonzeros(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] != 0.0f) nonzeros.push(static_cast<std::uint32_t>(i), x[i]);
  }
  return nonzeros;
}

// The sparse argmax against torch.argmax over all logits, on score patterns where the rows no
// weight reaches (+0) must win, tie or lose, and with NaNs.
TEST(FastLmHeadTest, SparseArgmaxIsTheArgmaxOverAllRows) {
  const std::size_t vocab = 200;
  const std::size_t hidden = 4;
  std::vector<float> weights(vocab * hidden, 0.0f);
  // Dimension 0 reaches rows 40..59 negatively, dimension 1 rows 120..129 with mixed signs, dimension
  // 2 reaches every row but row 3 (positively), dimension 3 only row 150.
  for (std::size_t row = 40; row < 60; ++row) weights[row * hidden + 0] = -1.0f;
  for (std::size_t row = 120; row < 130; ++row) weights[row * hidden + 1] = row % 2 == 0 ? 1.0f : -2.0f;
  for (std::size_t row = 0; row < vocab; ++row) weights[row * hidden + 2] = row == 3 ? 0.0f : 0.5f;
  weights[150 * hidden + 3] = 1.0f;
  const std::vector<std::vector<float>> hiddens{
      {1, 0, 0, 0},          // every reached row negative: row 0 (unreached, +0) wins
      {0, 1, 0, 0},          // reached row 120 scores 1
      {0, -1e-30f, 0, 0},    // tiny values: -0 and +0 rows tie with unreached rows
      {0, 0, -1, 0},         // every row but 3 negative: row 3 wins
      {0, 0, 1, 0},          // all rows but 3 score 0.5: row 0
      {0, 0, 0, INFINITY},   // 0·∞ = NaN everywhere but row 150
      {0, 0, 0, NAN},        // NaN everywhere
      {2, 1, 0, -3},         // a mixture with a negative unique row
      {0, 0, 0, 0},          // nothing reached
  };
  const DenseMatrix dense = dense_rows(vocab, hidden, weights);
  for (std::size_t part_rows : {FastLmHead::default_part_rows, std::size_t{16}, std::size_t{48}}) {
    FastLmHead head(vocab, hidden, weights, part_rows);
    for (const auto& x : hiddens) {
      const SparseVector nonzeros = nonzeros_of(x);
      std::vector<float> logits(vocab);
      dense.multiply(x, logits);
      LmHeadCounters counters;
      const SparseInput input{x, nonzeros};
      EXPECT_EQ(first_difference(head.logits(input, counters.weights), logits), std::nullopt);
      EXPECT_EQ(head.argmax(input, counters), argmax(logits))
          << "parts of " << part_rows << ": " << x[0] << " " << x[1] << " " << x[2] << " " << x[3];
    }
  }
}

// The greedy token is remembered per hidden state: states that differ in one value (or one bit) or
// in where their non-zeros are must not share it, and a state seen again must get it back unchanged.
TEST(FastLmHeadTest, RememberedArgmaxIsTheArgmaxOfThatHiddenState) {
  const std::size_t vocab = 64;
  const std::size_t hidden = 3;
  std::vector<float> weights(vocab * hidden);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>((i * 37) % 11) - 5.0f;
  const std::vector<std::vector<float>> hiddens{
      {0, 1, 0}, {0, -1, 0}, {0, 1, 0}, {0, std::nextafter(1.0f, 2.0f), 0}, {1, 0, 0}, {0, 0, 1},
      {0, 1, 0}, {0, -1, 0}, {1, 0, 0}, {1, 1, 0}, {1, -1, 0}, {-0.0f, 1, 0}, {0, 0, 0}, {-0.0f, 0, -0.0f}};
  FastLmHead head(vocab, hidden, weights);
  const DenseMatrix dense = dense_rows(vocab, hidden, weights);
  LmHeadCounters counters[2];
  for (std::size_t pass = 0; pass < 2; ++pass) {
    for (const auto& x : hiddens) {
      const SparseVector nonzeros = nonzeros_of(x);
      std::vector<float> logits(vocab);
      dense.multiply(x, logits);
      EXPECT_EQ(head.argmax({x, nonzeros}, counters[pass]), argmax(logits)) << pass << ": " << x[0] << " " << x[1] << " " << x[2];
    }
  }
  // The second pass was served from memory.
  EXPECT_GT(counters[0].weights, 0u);
  EXPECT_EQ(counters[1].weights, 0u);
  EXPECT_EQ(counters[1].remembered, hiddens.size());
}

// A head shaped like a compiled trace vocabulary: token t < 1024 reads one-hot chunks of its payload
// (columns 0–15: t / 64, 16–23: (t / 8) % 8, 24–31: t % 8), the 7 tokens after it a flag (column
// 32). The greedy token of every code is its token, found from the parts of the chunk that reaches
// the fewest of them (t / 64: one part of 64 rows).
TEST(FastLmHeadTest, PivotColumnPartsDecideOneHotCodes) {
  const std::size_t vocab = 1031, hidden = 33, part_rows = 64;
  std::vector<float> weights(vocab * hidden, 0.0f);
  for (std::size_t t = 0; t < 1024; ++t) {
    for (std::size_t col : {t / 64, 16 + (t / 8) % 8, 24 + t % 8}) weights[t * hidden + col] = 1.0f;
  }
  for (std::size_t t = 1024; t < vocab; ++t) weights[t * hidden + 32] = t == 1027 ? 2.0f : 1.0f;
  const DenseMatrix dense = dense_rows(vocab, hidden, weights);
  FastLmHead head(vocab, hidden, weights, part_rows);
  LmHeadCounters counters;
  std::size_t computed = 0;
  auto expect_argmax = [&](const std::vector<float>& x, std::size_t expected_token) {
    std::vector<float> logits(vocab);
    dense.multiply(x, logits);
    ASSERT_EQ(argmax(logits), expected_token);
    const std::uint64_t remembered = counters.remembered;
    EXPECT_EQ(head.argmax({x, nonzeros_of(x)}, counters), expected_token);
    computed += counters.remembered == remembered;
  };
  for (std::size_t t = 0; t < 1024; ++t) {
    std::vector<float> x(hidden, 0.0f);
    const float value = 0.75f + static_cast<float>(t % 13) / 8.0f;
    for (std::size_t col : {t / 64, 16 + (t / 8) % 8, 24 + t % 8}) x[col] = value;
    expect_argmax(x, t);
  }
  std::vector<float> flag(hidden, 0.0f);
  flag[32] = 1.5f;
  expect_argmax(flag, 1027);
  EXPECT_EQ(counters.from_pivot, computed);
  // Each computed token multiplied the pivot's 64 weights and those the other chunks hold in its part.
  EXPECT_LE(counters.weights, computed * (64 + 8 + 8));
}

// Random heads in parts of a few blocks: columns reaching one part, a few or most of them, integer
// weights and inputs that make ties (and −0) common, and fractional ones. Every greedy token and
// every logit matches the reference, and each way of computing the token is taken: from the
// pivot's parts, from the parts their bounds let in, from every part.
TEST(FastLmHeadTest, RandomHeadsInPartsGiveTheReferenceArgmax) {
  std::mt19937 random(2024);
  std::size_t from_pivot = 0, from_bounds = 0, computed = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t vocab = 500 + 37 * static_cast<std::size_t>(trial % 7), hidden = 24;
    const std::size_t part_rows = 16 * (1 + static_cast<std::size_t>(trial % 4));
    const bool integers = trial % 2 == 0;
    auto draw = [&](float scale) {
      if (integers) return static_cast<float>(std::uniform_int_distribution<int>(-3, 3)(random));
      return scale * std::uniform_real_distribution<float>(-1.0f, 1.0f)(random);
    };
    std::vector<float> weights(vocab * hidden, 0.0f);
    for (std::size_t col = 0; col < hidden; ++col) {
      // Column col reaches rows [first, first + span): within one part, a few, or nearly all.
      const std::size_t span = col % 3 == 0 ? part_rows / 2 : col % 3 == 1 ? 3 * part_rows : vocab - 20;
      const std::size_t first = std::uniform_int_distribution<std::size_t>(0, vocab - span)(random);
      for (std::size_t row = first; row < first + span; ++row) {
        if (random() % 3 != 0) weights[row * hidden + col] = draw(col % 3 == 2 ? 0.5f : 4.0f);
      }
    }
    const DenseMatrix dense = dense_rows(vocab, hidden, weights);
    FastLmHead head(vocab, hidden, weights, part_rows);
    for (int state = 0; state < 60; ++state) {
      std::vector<float> x(hidden, 0.0f);
      const int nonzeros = 1 + static_cast<int>(random() % 4);
      for (int k = 0; k < nonzeros; ++k) x[random() % hidden] = draw(2.0f);
      std::vector<float> logits(vocab);
      dense.multiply(x, logits);
      LmHeadCounters counters;
      const SparseInput input{x, nonzeros_of(x)};
      ASSERT_EQ(first_difference(head.logits(input, counters.weights), logits), std::nullopt) << "trial " << trial;
      ASSERT_EQ(head.argmax(input, counters), argmax(logits)) << "trial " << trial << ", state " << state;
      from_pivot += counters.from_pivot;
      from_bounds += counters.from_bounds;
      computed += counters.remembered == 0;
    }
  }
  EXPECT_GT(from_pivot, 200u);
  EXPECT_GT(from_bounds, 100u);
  EXPECT_GT(computed - from_pivot - from_bounds, 200u);
}

// Parts must be whole blocks, and no larger than one word of blocks.
TEST(FastLmHeadTest, RejectsPartSizesItCannotScan) {
  const std::vector<float> weights(100 * 4, 1.0f);
  for (std::size_t part_rows : {std::size_t{0}, std::size_t{24}, FastLmHead::default_part_rows + 16}) {
    EXPECT_THROW(FastLmHead(100, 4, weights, part_rows), Error) << part_rows;
  }
}

}  // namespace
}  // namespace rvformer::engine
