// circuit/vector_attention_testing.h — vu.attend as the passes the unit takes (anchor, mass, sum,
// elements, outputs: docs/vector-unit.md, "Attention"), written from story_ops.h's definition for
// the tests: composed, they must give story_attention_head; one by one, they are what each pass's
// circuit must compute. Also the machines that run the passes' circuits on such passes.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "circuit/vector_arith_testing.h"
#include "circuit/vector_attention.h"

namespace rvformer::circuit {

inline constexpr int kAttentionBlock = STORY_ATTENTION_BLOCK;
inline constexpr std::int64_t kEighth = 1 << 11;  // of a log2 unit, in Q14 scores

// One head's operands as vu.attend reads them.
struct AttentionHead {
  std::vector<int> q;
  std::vector<std::vector<int>> k, v;  // per position
};

inline std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int sat13(std::int64_t x) { return static_cast<int>(std::clamp<std::int64_t>(x, -4096, 4095)); }
inline std::int64_t round_shift(std::int64_t x, int s) { return (x + (std::int64_t{1} << (s - 1))) >> s; }

// The score with its high part (the keys' bits 6 and up) clamped to ±2^14.
inline std::int64_t attention_score(const std::vector<int>& q, const std::vector<int>& k) {
  std::int64_t high = 0, low = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    high += std::int64_t{q[i]} * floor_div(k[i], 64);
    low += std::int64_t{q[i]} * (k[i] - 64 * floor_div(k[i], 64));
  }
  return 64 * std::clamp<std::int64_t>(high, -(1 << 14), 1 << 14) + low;
}

// The weight of a position k eighths below the anchor, in Q(frac).
inline std::int64_t attention_weight(std::int64_t k, int frac) { return story_pow2_eighths(static_cast<std::int32_t>(8 * frac - k)); }

// The weights a pass's staircase takes, until the last non-zero one: Q10 for the sum and element
// passes, Q7 for the mass passes.
inline std::vector<int> attention_weights(int frac = 10) {
  std::vector<int> w;
  for (int k = 0; attention_weight(k, frac) > 0; ++k) w.push_back(static_cast<int>(attention_weight(k, frac)));
  return w;
}

// What the passes of one head carry from block to block.
struct AttentionTokens {
  int anchor = -1536, level = -1, sum = 0;
};

// The positions [first, end) of the head's block that starts at `first`.
inline int block_end(const AttentionHead& h, int first) {
  return std::min<int>(static_cast<int>(h.k.size()), first + kAttentionBlock);
}

inline int anchor_pass(const AttentionHead& h, int first, int anchor) {
  std::int64_t largest = attention_score(h.q, h.k[first]);
  for (int t = first + 1; t < block_end(h, first); ++t) largest = std::max(largest, attention_score(h.q, h.k[t]));
  return static_cast<int>(std::max<std::int64_t>(anchor, -floor_div(-largest, kEighth)));
}

inline std::int64_t eighths_below(const AttentionHead& h, int t, int anchor) {
  return floor_div(anchor * kEighth - attention_score(h.q, h.k[t]) + kEighth / 2, kEighth);
}

inline std::int64_t level_value(int m) { return m < 0 ? 0 : story_pow2_eighths(56 + m); }

// BACK(m) for every level a 7-bit token holds.
inline std::vector<std::int64_t> level_values() {
  std::vector<std::int64_t> back;
  for (int m = 0; m < 128; ++m) back.push_back(level_value(m));
  return back;
}

inline std::vector<int> attention_reciprocals() { return std::vector<int>(std::begin(STORY_RECIP), std::end(STORY_RECIP)); }

inline int mass_pass(const AttentionHead& h, int first, int anchor, int level) {
  std::int64_t sum = level_value(level);
  for (int t = first; t < block_end(h, first); ++t) sum += attention_weight(eighths_below(h, t, anchor), 7);
  int m = 0;
  while (sum * sum >= level_value(m) * level_value(m + 1)) ++m;
  return m;
}

inline int sum_pass(const AttentionHead& h, int first, int anchor, int level, int sum) {
  std::int64_t s = sum;
  for (int t = first; t < block_end(h, first); ++t) s += attention_weight(eighths_below(h, t, anchor) + level, 10);
  return static_cast<int>(std::min<std::int64_t>(s, 4095));
}

inline int element_pass(const AttentionHead& h, int first, int i, int anchor, int level, int running) {
  std::int64_t s = 0;
  for (int t = first; t < block_end(h, first); ++t)
    s += attention_weight(eighths_below(h, t, anchor) + level, 10) * h.v[t][i];
  return sat13(running + round_shift(s, 11));
}

inline int output_pass(int running, int sum) {
  if (sum == 0) return 0;
  const int e = std::bit_width(static_cast<unsigned>(sum)) - 1;
  return sat13(round_shift(std::int64_t{running} * STORY_RECIP[((sum << 8) >> e) - 256], 4 + e));
}

// The head's tokens after its anchor, mass and sum passes.
inline AttentionTokens head_tokens(const AttentionHead& h) {
  AttentionTokens tokens;
  const int n = static_cast<int>(h.k.size());
  for (int first = 0; first < n; first += kAttentionBlock) tokens.anchor = anchor_pass(h, first, tokens.anchor);
  for (int first = 0; first < n; first += kAttentionBlock) tokens.level = mass_pass(h, first, tokens.anchor, tokens.level);
  for (int first = 0; first < n; first += kAttentionBlock)
    tokens.sum = sum_pass(h, first, tokens.anchor, tokens.level, tokens.sum);
  return tokens;
}

// vu.attend's outputs from the passes.
inline std::vector<int> attention_by_passes(const AttentionHead& h) {
  const AttentionTokens tokens = head_tokens(h);
  std::vector<int> out;
  for (std::size_t i = 0; i < h.q.size(); ++i) {
    int running = 0;
    for (int first = 0; first < static_cast<int>(h.k.size()); first += kAttentionBlock)
      running = element_pass(h, first, static_cast<int>(i), tokens.anchor, tokens.level, running);
    out.push_back(output_pass(running, tokens.sum));
  }
  return out;
}

// story_attention_head's outputs for the head.
inline std::vector<int> attention_reference(const AttentionHead& h) {
  const std::size_t hs = h.q.size(), n = h.k.size();
  std::vector<std::int16_t> q(h.q.begin(), h.q.end()), keys, values, out(hs);
  for (std::size_t t = 0; t < n; ++t) {
    keys.insert(keys.end(), h.k[t].begin(), h.k[t].end());
    values.insert(values.end(), h.v[t].begin(), h.v[t].end());
  }
  story_attention_head(out.data(), q.data(), keys.data(), values.data(), static_cast<int>(n), static_cast<int>(hs),
                       static_cast<int>(hs));
  return std::vector<int>(out.begin(), out.end());
}

// A random head of `positions` positions: queries and keys of a random magnitude (`bits` at most),
// and values of 13 bits.
inline AttentionHead random_head(RandomOperands& r, int positions, int head_size, int bits) {
  AttentionHead h;
  auto element = [&](int b) { return std::clamp(r.pick(-(1 << b), (1 << b) - 1), -4096, 4095); };
  const int qb = r.pick(1, bits), kb = r.pick(1, bits);
  for (int i = 0; i < head_size; ++i) h.q.push_back(element(qb));
  for (int t = 0; t < positions; ++t) {
    h.k.emplace_back();
    h.v.emplace_back();
    for (int i = 0; i < head_size; ++i) {
      h.k.back().push_back(element(kb));
      h.v.back().push_back(r.pick(-4096, 4095));
    }
  }
  return h;
}

// A head whose distances to the anchor fall on every step of the weights' staircase, one below it and
// one above: q = (2^11, 1, 0, …) and position t's key (−t/3, 2^10 + δ, 0, …) with δ = 0, 1, −1 in
// turn, so that its score is 2^11·(−t/3) + 2^10 + δ.
inline AttentionHead staircase_head(RandomOperands& r, int positions) {
  AttentionHead h;
  h.q = {2048, 1, 0, 0, 0, 0, 0, 0};
  for (int t = 0; t < positions; ++t) {
    h.k.push_back({-t / 3, 1024 + std::array{0, 1, -1}[t % 3], 0, 0, 0, 0, 0, 0});
    h.v.emplace_back();
    for (int i = 0; i < 8; ++i) h.v.back().push_back(r.pick(-4096, 4095));
  }
  return h;
}

// One pass's operands: the head, its block's first position, the output element (of an element
// pass), the anchor and the level, and the token before it (the running sum, or the weights' sum).
enum class PassKind { kAnchor, kMass, kSum, kElement };

struct AttentionPass {
  PassKind kind = PassKind::kElement;
  AttentionHead head;
  int first = 0, i = 0, anchor = 0, level = 0, before = 0;
};

// Every element pass of the heads (their blocks, elements and tokens as the passes leave them).
inline std::vector<AttentionPass> element_passes(const std::vector<AttentionHead>& heads) {
  std::vector<AttentionPass> passes;
  for (const AttentionHead& h : heads) {
    const AttentionTokens tokens = head_tokens(h);
    for (int i = 0; i < static_cast<int>(h.q.size()); ++i) {
      int running = 0;
      for (int first = 0; first < static_cast<int>(h.k.size()); first += kAttentionBlock) {
        passes.push_back({PassKind::kElement, h, first, i, tokens.anchor, tokens.level, running});
        running = element_pass(h, first, i, tokens.anchor, tokens.level, running);
      }
    }
  }
  return passes;
}

// Every anchor, mass or sum pass of the heads (the anchor, level or sum before it in `anchor`,
// `level` or `before`).

inline std::vector<AttentionPass> block_passes(PassKind kind, const std::vector<AttentionHead>& heads) {
  std::vector<AttentionPass> passes;
  for (const AttentionHead& h : heads) {
    const AttentionTokens tokens = head_tokens(h);
    AttentionPass p{kind, h, 0, 0, AttentionTokens{}.anchor, AttentionTokens{}.level, 0};
    if (kind != PassKind::kAnchor) p.anchor = tokens.anchor;
    if (kind == PassKind::kSum) p.level = tokens.level;
    for (; p.first < static_cast<int>(h.k.size()); p.first += kAttentionBlock) {
      passes.push_back(p);
      if (kind == PassKind::kAnchor) p.anchor = anchor_pass(h, p.first, p.anchor);
      if (kind == PassKind::kMass) p.level = mass_pass(h, p.first, p.anchor, p.level);
      if (kind == PassKind::kSum) p.before = sum_pass(h, p.first, p.anchor, p.level, p.before);
    }
  }
  return passes;
}

// The pass's token, from the models above.
inline int pass_token(const AttentionPass& p) {
  switch (p.kind) {
    case PassKind::kAnchor: return anchor_pass(p.head, p.first, p.anchor);
    case PassKind::kMass: return mass_pass(p.head, p.first, p.anchor, p.level);
    case PassKind::kSum: return sum_pass(p.head, p.first, p.anchor, p.level, p.before);
    case PassKind::kElement: return element_pass(p.head, p.first, p.i, p.anchor, p.level, p.before);
  }
  return 0;
}

// A machine running the passes over blocks of 32 positions of a head of `head_size`: the four kinds'
// circuits, sharing their first stages, each case one pass. Its operands, in order: the query's
// elements, each position's key elements, the count (one-hot 1..32), each position's value, the
// anchor (12 bits), the level (7 bits), the token before (13 bits), whether the block is the head's
// first, and the kind (one-hot). Its results: the anchor, level, sum and element tokens, all zero
// but the case's kind's.
class AttentionPassMachine : public VectorMachine {
 public:
  AttentionPassMachine(const std::vector<AttentionPass>& passes, int head_size) {
    AttentionBlock block;
    for (int i = 0; i < head_size; ++i) block.query.push_back(operand(indexed("q", i), 13));
    for (int t = 0; t < kAttentionBlock; ++t) {
      block.keys.emplace_back();
      for (int i = 0; i < head_size; ++i) block.keys.back().push_back(operand(indexed(indexed("k", t), i), 13));
    }
    block.count = one_hot_operand("count_is", 1, kAttentionBlock);
    AttentionPassOperands in;
    for (int t = 0; t < kAttentionBlock; ++t) in.values.push_back(operand(indexed("v", t), 13));
    in.anchor = operand("anchor", 12), in.level = operand("level", 7), in.before = operand("before", 13);
    in.first_block = operand("first_block", 1)[0];
    const Bits kind = one_hot_operand("kind_is", 0, 4);
    const AttentionPassKinds kinds{kind[0], kind[1], kind[2], kind[3]};
    std::vector<VectorCase> cases;
    for (const AttentionPass& p : passes) cases.push_back(case_of(p, head_size));
    const AttentionPassResults r = attention_block_passes(unit(), block, in, tables(), kinds, enable());
    finish({widened(r.anchor, true), widened(r.level, false), widened(r.sum, false), r.element}, std::move(cases));
  }

  // The result that holds each kind's token.
  static std::size_t result_of(PassKind kind) { return static_cast<std::size_t>(kind); }

 private:
  int unused_bits_ = 0;

  static const AttentionTables& tables() {
    static const std::vector<int> weights = attention_weights(), mass_weights = attention_weights(7);
    static const std::vector<std::int64_t> back = level_values();
    static const AttentionTables t{weights, mass_weights, back};
    return t;
  }

  // A result narrower than a token, its sign bit repeated (an anchor) or zeros above it.
  Bits widened(Bits bits, bool is_signed) {
    for (int b = static_cast<int>(bits.size()); b < kResultBits; ++b)
      bits.push_back(is_signed ? bits.back() : c.add_input(indexed("unused_top_bit", unused_bits_++)));
    return bits;
  }

  static VectorCase case_of(const AttentionPass& p, int head_size) {
    const AttentionHead& h = p.head;
    const int end = block_end(h, p.first);
    VectorCase c;
    c.operands.insert(c.operands.end(), h.q.begin(), h.q.end());
    for (int t = 0; t < kAttentionBlock; ++t)
      for (int i = 0; i < head_size; ++i) c.operands.push_back(p.first + t < end ? h.k[p.first + t][i] : 0);
    c.operands.push_back(end - p.first);
    for (int t = 0; t < kAttentionBlock; ++t) c.operands.push_back(p.first + t < end ? h.v[p.first + t][p.i] : 0);
    c.operands.insert(c.operands.end(), {p.anchor, std::max(p.level, 0), p.before, p.level < 0});
    c.operands.push_back(static_cast<int>(p.kind));
    c.results.assign(4, 0);
    c.results[result_of(p.kind)] = pass_token(p);
    return c;
  }
};

// A machine running an output pass: operands the running sum and the weights' sum, 13 bits each.
class AttentionOutputMachine : public VectorMachine {
 public:
  explicit AttentionOutputMachine(std::vector<VectorCase> cases) {
    const Bits running = operand("running", 13), sum = operand("sum", 13);
    finish({attention_output(unit(), running, sum, attention_reciprocals(), enable())}, std::move(cases));
  }
};

// Output passes: every power of two of the weights' sum and its neighbours, 0 and the cap, with the
// running sum's extremes, rounding ties and random values.
inline std::vector<VectorCase> output_cases(RandomOperands& r, int random_count) {
  std::vector<int> sums{0, 4095};
  for (int e = 0; e < 12; ++e)
    for (int d : {-1, 0, 1}) sums.push_back(std::clamp((1 << e) + d, 0, 4095));
  std::vector<VectorCase> cases;
  for (int sum : sums)
    for (int running : {-4096, -4095, -1, 0, 1, 4095, r.pick(-4096, 4095)})
      cases.push_back({{running, sum}, {output_pass(running, sum)}});
  for (int n = 0; n < random_count; ++n) {
    const int running = r.pick(-4096, 4095), sum = r.pick(0, 4095);
    cases.push_back({{running, sum}, {output_pass(running, sum)}});
  }
  return cases;
}

}  // namespace rvformer::circuit
