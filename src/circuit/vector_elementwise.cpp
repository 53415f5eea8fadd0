// circuit/vector_elementwise.cpp — see vector_elementwise.h.
#include "circuit/vector_elementwise.h"

#include <algorithm>
#include <initializer_list>

#include "support/error.h"

namespace rvformer::circuit {
namespace {

constexpr int kElementBits = 13;  // an AM element
constexpr int kTableBits = 16;    // a table entry in WM, int16
constexpr int kMaxMulShift = 30, kMulShiftBits = 5;  // story_mul16's shifts 1..30, in binary

void check_widths(std::initializer_list<const Bits*> operands, int bits, const char* what) {
  for (const Bits* e : operands)
    if (e->size() != static_cast<std::size_t>(bits)) fail("circuit: {} has {} bits, not {}", what, e->size(), bits);
}

void check_elements(std::initializer_list<const Bits*> elements) {
  check_widths(elements, kElementBits, "an elementwise operand");
}

std::vector<Literal> literals_of(const Bits& bits, bool complemented = false) {
  std::vector<Literal> out;
  for (SignalId b : bits) out.push_back({b, complemented});
  return out;
}

}  // namespace

Bits add16_element(Gates g, const Bits& x, const Bits& y, const Enable& enable) {
  check_elements({&x, &y});
  Forms a = forms_of(x), b = forms_of(y);
  a.push_back(F(x.back()));
  b.push_back(F(y.back()));
  const Bits sum = narrow_sum(g, "sum", kElementBits + 1, a, b, enable.on());
  return shift_and_saturate(g, sum, {{0, enable.literals()}});
}

Bits mul16_element(Gates g, const Bits& a, const Bits& b, const Bits& shift, const Enable& enable) {
  check_elements({&a, &b});
  if (shift.size() != kMulShiftBits) fail("circuit: story_mul16's shift takes {} bits", kMulShiftBits);
  constexpr int kWidth = 2 * kElementBits + 1;  // a·b + 2^(s−1) ≤ 2^25 for the shifts that give neurons
  ColumnSum sum(kWidth);
  sum.add_product(literals_of(a), literals_of(b));
  ShiftCases shifts;
  for (int s = 1; s <= kMaxMulShift && s < kWidth - 1; ++s) {
    const std::vector<Literal> when = match_bits(shift, 0, kMulShiftBits, static_cast<std::uint32_t>(s));
    sum.add(s - 1, when);
    shifts.push_back({s, when});
  }
  return shift_and_saturate(g, sum.sum(g, enable), shifts);
}

namespace {

constexpr int kSegmentBits = 7;  // r = o & 127
constexpr int kSegments = 64;

// The literals under which h + 4096 is in segment j: bits 7–11 spell j's low five bits, and the sign
// bit is the complement of j's top bit.
std::vector<Literal> in_segment(const Bits& h, int j) {
  std::vector<Literal> out = match_bits(h, kSegmentBits, 5, j);
  out.push_back(j >> 5 ? nlit(h[kElementBits - 1]) : lit(h[kElementBits - 1]));
  return out;
}

}  // namespace

Bits silu_element(Gates g, const Bits& h, std::span<const int> y, const Enable& enable) {
  check_elements({&h});
  if (y.size() != kSegments + 1 || std::any_of(y.begin(), y.end(), [](int v) { return v < -4096 || v > 4095; }))
    fail("circuit: a SiLU table has {} values of 13 bits", kSegments + 1);
  constexpr int kWidth = 20;  // q = 128·result + 0..127, the result in 13 bits
  ColumnSum sum(kWidth);
  // q for o = 128·j + r.
  auto q_at = [&](int j, int r) { return 128 * std::int64_t{y[j]} + 64 + std::int64_t{y[j + 1] - y[j]} * r; };
  std::vector<ColumnSum::Choice> bases;
  for (int j = 0; j < kSegments; ++j) bases.push_back({q_at(j, 0), in_segment(h, j)});
  sum.add_one_of(bases);
  for (int low = 0; low < kSegmentBits; low += 2) {
    const int bits = std::min(2, kSegmentBits - low);
    std::vector<ColumnSum::Choice> multiples;
    for (int j = 0; j < kSegments; ++j)
      for (int v = 1; v < (1 << bits); ++v)
        multiples.push_back(
            {std::int64_t{y[j + 1] - y[j]} * (v << low), join(in_segment(h, j), match_bits(h, low, bits, v))});
    sum.add_one_of(multiples);
  }
  const Bits q = sum.sum(g, enable);
  return Bits(q.begin() + kSegmentBits, q.end());
}

Bits table_product_element(Gates g, const Bits& x, const Bits& entry, const Bits& field, std::span<const int> table,
                           std::span<const int> shifts, const Enable& enable) {
  constexpr std::size_t kMaxEntryBits = 8;
  constexpr int kMaxShift = 40;
  if (x.size() < 2 || x.size() > kTableBits || entry.size() > kMaxEntryBits || table.empty() ||
      table.size() > (std::size_t{1} << entry.size()) || shifts.empty() || shifts.size() > (std::size_t{1} << field.size()) ||
      std::any_of(table.begin(), table.end(), [](int v) { return v < 0 || v >= 1 << 16; }) ||
      std::any_of(shifts.begin(), shifts.end(), [](int s) { return s < 1 || s > kMaxShift; }))
    fail("circuit: a table product takes 2..16 bits of x, an entry into at most 256 values of 16 bits and shifts 1..{}",
         kMaxShift);
  const int x_bits = static_cast<int>(x.size()), entry_bits = static_cast<int>(entry.size());
  const int field_bits = static_cast<int>(field.size());
  ColumnSum sum(x_bits + kTableBits + 1);
  for (int b = 0; b < x_bits; ++b) {
    const std::int64_t weight = b + 1 == x_bits ? -(std::int64_t{1} << b) : std::int64_t{1} << b;
    std::vector<ColumnSum::Choice> choices;
    for (std::size_t k = 0; k < table.size(); ++k)
      choices.push_back({weight * table[k], join(match_bits(entry, 0, entry_bits, static_cast<std::uint32_t>(k)), {lit(x[b])})});
    sum.add_one_of(choices);
  }
  ShiftCases by_shift;
  for (std::size_t v = 0; v < shifts.size(); ++v) {
    const std::vector<Literal> when = match_bits(field, 0, field_bits, static_cast<std::uint32_t>(v));
    sum.add(shifts[v] - 1, when);
    by_shift.push_back({shifts[v], when});
  }
  return shift_and_saturate(g, sum.sum(g, enable), by_shift);
}

Bits rmsnorm_element(Gates g, const Bits& x, const Bits& entry, const Bits& half_e, std::span<const int> table,
                     const Enable& enable) {
  check_elements({&x});
  constexpr int kEntryBits = 8, kHalfEBits = 4, kMaxHalfE = 14;
  constexpr int kOutShift = 30 - 9;  // 30 − STORY_FRAC_NORM
  if (entry.size() != kEntryBits || half_e.size() != kHalfEBits)
    fail("circuit: a norm's element takes an 8-bit entry and a 4-bit e/2");
  std::vector<int> shifts;
  for (int h = 0; h <= kMaxHalfE; ++h) shifts.push_back(kOutShift - h);
  return table_product_element(g, x, entry, half_e, table, shifts, enable);
}

std::array<Bits, 2> rope_pair(Gates g, const RopeOperands& x, const Enable& enable) {
  check_elements({&x.a, &x.b});
  check_widths({&x.cos, &x.sin}, kTableBits, "a rotation's table entry");
  constexpr int kFraction = 14;  // STORY_FRAC_ROPE
  auto rotated = [&](const std::string& name, ColumnSum& sum) {
    Gates part = g.sub(name);
    sum.add(kFraction - 1, {});
    return shift_and_saturate(part, sum.sum(part, enable), {{kFraction, enable.literals()}});
  };
  const auto a = literals_of(x.a), b = literals_of(x.b), cos = literals_of(x.cos), sin = literals_of(x.sin);
  ColumnSum first(kElementBits + kTableBits + 1), second(kElementBits + kTableBits + 1);
  first.add_product(a, cos);
  first.add_product(b, literals_of(x.sin, true));
  first.add_signed(b);
  second.add_product(a, sin);
  second.add_product(b, cos);
  return {rotated("first", first), rotated("second", second)};
}

}  // namespace rvformer::circuit
