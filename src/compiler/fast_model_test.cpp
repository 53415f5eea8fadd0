// The fast exact executor (engine/fast_model.h) on real compiled weights: a small register machine
// built from every circuit part (gates, a memory bank addressed in binary, a halving counter, a
// delay, an output code) is compiled to a checkpoint; the circuit evaluator, the dense reference path
// and the fast path must emit the same tokens, and the two paths leave bit-identical States after
// every pass.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "circuit/evaluator.h"
#include "circuit/gates.h"
#include "compiler/emit.h"
#include "compiler/placement.h"
#include "engine/bitwise_comparison.h"
#include "engine/checkpoint.h"
#include "engine/fast_model.h"
#include "engine/model.h"

namespace rvformer::compiler {
namespace {

using namespace circuit;

// Tokens: PUT(r, v) stores 3-bit v in register r (16 registers); GET(r); RESULT(v, n, d), the
// machine's own output: the value of the register addressed last, how many tokens since the last
// PUT (n < 4) and whether the previous token was a PUT.
struct RegisterMachine {
  Circuit c;
  SignalId is_put, is_get;
  std::vector<SignalId> reg, value;

  RegisterMachine() {
    is_put = c.add_input("is_put");
    is_get = c.add_input("is_get");
    for (int i = 0; i < 4; ++i) reg.push_back(c.add_input("reg" + std::to_string(i)));
    for (int i = 0; i < 3; ++i) value.push_back(c.add_input("value" + std::to_string(i)));
    Gates g(c, "registers");

    std::vector<SignalId> read(3);
    for (int i = 0; i < 3; ++i) read[i] = c.add_read_signal("registers.read" + std::to_string(i));
    Bank registers{"registers", 16};
    registers.has_write = registers.has_read = true;
    registers.write.row = {.one_hot = {}, .binary = reg, .match = {}, .conditions = {F(is_put)}};
    registers.write.beta[0] = Form(1.0);
    for (int i = 0; i < 3; ++i) registers.write.lanes[0].push_back(F(value[i]));
    registers.read.row.binary = reg;
    for (int i = 0; i < 3; ++i) registers.read.lanes[0].push_back({{read[i], 1}});
    c.add_bank(std::move(registers));

    SignalId count = c.add_read_signal("registers.since_put", 0, 1, 1.0 / 256);
    Bank since_put{"since_put", 1};
    since_put.has_write = since_put.has_read = true;
    since_put.write.row.one_hot = {kOne};
    since_put.write.beta[0] = Form(0.5) + 0.5 * F(is_put);
    since_put.write.lanes[0] = {F(is_put)};
    since_put.read.row.one_hot = {kOne};
    since_put.read.lanes[0] = {{{count, 1}}};
    c.add_bank(std::move(since_put));

    const SignalId previous_put = c.add_delay(is_put, "registers.previous_put");

    std::vector<SignalId> v_out, d_out;
    for (int v = 0; v < 8; ++v) {
      std::vector<Literal> lits;
      for (int i = 0; i < 3; ++i) lits.push_back((v >> i) & 1 ? lit(read[i]) : nlit(read[i]));
      v_out.push_back(g.all("v_is" + std::to_string(v), lits));
    }
    std::vector<SignalId> n_out = g.counter_one_hot("n", count, 4);
    d_out.push_back(g.copy("d_is0", Form(1.0) - F(previous_put)));
    d_out.push_back(g.copy("d_is1", F(previous_put)));
    for (const auto* group : {&v_out, &n_out, &d_out}) {
      for (SignalId s : *group) c.mark_output(s);
    }

    c.add_token_family({"PUT", 128, [this](std::uint32_t i, const auto& set) {
                          set(is_put, 1);
                          for (int k = 0; k < 4; ++k) set(reg[k], (i >> 3 >> k) & 1);
                          for (int k = 0; k < 3; ++k) set(value[k], (i >> k) & 1);
                        }, nullptr});
    c.add_token_family({"GET", 16, [this](std::uint32_t i, const auto& set) {
                          set(is_get, 1);
                          for (int k = 0; k < 4; ++k) set(reg[k], (i >> k) & 1);
                        }, nullptr});
    c.add_token_family({"RESULT", 64, nullptr, [=](std::uint32_t i, const auto& set) {
                          set(v_out[i % 8], 1);
                          set(n_out[(i / 8) % 4], 1);
                          set(d_out[i / 32], 1);
                        }});
  }
  std::uint32_t put(int r, int v) const { return c.token_id("PUT", static_cast<std::uint32_t>(r * 8 + v)); }
  std::uint32_t get(int r) const { return c.token_id("GET", static_cast<std::uint32_t>(r)); }
};

std::filesystem::path compile(const Circuit& circuit) {
  const CircuitGraph graph = analyze(circuit);
  const Placement placement = place(circuit, graph);
  const EmittedModel model = emit(circuit, graph, placement);
  const auto directory = std::filesystem::path(::testing::TempDir()) / "fast_register_machine";
  engine::write_checkpoint(directory, model.config, model.tensors_to_write());
  return directory;
}

TEST(FastModelOnCompiledWeights, EmitsTheReferenceTokensAndStates) {
  const RegisterMachine machine;
  const auto directory = compile(machine.c);
  const engine::Model model = engine::Model::load(directory);
  engine::FastModel fast = engine::FastModel::load(directory);
  engine::State reference = model.new_state();
  engine::FastState state = fast.new_state();

  // A script of PUTs and GETs (a PUT at least every third token, as the counter decodes n < 4),
  // with the machine's own RESULT tokens fed back in between.
  Evaluator evaluator(machine.c);  // the circuit itself: the compiled model really is the machine
  std::mt19937 random(5);
  std::uint32_t token = machine.put(3, 5);
  int since_put = 0;
  for (int step = 0; step < 150; ++step) {
    const std::uint32_t expected = model.decode_argmax(reference, token);
    ASSERT_EQ(evaluator.step(token), expected) << "step " << step;
    ASSERT_EQ(fast.decode_argmax(state, token), expected) << "step " << step;
    ASSERT_EQ(engine::first_difference(state.state(), reference), std::nullopt) << "step " << step;
    since_put = token < 128 ? 0 : since_put + 1;
    const int kind = since_put >= 2 ? 0 : static_cast<int>(random() % 3);
    if (kind == 0) {
      token = machine.put(static_cast<int>(random() % 16), static_cast<int>(random() % 8));
    } else if (kind == 1) {
      token = machine.get(static_cast<int>(random() % 16));
    } else {
      token = expected;
    }
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
