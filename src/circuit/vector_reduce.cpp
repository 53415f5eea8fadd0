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
constexpr int kEntryBits = 8, kHalfEBits = 4;
constexpr int kPairs = 15;              // leading pairs 0..14: ss below 2^30
constexpr int kCapBit = 2 * kPairs;     // ss ≥ 2^30 reads as 2^30
constexpr int kEntryBias = 64;          // the entry is the bucket less 64
constexpr int kEntryAtCap = 255 - kEntryBias;

std::string indexed(const std::string& name, int i) { return name + "[" + std::to_string(i) + "]"; }

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

Bits rmsnorm_scale(Gates g, const NormScaleOperands& x, const Enable& enable) {
  const int count = static_cast<int>(x.elements.size());
  const int shifts = static_cast<int>(x.log2_length.size());
  const int epsilon_bits = static_cast<int>(x.epsilon.size());
  int element_bits = 0;
  for (const Bits& e : x.elements) element_bits = std::max(element_bits, static_cast<int>(e.size()));
  if (count == 0 || count > kMaxElements || shifts == 0 || shifts > kMaxLog2Length + 1 || epsilon_bits > kMaxEpsilonBits ||
      std::any_of(x.elements.begin(), x.elements.end(), [](const Bits& e) { return e.size() < 2 || e.size() > 16; }))
    fail("circuit: a norm's scale takes 1..512 elements of 2..16 bits, 2^s for s up to 9 and a 32-bit epsilon term");

  // Stage 1, then 2–7: S = eps_term·2^s + Σ x_i².
  const double largest = std::ldexp(std::ldexp(1.0, epsilon_bits) - 1, shifts - 1) +
                         count * std::ldexp(1.0, 2 * (element_bits - 1));
  const int width = std::bit_width(static_cast<std::uint64_t>(largest));
  ColumnSum squares(width);
  for (const Bits& e : x.elements) add_square(squares, e);
  for (int k = 0; k < epsilon_bits; ++k) {
    std::vector<ColumnSum::Choice> shifted;
    for (int s = 0; s < shifts; ++s) shifted.push_back({std::int64_t{1} << (k + s), {lit(x.log2_length[s]), lit(x.epsilon[k])}});
    squares.add_one_of(shifted);
  }
  const Bits sum = squares.sum(g.sub("squares"), enable);

  // Stage 8: ss = S >> s.
  Bits ss;
  for (int k = 0; k < width; ++k) {
    ss.push_back(g.signal(indexed("ss", k)));
    for (int s = 0; s < shifts && k + s < width; ++s) g.add_all(ss[k], {lit(x.log2_length[s]), lit(sum[k + s])});
  }
  auto bit = [&](int k) { return k < width ? F(ss[k]) : Form(); };

  // Stage 9. `leading` is at least 1 exactly when pair P is ss's leading pair (for P = 0, when no bit
  // above it is set) and the unit is on; it never exceeds 2.
  Bits out;
  for (int b = 0; b < kEntryBits + kHalfEBits; ++b) out.push_back(g.signal(indexed("scale", b)));
  const Form off = enable.off() * 4.0;
  for (int p = 0; p < kPairs; ++p) {
    Form above;
    for (int k = 2 * p + 2; k < width; ++k) above += F(ss[k]);
    const Form pair = p == 0 ? Form(1.0) : bit(2 * p) + bit(2 * p + 1);
    const Form excluded = above * 4.0 + off;
    std::vector<Term> half_e;
    for (int b = 0; b < kHalfEBits; ++b)
      if (((kPairs - 1 - p) >> b) & 1) half_e.push_back({out[kEntryBits + b], 1.0});
    g.add_step(half_e, pair - excluded, 1);
    for (int j = 0; j < 6; ++j)  // the bucket's bits 0–5 are ss's from 2P − 6 up
      if (2 * p - 6 + j >= 0) g.add_step(out[j], bit(2 * p - 6 + j) * 2.0 + pair - excluded, 3);
    // The bucket's bits 6 and 7 are the pair; less 64, bit 6 is the pair 10 and bit 7 the pair 11.
    g.add_step(out[6], bit(2 * p + 1) - bit(2 * p) - excluded, 1);
    g.add_step(out[7], bit(2 * p + 1) + bit(2 * p) - excluded, 2);
  }
  Form capped;
  for (int k = kCapBit; k < width; ++k) capped += F(ss[k]);
  if (!capped.terms().empty()) {
    std::vector<Term> at_cap;
    for (int b = 0; b < kEntryBits; ++b)
      if ((kEntryAtCap >> b) & 1) at_cap.push_back({out[b], 1.0});
    g.add_step(at_cap, capped - off, 1);
  }
  return out;
}

}  // namespace rvformer::circuit
