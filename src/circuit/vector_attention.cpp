// circuit/vector_attention.cpp — see vector_attention.h.
#include "circuit/vector_attention.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <string>

#include "circuit/vector_elementwise.h"
#include "support/error.h"

namespace rvformer::circuit {
namespace {

constexpr int kValueBits = 13;
constexpr int kAnchorBits = 12, kLevelBits = 7;
constexpr int kMaxHeadSize = 8;                 // scores within ±2^22: an anchor of 12 bits
constexpr int kLowKeyBits = 6;                  // a key's bits 0..5 make the score's low part
constexpr double kHighPartLimit = 1 << 14;      // the high part's clamp
constexpr double kEighth = 1 << 11;             // an eighth of a log2 unit, in Q14 scores
constexpr int kRunningShift = 11;
constexpr int kStairsPerSegment = 8;            // a staircase's steps between two clamps

bool is_value(const Bits& v) { return v.size() == kValueBits; }

void check_block(const AttentionBlock& block) {
  const std::size_t positions = block.keys.size();
  if (positions == 0 || block.count.size() != positions || block.query.empty() || block.query.size() > kMaxHeadSize ||
      !std::all_of(block.query.begin(), block.query.end(), is_value) ||
      !std::all_of(block.keys.begin(), block.keys.end(), [&](const std::vector<Bits>& key) {
        return key.size() == block.query.size() && std::all_of(key.begin(), key.end(), is_value);
      }))
    fail("circuit: an attention block takes a query of at most {} and keys of 13-bit elements, and a count per position",
         kMaxHeadSize);
}

// A position's score after stages 1–2: `lifted` is s_t + 3·2^20 > 0 for a live position (64·(the
// clamped high part + 2^14 + 2^15) + the low part, both neuron sums; scores lie above −3·2^20) and
// 0 for one that is not, so that it is below every live score and the anchor's lifted alike;
// `present` is 1 when the position is the head's.
struct PositionScore {
  Form lifted, present;
};
constexpr double kClampLift = 64 * kHighPartLimit;  // the clamped high part's offset
constexpr double kLiveLift = 2 * kClampLift;        // what lifts a live position above every dead one
constexpr double kScoreLift = kClampLift + kLiveLift;

// The block's scores, for passes of which one runs when `on` is 1 (at most 1 otherwise).
std::vector<PositionScore> block_scores(Gates& g, const AttentionBlock& block, const Form& on) {
  check_block(block);
  const int positions = static_cast<int>(block.keys.size()), head = static_cast<int>(block.query.size());
  std::vector<Form> query;
  for (const Bits& q : block.query) query.push_back(signed_value(q));
  std::vector<PositionScore> scores;
  for (int t = 0; t < positions; ++t) {
    Gates at = g.sub(indexed("position", t));
    // The count is one-hot and `on` at most 1.
    const Form present = one_hot_at_least(block.count, static_cast<std::size_t>(t)), live = on + present - 1.0;
    // Stage 1: the score's parts (a position that is not live gets 0).
    const SignalId high = at.signal("high", -(1 << 21), 1 << 21), low = at.signal("low", -(1 << 21), 1 << 21);
    for (int i = 0; i < head; ++i)
      for (int b = 0; b < kValueBits; ++b) {
        const bool is_low = b < kLowKeyBits;
        const double weight = is_low ? std::ldexp(1.0, b) : (b + 1 == kValueBits ? -64.0 : std::ldexp(1.0, b - kLowKeyBits));
        at.add_relu(is_low ? low : high, live + F(block.keys[t][i][b]) - 1.0, weight, query[i]);
      }
    // Stage 2: the high part clamped, plus 2^14, plus 2^15 for a live position.
    const SignalId clamped = at.signal("clamped", 0, (kScoreLift + kClampLift) / 64);
    const Form dead = (Form(1.0) - live) * (2 * kHighPartLimit);
    at.add_relu(clamped, F(high) + kHighPartLimit - dead, 1);
    at.add_relu(clamped, F(high) - kHighPartLimit - dead, -1);
    at.add_relu(clamped, live, kLiveLift / 64);
    scores.push_back({F(clamped) * 64 + F(low), present});
  }
  return scores;
}

// The bits of a staircase of x, an integer form at least 0: values[k] once x reaches thresholds[k − 1]
// (values[0] below the first), the thresholds positive and increasing. Two stages: x cut into
// segments of eight thresholds (a clamp each), so that no output collects ramps beyond a segment's
// width; then a step per threshold on its segment.
Bits staircase(Gates& g, const std::string& name, const Form& x, std::span<const std::int64_t> thresholds,
               std::span<const int> values) {
  if (values.size() != thresholds.size() + 1 || thresholds.empty() || thresholds.front() < 1 ||
      !std::is_sorted(thresholds.begin(), thresholds.end(), std::less_equal<>()) ||
      std::any_of(values.begin(), values.end(), [](int v) { return v < 0; }))
    fail("circuit: a staircase takes increasing positive thresholds and a non-negative value after each");
  const int largest = *std::max_element(values.begin(), values.end());
  Bits bits;
  for (int b = 0; b < static_cast<int>(std::bit_width(static_cast<unsigned>(largest))); ++b) bits.push_back(g.signal(indexed(name, b)));
  for (std::size_t first = 0; first < thresholds.size(); first += kStairsPerSegment) {
    const std::size_t last = std::min(thresholds.size(), first + kStairsPerSegment) - 1;
    const double base = static_cast<double>(thresholds[first] - 1), width = static_cast<double>(thresholds[last]) - base;
    const SignalId segment = g.signal(indexed(name + "_segment", static_cast<int>(first / kStairsPerSegment)), 0, width);
    g.add_relu(segment, x - base, 1);
    g.add_relu(segment, x - base - width, -1);
    for (std::size_t k = first; k <= last; ++k) {
      const auto before = static_cast<std::uint32_t>(values[k]), after = static_cast<std::uint32_t>(values[k + 1]);
      g.add_step(spelling_change(bits, before, after), F(segment), static_cast<double>(thresholds[k]) - base);
    }
  }
  return bits;
}

// Stages 1–4 of the passes that weigh the block's positions: per position, the bits of
// weights[u_t + level] (0 past the table, and for a position beyond the count), u_t the distance in
// eighths of a log2 unit below `anchor`; `level` is a form of input bits, and `on` 1 when one of
// these passes runs.
std::vector<Bits> position_weights(Gates& g, const std::vector<PositionScore>& scores, const Bits& anchor,
                                   const Form& level, std::span<const int> weights, const Form& on) {
  if (weights.empty() || weights.size() > 128 || weights.back() <= 0 || weights.front() >= 1 << 12 ||
      !std::is_sorted(weights.rbegin(), weights.rend()))
    fail("circuit: attention weights fall from below 2^12 to their last non-zero one, at most 128 of them");
  // The distance x_t = 2^11·(anchor + level) + 2^10 − s_t (at least 2^10 for a live position, 0
  // otherwise) reaches k eighths at 2^11·k, where the weight becomes weights[k], and 0 after them.
  std::vector<std::int64_t> thresholds{1};
  std::vector<int> values{0};
  for (std::size_t k = 0; k < weights.size(); ++k) {
    values.push_back(weights[k]);
    thresholds.push_back(static_cast<std::int64_t>(k + 1) << 11);
  }
  values.push_back(0);
  const Form offset = (signed_value(anchor) + level) * kEighth + kEighth / 2 + kClampLift;
  std::vector<Bits> p;
  for (std::size_t t = 0; t < scores.size(); ++t) {
    Gates at = g.sub(indexed("position", static_cast<int>(t)));
    // Stage 1: whether the position is live for these passes; stage 2: the offset for it.
    const SignalId live = at.signal("live");
    at.add_relu(live, on + scores[t].present - 1.0, 1);
    const SignalId anchored = at.signal("anchored", -(1 << 23), 1 << 23);
    at.add_relu(anchored, F(live), 1, offset);
    // Stages 3–4 (the live lift taken back off the score).
    p.push_back(staircase(at, "p", F(anchored) - scores[t].lifted + F(live) * kLiveLift, thresholds, values));
  }
  return p;
}

// Stage 5 on of an element pass: Σ_t p_t·v_t + 2^11·running + 2^10 in binary, then shifted and
// saturated (stage 12).
Bits element_tail(Gates g, const std::vector<Bits>& p, const std::vector<Bits>& values, const Bits& running,
                  const Enable& enable) {
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
  return shift_and_saturate(g, sum.sum(g.sub("sum"), enable), {{kRunningShift, enable.literals()}});
}

// Stages 5–8 of a sum pass: the sum (below 2^12 + 32·2^12) capped at 4095, in binary in two stages,
// and a copy of its bits, so that a single stage writes them all.
Bits sum_tail(Gates g, const std::vector<Bits>& p, const Bits& sum_before, const Enable& enable) {
  constexpr int kLargest = (1 << (kValueBits - 1)) - 1;
  // The sum before, with the pass on (stage 1).
  const SignalId before = g.signal("before", 0, kLargest);
  g.add_relu(before, enable.on(), 1, binary_value(Bits(sum_before.begin(), sum_before.end() - 1)));
  Form total = F(before);
  for (const Bits& bits : p) total += binary_value(bits);
  const SignalId excess = g.signal("excess", 0, 1 << 18);
  g.add_relu(excess, total - kLargest, 1);
  const Bits digits = to_binary(g, "digits", total - F(excess), kLargest);
  Bits out;
  for (std::size_t k = 0; k < digits.size(); ++k)
    out.push_back(g.all(indexed("sum", static_cast<int>(k)), enable.with({lit(digits[k])})));
  return out;
}

constexpr int kDigitBits = 6;
constexpr double kSegment = 1 << 17;  // the anchor's digits: bits 17–22, then 11–16

// Bits 11–22 of M (a signal, 0 ≤ M ≤ largest < 2^23). Three stages: M cut into segments of 2^17; the
// high digit, the number of full segments, a step at each segment's top (ramps of at most 1); the
// low digit from M less the high digit's value (below 2^17), a step per multiple of 2^11.
std::pair<Bits, Bits> anchor_digits(Gates& g, SignalId m, double largest) {
  std::vector<SignalId> segment;
  for (int j = 0; j * kSegment <= largest; ++j) {
    segment.push_back(g.signal(indexed("segment", j), 0, kSegment));
    g.add_relu(segment[j], F(m) - j * kSegment, 1);
    g.add_relu(segment[j], F(m) - (j + 1) * kSegment, -1);
  }
  Bits high, low;
  for (int b = 0; b < kDigitBits; ++b) {
    high.push_back(g.signal(indexed("high", b)));
    low.push_back(g.signal(indexed("low", b)));
  }
  for (std::uint32_t j = 0; j + 1 < segment.size(); ++j)
    g.add_step(spelling_change(high, j, j + 1), F(segment[j]), kSegment);
  const Form rest = F(m) - binary_value(high) * kSegment;
  for (std::uint32_t q = 1; q < 1u << kDigitBits; ++q) g.add_step(spelling_change(low, q - 1, q), rest, q * kEighth);
  return {high, low};
}

// An anchor pass from the scores: the candidates' values v, the anchor's (a copy, in stage 1) and
// each position's lifted score, s + 3·2^20 (the anchor's s being 2^11·anchor), positive for the
// anchor and a live position and 0 for one that is not; then stages 3–7.
Bits anchor_tail(Gates g, const std::vector<PositionScore>& scores, const Bits& anchor, const Enable& enable) {
  const SignalId anchored = g.signal("anchored", 0, 1 << 23);
  g.add_relu(anchored, enable.on(), 1, signed_value(anchor) * kEighth + kScoreLift);
  std::vector<Form> v{F(anchored)};
  for (const PositionScore& score : scores) v.push_back(score.lifted);
  // Stage 3: [v_a ≥ v_b] for a < b (off with the pass, whose candidates are all 0); b beats a when not.
  const int n = static_cast<int>(v.size());
  std::vector<Form> wins(n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const SignalId ge = g.at_least(indexed(indexed("ge", a), b), v[a] - v[b] + enable.on(), 1);
      wins[a] += F(ge);
      wins[b] += Form(1.0) - F(ge);
    }
  // Stage 4: M = the largest v + 2^20 + 2^11 − 1, from the one candidate that beats all n − 1 others
  // (ties to the earlier one): ⌊M / 2^11⌋ = ⌈the largest s / 2^11⌉ + 2048.
  constexpr double kLargest = (1 << 23) - 1;
  const SignalId largest = g.signal("largest", 0, kLargest);
  for (int a = 0; a < n; ++a)
    g.add_relu(largest, wins[a] - (n - 2) - enable.off() * n, 1, v[a] + (1 << 20) + kEighth - 1);
  // Stages 5–7: ⌊M / 2^11⌋ − 2048 in 12 bits, written in one stage.
  const auto [high, low] = anchor_digits(g, largest, kLargest);
  Bits out;
  for (int b = 0; b < kDigitBits; ++b) out.push_back(low[b]);
  for (int b = 0; b < kDigitBits; ++b)
    out.push_back(g.all(indexed("anchor", kDigitBits + b), enable.with({b + 1 < kDigitBits ? lit(high[b]) : nlit(high[b])})));
  return out;
}

// A mass pass from the Q7 weights: in stage 1 the level one-hot, none for the first block; in stage
// 2 BACK(level), each value an up projection (they are not bf16 numbers, which a down projection's
// weights must be); then S cut into segments and a step per threshold (stages 5–6).
Bits mass_tail(Gates g, const std::vector<Bits>& p, const Bits& level, SignalId first_block,
               std::span<const std::int64_t> back, const Enable& enable) {
  constexpr int kLevels = 1 << kLevelBits;
  if (back.size() != kLevels || back.front() < 1 || back.back() >= 1 << 23 ||
      !std::is_sorted(back.begin(), back.end(), std::less_equal<>()))
    fail("circuit: a mass pass takes {} increasing levels' weights below 2^23", kLevels);
  const SignalId back_value = g.signal("back", 0, static_cast<double>(back.back()));
  for (int m = 0; m < kLevels; ++m) {
    const auto is_m = match_bits(level, 0, kLevelBits, static_cast<std::uint32_t>(m));
    const SignalId is = g.all(indexed("level_is", m), enable.with(join(is_m, {nlit(first_block)})));
    g.add_relu(back_value, F(is), 1, Form(static_cast<double>(back[m])));
  }
  Form total = F(back_value);
  for (const Bits& bits : p) total += binary_value(bits);
  // The number of thresholds S reaches, S² ≥ BACK(k − 1)·BACK(k) for k = 1..127.
  std::vector<std::int64_t> thresholds;
  std::vector<int> values{0};
  for (int k = 1; k < kLevels; ++k) {
    const auto product = static_cast<std::uint64_t>(back[k - 1]) * static_cast<std::uint64_t>(back[k]);
    auto root = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(product)));
    while (root * root < product) ++root;
    while (root > 0 && (root - 1) * (root - 1) >= product) --root;
    thresholds.push_back(static_cast<std::int64_t>(root));
    values.push_back(k);
  }
  return staircase(g, "level", total, thresholds, values);
}

void check_operands(const AttentionBlock& block, const AttentionPassOperands& in) {
  if (in.values.size() != block.keys.size() || !std::all_of(in.values.begin(), in.values.end(), is_value) ||
      in.anchor.size() != kAnchorBits || in.level.size() != kLevelBits || in.before.size() != kValueBits)
    fail("circuit: the attention passes take a 13-bit value per position, a 12-bit anchor, a 7-bit level and a "
         "13-bit token before");
}

}  // namespace

AttentionPassResults attention_block_passes(Gates g, const AttentionBlock& block, const AttentionPassOperands& in,
                                            const AttentionTables& tables, const AttentionPassKinds& kinds,
                                            const Enable& enable) {
  check_operands(block, in);
  // 1 when the unit is on and one of `running` runs (they exclude each other).
  auto on_for = [&](std::initializer_list<SignalId> running) {
    Form on = enable.on() - 1.0;
    for (SignalId kind : running) on += F(kind);
    return on;
  };
  auto pass = [&](SignalId kind) { return Enable(enable.with({lit(kind)})); };
  const std::vector<PositionScore> scores =
      block_scores(g, block, on_for({kinds.anchor, kinds.mass, kinds.sum, kinds.element}));
  AttentionPassResults out;
  out.anchor = anchor_tail(g.sub("anchor"), scores, in.anchor, pass(kinds.anchor));
  Gates mass = g.sub("mass");
  const std::vector<Bits> p7 = position_weights(mass, scores, in.anchor, Form(), tables.mass_weights, on_for({kinds.mass}));
  out.level = mass_tail(mass, p7, in.level, in.first_block, tables.back, pass(kinds.mass));
  Gates weights = g.sub("weights");
  const std::vector<Bits> p10 = position_weights(weights, scores, in.anchor, binary_value(in.level), tables.weights,
                                                 on_for({kinds.sum, kinds.element}));
  out.sum = sum_tail(g.sub("sum"), p10, in.before, pass(kinds.sum));
  out.element = element_tail(g.sub("element"), p10, in.values, in.before, pass(kinds.element));
  return out;
}

Bits attention_output(Gates g, const Bits& running, const Bits& sum, std::span<const int> reciprocals,
                      const Enable& enable) {
  constexpr int kSumBits = 12, kEntryBits = 8, kExponentBits = 4;
  if (running.size() != kValueBits || sum.size() != kValueBits || reciprocals.size() != 1 << kEntryBits)
    fail("circuit: an attention output takes a 13-bit running sum and weights' sum, and 256 reciprocals");
  // Stage 1: for the leading bit e of D, j's bits (D's from e − 8 up) and e's; [D > 0] with them.
  Bits entry, exponent;
  for (int b = 0; b < kEntryBits; ++b) entry.push_back(g.signal(indexed("entry", b)));
  for (int b = 0; b < kExponentBits; ++b) exponent.push_back(g.signal(indexed("e", b)));
  const SignalId nonzero = g.signal("nonzero");
  const Form off = enable.off() * 4.0;
  Form above;
  for (int e = kSumBits - 1; e >= 0; --e) {
    const Form leading = F(sum[e]) * 2.0 - above * 4.0 - off;  // 2 when bit e leads, at most 0 otherwise
    std::vector<Term> spelled = spelling_change(exponent, 0, static_cast<std::uint32_t>(e));
    spelled.push_back({nonzero, 1.0});
    g.add_step(spelled, leading, 2);
    for (int b = 0; b < kEntryBits; ++b)
      if (e - kEntryBits + b >= 0) g.add_step(entry[b], leading + F(sum[e - kEntryBits + b]), 3);
    above += F(sum[e]);
  }
  // Stages 2–8.
  std::vector<int> shifts;
  for (int e = 0; e < kSumBits; ++e) shifts.push_back(4 + e);
  return table_product_element(g.sub("product"), running, entry, exponent, reciprocals, shifts,
                               Enable(enable.with({lit(nonzero)})));
}

}  // namespace rvformer::circuit
