// Arithmetic units compiled to real weights (the multiplier, the vector unit's row product and
// elementwise operations): the engine's forward pass must agree with the exact evaluator on every
// case, to the bit — the next token and every output signal.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <span>
#include <string>

#include "circuit/arith.h"
#include "circuit/evaluator.h"
#include "circuit/vector_arith_testing.h"
#include "circuit/vector_attention_testing.h"
#include "compiler/emit.h"
#include "compiler/placement.h"
#include "engine/checkpoint.h"
#include "engine/model.h"

namespace rvformer::compiler {
namespace {

using namespace circuit;

struct Product {
  std::uint32_t a, b;
  int variant;  // mul, mulh, mulhsu, mulhu
  std::uint32_t result;
};

std::uint32_t riscv_multiply(std::uint32_t a, std::uint32_t b, int variant) {
  std::int64_t sa = static_cast<std::int32_t>(a), sb = static_cast<std::int32_t>(b);
  std::uint64_t ua = a, ub = b;
  switch (variant) {
    case 0: return static_cast<std::uint32_t>(ua * ub);
    case 1: return static_cast<std::uint32_t>(static_cast<std::uint64_t>(sa * sb) >> 32);
    case 2: return static_cast<std::uint32_t>(static_cast<std::uint64_t>(sa * static_cast<std::int64_t>(ub)) >> 32);
    default: return static_cast<std::uint32_t>((ua * ub) >> 32);
  }
}

// Random operands of every magnitude, with pairwise distinct results so that each has its own
// output token.
std::vector<Product> products(int count) {
  std::mt19937 random(11);
  std::vector<Product> out;
  std::set<std::uint32_t> results;
  while (static_cast<int>(out.size()) < count) {
    auto a = static_cast<std::uint32_t>(random()) >> (random() % 32);
    auto b = static_cast<std::uint32_t>(random()) >> (random() % 32);
    if (random() % 2) b = 0u - b;
    int variant = static_cast<int>(random() % 4);
    std::uint32_t result = riscv_multiply(a, b, variant);
    if (results.insert(result).second) out.push_back({a, b, variant, result});
  }
  return out;
}

// Token CASE i feeds product i to multiply32; the result leaves as one-hots of its eight nibbles,
// and token RESULT j scores one for each nibble that matches result j: 8 for the right one, at
// most 7 for any other.
struct MultiplierMachine {
  Circuit c;
  std::vector<Product> cases;
  Bits a, b;
  std::vector<SignalId> variant;
  SignalId enable;
  std::vector<SignalId> nibble_is;  // [16·group + value]

  explicit MultiplierMachine(std::vector<Product> products) : cases(std::move(products)) {
    for (int i = 0; i < 32; ++i) {
      std::string bit = std::to_string(i);
      a.push_back(c.add_input("a" + bit));
      b.push_back(c.add_input("b" + bit));
    }
    for (int v = 0; v < 4; ++v) variant.push_back(c.add_input(indexed("variant", v)));
    enable = c.add_input("enable");
    Gates g(c, "mul");
    auto signed_when = [&](int v) { return Enable({lit(enable), lit(variant[v])}); };
    Bits out = multiply32(g, a, b, {signed_when(1), signed_when(2)}, {signed_when(1)},
                          F(variant[1]) + F(variant[2]) + F(variant[3]), enable);
    for (int group = 0; group < 8; ++group) {
      Bits nibble(out.begin() + 4 * group, out.begin() + 4 * group + 4);
      for (SignalId s : decode_one_hot(g, "nibble" + std::to_string(group), nibble)) {
        c.mark_output(s);
        nibble_is.push_back(s);
      }
    }
    auto count = static_cast<std::uint32_t>(cases.size());
    c.add_token_family({"CASE", count, [this](std::uint32_t i, const auto& set) {
                          for (int j = 0; j < 32; ++j) set(a[j], (cases[i].a >> j) & 1), set(b[j], (cases[i].b >> j) & 1);
                          set(variant[cases[i].variant], 1);
                          set(enable, 1);
                        }, nullptr});
    c.add_token_family({"RESULT", count, nullptr, [this](std::uint32_t i, const auto& set) {
                          for (int group = 0; group < 8; ++group) set(nibble_is[16 * group + ((cases[i].result >> 4 * group) & 15)], 1);
                        }});
  }
};

// Compiles `c` to BF16 weights and feeds CASE(i) for i < cases: the engine must choose the token
// the evaluator chooses, `expected(i)`, and leave every output signal at the evaluator's value.
void expect_compiled_cases_match(const Circuit& c, std::uint32_t cases, const std::function<std::uint32_t(std::uint32_t)>& expected,
                                 const std::string& name) {
  CircuitGraph graph = analyze(c);
  Placement placement = place(c, graph);
  EmittedModel emitted = emit(c, graph, placement);
  auto dir = std::filesystem::path(::testing::TempDir()) / name;
  engine::write_checkpoint(dir, emitted.config, emitted.tensors_to_write(engine::DType::BF16));
  emitted = {};  // the tensors are on disk; free them before the engine maps its own
  engine::Model model = engine::Model::load(dir);
  std::vector<float> residual;
  model.set_residual_observer([&](std::size_t layer, bool after_mlp, std::span<const float> hidden) {
    if (after_mlp && layer + 1 == static_cast<std::size_t>(placement.num_layers)) residual.assign(hidden.begin(), hidden.end());
  });
  engine::State state = model.new_state();
  Evaluator e(c);
  for (std::uint32_t i = 0; i < cases; ++i) {
    std::uint32_t token = c.token_id("CASE", i);
    ASSERT_EQ(e.step(token), expected(i)) << "the evaluator computes case " << i << " right";
    ASSERT_EQ(model.decode_argmax(state, token), expected(i)) << "case " << i;
    for (SignalId s : c.outputs())
      ASSERT_EQ(residual[placement.signal_dim[s]], static_cast<float>(e.value(s))) << c.signal(s).name << ", case " << i;
  }
  std::filesystem::remove_all(dir);
}

TEST(ArithWeights, CompiledMultiplierMatchesTheEvaluatorBitForBit) {
  MultiplierMachine m(products(40));
  expect_compiled_cases_match(m.c, static_cast<std::uint32_t>(m.cases.size()),
                              [&](std::uint32_t i) { return m.c.token_id("RESULT", i); }, "multiplier_model");
}

void expect_compiled_cases_match(const VectorMachine& m, const std::string& name) {
  expect_compiled_cases_match(m.c, static_cast<std::uint32_t>(m.cases().size()),
                              [&](std::uint32_t i) { return m.expected_token(i); }, name);
}

// Every k-th case.
std::vector<VectorCase> every(std::size_t k, const std::vector<VectorCase>& cases) {
  std::vector<VectorCase> out;
  for (std::size_t i = 0; i < cases.size(); i += k) out.push_back(cases[i]);
  return out;
}

TEST(ArithWeights, CompiledRowProductMatchesTheEvaluatorBitForBit) {
  expect_compiled_cases_match(RowProductMachine(row_cases(64, 13, 60, 7), 13), "row_product_model");
}

TEST(ArithWeights, CompiledAdd16MatchesTheEvaluatorBitForBit) {
  expect_compiled_cases_match(Add16Machine(every(2, add16_cases(200))), "add16_model");
}

TEST(ArithWeights, CompiledMul16MatchesTheEvaluatorBitForBit) {
  expect_compiled_cases_match(Mul16Machine(every(3, mul16_cases(200, 7))), "mul16_model");
}

TEST(ArithWeights, CompiledRequantisationOfAWeightMatchesTheEvaluatorBitForBit) {
  expect_compiled_cases_match(Mul16Machine(every(40, row16_cases(100, 7))), "row16_model");
}

TEST(ArithWeights, CompiledSiluMatchesTheEvaluatorBitForBit) {
  expect_compiled_cases_match(SiluMachine(silu_cases(97)), "silu_model");
}

TEST(ArithWeights, CompiledRmsnormElementMatchesTheEvaluatorBitForBit) {
  expect_compiled_cases_match(RmsnormElementMachine(rmsnorm_element_cases(60, 22)), "rmsnorm_element_model");
}

TEST(ArithWeights, CompiledRmsnormScaleMatchesTheEvaluatorBitForBit) {
  const std::vector<NormScaleCase> vectors = rmsnorm_scale_cases(64, 13, 40, 23);
  std::vector<NormScaleCase> sample;
  for (std::size_t i = 0; i < vectors.size(); i += 7) sample.push_back(vectors[i]);
  expect_compiled_cases_match(NormScaleMachine(sample, 64, 13), "rmsnorm_scale_model");
}

TEST(ArithWeights, CompiledArgmaxPassesMatchTheEvaluatorBitForBit) {
  const ArgmaxPasses passes = all_argmax_passes(argmax_vectors(32, 4, 4, 5), 32, 0);
  expect_compiled_cases_match(RunningMaximumMachine(passes.maxima, 32), "running_maximum_model");
  expect_compiled_cases_match(FirstIndexMachine(passes.indices, 32, 4), "first_index_model");
}

TEST(ArithWeights, CompiledAttentionPassesMatchTheEvaluatorBitForBit) {
  RandomOperands r(44);
  const std::vector<AttentionHead> heads = {random_head(r, 40, 8, 12), staircase_head(r, 60)};
  std::vector<AttentionPass> sample;
  const std::vector<AttentionPass> passes = element_passes(heads);
  for (std::size_t i = 0; i < passes.size(); i += 3) sample.push_back(passes[i]);
  for (PassKind kind : {PassKind::kAnchor, PassKind::kMass, PassKind::kSum})
    for (const AttentionPass& p : block_passes(kind, heads)) sample.push_back(p);
  expect_compiled_cases_match(AttentionPassMachine(sample, 8), "attention_passes_model");
  RandomOperands outputs(45);
  expect_compiled_cases_match(AttentionOutputMachine(output_cases(outputs, 20)), "attention_output_model");
}

TEST(ArithWeights, CompiledRopeMatchesTheEvaluatorBitForBit) {
  expect_compiled_cases_match(RopeMachine(every(6, rope_cases(200, 7))), "rope_model");
}

}  // namespace
}  // namespace rvformer::compiler
