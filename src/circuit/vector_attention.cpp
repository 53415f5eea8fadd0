// circuit/vector_attention.cpp — see vector_attention.h.
#include "circuit/vector_attention.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "support/error.h"

namespace rvformer::circuit {
namespace {

constexpr int kValueBits = 13;
constexpr int kAnchorBits = 12, kLevelBits = 7;
constexpr int kLowKeyBits = 6;                  // a key's bits 0..5 make the score's low part
constexpr double kHighPartLimit = 1 << 14;      // the high part's clamp
constexpr double kEighth = 1 << 11;             // an eighth of a log2 unit, in Q14 scores
constexpr double kOctave = 8 * kEighth;         // a segment of the distance
constexpr int kRunningShift = 11;

std::string indexed(const std::string& name, int t) { return name + "[" + std::to_string(t) + "]"; }
std::string indexed(const std::string& name, int t, int j) { return indexed(indexed(name, t), j); }

// A value in two's complement from its bits.
Form value_of(const Bits& x) {
  const int top = static_cast<int>(x.size()) - 1;
  Form v;
  for (int b = 0; b < top; ++b) v += F(x[b]) * std::ldexp(1.0, b);
  return v - F(x[top]) * std::ldexp(1.0, top);
}

void check_block(const AttentionBlock& block, const std::vector<Bits>& values) {
  const std::size_t positions = block.keys.size();
  auto is_value = [](const Bits& v) { return v.size() == kValueBits; };
  if (positions == 0 || block.count.size() != positions || values.size() != positions || block.query.empty() ||
      !std::all_of(block.query.begin(), block.query.end(), is_value) || !std::all_of(values.begin(), values.end(), is_value) ||
      !std::all_of(block.keys.begin(), block.keys.end(), [&](const std::vector<Bits>& key) {
        return key.size() == block.query.size() && std::all_of(key.begin(), key.end(), is_value);
      }))
    fail("circuit: an attention block takes a query and keys of 13-bit elements, a value and a count per position");
}

}  // namespace

Bits attention_element(Gates g, const AttentionBlock& block, const std::vector<Bits>& values, const Bits& anchor,
                       const Bits& level, const Bits& running, std::span<const int> weights, const Enable& enable) {
  check_block(block, values);
  if (anchor.size() != kAnchorBits || level.size() != kLevelBits || running.size() != kValueBits)
    fail("circuit: an attention element takes a 12-bit anchor, a 7-bit level and a 13-bit running sum");
  if (weights.empty() || weights.size() > 128 || weights.back() == 0 || weights.front() >= 1 << 12 ||
      !std::is_sorted(weights.rbegin(), weights.rend()) || weights.back() < 0)
    fail("circuit: attention weights fall from below 2^12 to their last non-zero one, at most 128 of them");
  // The weight at a distance of k eighths: weights[k], then 0.
  const int steps = static_cast<int>(weights.size()), segments = (steps + 7) / 8;
  const int weight_bits = std::bit_width(static_cast<unsigned>(weights.front()));
  auto weight_at = [&](int k) { return k < steps ? weights[k] : 0; };
  const int positions = static_cast<int>(block.keys.size()), head = static_cast<int>(block.query.size());
  std::vector<Form> query;
  for (const Bits& q : block.query) query.push_back(value_of(q));
  // The anchor and the level as the distance's offset: 2^11·(anchor + level) + 2^10, plus 64 times
  // the clamp's offset.
  const Form offset = (value_of(anchor) + binary_value(level)) * kEighth + kEighth / 2 + 64 * kHighPartLimit;

  std::vector<std::vector<SignalId>> p(positions);  // p_t's bits
  for (int t = 0; t < positions; ++t) {
    Gates at = g.sub(indexed("position", t));
    // 1 when the position is the head's and the unit on (the count is one-hot, the enable at most 1).
    Form valid;
    for (int c = t; c < positions; ++c) valid += F(block.count[c]);
    const Form live = enable.on() + valid - 1.0;

    // Stage 1: the score's parts, and the offset for a live position.
    const SignalId high = at.signal("high", -(1 << 21), 1 << 21), low = at.signal("low", -(1 << 21), 1 << 21);
    for (int i = 0; i < head; ++i)
      for (int b = 0; b < kValueBits; ++b) {
        const bool is_low = b < kLowKeyBits;
        const double weight = is_low ? std::ldexp(1.0, b) : (b + 1 == kValueBits ? -64.0 : std::ldexp(1.0, b - kLowKeyBits));
        at.add_relu(is_low ? low : high, live + F(block.keys[t][i][b]) - 1.0, weight, query[i]);
      }
    const SignalId anchored = at.signal("anchored", -(1 << 23), 1 << 23);
    at.add_relu(anchored, live, 1, offset);

    // Stage 2: the high part clamped (its neurons off for a position that is not live, whose parts are 0).
    const SignalId clamped = at.signal("clamped", 0, 2 * kHighPartLimit);
    const Form dead = (Form(1.0) - live) * (2 * kHighPartLimit);
    at.add_relu(clamped, F(high) + kHighPartLimit - dead, 1);
    at.add_relu(clamped, F(high) - kHighPartLimit - dead, -1);
    // The distance in Q14 plus the level, 0 for a position that is not live.
    const Form distance = F(anchored) - F(clamped) * 64 - F(low);

    // Stage 3: the distance in octaves.
    std::vector<SignalId> octave;
    for (int j = 0; j < segments; ++j) {
      octave.push_back(at.signal(indexed("octave", j), 0, kOctave));
      at.add_relu(octave[j], distance - j * kOctave, 1);
      at.add_relu(octave[j], distance - (j + 1) * kOctave, -1);
    }

    // Stage 4: p_t's bits, a step where the distance reaches each eighth (step 0 at 1: a live position).
    for (int b = 0; b < weight_bits; ++b) p[t].push_back(at.signal(indexed("p", b)));
    for (int k = 0; k <= steps; ++k) {
      const int before = k == 0 ? 0 : weight_at(k - 1), after = weight_at(k);
      std::vector<Term> down;
      for (int b = 0; b < weight_bits; ++b) {
        const int delta = static_cast<int>((after >> b) & 1) - static_cast<int>((before >> b) & 1);
        if (delta != 0) down.push_back({p[t][b], static_cast<double>(delta)});
      }
      if (k == 0)
        at.add_step(down, F(octave[0]), 1);
      else if (k % 8 != 0)
        at.add_step(down, F(octave[k / 8]), (k % 8) * kEighth);
      else
        at.add_step(down, F(octave[k / 8 - 1]), kOctave);
    }
  }

  // Stage 5 on: Σ_t p_t·v_t + 2^11·running + 2^10 in binary, then shifted and saturated.
  constexpr int kWidth = 30;  // |Σ| < 32·2^10·2^12 + 2^23
  ColumnSum sum(kWidth);
  for (int t = 0; t < positions; ++t) {
    const Bits& v = values[t];
    for (int j = 0; j < weight_bits; ++j) {
      for (int b = 0; b + 1 < kValueBits; ++b) sum.add(j + b, {lit(p[t][j]), lit(v[b])});
      sum.add(j + kValueBits - 1, {lit(p[t][j]), nlit(v[kValueBits - 1])});
      sum.add_multiple(-(std::int64_t{1} << (j + kValueBits - 1)), {lit(p[t][j])});
    }
  }
  std::vector<Literal> running_literals;
  for (SignalId r : running) running_literals.push_back(lit(r));
  sum.add_signed(running_literals, kRunningShift);
  sum.add(kRunningShift - 1, {});
  return shift_and_saturate(g, sum.sum(g.sub("sum"), enable), {{kRunningShift, g.all("on", enable.literals())}});
}

}  // namespace rvformer::circuit
