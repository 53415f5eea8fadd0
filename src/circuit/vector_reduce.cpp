// circuit/vector_reduce.cpp — see vector_reduce.h.
#include "circuit/vector_reduce.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "support/error.h"

namespace rvformer::circuit {
namespace {

constexpr int kMaxElements = 512;       // STORY_MAX_DOT
constexpr int kMaxLog2Length = 9;       // 2^9 = 512
constexpr int kMaxEpsilonBits = 32;
constexpr int kMaxPartialBits = 39;     // three 13-bit tokens
constexpr int kEntryBits = 8, kHalfEBits = 4;
constexpr int kPairs = 15;              // leading pairs 0..14: ss below 2^30
constexpr int kCapBit = 2 * kPairs;     // ss ≥ 2^30 reads as 2^30
constexpr int kEntryBias = 64;          // the entry is the bucket less 64
constexpr int kEntryAtCap = 255 - kEntryBias;

// x² for x in two's complement, its top bit t weighing −2^(n−1): the squares and doubled products
// of the low bits, 2^(2n−2)·t, and −2^n·t·x_b as 2^(b+n)·(t∧¬x_b) − 2^(b+n)·t.
void add_square(ColumnSum& sum, const Bits& x) {
  const int n = static_cast<int>(x.size()), top = n - 1;
  for (int b = 0; b < top; ++b) {
    sum.add(2 * b, {lit(x[b])});
    for (int c = b + 1; c < top; ++c) sum.add(b + c + 1, {lit(x[b]), lit(x[c])});
    sum.add(b + n, {lit(x[top]), nlit(x[b])});
  }
  sum.add(2 * top, {lit(x[top])});
  sum.add_multiple(-(((std::int64_t{1} << top) - 1) << n), {lit(x[top])});
}

}  // namespace

Bits norm_square_sum(Gates g, const NormScaleOperands& x, const Enable& enable) {
  const int count = static_cast<int>(x.elements.size());
  const int shifts = static_cast<int>(x.log2_length.size());
  const int epsilon_bits = static_cast<int>(x.epsilon.size());
  int element_bits = 0;
  for (const Bits& e : x.elements) element_bits = std::max(element_bits, static_cast<int>(e.size()));
  if (count == 0 || count > kMaxElements || shifts == 0 || shifts > kMaxLog2Length + 1 || epsilon_bits > kMaxEpsilonBits ||
      x.partial.size() > kMaxPartialBits ||
      std::any_of(x.elements.begin(), x.elements.end(), [](const Bits& e) { return e.size() < 2 || e.size() > 16; }))
    fail("circuit: a norm's scale takes 1..512 elements of 2..16 bits, 2^s for s up to 9, a 32-bit epsilon term "
         "and a partial sum of at most 39 bits");

  // Stage 1, then 2–7: S = eps_term·2^s + Σ x_i² + partial.
  const double largest = std::ldexp(std::ldexp(1.0, epsilon_bits) - 1, shifts - 1) +
                         count * std::ldexp(1.0, 2 * (element_bits - 1)) +
                         std::ldexp(1.0, static_cast<int>(x.partial.size())) - 1;
  const int width = std::bit_width(static_cast<std::uint64_t>(largest));
  ColumnSum squares(width);
  for (const Bits& e : x.elements) add_square(squares, e);
  for (int k = 0; k < epsilon_bits; ++k) {
    std::vector<ColumnSum::Choice> shifted;
    for (int s = 0; s < shifts; ++s) shifted.push_back({std::int64_t{1} << (k + s), {lit(x.log2_length[s]), lit(x.epsilon[k])}});
    squares.add_one_of(shifted);
  }
  for (int k = 0; k < static_cast<int>(x.partial.size()); ++k) squares.add(k, {lit(x.partial[k])});
  return squares.sum(g.sub("squares"), enable);
}

Bits norm_scale_of_sum(Gates g, const Bits& sum, const std::vector<SignalId>& log2_length, const Enable& enable) {
  const int shifts = static_cast<int>(log2_length.size());
  const int width = static_cast<int>(sum.size());
  // Stage 8, a copy of each step per shift s that holds only at the one s given: ss = S >> s is read
  // off S's bits from s up, and `leading` is at least 1 exactly when pair P is ss's leading pair (for
  // P = 0, when no bit above it is set) and the unit is on; it never exceeds 2.
  Bits out;
  for (int b = 0; b < kEntryBits + kHalfEBits; ++b) out.push_back(g.signal(indexed("scale", b)));
  for (int s = 0; s < shifts; ++s) {
    auto bit = [&](int k) { return k + s < width ? F(sum[k + s]) : Form(); };
    const Form off = (enable.off() + 1.0 - F(log2_length[s])) * (width + 4.0);  // beyond any count of S's bits
    for (int p = 0; p < kPairs; ++p) {
      Form above;
      for (int k = 2 * p + 2; k + s < width; ++k) above += bit(k);
      const Form pair = p == 0 ? Form(1.0) : bit(2 * p) + bit(2 * p + 1);
      const Form excluded = above * 4.0 + off;
      g.add_step(spelling_change(Bits(out.begin() + kEntryBits, out.end()), 0, kPairs - 1 - p), pair - excluded, 1);
      for (int j = 0; j < 6; ++j)  // the bucket's bits 0–5 are ss's from 2P − 6 up
        if (2 * p - 6 + j >= 0) g.add_step(out[j], bit(2 * p - 6 + j) * 2.0 + pair - excluded, 3);
      // The bucket's bits 6 and 7 are the pair; less 64, bit 6 is the pair 10 and bit 7 the pair 11.
      g.add_step(out[6], bit(2 * p + 1) - bit(2 * p) - excluded, 1);
      g.add_step(out[7], bit(2 * p + 1) + bit(2 * p) - excluded, 2);
    }
    Form capped;
    for (int k = kCapBit; k + s < width; ++k) capped += bit(k);
    if (!capped.terms().empty())
      g.add_step(spelling_change(Bits(out.begin(), out.begin() + kEntryBits), 0, kEntryAtCap), capped - off, 1);
  }
  return out;
}

Bits rmsnorm_scale(Gates g, const NormScaleOperands& x, const Enable& enable) {
  return norm_scale_of_sum(g, norm_square_sum(g, x, enable), x.log2_length, enable);
}

namespace {

constexpr int kValueBits = 13;
constexpr int kIndexBits = 12;  // the first-index token: bits 0–11 the index, bit 12 the flag

void check_line(const ArgmaxLine& line) {
  const std::size_t n = line.values.size();
  if (n == 0 || (n & (n - 1)) != 0 || line.count.size() != n ||
      std::any_of(line.values.begin(), line.values.end(), [](const Bits& v) { return v.size() != kValueBits; }))
    fail("circuit: an argmax line takes a power of two of 13-bit elements and a one-hot count as long");
}

}  // namespace

Bits running_maximum(Gates g, const ArgmaxLine& line, const Bits& previous, const Enable& enable) {
  check_line(line);
  if (previous.size() != kValueBits) fail("circuit: a running maximum is 13 bits");
  // Candidate 0 is the running maximum, always valid; candidate a + 1 is element a.
  const int n = static_cast<int>(line.values.size()) + 1;
  std::vector<Form> value{signed_value(previous)}, invalid{Form()};
  for (int a = 0; a + 1 < n; ++a) {
    value.push_back(signed_value(line.values[a]));
    invalid.push_back(Form(1.0) - one_hot_at_least(line.count, a));
  }
  const Form off = enable.off();
  constexpr double kLoses = 1 << (kValueBits + 1);  // beyond any difference of two values

  // Stage 1: beats[i][j] for i < j is [x_i ≥ x_j]; j beats i exactly when it does not.
  std::vector<Form> wins(n);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const SignalId ge = g.at_least(indexed(indexed("ge", i), j),
                                     value[i] - value[j] + (invalid[j] - invalid[i]) * kLoses - off * (4 * kLoses), 0);
      wins[i] += F(ge);
      wins[j] += Form(1.0) - F(ge);
    }

  // Stage 2: the candidate that beats all n − 1 others spells the result.
  Bits out;
  for (int k = 0; k < kValueBits; ++k) out.push_back(g.signal(indexed("max", k)));
  for (int i = 0; i < n; ++i) {
    const Bits& bits = i == 0 ? previous : line.values[i - 1];
    for (int k = 0; k < kValueBits; ++k)
      g.add_step(out[k], wins[i] + (F(bits[k]) - 1.0) * n - off * (2 * n), n - 1);
  }
  return out;
}

Bits first_index_of(Gates g, const ArgmaxLine& line, const Bits& maximum, const Bits& found_so_far,
                    const Bits& line_number, const Enable& enable) {
  check_line(line);
  const int n = static_cast<int>(line.values.size());
  const int position_bits = std::bit_width(static_cast<unsigned>(n)) - 1;
  if (maximum.size() != kValueBits || found_so_far.size() != kValueBits ||
      position_bits + static_cast<int>(line_number.size()) > kIndexBits)
    fail("circuit: a first index takes a 13-bit maximum and token, and a line number that fits 12 bits of index");
  const SignalId found_before = found_so_far[kIndexBits];
  Bits out;
  for (int k = 0; k < kValueBits; ++k) out.push_back(g.signal(indexed("index", k)));
  for (int k = 0; k < kValueBits; ++k) g.add_all(out[k], enable.with({lit(found_before), lit(found_so_far[k])}));

  // Stage 1: [x_a = maximum] for the valid elements, while the unit is on.
  constexpr double kExcluded = 1 << (kValueBits + 1);
  std::vector<SignalId> match;
  for (int a = 0; a < n; ++a)
    match.push_back(g.equals(indexed("match", a),
                             signed_value(line.values[a]) - signed_value(maximum) -
                                 (Form(1.0) - one_hot_at_least(line.count, a) + enable.off()) * kExcluded,
                             0));

  // Stage 2: the first match, unless the token was found before.
  Form earlier;
  for (int a = 0; a < n; ++a) {
    const Form first = F(match[a]) - earlier - F(found_before) * (n + 1);
    const Bits position(out.begin(), out.begin() + position_bits);
    std::vector<Term> spelled = spelling_change(position, 0, static_cast<std::uint32_t>(a));
    spelled.push_back({out[kIndexBits], 1.0});
    g.add_step(spelled, first, 1);
    for (std::size_t k = 0; k < line_number.size(); ++k)
      g.add_step(out[position_bits + static_cast<int>(k)], first + F(line_number[k]) - 1.0, 1);
    earlier += F(match[a]);
  }
  return out;
}

}  // namespace rvformer::circuit
