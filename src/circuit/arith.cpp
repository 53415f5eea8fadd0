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
std::vector<SignalId> rewrite_counts(Gates& g, const std::string& name, const std::vector<Form>& counts,
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
      if (!down.empty()) g.circuit().add_neuron(Neuron{(counts[m] - s).terms(), Form(1.0).terms(), down, 1, g.unit()});
    }
  }
  max = new_max;
  return out;
}

}  // namespace

// Moves the eights of large column counts three columns up: count c of column m (0 ≤ c ≤ max[m])
// becomes c − 8q there and q = ⌊c/8⌋ in column m + 3, q counted by a step neuron pair per multiple
// of 8. That takes about max/4 neurons a column where rewriting c in binary takes max.
std::vector<Form> carry_eights(Gates& g, const std::string& name, const std::vector<Form>& counts, std::vector<int>& max) {
  int columns = static_cast<int>(counts.size());
  std::vector<Form> out = counts;
  std::vector<int> new_max(max);
  for (int m = 0; m < columns; ++m) {
    int steps = max[m] / 8;
    if (steps == 0) continue;
    SignalId eights = g.signal(indexed(name, m), 0, steps);
    for (int j = 1; j <= steps; ++j) {
      g.add_relu(eights, counts[m] - (8 * j - 1));
      g.add_relu(eights, counts[m] - 8 * j, -1);
    }
    out[m] -= 8 * F(eights);
    new_max[m] = 7;
    if (m + 3 < columns) out[m + 3] += F(eights);
  }
  for (int m = 0; m + 3 < columns; ++m) new_max[m + 3] += max[m] / 8;
  max = new_max;
  return out;
}

namespace {

// A two-stage carry-lookahead add of column digits of at most 2 (up to 64 columns).
class CarryLookahead {
 public:
  CarryLookahead(Gates& g, std::vector<SignalId> digits);
  // Adds bit i of Σ 2^n·digit_n into `out` when `select` (a 0/1 form) is 1.
  void add_bit(Gates& g, SignalId out, int i, const Form& select) const;

 private:
  Form carry_into(int i) const;
  std::vector<SignalId> digits_;
  std::vector<Form> chunk_digit_;
};

// Column counts reduced to digits of at most 2: large counts carry their eights, then rounds of
// rewriting in binary, one stage each.
std::vector<SignalId> reduce_columns(Gates& g, std::vector<Form> columns, std::vector<int> max) {
  if (*std::max_element(max.begin(), max.end()) > 127) columns = carry_eights(g, "eights", columns, max);
  std::vector<SignalId> digits;
  int round = 0;
  do {
    digits = rewrite_counts(g, "digits" + std::to_string(++round), columns, max);
    columns = forms_of(digits);
  } while (*std::max_element(max.begin(), max.end()) > 2);
  return digits;
}

// Stage 1: per 16-column chunk j with value V_j = Σ 2^(n−16j)·digit_n < 2^17, whether it generates
// a carry (V ≥ 2^16) or propagates one (V = 2^16 − 1); d_j = 2·generate + propagate.
CarryLookahead::CarryLookahead(Gates& g, std::vector<SignalId> digits) : digits_(std::move(digits)) {
  int chunks = static_cast<int>(digits_.size() + 15) / 16;
  if (chunks > 4) fail("circuit: a carry-lookahead over {} columns would not be exact", digits_.size());
  for (int j = 0; j < chunks; ++j) {
    Form value;
    for (int n = 16 * j; n < std::min<int>(16 * j + 16, digits_.size()); ++n) value += F(digits_[n]) * std::ldexp(1.0, n - 16 * j);
    SignalId generate = g.at_least(indexed("generate", j), value, 65536);
    SignalId propagate = g.equals(indexed("propagate", j), value, 65535);
    chunk_digit_.push_back(2 * F(generate) + F(propagate));
  }
}

// The carry into bit i of chunk k is [2^(k+1)·X + Y ≥ 0], X = (chunk bits below i) − (2^i' − 1),
// Y = Σ_{j<k} 2^j d_j − 2^k: X ≥ 1 carries, X = 0 passes the chunk's carry in (Y ≥ 0), and
// |Y| < 2^(k+1).
Form CarryLookahead::carry_into(int i) const {
  int k = std::min(i / 16, static_cast<int>(chunk_digit_.size()) - 1), offset = i - 16 * k;
  Form below;
  for (int n = 16 * k; n < i; ++n) below += F(digits_[n]) * std::ldexp(1.0, n - 16 * k);
  Form y = -std::ldexp(1.0, k);
  for (int j = 0; j < k; ++j) y += chunk_digit_[j] * std::ldexp(1.0, j);
  return (below - (std::ldexp(1.0, offset) - 1)) * std::ldexp(1.0, k + 1) + y;
}

// Stage 2: sum bit i = digit_i + carry_i − 2·carry_(i+1), each carry a gated step.
void CarryLookahead::add_bit(Gates& g, SignalId out, int i, const Form& select) const {
  constexpr double kOff = 4194304;  // 2^22 > every |carry form|: pushes unselected steps below 0
  g.add_relu(out, F(digits_[i]) + 2 * select - 2);
  for (auto [carry, weight] : {std::pair{i, 1.0}, {i + 1, -2.0}}) {
    if (carry == 0) continue;
    Form gated = carry_into(carry) + (select - 1) * kOff;
    g.add_relu(out, gated + 1, weight);
    g.add_relu(out, gated, -weight);
  }
}

}  // namespace

Bits sum_columns(Gates g, const std::vector<Form>& columns, const std::vector<int>& max, int width) {
  CarryLookahead sum(g, reduce_columns(g, columns, max));
  Bits out;
  for (int i = 0; i < width; ++i) {
    out.push_back(g.signal(indexed("sum", i)));
    sum.add_bit(g, out[i], i, Form(1.0));
  }
  return out;
}

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
  // Rows of a later group count into columns of their own, so that they may be computed in a
  // later layer than the product's.
  std::vector<SignalId> count;
  std::vector<int> max(64, 0);
  for (int m = 0; m < 64; ++m) max[m] = (m <= 62 ? std::min(m, 62 - m) + 1 : 0) + (m >= 32 ? 2 : 0) + (m == 32 ? 2 : 0);
  std::vector<int> own_max = max;  // without the later rows
  for (const ExtraRow& row : rows) {
    ++max[row.column];
    if (!row.later) ++own_max[row.column];
  }
  for (int m = 0; m < 64; ++m) count.push_back(g.signal(indexed("count", m), 0, std::max(own_max[m], 1)));
  std::vector<SignalId> later_count(64, 0);
  for (const ExtraRow& row : rows) {
    if (!row.later) continue;
    SignalId& c = later_count[row.column];
    if (!c) c = g.signal(indexed("later_count", row.column), 0, max[row.column] - own_max[row.column]);
    g.add_all(c, row.literals);
  }
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) g.add_all(count[i + j], product.with({lit(a[i]), lit(b[j])}));
  for (const ExtraRow& row : rows)
    if (!row.later) g.add_all(count[row.column], row.literals);
  auto add_signed = [&](const Enable& is_signed, const Bits& x, const Bits& other) {
    for (int i = 0; i < 32; ++i) {
      g.add_all(count[32 + i], is_signed.literals());
      g.add_all(count[32 + i], is_signed.with({lit(x[31]), lit(other[i])}), Form(), -1);
    }
    g.add_all(count[32], is_signed.literals());
  };
  for (const Enable& e : a_signed) add_signed(e, a, b);
  for (const Enable& e : b_signed) add_signed(e, b, a);

  // Stages 2–4: counts below 128 (72 with every row of the CPU) → ≤ 7 → ≤ 3 → ≤ 2. Larger counts
  // (with the big-integer unit's dot products, 275) first carry their eights: ≤ 42 after that stage,
  // which then takes a quarter of the neurons that rewriting them in binary would, in as many stages.
  std::vector<Form> columns;
  for (int m = 0; m < 64; ++m) columns.push_back(later_count[m] ? F(count[m]) + F(later_count[m]) : F(count[m]));
  CarryLookahead sum(g, reduce_columns(g, columns, max));

  // Stages 5–6: the sum's bits, each written to the output when its half is selected.
  Bits out;
  for (int i = 0; i < 32; ++i) out.push_back(g.signal(indexed("out", i)));
  Form select_high = high;
  Form select_low = F(any) - high;
  for (int i = 0; i < 64; ++i) sum.add_bit(g, out[i % 32], i, i < 32 ? select_low : select_high);
  return out;
}

}  // namespace rvformer::circuit
