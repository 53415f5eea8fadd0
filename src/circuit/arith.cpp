// circuit/arith.cpp — see arith.h.
#include "circuit/arith.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <map>

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

// A power of two above every partial sum of a narrow sum whose carries stay ≤ max_carry.
double sum_bound(int width, int max_carry) {
  return std::ldexp(1.0, width + static_cast<int>(std::bit_width(static_cast<unsigned>(max_carry))));
}

}  // namespace

Forms forms_of(const Bits& bits) {
  Forms forms;
  for (SignalId b : bits) forms.push_back(F(b));
  return forms;
}

void add_narrow_sum(Gates& g, const Bits& out, const Forms& a, const Forms& b, const Form& condition, int max_carry) {
  int width = static_cast<int>(out.size());
  if (width > 22) fail("circuit: a one-stage sum of {} bits would not be exact", width);
  auto digit = [](const Forms& v, int i) { return i < static_cast<int>(v.size()) ? v[i] : Form(); };
  // Partial sums stay below (max_carry + 1)·2^width: subtracting that much turns every neuron off.
  Form off = condition.terms().empty() ? Form() : (Form(1.0) - condition) * sum_bound(width, max_carry);
  Form low;  // Σ_{j<i} 2^j (a_j + b_j)
  for (int i = 0; i <= width; ++i) {
    // carry_i = Σ_t relu(low − t·2^i + 1) − relu(low − t·2^i): +1 at bit i, −2 at bit i−1.
    for (int t = 1; i > 0 && t <= max_carry; ++t) {
      double threshold = t * std::ldexp(1.0, i);
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

Bits narrow_sum(Gates& g, const std::string& name, int width, const Forms& a, const Forms& b, const Form& condition,
                int max_carry) {
  Bits out;
  for (int i = 0; i < width; ++i) out.push_back(g.signal(indexed(name, i)));
  add_narrow_sum(g, out, a, b, condition, max_carry);
  return out;
}

// Stage 1: the low half, the thresholds carry ≥ t of its carry out, and the high part for every
// carry in t (narrow sums; t joins bit 0). Stage 2: the carry picks the high part.
Bits carry_select_sum(Gates g, int width, const Forms& a, const Forms& b, int max_carry, const Enable& enable) {
  Forms x = a, y = b;
  x.resize(width);
  y.resize(width);
  int high_width = width - 16;
  Bits sum = narrow_sum(g, "low", 16, slice(x, 0, 16), slice(y, 0, 16), enable.on(), max_carry);
  Form low = value_of(slice(x, 0, 16)) + value_of(slice(y, 0, 16)) - enable.off() * sum_bound(16, max_carry);
  std::vector<SignalId> carry_at_least;  // [carry ≥ t] for t = 1..max_carry
  for (int t = 1; t <= max_carry; ++t)
    carry_at_least.push_back(g.at_least(t == 1 ? "carry16" : "carry16_ge" + std::to_string(t), low, t * 65536.0));
  std::vector<Bits> high;
  for (int t = 0; t <= max_carry; ++t) {
    Forms high_y = slice(y, 16, high_width);
    high_y[0] += Form(t);
    high.push_back(narrow_sum(g, "high_carry" + std::to_string(t), high_width, slice(x, 16, high_width), high_y,
                              enable.on(), max_carry));
  }
  for (int i = 0; i < high_width; ++i) {
    SignalId bit = g.signal(indexed("high", i));
    for (int t = 0; t <= max_carry; ++t) {
      std::vector<Literal> carry_is_t{lit(high[t][i])};
      if (t > 0) carry_is_t.push_back(lit(carry_at_least[t - 1]));
      if (t < max_carry) carry_is_t.push_back(nlit(carry_at_least[t]));
      g.add_all(bit, carry_is_t);
    }
    sum.push_back(bit);
  }
  return sum;
}

Bits add32(Gates g, const Forms& a, const Forms& b, const Form& carry_in, const Enable& enable) {
  Forms b_in = b;
  b_in[0] += carry_in;  // its digit may then be 2; the carries stay ≤ 1
  return carry_select_sum(g, 32, a, b_in, 1, enable);
}

// Stage 1 compares the high halves (unsigned and signed) and the low halves; stage 2 combines:
// a < b when the high halves say so, or they are equal and the low halves say so.
Comparison compare32(Gates g, const Forms& a, const Forms& b, const Enable& enable) {
  Form off = enable.off() * 262144.0;
  Form high = value_of(slice(a, 16, 16)) - value_of(slice(b, 16, 16));
  Form high_signed = value_of(slice(a, 16, 16), true) - value_of(slice(b, 16, 16), true);
  Form low = value_of(slice(a, 0, 16)) - value_of(slice(b, 0, 16));
  auto at_least = [&](const std::string& name, const Form& x, double t) { return g.at_least(name, x - off, t); };
  SignalId high_ge0 = at_least("high_ge0", high, 0), high_ge1 = at_least("high_ge1", high, 1);
  SignalId signed_ge0 = at_least("signed_ge0", high_signed, 0), signed_ge1 = at_least("signed_ge1", high_signed, 1);
  SignalId low_ge0 = at_least("low_ge0", low, 0), low_ge1 = at_least("low_ge1", low, 1);
  Comparison c;
  // "≥ 0 and not ≥ 1" is equality.
  c.equal = g.all("equal", enable.with({lit(high_ge0), nlit(high_ge1), lit(low_ge0), nlit(low_ge1)}));
  c.less_unsigned = g.signal("less_unsigned");
  g.add_all(c.less_unsigned, enable.with({nlit(high_ge0)}));
  g.add_all(c.less_unsigned, enable.with({lit(high_ge0), nlit(high_ge1), nlit(low_ge0)}));
  c.less_signed = g.signal("less_signed");
  g.add_all(c.less_signed, enable.with({nlit(signed_ge0)}));
  g.add_all(c.less_signed, enable.with({lit(signed_ge0), nlit(signed_ge1), nlit(low_ge0)}));
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

namespace {

// `count` bits, bit i the OR over amounts s of (amount = s AND value[source(i, s)]); sources outside
// 0..31 bring nothing.
Bits shift_by_one_hot(Gates& g, int count, const Bits& value, const Forms& amount_one_hot,
                      const std::function<int(int, int)>& source, const Enable& enable) {
  Bits out;
  for (int i = 0; i < count; ++i) {
    SignalId bit = g.signal(indexed("out", i));
    for (int s = 0; s < 32; ++s) {
      int from = source(i, s);
      if (from >= 0 && from <= 31) g.add_all(bit, enable.with({lit(value[from])}), amount_one_hot[s]);
    }
    out.push_back(bit);
  }
  return out;
}

}  // namespace

Bits shift32(Gates g, const Bits& value, const Forms& amount_one_hot, ShiftKind kind, const Enable& enable) {
  return shift_by_one_hot(g, 32, value, amount_one_hot, [kind](int i, int s) {
    if (kind == ShiftKind::kLeft) return i - s;
    return kind == ShiftKind::kRightArithmetic ? std::min(i + s, 31) : i + s;
  }, enable);
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

Bits multiply32(Gates g, const Bits& a, const Bits& b, const std::vector<Enable>& a_signed,
                const std::vector<Enable>& b_signed, const Form& high, const Enable& enable) {
  SignalId on = g.all("on", enable.literals());
  return multiply_accumulate(g, a, b, a_signed, b_signed, high, enable, {}, on);
}

Bits multiply_accumulate(Gates g, const Bits& a, const Bits& b, const std::vector<Enable>& a_signed,
                         const std::vector<Enable>& b_signed, const Form& high, const Enable& product,
                         const std::vector<ExtraRow>& rows, SignalId any) {
  // Stage 1: column counts of the partial products. A signed operand x = x_u − 2^32·x31 adds, mod
  // 2^64, the 32-bit complement of x31·(other operand) plus 1, at columns 32..63 (Baugh–Wooley).
  std::vector<SignalId> count;
  std::vector<int> max(64, 0);
  for (int m = 0; m < 64; ++m) max[m] = (m <= 62 ? std::min(m, 62 - m) + 1 : 0) + (m >= 32 ? 2 : 0) + (m == 32 ? 2 : 0);
  for (const ExtraRow& row : rows) ++max[row.column];
  for (int m = 0; m < 64; ++m) count.push_back(g.signal(indexed("count", m), 0, std::max(max[m], 1)));
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) g.add_all(count[i + j], product.with({lit(a[i]), lit(b[j])}));
  for (const ExtraRow& row : rows) g.add_all(count[row.column], row.literals);
  auto add_signed = [&](const Enable& is_signed, const Bits& x, const Bits& other) {
    for (int i = 0; i < 32; ++i) {
      g.add_all(count[32 + i], is_signed.literals());
      g.add_all(count[32 + i], is_signed.with({lit(x[31]), lit(other[i])}), Form(), -1);
    }
    g.add_all(count[32], is_signed.literals());
  };
  for (const Enable& e : a_signed) add_signed(e, a, b);
  for (const Enable& e : b_signed) add_signed(e, b, a);

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
  Form select_low = F(any) - high;
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


// ---- Division --------------------------------------------------------------------------------
//
// The unsigned core divides |a| by |b|. With lz the leading-zero count of |b|, the divisor
// Dn = |b|·2^lz lies in [2^31, 2^32) and the 64-bit dividend An = |a|·2^lz = An_hi·2^32 + An_lo has
// An_hi < Dn. Radix-2 SRT steps r ← 2r + (next bit of An_lo, most significant first) − q·Dn with
// q ∈ {−1, 0, 1}, from r = An_hi, keep r ∈ [−Dn, Dn); after 32 of them An = Q'·Dn + r with
// Q' = Σ_j q_j·2^(31−j). If r < 0, Q = Q' − 1 and R = r + Dn, else Q = Q' and R = r; R is a
// multiple of 2^lz (An and Dn are), and the remainder is R / 2^lz. A divisor of 0 runs through as
// Dn = 0 and its results are replaced at the end.
//
// The partial remainder is redundant: 34 digits x_i ∈ {0, 1, 2} with r ≡ Σ 2^i x_i (mod 2^34).
// A step shifts them (u_i = x_(i−1), u_0 the dividend bit, so 2r + bit ≡ Σ 2^i u_i) and adds −q·Dn
// as one bit w_i per position (q = 1: the complement of Dn_i, and 1 at bit 0; q = −1: Dn_i; q = 0:
// 0). u_i + w_i ∈ [0, 3] keeps its parity and carries the rest one position up, so each new digit
// parity_i + carry_(i−1) is again in [0, 2] and nothing propagates.
//
// The digit comes from T = Σ_k 2^k u_(31+k), k = 0..3 (T ≤ 30). As 0 ≤ Σ_(i<31) 2^i u_i < 2^32,
// T − 16m ∈ (y/2^31 − 2, y/2^31] where y = 2r + bit and m counts the 2^35 the digits overshoot y by;
// |y| < 2^33, so T mod 16 read as signed is in [−5, 3]. q = 1 when it is ≥ 0 (then y ≥ 0), q = 0
// when it is −1 (then |y| ≤ 2^31 ≤ Dn), q = −1 when it is ≤ −2 (then y < 0): each keeps the new r in
// [−Dn, Dn). Over T ∈ [0, 30]: q = 1 for T mod 16 < 8, q = −1 for T mod 16 ∈ [8, 15), q = 0 at 15
// (residues 4..10 never occur). So a step is ONE stage: the digit is a sum of steps in T, w_i a sum
// of steps in Zw = 32·(1 − Dn_i) + T ([q = −1] for Zw < 32, [q = 1] above), and the carry
// [u_i + w_i ≥ 2] a sum of steps in Zc = 64·u_i + Zw (0, then w, then 1 as u_i = 0, 1, 2).
namespace {

// A sum of weighted steps weight·[z ≥ t] of one integer form z, into several outputs. A step is
// relu(z − t + 1) − relu(z − t); the relus at one offset, whatever steps and outputs they serve, are
// one neuron that writes every output.
class Staircase {
 public:
  void add(SignalId out, double threshold, double weight) {
    relus_[threshold - 1][out] += weight;
    relus_[threshold][out] -= weight;
  }
  void emit(Gates& g, const Form& z) const {
    for (const auto& [offset, weights] : relus_) {
      std::vector<Term> down;
      for (auto [out, weight] : weights)
        if (weight != 0) down.push_back({out, weight});
      if (!down.empty()) g.circuit().add_neuron(Neuron{(z - offset).terms(), Form(1.0).terms(), down, 1, g.unit()});
    }
  }

 private:
  std::map<double, std::map<SignalId, double>> relus_;
};

// Σ forms − (n − 1), whose relu is the AND of n 0/1 forms.
Form and_of(const Forms& forms) {
  Form sum;
  for (const Form& f : forms) sum += f;
  return sum - static_cast<double>(forms.size() - 1);
}

// |x|, x read as signed when `is_signed` (a 0/1 form) is 1. −x flips every bit above the lowest 1:
// |x|_i = x_i XOR (sign AND any lower bit). With S = Σ_(j<i) x_j ≤ 31 and s = is_signed + x_31,
// Z = 128·x_i + 32·s + S lies in [65, 192] exactly when that is 1 (x_i = 0: s = 2 and S ≥ 1;
// x_i = 1: s < 2, or S = 0). Four neurons a bit.
Bits absolute_value(Gates& g, const std::string& name, const Bits& x, const Form& is_signed, const Enable& enable) {
  Form off = enable.off() * 512.0;  // above every Z
  Bits out;
  Form lower;
  for (int i = 0; i < 32; ++i) {
    out.push_back(g.signal(indexed(name, i)));
    Staircase in_range;
    in_range.add(out[i], 65, 1);
    in_range.add(out[i], 193, -1);
    in_range.emit(g, 128 * F(x[i]) + 32 * (is_signed + F(x[31])) + lower - off);
    lower += F(x[i]);
  }
  return out;
}

// One-hot lz ∈ [0, 31] with |b| ∈ [2^(31−lz), 2^(32−lz)), read straight from b (all 0 for b = 0).
// The top 1 of |b| is at m = 31 − lz when b is non-negative (or unsigned) with bit m set and none
// above, or when b is negative with every bit above m set and |b|_m = 1 (absolute_value's test with
// the sign known: 64·b_m + Σ_(j<m) b_j ∈ [1, 64]).
std::vector<SignalId> leading_zeros(Gates& g, const Bits& b, const Form& is_signed, const Enable& enable) {
  std::vector<SignalId> lz;
  Form above;  // Σ_(j>m) b_j
  for (int k = 0; k < 32; ++k) {
    int m = 31 - k;
    Form below = sum_of(Bits(b.begin(), b.begin() + m));
    lz.push_back(g.signal(indexed("lz", k)));
    if (k == 0) {
      g.add_relu(lz[0], F(b[31]) - is_signed + enable.on() - 1);  // unsigned with bit 31 set
      g.add_relu(lz[0], is_signed + F(b[31]) - 1 - below);      // signed INT_MIN: |b| = 2^31
    } else {
      g.add_relu(lz[k], F(b[m]) - above + enable.on() - 1);  // bit m set, none above (b_31 among them)
      Staircase negative;
      negative.add(lz[k], 1, 1);
      negative.add(lz[k], 65, -1);
      // Outside the interval by ≥ 128 unless signed with all 31 − m bits above set.
      negative.emit(g, 64 * F(b[m]) + below + 128 * (above - (31 - m)) + 128 * (is_signed - 1));
    }
    above += F(b[m]);
  }
  return lz;
}

// Whether the magnitude quotient is negated: signed, and the operand signs differ.
SignalId negates_quotient(Gates& g, const Bits& a, const Bits& b, const Form& is_signed) {
  SignalId out = g.signal("negate_quotient");
  g.add_all(out, {lit(a[31]), nlit(b[31])}, is_signed);
  g.add_all(out, {nlit(a[31]), lit(b[31])}, is_signed);
  return out;
}

struct Normalised {
  Bits divisor;        // Dn = |b|·2^lz
  Bits dividend_low;   // An_lo = |a|·2^lz mod 2^32
  Bits dividend_high;  // An_hi = |a|·2^lz / 2^32, bits 0..30 (An_hi < 2^lz ≤ 2^31)
};

Normalised normalise(Gates& g, const Bits& abs_a, const Bits& abs_b, const Forms& lz, const Enable& enable) {
  Gates high = g.sub("dividend_high");
  return {shift32(g.sub("divisor"), abs_b, lz, ShiftKind::kLeft, enable),
          shift32(g.sub("dividend_low"), abs_a, lz, ShiftKind::kLeft, enable),
          shift_by_one_hot(high, 31, abs_a, lz, [](int i, int s) { return i + 32 - s; }, enable)};
}

constexpr int kRemainderDigits = 34;

struct SrtStep {
  Forms remainder;  // digits in [0, 2]
  SignalId plus, minus;  // [q = 1], [q = −1]
};

// The steps of w_i in Zw (see above): [q = −1] = [T ≥ 8] − [T ≥ 15] + [T ≥ 24] for Zw = T < 32,
// then [q = 1] = 1 − [T ≥ 8] + [T ≥ 16] − [T ≥ 24] for Zw = 32 + T.
constexpr std::pair<double, double> kSubtrahendSteps[] = {{8, 1}, {15, -1}, {24, 1}, {40, -1}, {48, 1}, {56, -1}};

// One SRT step in one stage: 27 neurons per digit position and 9 for the digit.
SrtStep srt_step(Gates& g, const Forms& remainder, const Form& next_bit, const Bits& divisor, const Enable& enable) {
  Forms u{next_bit};
  u.insert(u.end(), remainder.begin(), remainder.end());
  u.resize(kRemainderDigits + 1);
  Form t;
  for (int k = 0; k < 4; ++k) t += u[31 + k] * std::ldexp(1.0, k);
  Form off = enable.off() * 256.0;  // above every Z
  SrtStep step;
  Bits digits;
  for (int i = 0; i < kRemainderDigits; ++i) {
    digits.push_back(g.signal(indexed("r", i), 0, 2));
    step.remainder.push_back(F(digits[i]));
  }
  step.plus = g.signal("plus");
  step.minus = g.signal("minus");
  Staircase digit;
  for (SignalId out : {step.plus, digits[0]}) {  // q = 1 also adds the 1 of −Dn = ~Dn + 1 at bit 0
    digit.add(out, 0, 1);
    digit.add(out, 8, -1);
    digit.add(out, 16, 1);
    digit.add(out, 24, -1);
  }
  digit.add(step.minus, 8, 1);
  digit.add(step.minus, 15, -1);
  digit.add(step.minus, 24, 1);
  digit.emit(g, t - off);
  for (int i = 0; i < kRemainderDigits; ++i) {
    Form zw = 32 * (Form(1.0) - (i < 32 ? F(divisor[i]) : Form())) + t;
    Staircase subtrahend, carry;
    bool has_next = i + 1 < kRemainderDigits;
    for (auto [threshold, weight] : kSubtrahendSteps) {
      subtrahend.add(digits[i], threshold, weight);
      carry.add(digits[i], 64 + threshold, -2 * weight);
      if (has_next) carry.add(digits[i + 1], 64 + threshold, weight);
    }
    carry.add(digits[i], 128, -2);
    if (has_next) carry.add(digits[i + 1], 128, 1);
    subtrahend.emit(g, zw - off);
    if (u[i].terms().empty()) continue;
    g.add_relu(digits[i], u[i] - off);
    carry.emit(g, 64 * u[i] + zw - off);
  }
  return step;
}

// On-the-fly conversion (Ercegovac–Lang) of the signed digits into V, V − 1 and V − 2, V the quotient
// so far, most significant bit first. Appending q = 1, 0, −1: V' = 2V + q is V‖1, V‖0, (V−1)‖1;
// (V − 1)' is V‖0, (V−1)‖1, (V−1)‖0; (V − 2)' is (V−1)‖1, (V−1)‖0, (V−2)‖1. Every register takes its
// prefix from one of two neighbours, so no borrow propagates: 6 neurons per old bit and digit.
using QuotientRegisters = std::array<Forms, 3>;  // [k]: the bits of V − k

QuotientRegisters append_digit(Gates& g, const QuotientRegisters& old, const SrtStep& step, const Enable& enable, int j) {
  Form magnitude = F(step.plus) + F(step.minus);
  // Register k copies register k + 1 instead of k when `from_next` holds, and then appends `appended`.
  const int from[3] = {0, 0, 1};
  const Form from_next[3] = {F(step.minus), enable.on() - F(step.plus), F(step.minus)};
  const Form appended[3] = {magnitude, enable.on() - magnitude, magnitude};
  QuotientRegisters next;
  for (int k = 0; k < 3; ++k) {
    for (int bit = 0; bit < j; ++bit) {
      SignalId s = g.signal("v" + std::to_string(k) + "_" + indexed(std::to_string(j), bit));
      g.add_relu(s, old[from[k]][bit] - from_next[k]);
      g.add_relu(s, old[from[k] + 1][bit] + from_next[k] - 1);
      next[k].push_back(F(s));
    }
    next[k].push_back(appended[k]);
  }
  return next;
}

// out_i += Σ_k [lz = k]·value_(i+k) under `condition` (0/1 forms): value >> lz, sign-filled from bit 32
// of a 33-bit value. One neuron per (i, k), plus one per i for the fill.
void add_shifted_right(Gates& g, const Bits& out, const Bits& value, const Forms& lz, const Forms& condition) {
  for (int i = 0; i < 32; ++i) {
    Form fill_amounts;  // Σ_(k ≥ 32 − i) [lz = k]
    for (int k = 0; k < 32; ++k) {
      if (i + k > 31) {
        fill_amounts += lz[k];
        continue;
      }
      Forms terms = condition;
      terms.insert(terms.end(), {lz[k], F(value[i + k])});
      g.add_relu(out[i], and_of(terms));
    }
    if (value.size() > 32 && !fill_amounts.terms().empty()) {
      Forms terms = condition;
      terms.insert(terms.end(), {fill_amounts, F(value[32])});
      g.add_relu(out[i], and_of(terms));
    }
  }
}

}  // namespace

Bits divide32(Gates g, const Bits& a, const Bits& b, const Form& div, const Form& divu, const Form& rem,
              const Form& remu, const Enable& enable) {
  // Stage 1: magnitudes, the divisor's leading zeros, the result signs.
  Form is_signed = div + rem;
  Bits abs_a = absolute_value(g, "abs_a", a, is_signed, enable);
  Bits abs_b = absolute_value(g, "abs_b", b, is_signed, enable);
  Forms lz = forms_of(leading_zeros(g, b, is_signed, enable));
  SignalId negate_quotient = negates_quotient(g, a, b, is_signed);
  SignalId negate_remainder = g.all("negate_remainder", {lit(a[31])}, is_signed);
  // Division by zero bypasses the core: the quotient is all ones, the remainder is a.
  SignalId by_zero = g.relu("by_zero", enable.on() - sum_of(b), 1);
  SignalId quotient_result = g.relu("quotient_result", div + divu - F(by_zero), 1);
  SignalId remainder_result = g.relu("remainder_result", rem + remu - F(by_zero), 1);

  // Stage 2: normalisation. Stages 3–34: the SRT steps, and the quotient registers one behind.
  Normalised n = normalise(g, abs_a, abs_b, lz, enable);
  Forms remainder = forms_of(n.dividend_high);
  QuotientRegisters quotient;
  for (int j = 0; j < 32; ++j) {
    Gates step_gates = g.sub(indexed("step", j));
    SrtStep step = srt_step(step_gates, remainder, F(n.dividend_low[31 - j]), n.divisor, enable);
    quotient = append_digit(step_gates, quotient, step, enable, j);
    remainder = step.remainder;
  }

  // Stages 35–36: r, r + Dn, −r and −(r + Dn) (33 bits, enough for R and its sign fill) as
  // carry-select sums of the digits, with −x = Σ 2^i (2 − x_i) + 2 and −Dn = Σ 2^i (1 − Dn_i) + 1;
  // bit 33 of r (mod 2^34) is its sign.
  Forms negated, negated_d;
  for (int i = 0; i < 33; ++i) {
    negated.push_back(2.0 - remainder[i]);
    negated_d.push_back(negated[i] + 1.0 - (i < 32 ? F(n.divisor[i]) : Form()));
  }
  Bits r = carry_select_sum(g.sub("r"), kRemainderDigits, remainder, {}, 1, enable);
  Bits r_plus_d = carry_select_sum(g.sub("r_plus_d"), 32, remainder, forms_of(n.divisor), 2, enable);
  Bits minus_r = carry_select_sum(g.sub("minus_r"), 33, negated, {Form(), Form(1.0)}, 2, enable);
  Bits minus_r_d = carry_select_sum(g.sub("minus_r_plus_d"), 33, negated_d, {Form(1.0), Form(1.0)}, 3, enable);
  Form negative = F(r[33]);

  // Stage 37: the result. Quotient: V, V − 1 (r < 0), or negated: −V = ~(V − 1), −(V − 1) = ~(V − 2).
  // Remainder: the selected candidate shifted right by lz.
  Bits out;
  for (int i = 0; i < 32; ++i) {
    out.push_back(g.signal(indexed("out", i)));
    g.add_relu(out[i], F(by_zero) + div + divu - 1);
    g.add_all(out[i], {lit(by_zero), lit(a[i])}, rem + remu);
  }
  Form is_div = F(quotient_result), is_rem = F(remainder_result);
  Form keep_q = Form(1.0) - F(negate_quotient), keep_r = Form(1.0) - F(negate_remainder), positive = 1.0 - negative;
  for (int i = 0; i < 32; ++i) {
    auto bit = [&](int k) { return quotient[k][31 - i]; };
    g.add_relu(out[i], and_of({is_div, keep_q, positive, bit(0)}));
    g.add_relu(out[i], and_of({is_div, keep_q, negative, bit(1)}));
    g.add_relu(out[i], and_of({is_div, F(negate_quotient), positive, 1.0 - bit(1)}));
    g.add_relu(out[i], and_of({is_div, F(negate_quotient), negative, 1.0 - bit(2)}));
  }
  add_shifted_right(g, out, Bits(r.begin(), r.begin() + 32), lz, {is_rem, keep_r, positive});
  add_shifted_right(g, out, r_plus_d, lz, {is_rem, keep_r, negative});
  add_shifted_right(g, out, minus_r, lz, {is_rem, F(negate_remainder), positive});
  add_shifted_right(g, out, minus_r_d, lz, {is_rem, F(negate_remainder), negative});
  return out;
}

}  // namespace rvformer::circuit
