// End-to-end tests of the compiler: a small machine built from every circuit part (gates, a memory
// bank, a halving counter, a delay, a token-level output code) is run by the exact evaluator and, as
// compiled weights, by the engine's dense reference forward pass and its fast exact executor; next
// tokens and memory must agree, and the two engine paths leave bit-identical States after every pass.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <set>

#include "circuit/evaluator.h"
#include "compiler/emit.h"
#include "compiler/physical.h"
#include "compiler/placement.h"
#include "compiler/toy_machine_testing.h"
#include "engine/bitwise_comparison.h"
#include "engine/checkpoint.h"
#include "engine/fast_model.h"
#include "engine/model.h"

namespace rvformer::compiler {
namespace {

using namespace circuit;
using toy::ToyMachine;

class CompilerTest : public ::testing::Test {
 protected:
  // Each test writes its own directory: ctest runs them in parallel processes.
  std::filesystem::path compile(const Circuit& circuit, Placement& placement) {
    CircuitGraph graph = analyze(circuit);
    placement = place(circuit, graph);
    EmittedModel model = emit(circuit, graph, placement);
    auto dir = std::filesystem::path(::testing::TempDir()) /
               (std::string("toy_model_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    auto tensors = model.tensors_to_write();
    engine::write_checkpoint(dir, model.config, tensors);
    return dir;
  }
};

// The residual leads with the constant dimensions its width balances (the width over their count a
// power of 4) and the data sits after them, whatever base model it follows: also where the data
// needs more constant dimensions than the first allocation left room for.
TEST_F(CompilerTest, TheDataSitsAfterTheConstantDimensionsTheWidthBalances) {
  ToyMachine m;
  CircuitGraph graph = analyze(m.c);
  std::set<int> constant_counts;
  for (int base = 0; base < 64; ++base) {
    Placement p = place(m.c, graph, {.min_layers = 1, .base_hidden = base});
    constant_counts.insert(p.constant_dims);
    ASSERT_EQ(p.hidden_size % p.constant_dims, 0) << "base " << base;
    int quotient = p.hidden_size / p.constant_dims;
    while (quotient % 4 == 0) quotient /= 4;
    EXPECT_EQ(quotient, 1) << "base " << base << ": width " << p.hidden_size << ", " << p.constant_dims << " constants";
    EXPECT_EQ(p.signal_dim[circuit::kOne], base);
    for (std::size_t s = 0; s < p.signal_dim.size(); ++s) {
      if (s == circuit::kOne) continue;
      EXPECT_GE(p.signal_dim[s], base + p.constant_dims) << "base " << base << ": signal " << s << " in a constant dimension";
      EXPECT_LT(p.signal_dim[s], p.hidden_size) << "base " << base << ": signal " << s;
    }
  }
  EXPECT_GT(constant_counts.size(), 1u) << "every base took the same number of constant dimensions";
  EXPECT_GT(*constant_counts.rbegin(), 1) << "no base needed a second allocation";
}

TEST_F(CompilerTest, EvaluatorPredictsTheToyMachine) {
  ToyMachine m;
  Evaluator e(m.c);
  EXPECT_EQ(e.step(m.write(3, 5)), m.out(5, 0, 0)) << "a read sees the same pass's write";
  EXPECT_EQ(e.step(m.read(2)), m.out(0, 1, 1)) << "unwritten rows read 0";
  EXPECT_EQ(e.step(m.read(3)), m.out(5, 2, 0));
}

TEST_F(CompilerTest, CompiledWeightsMatchTheEvaluatorBitForBit) {
  ToyMachine m;
  Placement placement;
  auto dir = compile(m.c, placement);
  engine::Model model = engine::Model::load(dir);
  engine::State state = model.new_state();
  Evaluator e(m.c);

  std::mt19937 random(7);
  std::vector<std::uint32_t> inputs{m.write(3, 5), m.read(3), m.read(0), m.write(0, 9), m.write(3, 1)};
  int since_write = 0;
  for (int i = 0; i < 40; ++i) {
    int kind = random() % 3;
    if (since_write == 3) kind = 0;  // the counter decodes n < 4
    if (kind == 0) inputs.push_back(m.write(random() % 8, random() % 16));
    else if (kind == 1) inputs.push_back(m.read(random() % 8));
    else inputs.push_back(m.out(random() % 16, random() % 4, random() % 2));
    since_write = kind == 0 ? 0 : since_write + 1;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::uint32_t expected = e.step(inputs[i]);
    std::uint32_t got = model.decode_argmax(state, inputs[i]);
    ASSERT_EQ(got, expected) << "token " << i;
  }
  // Memory rows hold exactly V for a 1 bit and 0 for a 0 bit.
  const HeadSlot& slot = placement.bank_head[m.memory_bank];
  auto head = state.recurrent_head(slot.layer, 2 * slot.head);
  for (int row = 0; row < 8; ++row)
    for (int lane = 0; lane < 4; ++lane)
      EXPECT_EQ(head[row * kKeyDim + lane], static_cast<float>(kBitValue * e.lane(m.memory_bank, row, 0, lane)))
          << "row " << row << " lane " << lane;
}

// The fast executor on real compiled weights: a script of writes and reads with the machine's own
// tokens fed back in between; evaluator, dense path and fast path agree on every token, and the fast
// path's State equals the dense path's bit for bit after every pass.
TEST_F(CompilerTest, FastPathEmitsTheReferenceTokensAndStates) {
  ToyMachine m;
  Placement placement;
  auto dir = compile(m.c, placement);
  engine::Model model = engine::Model::load(dir);
  engine::FastModel fast = engine::FastModel::load(dir);
  engine::State reference = model.new_state();
  engine::FastState state = fast.new_state();
  Evaluator e(m.c);

  std::mt19937 random(5);
  std::uint32_t token = m.write(3, 5);
  int since_write = 0;
  for (int step = 0; step < 150; ++step) {
    const std::uint32_t expected = model.decode_argmax(reference, token);
    ASSERT_EQ(e.step(token), expected) << "step " << step;
    ASSERT_EQ(fast.decode_argmax(state, token), expected) << "step " << step;
    ASSERT_EQ(engine::first_difference(state.state(), reference), std::nullopt) << "step " << step;
    since_write = token < 128 ? 0 : since_write + 1;  // WRITE tokens come first in the vocabulary
    const int kind = since_write >= 2 ? 0 : static_cast<int>(random() % 3);  // the counter decodes n < 4
    if (kind == 0) token = m.write(random() % 8, random() % 16);
    else if (kind == 1) token = m.read(random() % 8);
    else token = expected;
  }
  // The model did its work on the fast paths: most value heads idle, the bank heads sparse, repeated
  // addresses and signals recalled from the memos.
  const auto& counters = fast.counters();
  EXPECT_GT(counters.gated_delta_net.idle_heads, counters.gated_delta_net.sparse_heads);
  EXPECT_GT(counters.gated_delta_net.sparse_heads, 0u);
  EXPECT_EQ(counters.gated_delta_net.reference_heads, 0u);
  EXPECT_GT(counters.gated_delta_net.remembered_heads, 0u);
  EXPECT_GT(counters.remembered_mlps, 0u);
}

}  // namespace
}  // namespace rvformer::compiler
