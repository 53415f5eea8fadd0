// Tests of the vector unit's reductions: the exact evaluator, with its exactness checks on, runs
// each one on edge cases and random vectors against the story program's reference (story_ops.c),
// and with the enable off (zeros, every neuron off).
#include <gtest/gtest.h>

#include "circuit/vector_arith_testing.h"

namespace rvformer::circuit {
namespace {

TEST(VectorReduce, RmsnormScaleOfTheStoryModelsVectorsInEightStages) {
  NormScaleMachine m(rmsnorm_scale_cases(64, 13, 400, 1), 64, 13);
  EXPECT_EQ(stages(m.c, m.results()[0]), 8);
  expect_every_case(m);
}

TEST(VectorReduce, RmsnormScaleOfInt16Elements) {
  for (int elements : {1, 3, 8}) {
    SCOPED_TRACE(std::to_string(elements) + " elements");
    expect_every_case(NormScaleMachine(rmsnorm_scale_cases(elements, 16, 200, elements), elements, 16));
  }
}

// The two halves of passes, as argmax_passes composes them, are story_argmax16 (the first index of
// the largest), whatever the padding of the last line.
TEST(VectorReduce, ArgmaxPassesComposeToTheReference) {
  for (int L : {1, 4, 32}) {
    for (const std::vector<int>& x : argmax_vectors(L, 16, 300, L)) {
      const std::vector<std::int16_t> elements(x.begin(), x.end());
      const int expected = story_argmax16(elements.data(), static_cast<int>(elements.size()));
      for (int pad : {-4096, 0, 4095}) ASSERT_EQ(argmax_passes(x, L, pad).index, expected) << x.size() << " elements";
    }
  }
}

// Every pass of the argmax of many vectors, 32 elements a line and up to 16 lines: the running
// maximum in two stages and the first index in two.
TEST(VectorReduce, ArgmaxPassesOfLinesOf32InTwoStagesEach) {
  const ArgmaxPasses passes = all_argmax_passes(argmax_vectors(32, 16, 12, 3), 32, 4095);
  RunningMaximumMachine running(passes.maxima, 32);
  EXPECT_EQ(stages(running.c, running.results()[0]), 2);
  expect_every_case(running);
  FirstIndexMachine first(passes.indices, 32, 4);
  EXPECT_EQ(stages(first.c, first.results()[0]), 2);
  expect_every_case(first);
}

}  // namespace
}  // namespace rvformer::circuit
