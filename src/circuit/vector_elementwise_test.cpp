// Tests of the vector unit's elementwise operations: the exact evaluator, with its exactness checks
// on, runs each one on edge cases and random operands against the story program's reference
// (story_ops.c), and with the enable off (zeros, every neuron off).
#include <gtest/gtest.h>

#include "circuit/vector_arith_testing.h"

namespace rvformer::circuit {
namespace {

// Every result of the operation in `depth` stages, and every case right.
void expect_every_case_in(const VectorMachine& m, int depth) {
  for (const Bits& result : m.results()) EXPECT_EQ(stages(m.c, result), depth);
  expect_every_case(m);
}

// --- add16 ---------------------------------------------------------------------------------------

TEST(VectorElementwise, Add16SaturatesAtBothEndsInTwoStages) {
  expect_every_case_in(Add16Machine(add16_cases(3000)), 2);
}

// --- mul16 ---------------------------------------------------------------------------------------

TEST(VectorElementwise, Mul16RoundsAndSaturatesAtEveryShiftInSevenStages) {
  expect_every_case_in(Mul16Machine(mul16_cases(3000, 5)), 7);
}

// --- row16 ---------------------------------------------------------------------------------------

// vu.row16's requantisations are mul16's products at the shift capped at 16.
TEST(VectorElementwise, Mul16RequantisesEveryInt8WeightAtEveryShiftCappedAt16) {
  expect_every_case_in(Mul16Machine(row16_cases(2000, 23)), 7);
}

// --- silu ----------------------------------------------------------------------------------------

TEST(VectorElementwise, SiluOfEveryElementInFiveStages) {
  expect_every_case_in(SiluMachine(silu_cases(1)), 5);
}

// story_silu's formula with another table.
int silu_with(const std::vector<int>& y, int h) {
  const int o = h + 4096, j = o >> 7;
  return y[j] + static_cast<int>((std::int64_t{y[j + 1] - y[j]} * (o - (j << 7)) + 64) >> 7);
}

// Random 13-bit values as the table, every eighth one an extreme (4095 and −4096 in turn), so that
// neighbours differ by up to 8191 either way.
TEST(VectorElementwise, SiluInterpolatesAnyTableOfThirteenBitValues) {
  RandomOperands r(9);
  std::vector<int> y;
  for (int j = 0; j <= 64; ++j) y.push_back(j % 8 == 0 ? (j % 16 ? -4096 : 4095) : r.pick(-4096, 4095));
  VectorMachine m;
  const Bits h = m.operand("h", 13);
  std::vector<VectorCase> cases;
  for (int v : {kElementMin, kElementMax}) cases.push_back({{v}, {silu_with(y, v)}});
  for (int v = kElementMin; v <= kElementMax; v += r.pick(1, 5)) cases.push_back({{v}, {silu_with(y, v)}});
  m.finish({silu_element(m.unit(), h, y, m.enable())}, std::move(cases));
  expect_every_case(m);
}

// --- rope ----------------------------------------------------------------------------------------

TEST(VectorElementwise, RopeRotatesBothElementsOfAPairInSevenStages) {
  expect_every_case_in(RopeMachine(rope_cases(1500, 13)), 7);
}

// --- the norm's elements --------------------------------------------------------------------------

TEST(VectorElementwise, RmsnormElementScalesAndSaturatesInSevenStages) {
  expect_every_case_in(RmsnormElementMachine(rmsnorm_element_cases(600, 21)), 7);
}

}  // namespace
}  // namespace rvformer::circuit
