// Tests of the circuit IR, its gates and its exact evaluator.
#include <gtest/gtest.h>

#include "circuit/evaluator.h"
#include "circuit/gates.h"
#include "support/error.h"

namespace rvformer::circuit {
namespace {

// A circuit whose tokens spell `width` input bits: token i sets bit k to (i >> k) & 1.
struct BitsCircuit {
  Circuit c;
  std::vector<SignalId> bits;
  SignalId probe = 0;  // output that makes every pass pick token 0, so steps need no real code

  explicit BitsCircuit(int width) {
    for (int k = 0; k < width; ++k) bits.push_back(c.add_input("in" + std::to_string(k)));
    Gates g(c, "probe");
    probe = g.relu("always", Form(1.0), 1);
    c.mark_output(probe);
    c.add_token_family({"X", 1u << width,
                        [this](std::uint32_t i, const auto& set) {
                          for (std::size_t k = 0; k < bits.size(); ++k) set(bits[k], (i >> k) & 1);
                        },
                        [this](std::uint32_t i, const auto& set) { if (i == 0) set(probe, 1); }});
  }
};

TEST(Gates, TruthTablesOfThreeInputs) {
  BitsCircuit t(3);
  Gates g(t.c, "g");
  auto [a, b, c] = std::tuple{t.bits[0], t.bits[1], t.bits[2]};
  SignalId and3 = g.all("and3", {lit(a), lit(b), lit(c)});
  SignalId and_not = g.all("a_and_not_b", {lit(a), nlit(b)});
  SignalId or3 = g.any("or3", {a, b, c});
  SignalId x = g.exclusive_or("xor", a, b);
  SignalId ge2 = g.at_least("ge2", F(a) + F(b) + F(c), 2);
  SignalId eq1 = g.equals("eq1", F(a) + F(b) + F(c), 1);
  SignalId sel = g.gated("sel", c, F(a) + 2 * F(b), 3);
  Evaluator e(t.c);
  for (std::uint32_t i = 0; i < 8; ++i) {
    int va = i & 1, vb = (i >> 1) & 1, vc = (i >> 2) & 1;
    e.step(i);
    EXPECT_EQ(e.value(and3), va & vb & vc) << i;
    EXPECT_EQ(e.value(and_not), va & !vb) << i;
    EXPECT_EQ(e.value(or3), va | vb | vc) << i;
    EXPECT_EQ(e.value(x), va ^ vb) << i;
    EXPECT_EQ(e.value(ge2), va + vb + vc >= 2) << i;
    EXPECT_EQ(e.value(eq1), va + vb + vc == 1) << i;
    EXPECT_EQ(e.value(sel), vc ? va + 2 * vb : 0) << i;
  }
}

// One bank with a 2-bit row address from the token, writes of bit 2 when bit 3 is set, reads always.
struct MemoryCircuit : BitsCircuit {
  std::vector<SignalId> row;
  SignalId read0, read1;
  MemoryCircuit() : BitsCircuit(4) {
    Gates g(c, "mem");
    for (int r = 0; r < 4; ++r)
      row.push_back(g.all("row" + std::to_string(r), {r & 1 ? lit(bits[0]) : nlit(bits[0]), r & 2 ? lit(bits[1]) : nlit(bits[1])}));
    read0 = c.add_read_signal("mem.read0");
    read1 = c.add_read_signal("mem.read1", 0, 1, 1.0 / 256);  // a halving counter
    Bank bank{"mem", 4};
    bank.has_write = bank.has_read = true;
    bank.write.row = {.one_hot = row, .binary = {}, .match = {}, .conditions = {F(bits[3])}};
    bank.write.beta[0] = Form(1.0);
    bank.write.beta[1] = Form(0.5) + 0.5 * F(bits[2]);  // bit 2 resets half 1, else it halves
    bank.write.lanes[0] = {F(bits[2])};
    bank.write.lanes[1] = {F(bits[2])};
    bank.read.row.binary = {bits[0], bits[1]};
    bank.read.lanes[0] = {{{read0, 1}}};
    bank.read.lanes[1] = {{{read1, 1}}};
    c.add_bank(std::move(bank));
  }
  static std::uint32_t token(int row, int bit, bool write) { return row | (bit << 2) | (write << 3); }
};

TEST(Evaluator, BankReadsSeeTheSamePassWrite) {
  MemoryCircuit m;
  Evaluator e(m.c);
  e.step(MemoryCircuit::token(2, 1, true));
  EXPECT_EQ(e.value(m.read0), 1);
  e.step(MemoryCircuit::token(1, 0, false));
  EXPECT_EQ(e.value(m.read0), 0) << "row 1 was never written";
  e.step(MemoryCircuit::token(2, 0, false));
  EXPECT_EQ(e.value(m.read0), 1) << "a read without write keeps the row";
  e.step(MemoryCircuit::token(2, 0, true));
  EXPECT_EQ(e.value(m.read0), 0) << "overwrite";
}

TEST(Evaluator, HalfStrengthWritesHalveTowardsTheValue) {
  MemoryCircuit m;
  Evaluator e(m.c);
  e.step(MemoryCircuit::token(3, 1, true));
  EXPECT_EQ(e.value(m.read1), 1);
  e.step(MemoryCircuit::token(3, 0, true));
  EXPECT_EQ(e.value(m.read1), 0.5);
  e.step(MemoryCircuit::token(3, 0, true));
  EXPECT_EQ(e.value(m.read1), 0.25);
  EXPECT_EQ(e.value(m.read0), 0);
  // Halving a row that was never written would leave its norm-balancing lanes unset.
  EXPECT_THROW(e.step(MemoryCircuit::token(1, 0, true)), Error);
}

TEST(Evaluator, DelayGivesThePreviousPassValue) {
  BitsCircuit t(1);
  SignalId d = t.c.add_delay(t.bits[0], "delayed");
  Evaluator e(t.c);
  std::vector<int> inputs{1, 0, 1, 1, 0}, expected{0, 1, 0, 1, 1};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    e.step(inputs[i]);
    EXPECT_EQ(e.value(d), expected[i]) << i;
  }
}

TEST(Evaluator, RejectsInexactSums) {
  BitsCircuit t(1);
  Gates g(t.c, "bad");
  // 2^24 + 1 is not a float: the evaluator must refuse it rather than round.
  g.relu("big", F(t.bits[0]) * 16777216.0 + 1, 1e9);
  Evaluator e(t.c);
  EXPECT_NO_THROW(e.step(0));
  EXPECT_THROW(e.step(1), Error);
}

TEST(Evaluator, RejectsGatesOffTheirQuantum) {
  BitsCircuit t(1);
  Gates g(t.c, "bad");
  g.relu("half", F(t.bits[0]) * 0.5, 1);
  Evaluator e(t.c);
  EXPECT_THROW(e.step(1), Error);
}

TEST(Evaluator, RejectsAmbiguousNextToken) {
  Circuit c;
  SignalId x = c.add_input("x");
  Gates g(c, "out");
  SignalId o = g.copy("o", F(x));
  c.mark_output(o);
  c.add_token_family({"T", 2, [&](std::uint32_t, const auto& set) { set(x, 1); },
                      [&](std::uint32_t, const auto& set) { set(o, 1); }});  // both tokens tie
  Evaluator e(c);
  EXPECT_THROW(e.step(0), Error);
}

TEST(Graph, RejectsCombinationalCycles) {
  Circuit c;
  Gates g(c, "loop");
  SignalId a = g.signal("a");
  g.add_relu(a, F(a));
  EXPECT_THROW(Evaluator e(c), Error);
}

}  // namespace
}  // namespace rvformer::circuit
