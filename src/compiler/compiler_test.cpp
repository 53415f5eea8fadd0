// End-to-end tests of the compiler: a small machine built from every circuit part (gates, a memory
// bank, a halving counter, a delay, a token-level output code) is run by the exact evaluator and, as
// compiled weights, by the engine's dense reference forward pass and its fast exact executor; next
// tokens and memory must agree, and the two engine paths leave bit-identical States after every pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <tuple>
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
#include "support/error.h"

namespace rvformer::compiler {
namespace {

using namespace circuit;
using toy::ToyMachine;

// The parts a shallow machine needs on top of those: a write whose row and values come from the
// previous token (the conv's earlier taps), a bank holding two bits per lane as stored levels, a
// delay two passes back, and dual-rail outputs (a bit and its complement, which starts at 1) that
// two units in different layers write. Tokens: SET(a, v) names a row and a value that the next
// COMMIT writes; PAIR(a, v) stores v as two levels at row a; LATCHED(a) and LEVELS(a) read them
// back; OUT(x, d) is the machine's output: the value read, and whether two tokens ago was a SET.
struct LookBackToy {
  Circuit c;
  SignalId is_set, is_commit, is_pair, is_latched, is_levels;
  std::vector<SignalId> addr, value, x, not_x, set_two_ago;
  int latched_bank = -1, levels_bank = -1;

  LookBackToy() {
    is_set = c.add_input("is_set");
    is_commit = c.add_input("is_commit");
    is_pair = c.add_input("is_pair");
    is_latched = c.add_input("is_latched");
    is_levels = c.add_input("is_levels");
    for (int i = 0; i < 3; ++i) addr.push_back(c.add_input("addr" + std::to_string(i)));
    for (int i = 0; i < 4; ++i) value.push_back(c.add_input("value" + std::to_string(i)));
    Gates g(c, "toy");

    std::vector<SignalId> latched(4);
    for (int i = 0; i < 4; ++i) latched[i] = c.add_read_signal("toy.latched" + std::to_string(i));
    Bank latch{"latched", 8};
    latch.has_write = latch.has_read = true;
    latch.write.row = {.one_hot = {}, .binary = addr, .match = {}, .conditions = {F(is_set)}, .ago = 1};
    latch.write.beta[0] = F(is_commit);
    for (int i = 0; i < 4; ++i) latch.write.lanes[0].push_back({{value[i], 1, 1}});
    latch.read.row = {.one_hot = {}, .binary = addr, .match = {}, .conditions = {F(is_latched)}};
    for (int i = 0; i < 4; ++i) latch.read.lanes[0].push_back({{latched[i], 1}});
    latched_bank = c.add_bank(std::move(latch));

    // Two bits (b, b') as stored levels 0, 1, 2, 4 for 00, 10, 01, 11.
    std::vector<SignalId> level(2), read_level(2);
    for (int k = 0; k < 2; ++k) {
      level[k] = c.add_stored_levels_signal("toy.level" + std::to_string(k));
      SignalId low = value[2 * k], high = value[2 * k + 1];
      g.add_relu(level[k], F(low) - F(high), 1);
      g.add_relu(level[k], F(high) - F(low), 2);
      g.add_relu(level[k], F(low) + F(high) - 1, 4);
      read_level[k] = c.add_read_signal("toy.read_level" + std::to_string(k), 0, 4);
    }
    Bank levels{"levels", 8};
    levels.has_write = levels.has_read = true;
    levels.write.row = {.one_hot = {}, .binary = addr, .match = {}, .conditions = {F(is_pair)}};
    levels.write.beta[0] = Form(1.0);
    for (int k = 0; k < 2; ++k) levels.write.lanes[0].push_back(F(level[k]));
    levels.read.row = {.one_hot = {}, .binary = addr, .match = {}, .conditions = {F(is_levels)}};
    for (int k = 0; k < 2; ++k) levels.read.lanes[0].push_back({{read_level[k], 1}});
    levels_bank = c.add_bank(std::move(levels));

    // Decoding a level: bit b = r(x) − 2r(x−1) + 1.5r(x−2), bit b' = r(x−1) − r(x−2).
    std::vector<SignalId> decoded(4);
    for (int i = 0; i < 4; ++i) decoded[i] = g.signal("decoded" + std::to_string(i));
    for (int k = 0; k < 2; ++k) {
      SignalId x0 = g.relu("level_ramp0_" + std::to_string(k), F(read_level[k]), 4);
      SignalId x1 = g.relu("level_ramp1_" + std::to_string(k), F(read_level[k]) - 1, 3);
      SignalId x2 = g.relu("level_ramp2_" + std::to_string(k), F(read_level[k]) - 2, 2);
      g.add_relu(decoded[2 * k], F(x0) - 2 * F(x1) + 1.5 * F(x2));
      g.add_relu(decoded[2 * k + 1], F(x1) - F(x2));
    }
    for (int i = 0; i < 4; ++i) {
      x.push_back(c.add_neuron_signal("toy.x" + std::to_string(i)));
      not_x.push_back(c.add_neuron_signal("toy.not_x" + std::to_string(i)));
      c.mark_output(x[i]);
      c.mark_output(not_x[i], 1);
      for (auto [bit, flag, unit] : {std::tuple{latched[i], is_latched, "toy.from_latch"}, {decoded[i], is_levels, "toy.from_levels"}})
        c.add_neuron(Neuron{F(bit) + F(flag) - 1, Form(1.0), {{x[i], 1}, {not_x[i], -1}}, 1, unit});
    }
    SignalId set2 = c.add_delay(is_set, "toy.set_two_ago", 2);
    set_two_ago = {g.copy("set2_is0", Form(1.0) - F(set2)), g.copy("set2_is1", F(set2))};
    for (SignalId s : set_two_ago) c.mark_output(s);

    auto flag_and = [](SignalId flag, const std::vector<SignalId>& bits, int a_shift) {
      return [=](std::uint32_t i, const std::function<void(SignalId, double)>& set) {
        set(flag, 1);
        for (int k = 0; k < static_cast<int>(bits.size()); ++k) set(bits[k], (i >> (a_shift * k)) & 1);
      };
    };
    auto row_and_value = [this](SignalId flag) {
      return [this, flag](std::uint32_t i, const std::function<void(SignalId, double)>& set) {
        set(flag, 1);
        for (int k = 0; k < 3; ++k) set(addr[k], (i >> 4 >> k) & 1);
        for (int k = 0; k < 4; ++k) set(value[k], (i >> k) & 1);
      };
    };
    c.add_token_family({"SET", 128, row_and_value(is_set), nullptr});
    c.add_token_family({"COMMIT", 1, flag_and(is_commit, {}, 1), nullptr});
    c.add_token_family({"PAIR", 128, row_and_value(is_pair), nullptr});
    c.add_token_family({"LATCHED", 8, flag_and(is_latched, addr, 1), nullptr});
    c.add_token_family({"LEVELS", 8, flag_and(is_levels, addr, 1), nullptr});
    c.add_token_family({"OUT", 32, nullptr, [this](std::uint32_t i, const auto& set) {
                          for (int k = 0; k < 4; ++k) set((i >> k) & 1 ? x[k] : not_x[k], 1);
                          set(set_two_ago[i >> 4], 1);
                        }});
  }
  std::uint32_t set(int a, int v) const { return c.token_id("SET", a * 16 + v); }
  std::uint32_t commit() const { return c.token_id("COMMIT"); }
  std::uint32_t pair(int a, int v) const { return c.token_id("PAIR", a * 16 + v); }
  std::uint32_t latched(int a) const { return c.token_id("LATCHED", a); }
  std::uint32_t levels(int a) const { return c.token_id("LEVELS", a); }
  std::uint32_t out(int value, int set_two_ago) const { return c.token_id("OUT", value + 16 * set_two_ago); }
};

// Lanes holding three and four bits as stored levels: 0 and the powers of two up to 64 and up to
// 2^14, each in a half of its own so that each half gets its own balancing factor. PUT(r, s) stores
// state s (0..15) in the wide lane of row r and state s mod 8 in the narrow one (state k > 0 as the
// level 2^(k−1)); GET(r) reads both back and decodes each by thresholds at the powers of two into
// OUT(wide, narrow); other tokens emit DONE.
struct WideLevelsToy {
  static constexpr int kRows = 8;
  Circuit c;
  SignalId is_put, is_get;
  std::vector<SignalId> row, state;
  std::vector<SignalId> wide, narrow;  // one-hot decoded states
  SignalId done = 0;
  int bank = -1;

  WideLevelsToy() {
    is_put = c.add_input("is_put");
    is_get = c.add_input("is_get");
    for (int i = 0; i < 3; ++i) row.push_back(c.add_input("row" + std::to_string(i)));
    for (int i = 0; i < 4; ++i) state.push_back(c.add_input("state" + std::to_string(i)));
    Gates g(c, "wide");
    const SignalId wide_level = c.add_stored_levels_signal("wide.wide_level", 16384);
    const SignalId narrow_level = c.add_stored_levels_signal("wide.narrow_level", 64);
    for (int s = 1; s < 16; ++s) {
      std::vector<Literal> spelled;
      for (int i = 0; i < 4; ++i) spelled.push_back((s >> i) & 1 ? lit(state[i]) : nlit(state[i]));
      g.add_all(wide_level, spelled, F(is_put), std::ldexp(1.0, s - 1));
      if (s < 8) g.add_all(narrow_level, {spelled[0], spelled[1], spelled[2]}, F(is_put), std::ldexp(1.0, s - 1));
    }
    const SignalId read_wide = c.add_read_signal("wide.read_wide", 0, 16384);
    const SignalId read_narrow = c.add_read_signal("wide.read_narrow", 0, 64);
    Bank levels{"wide_levels", kRows};
    levels.has_write = levels.has_read = true;
    levels.write.row = {.one_hot = {}, .binary = row, .match = {}, .conditions = {F(is_put)}};
    levels.write.beta[0] = levels.write.beta[1] = Form(1.0);
    levels.write.lanes[0].push_back(F(narrow_level));
    levels.write.lanes[1].push_back(F(wide_level));
    levels.read.row = {.one_hot = {}, .binary = row, .match = {}, .conditions = {F(is_get)}};
    levels.read.lanes[0].push_back({{read_narrow, 1}});
    levels.read.lanes[1].push_back({{read_wide, 1}});
    bank = c.add_bank(std::move(levels));
    wide = decode(g, "wide", read_wide, 16);
    narrow = decode(g, "narrow", read_narrow, 8);
    done = g.copy("done", Form(1.0) - F(is_get));
    c.mark_output(done);

    c.add_token_family({"PUT", kRows * 16, [this](std::uint32_t i, const auto& set) {
                          set(is_put, 1);
                          for (int k = 0; k < 3; ++k) set(row[k], (i >> 4 >> k) & 1);
                          for (int k = 0; k < 4; ++k) set(state[k], (i >> k) & 1);
                        }, nullptr});
    c.add_token_family({"GET", kRows, [this](std::uint32_t i, const auto& set) {
                          set(is_get, 1);
                          for (int k = 0; k < 3; ++k) set(row[k], (i >> k) & 1);
                        }, nullptr});
    c.add_token_family({"OUT", 16 * 8, nullptr, [this](std::uint32_t i, const auto& set) {
                          set(wide[i % 16], 1);
                          set(narrow[i / 16], 1);
                        }});
    c.add_token_family({"DONE", 1, nullptr, [this](std::uint32_t, const auto& set) { set(done, 1); }});
  }

  // The one-hot state of a read level while GET: state 0 below 1, state k where 2^(k−1) ≤ level < 2^k.
  std::vector<SignalId> decode(Gates& g, const std::string& name, SignalId level, int states) {
    std::vector<SignalId> at_least;  // [level ≥ 2^k]
    for (int k = 0; k + 1 < states; ++k)
      at_least.push_back(g.at_least(name + ".at_least" + std::to_string(k), F(level), std::ldexp(1.0, k)));
    std::vector<SignalId> one_hot;
    for (int s = 0; s < states; ++s) {
      std::vector<Literal> literals{lit(is_get)};
      if (s > 0) literals.push_back(lit(at_least[s - 1]));
      if (s + 1 < states) literals.push_back(nlit(at_least[s]));
      one_hot.push_back(g.all(name + ".state" + std::to_string(s), literals));
      c.mark_output(one_hot.back());
    }
    return one_hot;
  }

  static double level(int state) { return state == 0 ? 0 : std::ldexp(1.0, state - 1); }
  std::uint32_t put(int r, int s) const { return c.token_id("PUT", r * 16 + s); }
  std::uint32_t get(int r) const { return c.token_id("GET", r); }
  std::uint32_t out(int wide_state, int narrow_state) const { return c.token_id("OUT", narrow_state * 16 + wide_state); }
  std::uint32_t done_token() const { return c.token_id("DONE"); }
};

class CompilerTest : public ::testing::Test {
 protected:
  // Each test writes its own directory: ctest runs them in parallel processes.
  std::filesystem::path compile(const Circuit& circuit, Placement& placement, engine::DType storage = engine::DType::BF16,
                                const std::string& suffix = "") {
    CircuitGraph graph = analyze(circuit);
    placement = place(circuit, graph);
    EmittedModel model = emit(circuit, graph, placement);
    auto dir = std::filesystem::path(::testing::TempDir()) /
               (std::string("toy_model_") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix);
    auto tensors = model.tensors_to_write(storage);
    engine::write_checkpoint(dir, model.config, tensors);
    return dir;
  }
};

// A circuit compiled to BF16 weights, run three ways at once: the exact evaluator, the dense path
// and the fast path.
struct ThreeWays {
  ThreeWays(const Circuit& circuit, const std::filesystem::path& dir)
      : model(engine::Model::load(dir)), fast(engine::FastModel::load(dir)), dense_state(model.new_state()),
        fast_state(fast.new_state()), evaluator(circuit) {}
  // Feeds `token` to all three; true when they emit the same token, `next`, and the fast path's
  // State is the dense path's bit for bit.
  ::testing::AssertionResult step(std::uint32_t token, std::uint32_t& next) {
    next = evaluator.step(token);
    const std::uint32_t by_dense = model.decode_argmax(dense_state, token), by_fast = fast.decode_argmax(fast_state, token);
    if (by_dense != next || by_fast != next)
      return ::testing::AssertionFailure() << "evaluator " << next << ", dense " << by_dense << ", fast " << by_fast;
    if (engine::first_difference(fast_state.state(), dense_state))
      return ::testing::AssertionFailure() << "the fast path's State differs from the dense path's";
    return ::testing::AssertionSuccess();
  }
  engine::Model model;
  engine::FastModel fast;
  engine::State dense_state;
  engine::FastState fast_state;
  Evaluator evaluator;
};

// The residual leads with the constant dimensions its width balances (the width over their count a
// power of 4, the narrowest such width) and the data sits after them, whatever base model it
// follows: also where the data needs more constant dimensions than the first allocation left room
// for.
TEST_F(CompilerTest, TheDataSitsAfterTheConstantDimensionsTheWidthBalances) {
  ToyMachine m;
  CircuitGraph graph = analyze(m.c);
  std::set<int> constant_counts;
  for (int base = 0; base < 256; ++base) {
    Placement p = place(m.c, graph, {.min_layers = 1, .base_hidden = base});
    constant_counts.insert(p.constant_dims);
    ASSERT_EQ(p.hidden_size % p.constant_dims, 0) << "base " << base;
    int quotient = p.hidden_size / p.constant_dims;
    while (quotient % 4 == 0) quotient /= 4;
    EXPECT_EQ(quotient, 1) << "base " << base << ": width " << p.hidden_size << ", " << p.constant_dims << " constants";
    // And no narrower width would hold the data with any number of constants.
    const int data = *std::ranges::max_element(p.signal_dim) + 1 - base - p.constant_dims;
    for (int total = base + data + kMinConstantDims; total < p.hidden_size; ++total)
      for (int constants = kMinConstantDims; base + data + constants <= total; ++constants) {
        if (total % constants != 0) continue;
        int narrower = total / constants;
        while (narrower % 4 == 0) narrower /= 4;
        EXPECT_NE(narrower, 1) << "base " << base << ": width " << total << " with " << constants << " constants fits";
      }
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
  ThreeWays run(m.c, compile(m.c, placement));
  std::mt19937 random(5);
  std::uint32_t token = m.write(3, 5);
  int since_write = 0;
  for (int step = 0; step < 150; ++step) {
    std::uint32_t expected = 0;
    ASSERT_TRUE(run.step(token, expected)) << "step " << step;
    since_write = token < 128 ? 0 : since_write + 1;  // WRITE tokens come first in the vocabulary
    const int kind = since_write >= 2 ? 0 : static_cast<int>(random() % 3);  // the counter decodes n < 4
    if (kind == 0) token = m.write(random() % 8, random() % 16);
    else if (kind == 1) token = m.read(random() % 8);
    else token = expected;
  }
  // The model did its work on the fast paths: most value heads idle, the bank heads sparse, repeated
  // addresses and signals recalled from the memos.
  const auto& counters = run.fast.counters();
  EXPECT_GT(counters.gated_delta_net.idle_heads, counters.gated_delta_net.sparse_heads);
  EXPECT_GT(counters.gated_delta_net.sparse_heads, 0u);
  EXPECT_EQ(counters.gated_delta_net.reference_heads, 0u);
  EXPECT_GT(counters.gated_delta_net.remembered_heads, 0u);
  EXPECT_GT(counters.remembered_mlps, 0u);
}

TEST_F(CompilerTest, EvaluatorPredictsTheLookBackToy) {
  LookBackToy m;
  Evaluator e(m.c);
  EXPECT_EQ(e.step(m.set(3, 5)), m.out(0, 0));
  EXPECT_EQ(e.step(m.commit()), m.out(0, 0)) << "the commit writes what the previous token named";
  EXPECT_EQ(e.step(m.latched(3)), m.out(5, 1)) << "two tokens ago was a SET";
  EXPECT_EQ(e.step(m.commit()), m.out(0, 0)) << "a commit after something else writes nothing";
  EXPECT_EQ(e.step(m.latched(3)), m.out(5, 0));
  EXPECT_EQ(e.step(m.pair(6, 13)), m.out(0, 0));
  EXPECT_EQ(e.step(m.levels(6)), m.out(13, 0)) << "13 = 1101: levels 1 and 4";
  EXPECT_EQ(e.lane(m.levels_bank, 6, 0, 0), 1);
  EXPECT_EQ(e.lane(m.levels_bank, 6, 0, 1), 4);
}

// Random scripts on the compiled weights, stored as BF16 and as F32: the evaluator, the dense path
// of both checkpoints and the fast path agree on every token; the two storages give the same
// logits, and the fast path the dense path's State, bit for bit.
TEST_F(CompilerTest, LookBackToyCompilesExactlyInBf16AndF32) {
  LookBackToy m;
  Placement placement;
  auto bf16_dir = compile(m.c, placement, engine::DType::BF16, "_bf16");
  auto f32_dir = compile(m.c, placement, engine::DType::F32, "_f32");
  engine::Model bf16 = engine::Model::load(bf16_dir), f32 = engine::Model::load(f32_dir);
  engine::FastModel fast = engine::FastModel::load(bf16_dir);
  engine::State bf16_state = bf16.new_state(), f32_state = f32.new_state();
  engine::FastState fast_state = fast.new_state();
  Evaluator e(m.c);
  std::mt19937 random(11);
  for (int step = 0; step < 300; ++step) {
    std::uint32_t token;
    switch (random() % 6) {
      case 0: token = m.set(random() % 8, random() % 16); break;
      case 1: token = m.commit(); break;
      case 2: token = m.pair(random() % 8, random() % 16); break;
      case 3: token = m.latched(random() % 8); break;
      case 4: token = m.levels(random() % 8); break;
      default: token = m.out(random() % 16, random() % 2); break;
    }
    const std::uint32_t expected = e.step(token);
    std::vector<float> logits = bf16.decode(bf16_state, token);
    ASSERT_EQ(f32.decode(f32_state, token), logits) << "step " << step;
    ASSERT_EQ(static_cast<std::uint32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()), expected)
        << "step " << step;
    ASSERT_EQ(fast.decode_argmax(fast_state, token), expected) << "step " << step;
    ASSERT_EQ(engine::first_difference(fast_state.state(), bf16_state), std::nullopt) << "step " << step;
  }
  // Levels are stored as that many units V; latched bits as V.
  const HeadSlot& slot = placement.bank_head[m.levels_bank];
  auto head = bf16_state.recurrent_head(slot.layer, 2 * slot.head);
  for (int row = 0; row < 8; ++row)
    for (int lane = 0; lane < 2; ++lane)
      EXPECT_EQ(head[row * kKeyDim + lane], static_cast<float>(kBitValue * e.lane(m.levels_bank, row, 0, lane)));
}

// Three and four bits a lane: every state written and read back through the compiled weights, in
// BF16, on the dense and the fast path, reads back as written (an expectation the test keeps itself,
// not the evaluator's), and the state holds exactly that many stored units V. A row is cleared (its
// state 0 written) before it takes a lower level: the overwrite that the evaluator refuses below.
TEST_F(CompilerTest, LanesHoldThreeAndFourBitsAsStoredLevels) {
  WideLevelsToy m;
  Placement placement;
  ThreeWays run(m.c, compile(m.c, placement));
  std::mt19937 random(13);
  std::vector<std::pair<int, int>> script;  // (row, state) to put, or (row, −1) to get
  for (int s = 0; s < 16; ++s) {
    const int r = s % WideLevelsToy::kRows;
    if (s >= WideLevelsToy::kRows) script.push_back({r, 0});
    script.push_back({r, s});
    script.push_back({r, -1});
  }
  for (int i = 0; i < 300; ++i) {
    const int r = static_cast<int>(random() % WideLevelsToy::kRows);
    script.push_back({r, random() % 2 ? -1 : 0});  // a read, or a clear
    script.push_back({r, static_cast<int>(random() % 16)});
  }
  std::vector<int> stored(WideLevelsToy::kRows, 0);
  for (std::size_t step = 0; step < script.size(); ++step) {
    auto [r, s] = script[step];
    // Each lane only up from what it holds, or to 0.
    if (s > 0 && (s < stored[r] || s % 8 < stored[r] % 8)) continue;
    if (s >= 0) stored[r] = s;
    std::uint32_t next = 0;
    ASSERT_TRUE(run.step(s >= 0 ? m.put(r, s) : m.get(r), next)) << "step " << step;
    ASSERT_EQ(next, s >= 0 ? m.done_token() : m.out(stored[r], stored[r] % 8)) << "step " << step;
  }
  const HeadSlot& slot = placement.bank_head[m.bank];
  auto narrow = run.dense_state.recurrent_head(slot.layer, 2 * slot.head);
  auto wide = run.dense_state.recurrent_head(slot.layer, 2 * slot.head + 1);
  for (int r = 0; r < WideLevelsToy::kRows; ++r) {
    EXPECT_EQ(wide[r * kKeyDim], static_cast<float>(kBitValue * WideLevelsToy::level(stored[r]))) << "row " << r;
    EXPECT_EQ(narrow[r * kKeyDim], static_cast<float>(kBitValue * WideLevelsToy::level(stored[r] % 8))) << "row " << r;
  }
  // From 64 (state 7) down to 1 (state 1) the delta rule's v + (w − v) is not exact: refused.
  Evaluator strict(m.c);
  strict.step(m.put(0, 7));
  EXPECT_THROW(strict.step(m.put(0, 1)), Error);
}

// A stored-levels signal's largest level is a power of two from 4 to 2^14.
TEST(StoredLevels, TheLargestLevelIsAPowerOfTwoUpToFourBits) {
  Circuit c;
  EXPECT_THROW(c.add_stored_levels_signal("three", 3), Error);
  EXPECT_THROW(c.add_stored_levels_signal("too_wide", 32768), Error);
  EXPECT_NO_THROW(c.add_stored_levels_signal("widest", 16384));
}

}  // namespace
}  // namespace rvformer::compiler
