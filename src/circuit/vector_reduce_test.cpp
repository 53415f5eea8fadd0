// Tests of the vector unit's reductions: the exact evaluator, with its exactness checks on, runs
// each one on edge cases and random vectors against the story program's reference (story_ops.c),
// and with the enable off (zeros, every neuron off).
#include <gtest/gtest.h>

#include "circuit/vector_arith_testing.h"

namespace rvformer::circuit {
namespace {

TEST(VectorReduce, RmsnormScaleOfTheStoryModelsVectorsInNineStages) {
  NormScaleMachine m(rmsnorm_scale_cases(64, 13, 400, 1), 64, 13);
  EXPECT_EQ(stages(m.c, m.results()[0]), 9);
  expect_every_case(m);
}

TEST(VectorReduce, RmsnormScaleOfInt16Elements) {
  for (int elements : {1, 3, 8}) {
    SCOPED_TRACE(std::to_string(elements) + " elements");
    expect_every_case(NormScaleMachine(rmsnorm_scale_cases(elements, 16, 200, elements), elements, 16));
  }
}

}  // namespace
}  // namespace rvformer::circuit
