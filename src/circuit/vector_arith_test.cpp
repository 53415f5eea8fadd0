// Tests of the vector unit's arithmetic: the exact evaluator, with its exactness checks on, runs
// each operation on edge cases and random operands against the story program's reference.
#include <gtest/gtest.h>

#include "circuit/vector_arith_testing.h"

namespace rvformer::circuit {
namespace {

TEST(VectorArith, RowProductOfTheStoryModelsWidestRowsInElevenStages) {
  RowProductMachine m(row_cases(172, 13, 400, 1), 13);
  EXPECT_EQ(stages(m.c, m.results()[0]), 11);
  expect_every_case(m);
}

TEST(VectorArith, RowProductOfNarrowRowsAndWideActivations) {
  for (auto [columns, x_bits] : {std::pair{1, 13}, {8, 13}, {64, 16}, {3, 2}}) {
    SCOPED_TRACE(std::to_string(columns) + " columns of " + std::to_string(x_bits) + " bits");
    RowProductMachine m(row_cases(columns, x_bits, 200, columns), x_bits);
    expect_every_case(m);
  }
}

// The row product taking its 64 activations straight from AM's lanes, as vu.matvec16 does, in as
// many stages as from their bits.
TEST(VectorArith, RowProductOfActivationsInAmLanes) {
  RowProductMachine m(row_cases(64, 13, 300, 64), RowProductMachine::kLanes);
  RowProductMachine from_bits(row_cases(64, 13, 1, 64), 13);
  EXPECT_EQ(stages(m.c, m.results()[0]), stages(from_bits.c, from_bits.results()[0]));
  expect_every_case(m);
}

}  // namespace
}  // namespace rvformer::circuit
