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

bool is_value(const Bits& v) { return v.size() == kValueBits; }

void check_block(const AttentionBlock& block) {
  const std::size_t positions = block.keys.size();
  if (positions == 0 || block.count.size() != positions || block.query.empty() ||
      !std::all_of(block.query.begin(), block.query.end(), is_value) ||
      !std::all_of(block.keys.begin(), block.keys.end(), [&](const std::vector<Bits>& key) {
        return key.size() == block.query.size() && std::all_of(key.begin(), key.end(), is_value);
      }))
    fail("circuit: an attention block takes a query and keys of 13-bit elements and a count per position");
}

}  // namespace

namespace {

// Stages 1–4 of a pass that weighs the block's positions: per position, the bits of
// weights[u_t + level] (0 past the table, and for a position beyond the count), u_t the distance in
// eighths of a log2 unit below `anchor` (see attention_element).
std::vector<Bits> position_weights(Gates& g, const AttentionBlock& block, const Bits& anchor, const Bits& level,
                                   std::span<const int> weights, const Enable& enable) {
  check_block(block);
  if (anchor.size() != kAnchorBits || level.size() != kLevelBits)
    fail("circuit: attention weights take a 12-bit anchor and a 7-bit level");
  if (weights.empty() || weights.size() > 128 || weights.back() <= 0 || weights.front() >= 1 << 12 ||
      !std::is_sorted(weights.rbegin(), weights.rend()))
    fail("circuit: attention weights fall from below 2^12 to their last non-zero one, at most 128 of them");
  const int positions = static_cast<int>(block.keys.size()), head = static_cast<int>(block.query.size());
  // The weight at a distance of k eighths: weights[k], then 0.
  const int steps = static_cast<int>(weights.size()), segments = (steps + 7) / 8;
  const int weight_bits = std::bit_width(static_cast<unsigned>(weights.front()));
  auto weight_at = [&](int k) { return k < steps ? weights[k] : 0; };
  std::vector<Form> query;
  for (const Bits& q : block.query) query.push_back(signed_value(q));
  // The anchor and the level as the distance's offset: 2^11·(anchor + level) + 2^10, plus 64 times
  // the clamp's offset.
  const Form offset = (signed_value(anchor) + binary_value(level)) * kEighth + kEighth / 2 + 64 * kHighPartLimit;

  std::vector<Bits> p(positions);
  for (int t = 0; t < positions; ++t) {
    Gates at = g.sub(indexed("position", t));
    // 1 when the position is the head's and the unit on (the count is one-hot, the enable at most 1).
    const Form live = enable.on() + one_hot_at_least(block.count, static_cast<std::size_t>(t)) - 1.0;

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

    // Stage 4: the weight's bits, a step where the distance reaches each eighth (step 0 at 1: a live
    // position).
    for (int b = 0; b < weight_bits; ++b) p[t].push_back(at.signal(indexed("p", b)));
    for (int k = 0; k <= steps; ++k) {
      const int before = k == 0 ? 0 : weight_at(k - 1), after = weight_at(k);
      std::vector<Term> down;
      for (int b = 0; b < weight_bits; ++b) {
        const int delta = ((after >> b) & 1) - ((before >> b) & 1);
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
  return p;
}

}  // namespace

Bits attention_element(Gates g, const AttentionBlock& block, const std::vector<Bits>& values, const Bits& anchor,
                       const Bits& level, const Bits& running, std::span<const int> weights, const Enable& enable) {
  if (values.size() != block.keys.size() || !std::all_of(values.begin(), values.end(), is_value) || running.size() != kValueBits)
    fail("circuit: an attention element takes a 13-bit value per position and a 13-bit running sum");
  const std::vector<Bits> p = position_weights(g, block, anchor, level, weights, enable);

  // Stage 5 on: Σ_t p_t·v_t + 2^11·running + 2^10 in binary, then shifted and saturated.
  constexpr int kWidth = 30;  // |Σ| < 32·2^11·2^12 + 2^23
  ColumnSum sum(kWidth);
  for (std::size_t t = 0; t < p.size(); ++t) {
    const Bits& v = values[t];
    for (std::size_t j = 0; j < p[t].size(); ++j) {
      const int e = static_cast<int>(j);
      for (int b = 0; b + 1 < kValueBits; ++b) sum.add(e + b, {lit(p[t][j]), lit(v[b])});
      sum.add(e + kValueBits - 1, {lit(p[t][j]), nlit(v[kValueBits - 1])});
      sum.add_multiple(-(std::int64_t{1} << (e + kValueBits - 1)), {lit(p[t][j])});
    }
  }
  std::vector<Literal> running_literals;
  for (SignalId r : running) running_literals.push_back(lit(r));
  sum.add_signed(running_literals, kRunningShift);
  sum.add(kRunningShift - 1, {});
  return shift_and_saturate(g, sum.sum(g.sub("sum"), enable), {{kRunningShift, g.all("on", enable.literals())}});
}

Bits attention_weight_sum(Gates g, const AttentionBlock& block, const Bits& anchor, const Bits& level,
                          const Bits& sum_before, std::span<const int> weights, const Enable& enable) {
  if (sum_before.size() != kValueBits) fail("circuit: an attention weights' sum is 13 bits");
  const std::vector<Bits> p = position_weights(g, block, anchor, level, weights, enable);
  // Stage 5: the sum (below 2^12 + 32·2^12) capped at 4095; 6–7: in binary.
  constexpr int kLargest = (1 << (kValueBits - 1)) - 1;
  // The sum before, with the unit on (stage 1).
  const SignalId before = g.signal("before", 0, kLargest);
  g.add_relu(before, enable.on(), 1, binary_value(Bits(sum_before.begin(), sum_before.end() - 1)));
  Form total = F(before);
  for (const Bits& bits : p) total += binary_value(bits);
  const SignalId excess = g.signal("excess", 0, 1 << 18);
  g.add_relu(excess, total - kLargest, 1);
  // Its digits come in two stages; one more copies them, so that a single stage writes the result.
  const Bits digits = to_binary(g, "digits", total - F(excess), kLargest);
  Bits out;
  for (std::size_t k = 0; k < digits.size(); ++k)
    out.push_back(g.all(indexed("sum", static_cast<int>(k)), enable.with({lit(digits[k])})));
  return out;
}

}  // namespace rvformer::circuit
