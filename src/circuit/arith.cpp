// circuit/arith.cpp — see arith.h.
#include "circuit/arith.h"

#include <algorithm>
#include <cmath>

#include "support/error.h"

namespace rvformer::circuit {
namespace {

Forms slice(const Forms& v, int low, int count) { return Forms(v.begin() + low, v.begin() + low + count); }

// Σ 2^i bits[i]; with `signed_top` the top bit weighs −2^(n−1) (two's complement).
Form value_of(const Forms& bits, bool signed_top = false) {
  Form v;
  for (std::size_t i = 0; i < bits.size(); ++i) {
    double weight = std::ldexp(1.0, static_cast<int>(i));
    v += bits[i] * (signed_top && i + 1 == bits.size() ? -weight : weight);
  }
  return v;
}

std::string indexed(const std::string& name, int i) { return name + "[" + std::to_string(i) + "]"; }

}  // namespace

Forms forms_of(const Bits& bits) {
  Forms forms;
  for (SignalId b : bits) forms.push_back(F(b));
  return forms;
}

void add_narrow_sum(Gates& g, const Bits& out, const Forms& a, const Forms& b, const Form& condition) {
  int width = static_cast<int>(out.size());
  if (width > 22) fail("circuit: a one-stage sum of {} bits would not be exact", width);
  auto digit = [](const Forms& v, int i) { return i < static_cast<int>(v.size()) ? v[i] : Form(); };
  // Partial sums stay below 2^(width+1): subtracting that much turns every neuron off.
  Form off = condition.terms().empty() ? Form() : (Form(1.0) - condition) * std::ldexp(1.0, width + 1);
  Form low;  // Σ_{j<i} 2^j (a_j + b_j)
  for (int i = 0; i <= width; ++i) {
    if (i > 0) {
      // carry_i = relu(low − 2^i + 1) − relu(low − 2^i): +1 at bit i, −2 at bit i−1.
      double threshold = std::ldexp(1.0, i);
      for (auto [target, weight] : {std::pair{i, 1.0}, {i - 1, -2.0}}) {
        if (target >= width) continue;
        g.add_relu(out[target], low - (threshold - 1) - off, weight);
        g.add_relu(out[target], low - threshold - off, -weight);
      }
    }
    if (i == width) break;
    for (const Form& operand : {digit(a, i), digit(b, i)}) {
      if (operand.terms().empty()) continue;
      g.add_relu(out[i], operand - off);
      low += operand * std::ldexp(1.0, i);
    }
  }
}

Bits narrow_sum(Gates& g, const std::string& name, int width, const Forms& a, const Forms& b, const Form& condition) {
  Bits out;
  for (int i = 0; i < width; ++i) out.push_back(g.signal(indexed(name, i)));
  add_narrow_sum(g, out, a, b, condition);
  return out;
}

// Stage 1: the low half, its carry out, and the high half for either carry (narrow sums; a carry
// in joins bit 0, whose digit may then be 2). Stage 2: the carry picks the high half.
Bits add32(Gates g, const Forms& a, const Forms& b, const Form& carry_in, SignalId enable) {
  Forms low_b = slice(b, 0, 16);
  low_b[0] += carry_in;
  Bits sum = narrow_sum(g, "low", 16, slice(a, 0, 16), low_b, F(enable));
  SignalId carry = g.signal("carry16");
  g.add_step(carry, value_of(slice(a, 0, 16)) + value_of(low_b) - (Form(1.0) - F(enable)) * 262144.0, 65536);
  Forms high_b = slice(b, 16, 16);
  Bits high[2];
  high[0] = narrow_sum(g, "high_carry0", 16, slice(a, 16, 16), high_b, F(enable));
  high_b[0] += Form(1.0);
  high[1] = narrow_sum(g, "high_carry1", 16, slice(a, 16, 16), high_b, F(enable));
  for (int i = 0; i < 16; ++i) {
    SignalId bit = g.signal(indexed("high", i));
    g.add_all(bit, {nlit(carry), lit(high[0][i])});
    g.add_all(bit, {lit(carry), lit(high[1][i])});
    sum.push_back(bit);
  }
  return sum;
}

// Stage 1 compares the high halves (unsigned and signed) and the low halves; stage 2 combines:
// a < b when the high halves say so, or they are equal and the low halves say so.
Comparison compare32(Gates g, const Forms& a, const Forms& b, SignalId enable) {
  Form off = (Form(1.0) - F(enable)) * 262144.0;
  Form high = value_of(slice(a, 16, 16)) - value_of(slice(b, 16, 16));
  Form high_signed = value_of(slice(a, 16, 16), true) - value_of(slice(b, 16, 16), true);
  Form low = value_of(slice(a, 0, 16)) - value_of(slice(b, 0, 16));
  auto at_least = [&](const std::string& name, const Form& x, double t) { return g.at_least(name, x - off, t); };
  SignalId high_ge0 = at_least("high_ge0", high, 0), high_ge1 = at_least("high_ge1", high, 1);
  SignalId signed_ge0 = at_least("signed_ge0", high_signed, 0), signed_ge1 = at_least("signed_ge1", high_signed, 1);
  SignalId low_ge0 = at_least("low_ge0", low, 0), low_ge1 = at_least("low_ge1", low, 1);
  Comparison c;
  // "≥ 0 and not ≥ 1" is equality.
  c.equal = g.all("equal", {lit(enable), lit(high_ge0), nlit(high_ge1), lit(low_ge0), nlit(low_ge1)});
  c.less_unsigned = g.signal("less_unsigned");
  g.add_all(c.less_unsigned, {lit(enable), nlit(high_ge0)});
  g.add_all(c.less_unsigned, {lit(enable), lit(high_ge0), nlit(high_ge1), nlit(low_ge0)});
  c.less_signed = g.signal("less_signed");
  g.add_all(c.less_signed, {lit(enable), nlit(signed_ge0)});
  g.add_all(c.less_signed, {lit(enable), lit(signed_ge0), nlit(signed_ge1), nlit(low_ge0)});
  return c;
}

std::vector<SignalId> decode_one_hot(Gates& g, const std::string& name, const Bits& field, const Form& condition) {
  std::vector<SignalId> one_hot;
  for (std::size_t v = 0; v < (std::size_t{1} << field.size()); ++v) {
    std::vector<Literal> literals;
    for (std::size_t i = 0; i < field.size(); ++i) literals.push_back((v >> i) & 1 ? lit(field[i]) : nlit(field[i]));
    SignalId s = g.signal(indexed(name, static_cast<int>(v)));
    g.add_all(s, literals, condition);
    one_hot.push_back(s);
  }
  return one_hot;
}

// Output bit i is the OR over amounts s of (amount = s AND the bit that s brings to i).
Bits shift32(Gates g, const Bits& value, const Forms& amount_one_hot, ShiftKind kind, SignalId enable) {
  Bits out;
  for (int i = 0; i < 32; ++i) {
    SignalId bit = g.signal(indexed("out", i));
    for (int s = 0; s < 32; ++s) {
      int source = kind == ShiftKind::kLeft ? i - s : i + s;
      if (source > 31 && kind == ShiftKind::kRightArithmetic) source = 31;
      if (source < 0 || source > 31) continue;
      g.add_all(bit, {lit(enable), lit(value[source])}, amount_one_hot[s]);
    }
    out.push_back(bit);
  }
  return out;
}

namespace {

// Rewrites column counts in binary: count c of column m (0 ≤ c ≤ max[m]) becomes bits b_k(c) added
// to column m + k. With r_s = relu(c − s), b_k(c) = Σ_s r_s·(δ_k(s+1) − δ_k(s)) where
// δ_k(t) = b_k(t) − b_k(t−1): one neuron per possible value, all writing the new counts.
std::vector<SignalId> rewrite_counts(Gates& g, const std::string& name, const std::vector<SignalId>& counts,
                                     std::vector<int>& max) {
  int columns = static_cast<int>(counts.size());
  std::vector<int> new_max(columns, 0);
  for (int m = 0; m < columns; ++m)
    for (int k = 0; max[m] >> k; ++k)
      if (m + k < columns) ++new_max[m + k];
  std::vector<SignalId> out;
  for (int n = 0; n < columns; ++n) out.push_back(g.signal(indexed(name, n), 0, std::max(new_max[n], 1)));
  auto delta = [](int k, int t) { return t <= 0 ? 0 : ((t >> k) & 1) - (((t - 1) >> k) & 1); };
  for (int m = 0; m < columns; ++m) {
    for (int s = 0; s < max[m]; ++s) {
      std::vector<Term> down;
      for (int k = 0; max[m] >> k && m + k < columns; ++k) {
        int w = delta(k, s + 1) - delta(k, s);
        if (w != 0) down.push_back({out[m + k], static_cast<double>(w)});
      }
      if (!down.empty()) g.circuit().add_neuron(Neuron{(F(counts[m]) - s).terms(), Form(1.0).terms(), down, 1, g.unit()});
    }
  }
  max = new_max;
  return out;
}

}  // namespace

Bits multiply32(Gates g, const Bits& a, const Bits& b, const Form& a_signed, const Form& b_signed, const Form& high,
                SignalId enable) {
  // Stage 1: column counts of the partial products. A signed operand x = x_u − 2^32·x31 adds, mod
  // 2^64, the 32-bit complement of x31·(other operand) plus 1, at columns 32..63 (Baugh–Wooley).
  std::vector<SignalId> count;
  std::vector<int> max(64, 0);
  for (int m = 0; m < 64; ++m) max[m] = (m <= 62 ? std::min(m, 62 - m) + 1 : 0) + (m >= 32 ? 2 : 0) + (m == 32 ? 2 : 0);
  for (int m = 0; m < 64; ++m) count.push_back(g.signal(indexed("count", m), 0, std::max(max[m], 1)));
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) g.add_all(count[i + j], {lit(a[i]), lit(b[j]), lit(enable)});
  for (int i = 0; i < 32; ++i) {
    g.add_relu(count[32 + i], a_signed);
    g.add_relu(count[32 + i], a_signed + F(a[31]) + F(b[i]) - 2, -1);
    g.add_relu(count[32 + i], b_signed);
    g.add_relu(count[32 + i], b_signed + F(b[31]) + F(a[i]) - 2, -1);
  }
  g.add_relu(count[32], a_signed);
  g.add_relu(count[32], b_signed);

  // Stages 2–4: counts ≤ 35 → ≤ 6 → ≤ 3 → ≤ 2.
  std::vector<SignalId> digits = count;
  for (int round = 1; round <= 3; ++round) digits = rewrite_counts(g, "digits" + std::to_string(round), digits, max);

  // Stage 5: per 16-column chunk j with value V_j = Σ 2^(n−16j)·digit_n < 2^17, whether it
  // generates a carry (V ≥ 2^16) or propagates one (V = 2^16 − 1); d_j = 2·generate + propagate.
  std::vector<Form> chunk_digit(4);
  std::vector<Form> chunk_value(4);
  for (int j = 0; j < 4; ++j) {
    for (int n = 0; n < 16; ++n) chunk_value[j] += F(digits[16 * j + n]) * std::ldexp(1.0, n);
    SignalId generate = g.at_least(indexed("generate", j), chunk_value[j], 65536);
    SignalId propagate = g.equals(indexed("propagate", j), chunk_value[j], 65535);
    chunk_digit[j] = 2 * F(generate) + F(propagate);
  }

  // Stage 6: the carry into bit i of chunk k is [2^(k+1)·X + Y ≥ 0], X = (chunk bits below i) −
  // (2^i' − 1), Y = Σ_{j<k} 2^j d_j − 2^k: X ≥ 1 carries, X = 0 passes the chunk's carry in
  // (Y ≥ 0), and |Y| < 2^(k+1). Sum bit i = digit_i + carry_i − 2·carry_(i+1), written to the
  // output when its half is selected.
  Bits out;
  for (int i = 0; i < 32; ++i) out.push_back(g.signal(indexed("out", i)));
  Form select_high = high;
  Form select_low = F(enable) - high;
  auto select = [&](int bit) { return bit < 32 ? select_low : select_high; };
  auto carry_into = [&](int i) {
    int k = std::min(i / 16, 3), offset = i - 16 * k;
    Form below;
    for (int n = 16 * k; n < i; ++n) below += F(digits[n]) * std::ldexp(1.0, n - 16 * k);
    Form y = -std::ldexp(1.0, k);
    for (int j = 0; j < k; ++j) y += chunk_digit[j] * std::ldexp(1.0, j);
    return (below - (std::ldexp(1.0, offset) - 1)) * std::ldexp(1.0, k + 1) + y;
  };
  constexpr double kOff = 4194304;  // 2^22 > every |carry form|: pushes unselected steps below 0
  for (int i = 0; i < 64; ++i) g.add_relu(out[i % 32], F(digits[i]) + 2 * select(i) - 2);
  for (int i = 1; i <= 64; ++i) {
    Form z = carry_into(i);
    // +1 to bit i, −2 to bit i − 1; one gated step per selected half it touches.
    for (auto [bit, weight] : {std::pair{i, 1.0}, {i - 1, -2.0}}) {
      if (bit > 63) continue;
      Form gated = z + (select(bit) - 1) * kOff;
      g.add_relu(out[bit % 32], gated + 1, weight);
      g.add_relu(out[bit % 32], gated, -weight);
    }
  }
  return out;
}

}  // namespace rvformer::circuit
