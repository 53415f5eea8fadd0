// circuit/vector_arith_testing.h — a machine that runs one of the vector unit's operations on a list
// of cases, one token each, for the evaluator's and the compiled weights' tests; the operations'
// machines, their references (firmware/story/story_ops.c) and the row product's cases; and the
// stage count of an operation.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "circuit/evaluator.h"
#include "circuit/graph.h"
#include "circuit/vector_arith.h"
#include "circuit/vector_elementwise.h"
#include "circuit/vector_reduce.h"

extern "C" {
#include "story_ops.h"
}

namespace rvformer::circuit {

inline constexpr int kResultBits = 13;

// A value per operand, in the order the machine declared them, and the expected results.
struct VectorCase {
  std::vector<std::int64_t> operands;
  std::vector<int> results;  // 13-bit values
};

// Token CASE(i) feeds case i's operands and the enable; IDLE(i) feeds case i's operands alone (for
// the first kIdleCases cases). Each result leaves as one-hots of its bits 0–3, 4–7 and 8–12, and
// token RESULT(k) has weight 1 on the one-hots of the k-th distinct tuple of expected results, so
// that the right tuple scores 3 per result and any other at least one less.
class VectorMachine {
 public:
  static constexpr std::uint32_t kIdleCases = 8;
  static constexpr const char* kUnit = "vector";

  VectorMachine() = default;
  VectorMachine(const VectorMachine&) = delete;
  VectorMachine& operator=(const VectorMachine&) = delete;

  // An operand of `bits` input bits: a value's two's complement (its low bits).
  Bits operand(const std::string& name, int bits) { return declare(name, bits, 0, false); }
  // An operand given one-hot: value v sets bit v − first.
  Bits one_hot_operand(const std::string& name, int first, int count) { return declare(name, count, first, true); }
  // A 13-bit operand as AM's read-out holds it: 7 lanes, lane i bits 2i and 2i + 1 as the level 0,
  // 1, 2 or 4, the last lane bit 12 alone.
  Bits lanes_operand(const std::string& name) { return declare(name, 7, 0, false, true); }
  SignalId enable() const { return enable_; }
  // Where the operation's neurons go.
  Gates unit() { return Gates(c, kUnit); }

  // Decodes the operation's results (13 bits each) and adds the tokens.
  void finish(std::vector<Bits> results, std::vector<VectorCase> cases) {
    results_ = std::move(results);
    cases_ = std::move(cases);
    Gates g(c, "decode");
    for (std::size_t r = 0; r < results_.size(); ++r)
      for (auto [low, count] : {std::pair{0, 4}, {4, 4}, {8, 5}}) {
        const Bits group(results_[r].begin() + low, results_[r].begin() + low + count);
        group_is_.push_back(decode_one_hot(g, indexed(indexed("r", static_cast<int>(r)), low), group));
        for (SignalId s : group_is_.back()) c.mark_output(s);
      }
    // The results' tuples, the all-zero one first: what the unit gives with its enable off.
    std::map<std::vector<int>, std::uint32_t> index;
    tuples_.push_back(std::vector<int>(results_.size(), 0));
    index.emplace(tuples_.back(), 0);
    for (const VectorCase& k : cases_) {
      auto [it, added] = index.try_emplace(masked(k.results), static_cast<std::uint32_t>(tuples_.size()));
      if (added) tuples_.push_back(it->first);
      tuple_of_.push_back(it->second);
    }
    const auto count = static_cast<std::uint32_t>(cases_.size());
    c.add_token_family({"CASE", count, [this](std::uint32_t i, const auto& set) { feed(i, set, true); }, nullptr});
    c.add_token_family(
        {"IDLE", std::min(count, kIdleCases), [this](std::uint32_t i, const auto& set) { feed(i, set, false); }, nullptr});
    c.add_token_family({"RESULT", static_cast<std::uint32_t>(tuples_.size()), nullptr,
                        [this](std::uint32_t k, const auto& set) { code(k, set); }});
  }

  const std::vector<VectorCase>& cases() const { return cases_; }
  const std::vector<Bits>& results() const { return results_; }
  std::uint32_t expected_token(std::uint32_t i) const { return c.token_id("RESULT", tuple_of_[i]); }
  std::string describe(std::uint32_t i) const {
    std::ostringstream out;
    out << "case " << i << ": operands";
    for (std::int64_t v : cases_[i].operands) out << ' ' << v;
    out << "; expected";
    for (int v : cases_[i].results) out << ' ' << v;
    return out.str();
  }

  Circuit c;

 private:
  struct Operand {
    Bits bits;
    int first;
    bool one_hot, lanes;
  };

  Bits declare(const std::string& name, int bits, int first, bool one_hot, bool lanes = false) {
    Bits b;
    for (int i = 0; i < bits; ++i) b.push_back(c.add_input(name + "[" + std::to_string(i) + "]", 0, lanes ? 4 : 1));
    operands_.push_back({b, first, one_hot, lanes});
    return b;
  }

  static std::vector<int> masked(std::vector<int> results) {
    for (int& v : results) v &= (1 << kResultBits) - 1;
    return results;
  }

  template <typename Set>
  void code(std::uint32_t k, const Set& set) const {
    for (std::size_t r = 0; r < tuples_[k].size(); ++r) {
      const int v = tuples_[k][r];
      set(group_is_[3 * r][v & 15], 1);
      set(group_is_[3 * r + 1][(v >> 4) & 15], 1);
      set(group_is_[3 * r + 2][v >> 8], 1);
    }
  }

  template <typename Set>
  void feed(std::uint32_t i, const Set& set, bool enabled) const {
    for (std::size_t o = 0; o < operands_.size(); ++o) {
      const Operand& op = operands_[o];
      const std::int64_t v = cases_[i].operands[o];
      if (op.one_hot) {
        set(op.bits.at(v - op.first), 1);
      } else if (op.lanes) {
        constexpr double kLevel[] = {0, 1, 2, 4};
        for (std::size_t lane = 0; lane < op.bits.size(); ++lane)
          set(op.bits[lane], kLevel[(v >> (2 * lane)) & (lane + 1 < op.bits.size() ? 3 : 1)]);
      } else {
        for (std::size_t b = 0; b < op.bits.size(); ++b) set(op.bits[b], static_cast<double>((v >> b) & 1));
      }
    }
    if (enabled) set(enable_, 1);
  }

  SignalId enable_ = c.add_input("enable");
  std::vector<Operand> operands_;
  std::vector<Bits> results_;
  std::vector<VectorCase> cases_;
  std::vector<std::vector<SignalId>> group_is_;  // per result, its three groups' one-hots
  std::vector<std::vector<int>> tuples_;         // the distinct expected results, 13-bit
  std::vector<std::uint32_t> tuple_of_;          // per case
};

// MLP stages on the longest path from the inputs to `out`.
inline int stages(const Circuit& c, const Bits& out) {
  const std::vector<int> stage = mlp_stages(c, analyze(c));
  int result = 0;
  for (SignalId s : out) result = std::max(result, stage[s]);
  return result;
}

// The machine's neurons (of the operation's unit only) that are on.
inline int neurons_on(const VectorMachine& m, const Evaluator& e) {
  const std::string unit = VectorMachine::kUnit;
  int on = 0;
  for (const Neuron& n : m.c.neurons()) {
    if (n.unit != unit && n.unit.rfind(unit + ".", 0) != 0) continue;
    double gate = 0;
    for (const Term& t : n.gate) gate += t.weight * e.value(t.signal);
    on += gate > 0;
  }
  return on;
}

// The exact evaluator runs every case: the next token and every result's bits must be the expected
// ones. Fed without the enable, the operation gives zeros with every neuron off.
inline void expect_every_case(const VectorMachine& m) {
  Evaluator e(m.c);
  const auto& results = m.results();
  for (std::uint32_t i = 0; i < m.cases().size(); ++i) {
    const std::uint32_t token = e.step(m.c.token_id("CASE", i));
    for (std::size_t r = 0; r < results.size(); ++r) {
      int value = 0;  // two's complement
      for (int b = 0; b < kResultBits; ++b) value += static_cast<int>(e.value(results[r][b])) << b;
      if (value >> (kResultBits - 1)) value -= 1 << kResultBits;
      ASSERT_EQ(value, m.cases()[i].results[r]) << m.describe(i) << ", result " << r;
    }
    ASSERT_EQ(token, m.expected_token(i)) << m.describe(i);
  }
  for (std::uint32_t i = 0; i < std::min<std::size_t>(m.cases().size(), VectorMachine::kIdleCases); ++i) {
    e.step(m.c.token_id("IDLE", i));
    for (const Bits& result : results)
      for (SignalId s : result) ASSERT_EQ(e.value(s), 0) << "a disabled unit must output zeros; " << m.describe(i);
    ASSERT_EQ(neurons_on(m, e), 0) << "a disabled unit's neurons must all be off; " << m.describe(i);
  }
}

// --- the row product -----------------------------------------------------------------------------

struct RowCase {
  std::vector<int> w;  // int8 weights
  std::vector<int> x;  // activations of x_bits
  int multiplier = 0, shift = 1;
  int expected() const {
    if (shift == 0 || shift == 63) return 0;  // vu.matvec16 reads a pair's shift 0 as 64
    std::int64_t acc = 0;
    for (std::size_t j = 0; j < w.size(); ++j) acc += static_cast<std::int64_t>(w[j]) * x[j];
    return story_requant13(acc, StoryRequant{multiplier, shift});
  }
};

inline constexpr int kRowShifts = 62;  // the shifts a requantisation pair may hold: 1..62

// Edge cases (the largest sums of both signs, zero, rounding ties, every multiplier and shift
// extreme) and random rows whose shift mostly leaves the result unsaturated.
inline std::vector<RowCase> row_cases(int columns, int x_bits, int random_count, unsigned seed) {
  const int x_min = -(1 << (x_bits - 1)), x_max = (1 << (x_bits - 1)) - 1;
  std::vector<RowCase> cases;
  auto uniform = [&](int w, int x, int m, int s) {
    cases.push_back({std::vector<int>(columns, w), std::vector<int>(columns, x), m, s});
  };
  for (int s : {1, 12, 20, 30, 37, 62})
    for (int m : {0, 1, 128, 255}) {
      uniform(-128, x_min, m, s);
      uniform(-128, x_max, m, s);
      uniform(127, x_max, m, s);
      uniform(0, x_max, m, s);
    }
  for (int s : {0, 63}) {  // the six bits' values that are no shift
    uniform(-128, x_min, 255, s);
    uniform(127, x_max, 255, s);
  }
  for (int s = 1; s < std::min(x_bits, 13); ++s)  // ties: m·acc = ±2^(s−1), rounding up and to zero
    for (int sign : {1, -1}) {
      RowCase c{std::vector<int>(columns, 0), std::vector<int>(columns, 0), 1, s};
      c.w[columns - 1] = sign;
      c.x[columns - 1] = 1 << (s - 1);
      cases.push_back(c);
    }
  std::mt19937 random(seed);
  auto pick = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  for (int i = 0; i < random_count; ++i) {
    RowCase c;
    const int span = pick(0, x_bits - 1);  // activations of every magnitude
    for (int j = 0; j < columns; ++j) {
      c.w.push_back(pick(-128, 127));
      c.x.push_back(std::clamp(pick(-(1 << span), (1 << span) - 1), x_min, x_max));
    }
    c.multiplier = pick(0, 255);
    c.shift = 1;
    std::int64_t acc = 0;
    for (int j = 0; j < columns; ++j) acc += static_cast<std::int64_t>(c.w[j]) * c.x[j];
    const int magnitude = std::bit_width(static_cast<std::uint64_t>(std::abs(acc * c.multiplier)));
    c.shift = i % 8 == 0 ? pick(1, kRowShifts) : std::clamp(magnitude - pick(0, 14), 1, kRowShifts);
    cases.push_back(c);
  }
  return cases;
}

// requantised_row_product: per column the operands w_j (8 bits) and x_j (x_bits), then the
// multiplier (8 bits) and the shift (6 bits).
struct RowProductMachine : VectorMachine {
  static constexpr int kLanes = 0;  // x_bits for activations in AM's lanes (13 bits)

  RowProductMachine(const std::vector<RowCase>& rows, int x_bits) {
    RowOperands row;
    for (std::size_t j = 0; j < rows.front().w.size(); ++j) {
      row.weights.push_back(operand(indexed("w", static_cast<int>(j)), 8));
      if (x_bits == kLanes)
        row.activation_lanes.push_back(lanes_operand(indexed("x", static_cast<int>(j))));
      else
        row.activations.push_back(operand(indexed("x", static_cast<int>(j)), x_bits));
    }
    row.multiplier = operand("m", 8);
    row.shift = operand("shift", 6);
    std::vector<VectorCase> cases;
    for (const RowCase& k : rows) {
      VectorCase v;
      for (std::size_t j = 0; j < k.w.size(); ++j) v.operands.insert(v.operands.end(), {k.w[j], k.x[j]});
      v.operands.insert(v.operands.end(), {k.multiplier, k.shift});
      v.results = {k.expected()};
      cases.push_back(v);
    }
    finish({requantised_row_product(unit(), row, enable())}, std::move(cases));
  }
};

// --- the elementwise operations: a case's operands as the reference takes them ----------------------

inline constexpr int kMul16Shifts = 30;  // story_mul16's shifts: 1..30

inline int story_add16_of(int x, int y) {
  std::int16_t a = static_cast<std::int16_t>(x), b = static_cast<std::int16_t>(y);
  story_add16(&a, &b, 1);
  return a;
}

inline int story_mul16_of(int a, int b, int shift) {
  std::int16_t out = 0, x = static_cast<std::int16_t>(a), y = static_cast<std::int16_t>(b);
  story_mul16(&out, &x, &y, shift, 1);
  return out;
}

inline int story_silu_of(int h) {
  std::int16_t out = 0, x = static_cast<std::int16_t>(h);
  story_silu(&out, &x, 1);
  return out;
}

inline std::array<int, 2> story_rope_of(int a, int b, int cos, int sin) {
  std::int16_t x[2] = {static_cast<std::int16_t>(a), static_cast<std::int16_t>(b)};
  std::int16_t c = static_cast<std::int16_t>(cos), s = static_cast<std::int16_t>(sin);
  story_rope(x, &c, &s, 2, 2);
  return {x[0], x[1]};
}

inline int story_rmsnorm_element_of(int x, int entry, int half_e) {
  return story_rmsnorm_element(static_cast<std::int16_t>(x), StoryNormScale{entry, half_e});
}

// Operands x, y.
struct Add16Machine : VectorMachine {
  explicit Add16Machine(std::vector<VectorCase> cases) {
    Bits x = operand("x", 13), y = operand("y", 13);
    finish({add16_element(unit(), x, y, enable())}, std::move(cases));
  }
};

// Operands a, b, shift.
struct Mul16Machine : VectorMachine {
  explicit Mul16Machine(std::vector<VectorCase> cases) {
    Bits a = operand("a", 13), b = operand("b", 13), shift = operand("shift", 5);
    finish({mul16_element(unit(), a, b, shift, enable())}, std::move(cases));
  }
};

// Operand h; the table is STORY_SILU.
struct SiluMachine : VectorMachine {
  explicit SiluMachine(std::vector<VectorCase> cases) {
    const std::vector<int> table(STORY_SILU, STORY_SILU + STORY_SILU_POINTS);
    Bits h = operand("h", 13);
    finish({silu_element(unit(), h, table, enable())}, std::move(cases));
  }
};

// Operands a, b, cos, sin; results x'[2j], x'[2j+1].
struct RopeMachine : VectorMachine {
  explicit RopeMachine(std::vector<VectorCase> cases) {
    RopeOperands x{operand("a", 13), operand("b", 13), operand("cos", 16), operand("sin", 16)};
    auto [first, second] = rope_pair(unit(), x, enable());
    finish({first, second}, std::move(cases));
  }
};

// Operands x (13 bits), the table entry (8 bits) and e/2 (4 bits).
struct RmsnormElementMachine : VectorMachine {
  explicit RmsnormElementMachine(std::vector<VectorCase> cases) {
    const std::vector<int> table(STORY_RSQRT, STORY_RSQRT + STORY_RSQRT_ENTRIES);
    const Bits x = operand("x", 13), entry = operand("entry", 8), half_e = operand("half_e", 4);
    finish({rmsnorm_element(unit(), x, entry, half_e, table, enable())}, std::move(cases));
  }
};

// story_rmsnorm_scale's token: the entry in bits 0–7, e/2 in bits 8–11.
inline int story_rmsnorm_scale_of(const std::vector<int>& x, std::uint32_t eps_term) {
  std::vector<std::int16_t> elements(x.begin(), x.end());
  const StoryNormScale scale = story_rmsnorm_scale(elements.data(), static_cast<int>(elements.size()), eps_term);
  return scale.entry | scale.half_e << 8;
}

inline constexpr int kNormLog2Lengths = 10;  // s = 0..9: vectors of up to 512 elements

// A vector of n elements, the smallest s with n ≤ 2^s, and the epsilon term.
struct NormScaleCase {
  std::vector<int> x;
  std::uint32_t eps_term = 0;
  int log2_length() const { return std::bit_width(x.size() - 1); }
};

// Operands: `elements` elements of `bits` bits (a case's vector, then zeros), s one-hot over 0..9
// and a 32-bit epsilon term; the 12-bit token leaves as a 13-bit result with a top bit never fed.
struct NormScaleMachine : VectorMachine {
  NormScaleMachine(const std::vector<NormScaleCase>& vectors, int elements, int bits) {
    NormScaleOperands x;
    for (int i = 0; i < elements; ++i) x.elements.push_back(operand(indexed("x", i), bits));
    x.log2_length = one_hot_operand("log2_length_is", 0, kNormLog2Lengths);
    x.epsilon = operand("epsilon", 32);
    Bits token = rmsnorm_scale(unit(), x, enable());
    token.push_back(c.add_input("unused_top_bit"));
    std::vector<VectorCase> cases;
    for (const NormScaleCase& k : vectors) {
      VectorCase v;
      for (int i = 0; i < elements; ++i) v.operands.push_back(i < static_cast<int>(k.x.size()) ? k.x[i] : 0);
      v.operands.insert(v.operands.end(), {k.log2_length(), static_cast<std::int64_t>(k.eps_term)});
      v.results = {story_rmsnorm_scale_of(k.x, k.eps_term)};
      cases.push_back(v);
    }
    finish({token}, std::move(cases));
  }
};

// --- the argmax passes: their semantics, composed into story_argmax16 ----------------------------

inline constexpr int kFoundFlag = 1 << 12;  // the first-index token's flag, above 12 bits of index

// The running maximum after one line (its first `count` elements are the vector's).
inline int running_maximum_of(const std::vector<int>& line, int count, int previous) {
  return std::max(previous, *std::max_element(line.begin(), line.begin() + count));
}

// The first-index token after line `number` of length L = line.size().
inline int first_index_token(const std::vector<int>& line, int count, int maximum, int found_so_far, int number) {
  if (found_so_far & kFoundFlag) return found_so_far;
  for (int a = 0; a < count; ++a)
    if (line[a] == maximum) return kFoundFlag | (number * static_cast<int>(line.size()) + a);
  return 0;
}

// One pass of either half: the line, how many of its elements are the vector's, and the token before.
struct ArgmaxPass {
  std::vector<int> line;
  int count = 0, before = 0, number = 0, maximum = 0;
};

// The passes of vu.argmax over x, L elements a line (the last one padded with `pad`): the running
// maxima's, then the first index's; the index is the last token's low 12 bits.
struct ArgmaxPasses {
  std::vector<ArgmaxPass> maxima, indices;
  int index = 0;
};
inline ArgmaxPasses argmax_passes(const std::vector<int>& x, int L, int pad) {
  ArgmaxPasses p;
  int maximum = -4096, token = 0;
  for (std::size_t first = 0; first < x.size(); first += L) {
    ArgmaxPass pass;
    for (int a = 0; a < L; ++a) pass.line.push_back(first + a < x.size() ? x[first + a] : pad);
    pass.count = static_cast<int>(std::min<std::size_t>(L, x.size() - first));
    pass.number = static_cast<int>(first) / L;
    pass.before = maximum;
    maximum = running_maximum_of(pass.line, pass.count, maximum);
    p.maxima.push_back(pass);
  }
  for (ArgmaxPass pass : p.maxima) {
    pass.before = token;
    pass.maximum = maximum;
    token = first_index_token(pass.line, pass.count, maximum, token, pass.number);
    p.indices.push_back(pass);
  }
  p.index = token & (kFoundFlag - 1);
  return p;
}

// The passes of several vectors' argmaxes, one list per half.
inline ArgmaxPasses all_argmax_passes(const std::vector<std::vector<int>>& vectors, int L, int pad) {
  ArgmaxPasses all;
  for (const std::vector<int>& x : vectors) {
    const ArgmaxPasses p = argmax_passes(x, L, pad);
    all.maxima.insert(all.maxima.end(), p.maxima.begin(), p.maxima.end());
    all.indices.insert(all.indices.end(), p.indices.begin(), p.indices.end());
  }
  return all;
}

// A token of 13 bits as the machine decodes it: two's complement.
inline int as_signed13(int token) { return token >= kFoundFlag ? token - 2 * kFoundFlag : token; }

// Operands: the line's L elements, the count (one-hot 1..L), then the running maximum before it.
struct RunningMaximumMachine : VectorMachine {
  RunningMaximumMachine(const std::vector<ArgmaxPass>& passes, int L) {
    ArgmaxLine line;
    for (int a = 0; a < L; ++a) line.values.push_back(operand(indexed("x", a), 13));
    line.count = one_hot_operand("count_is", 1, L);
    const Bits previous = operand("previous", 13);
    std::vector<VectorCase> cases;
    for (const ArgmaxPass& p : passes) {
      VectorCase v{std::vector<std::int64_t>(p.line.begin(), p.line.end()), {}};
      v.operands.insert(v.operands.end(), {p.count, p.before});
      v.results = {running_maximum_of(p.line, p.count, p.before)};
      cases.push_back(v);
    }
    finish({running_maximum(unit(), line, previous, enable())}, std::move(cases));
  }
};

// Operands: the line's L elements, the count, the maximum, the token before and the line's number.
struct FirstIndexMachine : VectorMachine {
  FirstIndexMachine(const std::vector<ArgmaxPass>& passes, int L, int number_bits) {
    ArgmaxLine line;
    for (int a = 0; a < L; ++a) line.values.push_back(operand(indexed("x", a), 13));
    line.count = one_hot_operand("count_is", 1, L);
    const Bits maximum = operand("maximum", 13), before = operand("before", 13);
    const Bits number = operand("number", number_bits);
    std::vector<VectorCase> cases;
    for (const ArgmaxPass& p : passes) {
      VectorCase v{std::vector<std::int64_t>(p.line.begin(), p.line.end()), {}};
      v.operands.insert(v.operands.end(), {p.count, p.maximum, p.before, p.number});
      v.results = {as_signed13(first_index_token(p.line, p.count, p.maximum, p.before, p.number))};
      cases.push_back(v);
    }
    finish({first_index_of(unit(), line, maximum, before, number, enable())}, std::move(cases));
  }
};

// --- cases -------------------------------------------------------------------------------------

inline constexpr int kInt16Min = -32768, kInt16Max = 32767;  // a table entry in WM
inline constexpr int kElementMin = -4096, kElementMax = 4095;  // an AM element

// Random operands.
class RandomOperands {
 public:
  explicit RandomOperands(unsigned seed) : random_(seed) {}
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }
  // An element (13 bits) of a random magnitude: every bit width equally likely.
  int element() { return of_random_width(12); }
  // An int16 table entry of a random magnitude.
  int table_entry() { return of_random_width(15); }
  // An odd number of at most `bits` bits.
  int odd(int bits) { return pick(0, (1 << (bits - 1)) - 1) * 2 + 1; }
  int sign() { return pick(0, 1) ? 1 : -1; }

 private:
  int of_random_width(int widest) {
    const int span = pick(0, widest);
    return pick(-(1 << span), (1 << span) - 1);
  }
  std::mt19937 random_;
};

inline const std::vector<int> kElementEdges = {kElementMin, kElementMin + 1, -2049, -2048, -1, 0,
                                               1,           2047,            2048,  4094,  kElementMax};

inline bool is_element(std::int64_t v) { return v >= kElementMin && v <= kElementMax; }

// Every pair of edge elements, sums around both saturation points, and random operands.
inline std::vector<VectorCase> add16_cases(int random_count) {
  std::vector<VectorCase> cases;
  auto add = [&](int x, int y) { cases.push_back({{x, y}, {story_add16_of(x, y)}}); };
  for (int x : kElementEdges)
    for (int y : kElementEdges) add(x, y);
  RandomOperands r(3);
  for (int sum : {-4098, -4097, -4096, -4095, 4094, 4095, 4096, 4097, -8192, 8190})  // around both saturation points
    for (int i = 0; i < 16;) {
      const int x = r.element();
      if (is_element(sum - x)) add(x, sum - x), ++i;
    }
  for (int i = 0; i < random_count; ++i) add(r.element(), r.element());
  return cases;
}

// For every shift: the extremes, products that round to either side of both saturation points, and
// ties; then random operands whose shift mostly leaves the result unsaturated.
inline std::vector<VectorCase> mul16_cases(int random_count, unsigned seed) {
  std::vector<VectorCase> cases;
  auto add = [&](int a, int b, int s) {
    if (is_element(a) && is_element(b)) cases.push_back({{a, b, s}, {story_mul16_of(a, b, s)}});
  };
  RandomOperands r(seed);
  for (int s = 1; s <= kMul16Shifts; ++s) {
    for (int a : {kElementMin, kElementMin + 1, -1, 0, 1, 3, kElementMax})
      for (int b : {kElementMin, -1, 1, kElementMax}) add(a, b, s);
    for (double target : {4095.5, 4096.0, -4096.0, -4096.5, -4097.0}) {  // around the saturation points
      const int a = r.sign() * std::max(1, r.element());
      const auto b = static_cast<int>(std::llround(std::ldexp(target, s) / a));
      for (int d : {-1, 0, 1}) add(a, b + d, s);
    }
    for (int i = 0; i < 4 && s <= 23; ++i) {  // ties: a·b = odd·2^(s−1), rounding up
      const int v = std::min(s - 1, 11), u = s - 1 - v;
      add(r.sign() * (r.odd(12 - u) << u), r.sign() << v, s);
    }
  }
  for (int i = 0; i < random_count; ++i) {
    const int a = r.element(), b = r.element();
    const int magnitude = std::bit_width(static_cast<std::uint64_t>(std::abs(std::int64_t{a} * b)));
    add(a, b, i % 8 == 0 ? r.pick(1, kMul16Shifts) : std::clamp(magnitude - r.pick(0, 14), 1, kMul16Shifts));
  }
  return cases;
}

// vu.row16's requantisations story_requant13(w, {m, s}) of int8 weights w by multipliers 0..255 at
// every shift 1..62, as the cases of mul16's product (a = w, b = m) at the shift vu.row16's token
// carries, min(s, kRowProductShift): every w at every shift up to 17 and at 62 with the extreme
// multipliers and a random one, then random operands.
inline constexpr int kRowProductShift = 16;
inline std::vector<VectorCase> row16_cases(int random_count, unsigned seed) {
  std::vector<VectorCase> cases;
  RandomOperands r(seed);
  auto add = [&](int w, int m, int s) {
    cases.push_back({{w, m, std::min(s, kRowProductShift)}, {story_requant13(w, StoryRequant{m, s})}});
  };
  for (int w = -128; w < 128; ++w)
    for (int m : {0, 1, 128, 255, r.pick(0, 255)}) {
      for (int s = 1; s <= 17; ++s) add(w, m, s);
      add(w, m, kRowShifts);
    }
  for (int i = 0; i < random_count; ++i) add(r.pick(-128, 127), r.pick(0, 255), r.pick(1, kRowShifts));
  return cases;
}

// Every step-th element from −4096, and the largest.
inline std::vector<VectorCase> silu_cases(int step) {
  std::vector<VectorCase> cases;
  for (int h = kElementMin; h <= kElementMax; h += step) cases.push_back({{h}, {story_silu_of(h)}});
  cases.push_back({{kElementMax}, {story_silu_of(kElementMax)}});
  return cases;
}

// Every combination of extreme elements and table entries; ties of both outputs; random angles, as
// the story model rotates; and random elements and table entries.
inline std::vector<VectorCase> rope_cases(int random_count, unsigned seed) {
  std::vector<VectorCase> cases;
  auto add = [&](int a, int b, int cos, int sin) {
    auto [first, second] = story_rope_of(a, b, cos, sin);
    cases.push_back({{a, b, cos, sin}, {first, second}});
  };
  const std::vector<int> entries = {kInt16Min, kInt16Min + 1, -16384, 0, 16384, kInt16Max};
  for (int a : {kElementMin, kElementMin + 1, -1, 0, 1, kElementMax})
    for (int b : {kElementMin, kElementMin + 1, -1, 0, 1, kElementMax})
      for (int cos : entries)
        for (int sin : entries) add(a, b, cos, sin);
  RandomOperands r(seed);
  for (int i = 0; i < 40; ++i) {  // a·cos ∓ b·sin = odd·2^13
    const int odd = r.sign() * r.odd(12), other = r.table_entry(), unit = r.sign() * 8192;
    add(odd, 0, unit, other);
    add(0, odd, other, unit);
    add(odd, r.sign() * 2 * r.odd(11), unit, unit);
  }
  for (int i = 0; i < random_count; ++i) {
    const double angle = r.pick(0, 1 << 20) * (2 * std::numbers::pi / (1 << 20));
    add(r.pick(-4096, 4095), r.pick(-4096, 4095), static_cast<int>(std::lround(16384 * std::cos(angle))),
        static_cast<int>(std::lround(16384 * std::sin(angle))));
    add(r.element(), r.element(), r.table_entry(), r.table_entry());
  }
  return cases;
}

// Every e/2 with the extreme elements and entries; results around both saturation points and
// rounding ties; random elements and entries.
inline std::vector<VectorCase> rmsnorm_element_cases(int random_count, unsigned seed) {
  std::vector<VectorCase> cases;
  auto add = [&](int x, int entry, int half_e) {
    cases.push_back({{x, entry, half_e}, {story_rmsnorm_element_of(x, entry, half_e)}});
  };
  for (int half_e = 0; half_e <= 14; ++half_e)
    for (int x : {kElementMin, kElementMin + 1, -1, 0, 1, kElementMax})
      for (int entry : {0, 1, 95, STORY_RSQRT_ENTRIES - 1}) add(x, entry, half_e);
  RandomOperands r(seed);
  for (int i = 0; i < random_count; ++i) {
    const int entry = r.pick(0, STORY_RSQRT_ENTRIES - 1), half_e = r.pick(0, 14);
    const std::int64_t inverse = STORY_RSQRT[entry];
    const int shift = 21 - half_e;
    // x·inverse near ±4095.5·2^shift (saturation) and near the halfway points (ties).
    for (double target : {4095.5, -4096.5, r.pick(-4096, 4095) + 0.5}) {
      const auto x = static_cast<std::int64_t>(std::llround(target * std::ldexp(1.0, shift) / static_cast<double>(inverse)));
      for (std::int64_t d : {-1, 0, 1}) add(static_cast<int>(std::clamp<std::int64_t>(x + d, kElementMin, kElementMax)), entry, half_e);
    }
    add(r.element(), entry, half_e);
  }
  return cases;
}

// The scale's every bucket edge and leading pair, from the epsilon term alone (zero vectors of
// every length up to 512, so ss = eps_term): each 2^k and its neighbours, each bucket's first and
// last value at every e, and the cap; then vectors of `elements` elements of `bits` bits: zero, the
// extremes, one non-zero element, and random vectors of every magnitude and length with small
// epsilon terms.
inline std::vector<NormScaleCase> rmsnorm_scale_cases(int elements, int bits, int random_count, unsigned seed) {
  std::vector<NormScaleCase> cases;
  RandomOperands r(seed);
  auto zeros = [&](std::uint64_t ss) {
    const int n = 1 << r.pick(0, kNormLog2Lengths - 1);
    cases.push_back({std::vector<int>(n - r.pick(0, n / 2), 0), static_cast<std::uint32_t>(ss)});
  };
  for (int k = 0; k < 32; ++k)
    for (std::int64_t d : {-1, 0, 1}) zeros(std::clamp<std::int64_t>((std::int64_t{1} << k) + d, 0, 0xffffffff));
  for (int half_e = 0; half_e <= 14; ++half_e)
    for (int bucket = 64; bucket < 256; bucket += r.pick(1, 9)) {
      const int e = 2 * half_e;
      const std::uint64_t first = (std::uint64_t{static_cast<unsigned>(bucket)} << 22) >> e;
      const std::uint64_t last = (std::uint64_t{static_cast<unsigned>(bucket + 1)} << 22 >> e) - 1;
      zeros(first);
      zeros(last);
      zeros(first + static_cast<std::uint64_t>(r.pick(0, static_cast<int>(std::min<std::uint64_t>(last - first, 1 << 20)))));
    }
  zeros(0xffffffff);
  const int low = -(1 << (bits - 1)), high = (1 << (bits - 1)) - 1;
  for (int v : {0, low, high, -1, 1}) cases.push_back({std::vector<int>(elements, v), 0});
  for (int i = 0; i < elements; i += std::max(1, elements / 8))
    for (int v : {low, high, 1, -1}) {
      std::vector<int> x(elements, 0);
      x[i] = v;
      cases.push_back({x, 1});
    }
  for (int i = 0; i < random_count; ++i) {
    const int span = r.pick(0, bits - 1), n = r.pick(1, elements);
    std::vector<int> x;
    for (int j = 0; j < n; ++j) x.push_back(std::clamp(r.pick(-(1 << span), (1 << span) - 1), low, high));
    cases.push_back({x, static_cast<std::uint32_t>(r.pick(0, 4))});
  }
  return cases;
}

// Vectors whose argmax passes exercise every path: constant vectors (ties everywhere), the extremes,
// the maximum first, last and in a short last line, many ties among few values, and random 13-bit
// logits; each vector's length a random 1..L·lines.
inline std::vector<std::vector<int>> argmax_vectors(int L, int lines, int random_count, unsigned seed) {
  RandomOperands r(seed);
  const int longest = L * lines;
  std::vector<std::vector<int>> vectors;
  for (int v : {-4096, 0, 4095}) vectors.push_back(std::vector<int>(longest, v));
  std::vector<int> x(longest, -4096);
  x[0] = 4095;
  vectors.push_back(x);
  x[0] = -4096;
  x[longest - 1] = 4095;
  vectors.push_back(x);
  x.resize(longest - L / 2);
  x[x.size() - 1] = -4095;  // the maximum in a short last line
  vectors.push_back(x);
  for (int i = 0; i < random_count; ++i) {
    std::vector<int> y(r.pick(1, longest));
    const bool few = i % 2 == 0;
    for (int& v : y) v = few ? r.pick(-3, 3) : r.pick(-4096, 4095);
    vectors.push_back(y);
  }
  return vectors;
}

}  // namespace rvformer::circuit
