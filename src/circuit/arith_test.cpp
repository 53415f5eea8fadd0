// Tests of the arithmetic units: the exact evaluator runs each unit on edge cases and random
// operands, with its exactness checks on, against plain C++ arithmetic.
#include <gtest/gtest.h>

#include <random>

#include "circuit/arith.h"
#include "circuit/evaluator.h"
#include "circuit/graph.h"

namespace rvformer::circuit {
namespace {

struct Case {
  std::uint32_t a, b;
  int variant;  // unit-specific selector (e.g. which multiply)
};

std::vector<std::uint32_t> edge_values() {
  std::vector<std::uint32_t> v{0, 1, 2, 3, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFF, 0x10000,
                               0x8000, 0x7FFF, 0x12345678, 0x9ABCDEF0};
  for (int k = 0; k < 32; k += 5) v.push_back(1u << k);
  return v;
}

std::vector<Case> cases_for(int variants, int random_count, unsigned seed) {
  std::vector<Case> cases;
  for (std::uint32_t a : edge_values())
    for (std::uint32_t b : edge_values())
      for (int v = 0; v < variants; ++v) cases.push_back({a, b, v});
  std::mt19937 random(seed);
  for (int i = 0; i < random_count; ++i) cases.push_back({static_cast<std::uint32_t>(random()), static_cast<std::uint32_t>(random()), static_cast<int>(random() % variants)});
  return cases;
}

// A circuit whose token i feeds case i: operand bits, a one-hot variant, and enable = 1.
class Harness {
 public:
  Harness(std::vector<Case> cases, int variants) : cases_(std::move(cases)) {
    for (int i = 0; i < 32; ++i) a_.push_back(c_.add_input(std::string("a") + std::to_string(i)));
    for (int i = 0; i < 32; ++i) b_.push_back(c_.add_input(std::string("b") + std::to_string(i)));
    for (int v = 0; v < variants; ++v) variant_.push_back(c_.add_input(indexed("variant", v)));
    enable_ = c_.add_input("enable");
    Gates probe(c_, "probe");
    SignalId always = probe.relu("always", Form(1.0), 1);
    c_.mark_output(always);
    c_.add_token_family({"CASE", static_cast<std::uint32_t>(cases_.size()),
                         [this](std::uint32_t i, const auto& set) {
                           const Case& k = cases_[i];
                           for (int j = 0; j < 32; ++j) set(a_[j], (k.a >> j) & 1), set(b_[j], (k.b >> j) & 1);
                           set(variant_[k.variant], 1);
                           set(enable_, 1);
                         },
                         [always](std::uint32_t i, const auto& set) { if (i == 0) set(always, 1); }});
    c_.add_token_family({"OFF", 1, nullptr, nullptr});  // everything zero, enable included
  }
  Circuit& circuit() { return c_; }
  const Bits& a() const { return a_; }
  const Bits& b() const { return b_; }
  SignalId variant(int v) const { return variant_[v]; }
  SignalId enable() const { return enable_; }
  const std::vector<Case>& cases() const { return cases_; }

  // Runs every case and compares `out` (read as an unsigned number) with `expected`.
  template <typename Expected>
  void check(const Bits& out, Expected expected) {
    Evaluator e(c_);
    for (std::uint32_t i = 0; i < cases_.size(); ++i) {
      e.step(i);
      std::uint32_t got = 0;
      for (std::size_t j = 0; j < out.size(); ++j) got |= static_cast<std::uint32_t>(e.value(out[j])) << j;
      const Case& k = cases_[i];
      ASSERT_EQ(got, expected(k)) << std::hex << "a=0x" << k.a << " b=0x" << k.b << " variant " << k.variant;
    }
    e.step(c_.token_id("OFF"));
    for (SignalId s : out) ASSERT_EQ(e.value(s), 0) << "a disabled unit must output zeros";
  }

  // MLP stages on the longest path from the inputs to `out`.
  int stages(const Bits& out) const {
    std::vector<int> stage = mlp_stages(c_, analyze(c_));
    int result = 0;
    for (SignalId s : out) result = std::max(result, stage[s]);
    return result;
  }

 private:
  Circuit c_;
  Bits a_, b_;
  std::vector<SignalId> variant_;
  SignalId enable_;
  std::vector<Case> cases_;
};

TEST(Arith, AddAndSubtractInTwoStages) {
  Harness h(cases_for(2, 300, 1), 2);
  Gates g(h.circuit(), "add");
  Forms b, not_b;
  for (SignalId s : h.b()) b.push_back(F(s)), not_b.push_back(Form(1.0) - F(s));
  // variant 0: a + b; variant 1: a − b as a + ~b + 1 (carry in from the variant).
  Forms operand;
  for (int i = 0; i < 32; ++i) operand.push_back(F(h.b()[i]) + F(h.variant(1)) - 2 * F(g.all("xb" + std::to_string(i), {lit(h.b()[i]), lit(h.variant(1))})));
  Bits sum = add32(g, forms_of(h.a()), operand, F(h.variant(1)), h.enable());
  EXPECT_EQ(h.stages(sum), 3);  // the operand inversion here is a stage of its own
  h.check(sum, [](const Case& k) { return k.variant ? k.a - k.b : k.a + k.b; });
}

TEST(Arith, CompareInTwoStages) {
  Harness h(cases_for(3, 300, 2), 3);
  Gates g(h.circuit(), "compare");
  Comparison c = compare32(g, forms_of(h.a()), forms_of(h.b()), h.enable());
  Bits out{c.equal, c.less_signed, c.less_unsigned};
  EXPECT_EQ(h.stages(out), 2);
  h.check(out, [](const Case& k) {
    return std::uint32_t{k.a == k.b} | std::uint32_t{static_cast<std::int32_t>(k.a) < static_cast<std::int32_t>(k.b)} << 1 |
           std::uint32_t{k.a < k.b} << 2;
  });
}

TEST(Arith, ShiftsInOneStageAfterTheAmountDecode) {
  Harness h(cases_for(3, 300, 3), 3);
  Gates g(h.circuit(), "shift");
  Bits amount_bits(h.b().begin(), h.b().begin() + 5);
  std::vector<SignalId> one_hot = decode_one_hot(g, "amount", amount_bits);
  Forms amount;
  for (SignalId s : one_hot) amount.push_back(F(s));
  Bits out;
  for (int i = 0; i < 32; ++i) out.push_back(g.signal("out" + std::to_string(i)));
  for (int v = 0; v < 3; ++v) {
    Gates unit = g.sub("kind" + std::to_string(v));
    SignalId on = unit.all("on", {lit(h.enable()), lit(h.variant(v))});
    Bits shifted = shift32(unit, h.a(), amount, static_cast<ShiftKind>(v), on);
    for (int i = 0; i < 32; ++i) g.add_relu(out[i], F(shifted[i]));
  }
  h.check(out, [](const Case& k) {
    unsigned s = k.b & 31;
    if (k.variant == 0) return k.a << s;
    if (k.variant == 1) return k.a >> s;
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(k.a) >> s);
  });
}

TEST(Arith, MultiplyInSixStages) {
  // variants: mul, mulh, mulhsu, mulhu
  Harness h(cases_for(4, 400, 4), 4);
  Gates g(h.circuit(), "mul");
  auto signed_when = [&](int variant) { return Enable({lit(h.enable()), lit(h.variant(variant))}); };
  Bits out = multiply32(g, h.a(), h.b(), {signed_when(1), signed_when(2)}, {signed_when(1)},
                        F(h.variant(1)) + F(h.variant(2)) + F(h.variant(3)), h.enable());
  EXPECT_EQ(h.stages(out), 6);
  h.check(out, [](const Case& k) {
    std::int64_t sa = static_cast<std::int32_t>(k.a), sb = static_cast<std::int32_t>(k.b);
    std::uint64_t ua = k.a, ub = k.b;
    switch (k.variant) {
      case 0: return static_cast<std::uint32_t>(ua * ub);
      case 1: return static_cast<std::uint32_t>(static_cast<std::uint64_t>(sa * sb) >> 32);
      case 2: return static_cast<std::uint32_t>(static_cast<std::uint64_t>(sa * static_cast<std::int64_t>(ub)) >> 32);
      default: return static_cast<std::uint32_t>((ua * ub) >> 32);
    }
  });
}

// A product plus many later rows (eight more products of the operands' low 30 bits, as the
// big-integer unit adds them): columns count up to 275, so their eights are carried first, and
// the sum still takes one stage more than a product alone.
TEST(Arith, MultiplyAccumulateWithManyLaterRows) {
  // variants: the low word, the high word, the high word with both operands signed
  Harness h(cases_for(3, 400, 5), 3);
  Gates g(h.circuit(), "mac");
  std::vector<ExtraRow> rows;
  for (int copy = 0; copy < 8; ++copy)
    for (int p = 0; p < 30; ++p)
      for (int q = 0; q < 30; ++q) rows.push_back({p + q, {lit(h.a()[p]), lit(h.b()[q])}, true});
  SignalId any = g.all("any", {lit(h.enable())});
  Enable both_signed({lit(h.enable()), lit(h.variant(2))});
  Bits out = multiply_accumulate(g, h.a(), h.b(), {both_signed}, {both_signed}, F(h.variant(1)) + F(h.variant(2)),
                                 h.enable(), rows, any);
  EXPECT_EQ(h.stages(out), 7);
  h.check(out, [](const Case& k) {
    std::uint64_t product = k.variant == 2 ? static_cast<std::uint64_t>(std::int64_t{static_cast<std::int32_t>(k.a)} *
                                                                        static_cast<std::int32_t>(k.b))
                                           : std::uint64_t{k.a} * k.b;
    std::uint64_t sum = product + 8 * (std::uint64_t{k.a & 0x3FFFFFFF} * (k.b & 0x3FFFFFFF));
    return static_cast<std::uint32_t>(k.variant ? sum >> 32 : sum);
  });
}

}  // namespace
}  // namespace rvformer::circuit
