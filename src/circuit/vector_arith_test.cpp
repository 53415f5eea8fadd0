// Tests of the vector unit's arithmetic: the exact evaluator, with its exactness checks on, runs
// each operation on edge cases and random operands against the story program's reference.
#include <gtest/gtest.h>

#include "circuit/evaluator.h"
#include "circuit/graph.h"
#include "circuit/row_product_testing.h"

namespace rvformer::circuit {
namespace {

// MLP stages on the longest path from the inputs to `out`.
int stages(const Circuit& c, const Bits& out) {
  CircuitGraph graph = analyze(c);
  std::vector<int> depth(c.signals().size(), 0);
  for (std::uint32_t index : graph.placement_order) {
    const Step& step = graph.steps[index];
    int d = 0;
    for (SignalId s : step.inputs) d = std::max(d, depth[s]);
    for (SignalId s : step.outputs) depth[s] = std::max(depth[s], d + 1);
  }
  int result = 0;
  for (SignalId s : out) result = std::max(result, depth[s]);
  return result;
}

void expect_every_case(RowProductMachine& m) {
  Evaluator e(m.c);
  for (std::uint32_t i = 0; i < m.cases.size(); ++i) {
    const RowCase& k = m.cases[i];
    ASSERT_EQ(e.step(m.c.token_id("CASE", i)), m.expected_token(i))
        << "case " << i << ": m " << k.multiplier << ", shift " << k.shift << ", expected " << k.expected();
  }
  e.step(m.c.token_id("OFF"));
  for (SignalId s : m.out) ASSERT_EQ(e.value(s), 0) << "a disabled unit must output zeros";
}

TEST(VectorArith, RowProductOfTheStoryModelsWidestRowsInElevenStages) {
  RowProductMachine m(row_cases(172, 13, 400, 1), 13);
  EXPECT_EQ(stages(m.c, m.out), 11);
  expect_every_case(m);
}

TEST(VectorArith, RowProductOfNarrowRowsAndWideActivations) {
  for (auto [columns, x_bits] : {std::pair{1, 13}, {8, 13}, {64, 16}, {3, 2}}) {
    SCOPED_TRACE(std::to_string(columns) + " columns of " + std::to_string(x_bits) + " bits");
    RowProductMachine m(row_cases(columns, x_bits, 200, columns), x_bits);
    expect_every_case(m);
  }
}

}  // namespace
}  // namespace rvformer::circuit
