// circuit/vector_arith.cpp — see vector_arith.h.
#include "circuit/vector_arith.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "support/error.h"

namespace rvformer::circuit {
namespace {

constexpr int kWeightBits = 8;
constexpr int kShiftBits = 6;  // a row product's shift, 1..62
constexpr int kAmElementBits = 13, kAmLanes = 7;  // an AM element's lanes: two bits each, bit 12 alone
constexpr int kOutBits = 13;
constexpr int kDigitBits = 7;
constexpr int kGroupBits = 6;  // a plane sum of 512 columns stays below 2^15

}  // namespace

Bits to_binary(Gates& g, const std::string& name, const Form& value, int largest) {
  const int width = std::bit_width(static_cast<unsigned>(largest));
  Bits bits(width);
  Form rest = value;
  for (int top = width; top > 0; top -= kDigitBits) {
    const int low = std::max(0, top - kDigitBits);
    for (int l = low; l < top; ++l) bits[l] = g.signal(indexed(name, l));
    const Bits digit(bits.begin() + low, bits.begin() + top);
    const int digit_max = std::min((1 << (top - low)) - 1, largest >> low);
    for (std::uint32_t q = 1; q <= static_cast<std::uint32_t>(digit_max); ++q)
      g.add_step(spelling_change(digit, q - 1, q), rest, q << low);
    for (int l = low; l < top; ++l) rest -= F(bits[l]) * std::ldexp(1.0, l);
  }
  return bits;
}

std::uint64_t ColumnSum::columns_of(std::int64_t value) const {
  const auto bits = static_cast<std::uint64_t>(value);
  return width_ >= 64 ? bits : bits & ((std::uint64_t{1} << width_) - 1);
}

void ColumnSum::add(int exponent, std::vector<Literal> literals) {
  if (exponent < width_) rows_.push_back({std::uint64_t{1} << exponent, std::move(literals), groups_++});
}

void ColumnSum::add_multiple(std::int64_t value, const std::vector<Literal>& literals) {
  if (columns_of(value) != 0) rows_.push_back({columns_of(value), literals, groups_++});
}

void ColumnSum::add_one_of(const std::vector<Choice>& choices) {
  for (const Choice& choice : choices)
    if (columns_of(choice.value) != 0) rows_.push_back({columns_of(choice.value), choice.literals, groups_});
  ++groups_;
}

void ColumnSum::add_signed(const std::vector<Literal>& a, int exponent) {
  const int top = static_cast<int>(a.size()) - 1;
  for (int i = 0; i < top; ++i) add(exponent + i, {a[i]});
  add_multiple(-(std::int64_t{1} << (exponent + top)), {a[top]});
}

void ColumnSum::add_product(const std::vector<Literal>& a, const std::vector<Literal>& b, int exponent) {
  const int n = static_cast<int>(a.size()) - 1, m = static_cast<int>(b.size()) - 1;  // the top bits
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) add(exponent + i + j, {a[i], b[j]});
  add(exponent + n + m, {a[n], b[m]});
  for (int j = 0; j < m; ++j) add(exponent + n + j, {a[n], ~b[j]});
  for (int i = 0; i < n; ++i) add(exponent + m + i, {b[m], ~a[i]});
  add_multiple(-(((std::int64_t{1} << m) - 1) << (exponent + n)), {a[n]});
  add_multiple(-(((std::int64_t{1} << n) - 1) << (exponent + m)), {b[m]});
}

Bits ColumnSum::sum(Gates g, const Enable& enable) const {
  std::vector<int> max(width_, 0);
  std::uint64_t group_columns = 0;
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    group_columns |= rows_[r].columns;
    if (r + 1 < rows_.size() && rows_[r + 1].group == rows_[r].group) continue;
    for (int p = 0; p < width_; ++p) max[p] += (group_columns >> p) & 1;
    group_columns = 0;
  }
  std::vector<SignalId> count(width_, 0);  // none for a column no row reaches
  std::vector<Form> columns(width_);
  for (int p = 0; p < width_; ++p)
    if (max[p] > 0) columns[p] = F(count[p] = g.signal(indexed("count", p), 0, max[p]));
  for (const Row& row : rows_) {
    std::vector<Term> down;
    for (int p = 0; p < width_; ++p)
      if ((row.columns >> p) & 1) down.push_back({count[p], 1.0});
    g.add_all(down, enable.with(row.literals));
  }
  return sum_columns(g.sub("sum"), columns, max, width_);
}

// The result fits when bits s + 12 .. width − 1 all equal the sign; otherwise it saturates, to 4095
// for a positive q (a step over those bits) and to −4096 (bits 11..0 zero) for a negative one.
Bits shift_and_saturate(Gates g, const Bits& q, const ShiftCases& shifts) {
  const int width = static_cast<int>(q.size());
  const SignalId sign = q[width - 1];
  Bits out;
  for (int k = 0; k < kOutBits; ++k) out.push_back(g.signal(indexed("out", k)));
  for (const auto& [s, when] : shifts) {
    if (s < 0 || s >= width - 1) fail("circuit: a shift by {} of {} bits", s, width);
    std::vector<Literal> positive = join(when, {nlit(sign)}), negative = join(when, {lit(sign)});
    Form above_ones;
    for (int p = s + kOutBits - 1; p < width - 1; ++p) {
      positive.push_back(nlit(q[p]));
      negative.push_back(lit(q[p]));
      above_ones += F(q[p]);
    }
    for (int k = 0; k + 1 < kOutBits; ++k) {
      const int from = k + s;
      if (from < width - 1) {
        g.add_all(out[k], join({lit(q[from])}, positive));
        g.add_all(out[k], join({lit(q[from])}, negative));
      } else {
        g.add_all(out[k], negative);
      }
    }
    if (!above_ones.terms().empty()) {
      const double big = static_cast<double>(above_ones.terms().size() + 1);
      std::vector<Term> saturated;
      for (int k = 0; k + 1 < kOutBits; ++k) saturated.push_back({out[k], 1.0});
      g.add_step(saturated, above_ones - Enable(when).off() * big - F(sign) * big, 1);
    }
    g.add_all(out[kOutBits - 1], join(when, {lit(sign)}));
  }
  return out;
}

Bits requantised_row_product(Gates g, const RowOperands& row, const Enable& enable) {
  const int columns = static_cast<int>(row.weights.size());
  const bool lanes = !row.activation_lanes.empty();
  const int x_bits = lanes ? kAmElementBits : columns ? static_cast<int>(row.activations.front().size()) : 0;
  const std::size_t given = lanes ? row.activation_lanes.size() : row.activations.size();
  if (columns == 0 || columns > 512 || given != row.weights.size() || x_bits < 2 || x_bits > 16 ||
      (lanes && (!row.activations.empty() || std::ranges::any_of(row.activation_lanes, [](const auto& l) { return l.size() != kAmLanes; }))) ||
      row.multiplier.size() != kWeightBits || row.shift.size() != kShiftBits)
    fail("circuit: a row product takes up to 512 columns of int8 weights and 2..16-bit activations (or 13-bit ones "
         "in AM's 7 lanes), an 8-bit multiplier and a 6-bit shift");

  // Stage 1: a plane sum per weight bit b and activation group: the magnitude bits six at a time,
  // then the sign bit. Each is non-negative and weighs ±2^(b + the group's first bit).
  struct Plane {
    SignalId sum;
    int largest, exponent;
    bool negative;
  };
  std::vector<std::pair<int, int>> groups;  // first bit and width
  for (int low = 0; low < x_bits - 1; low += kGroupBits) groups.push_back({low, std::min(kGroupBits, x_bits - 1 - low)});
  groups.push_back({x_bits - 1, 1});
  std::vector<Plane> planes;
  for (auto [low, bits] : groups) {
    const bool sign = low == x_bits - 1;
    for (int b = 0; b < kWeightBits; ++b) {
      const int largest = columns * ((1 << bits) - 1);
      SignalId sum = g.signal(indexed(indexed("plane", b), low), 0, largest);
      for (int j = 0; j < columns; ++j) {
        const SignalId weight_bit = row.weights[j][b];
        if (!lanes) {
          g.add_relu(sum, enable.on() + F(weight_bit) - 1.0, 1,
                     binary_value(Bits(row.activations[j].begin() + low, row.activations[j].begin() + low + bits)));
          continue;
        }
        // The lanes' levels, less 1 for each lane at level 4 (value 3): [level − 3 ≥ 1] when the
        // weight bit is set.
        Form up;
        for (int bit = low; bit < low + bits; bit += 2) {
          const SignalId lane = row.activation_lanes[j].at(bit / 2);
          const double weight = std::ldexp(1.0, bit - low);
          up += weight * F(lane);
          if (bits > 1) g.add_relu(sum, F(lane) - 3.0 - 4.0 * (Form(1.0) - F(weight_bit)) - 4.0 * enable.off(), -weight);
        }
        g.add_relu(sum, enable.on() + F(weight_bit) - 1.0, 1, up);
      }
      planes.push_back({sum, largest, b + low, (b + 1 == kWeightBits) != sign});
    }
  }

  // Stages 2–3, then stage 4: m·acc + 2^(s−1) mod 2^width as column counts of bit products. A negative plane
  // −2^e·U enters as 2^e·(2^n − 1 − U), its complemented bits, less the constant 2^e·(2^n − 1) times m.
  const double bound = columns * 128.0 * std::ldexp(1.0, x_bits - 1) * 255;  // |m·acc| ≤ bound
  const int shift_cap = std::bit_width(static_cast<std::uint64_t>(bound)) + 1;
  const int width = shift_cap + 1;
  ColumnSum sum(width);
  ShiftCases shifts;
  for (std::size_t p = 0; p < planes.size(); ++p) {
    const Plane& plane = planes[p];
    Bits u = to_binary(g, indexed("u", static_cast<int>(p)), F(plane.sum), plane.largest);
    for (int i = 0; i < kWeightBits; ++i) {
      for (std::size_t l = 0; l < u.size(); ++l)
        sum.add(plane.exponent + i + static_cast<int>(l), {lit(row.multiplier[i]), plane.negative ? nlit(u[l]) : lit(u[l])});
      if (plane.negative) sum.add_multiple(-(((std::int64_t{1} << u.size()) - 1) << (plane.exponent + i)), {lit(row.multiplier[i])});
    }
  }
  for (int s = 1; s < shift_cap && s < (1 << kShiftBits) - 1; ++s) {
    const std::vector<Literal> is_s = match_bits(row.shift, 0, kShiftBits, static_cast<std::uint32_t>(s));
    sum.add(s - 1, is_s);
    shifts.push_back({s, is_s});
  }

  // Stages 5–10, then 11.
  return shift_and_saturate(g, sum.sum(g, enable), shifts);
}

}  // namespace rvformer::circuit
