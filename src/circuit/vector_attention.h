// circuit/vector_attention.h — the passes of vu.attend (story_attention_head, docs/vector-unit.md,
// "Attention") as SwiGLU neurons, bit for bit: each reads one block of positions (the query, the
// block's keys and, for an output element, its values) and the tokens of earlier passes, and gives
// one 13-bit token.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "circuit/vector_arith.h"

namespace rvformer::circuit {

// What every pass of a head reads from one block.
struct AttentionBlock {
  std::vector<Bits> query;               // the head's query, 13 bits an element (two's complement), at most 8
  std::vector<std::vector<Bits>> keys;   // per position, its key's elements, 13 bits each
  std::vector<SignalId> count;           // one-hot: count[c − 1] is 1 when the first c positions are the head's
};

// The anchor after this block: max(anchor, ⌈s_t / 2^11⌉ for the block's valid positions), both 12 bits
// in two's complement (the scores of a head of at most 8 elements lie within ±2^22, so the anchor
// within ±1536). Seven stages for 32 positions:
//   1–2   the score's parts and the high part's clamp, as in attention_element, each live position's
//         lifted by 3·2^20 to a positive value (a position beyond the count reads 0), and a copy of
//         the anchor's 2^11·anchor, lifted alike;
//   3     a step per pair of candidates, [v_a ≥ v_b];
//   4     M = the largest v + 2^20 + 2^11 − 1, the one candidate that beats all others times its v;
//   5–7   ⌊M / 2^11⌋ in binary: M cut into segments of 2^17, the six bits above 2^17 from the full
//         segments, the six below from what remains; less 2048, the top bit complemented.
Bits attention_anchor(Gates g, const AttentionBlock& block, const Bits& anchor, const Enable& enable);

// The level after this block, LEVEL(BACK(level) + Σ_t mass_weights[u_t]) (BACK being 0 when
// `first_block` is 1), as 7 bits: u_t is the distance in eighths below `anchor` (12 bits) as for
// attention_element at level 0, `level` 7 bits, `back` BACK(m) for m = 0..127 (increasing, below
// 2^23), and LEVEL(S) the number of k = 1..127 with S² ≥ BACK(k − 1)·BACK(k) (a head of 512
// positions reaches about 80). Six stages: attention_element's first four (the staircase giving
// mass_weights; beside it the level one-hot, then BACK(level) as a sum of up projections), then S
// cut into segments of eight thresholds and a step per threshold.
Bits attention_mass(Gates g, const AttentionBlock& block, const Bits& anchor, const Bits& level, SignalId first_block,
                    std::span<const int> mass_weights, std::span<const std::int64_t> back, const Enable& enable);

// An output element's running sum after this block: sat13(running + round_shift(Σ_t p_t·v_t, 11)),
// p_t = weights[u_t + level] (0 past the table; story_pow2_eighths(80 − k) for the story) over the
// block's valid positions, u_t the score's distance below `anchor` in eighths of a log2 unit. `anchor` is 12 bits in two's complement and at
// least every valid score's ⌈s_t / 2^11⌉ (as the anchor passes leave it); `level` is 7 bits; `running`
// and each value 13 bits in two's complement. Twelve stages for 32 positions of a head of 8:
//   1     the score's parts per position, Σ_i q_i·(k_i's bits 6–12) and Σ_i q_i·(k_i's bits 0–5), a
//         neuron pair (the query's sign) per key bit; and a copy of 2^11·anchor;
//   2     the high part clamped to ±2^14; the distance x_t = 2^11·(anchor + level) + 2^10 − s_t is now
//         an exact integer, pushed past every step for a position beyond the count;
//   3     x_t cut into octaves (a clamp each), so that no step collects ramps beyond 2^24;
//   4     p_t's eleven bits from a step per eighth of a log2 unit;
//   5     Σ_t p_t·v_t + 2^11·running + 2^10 as column counts of bit products;
//   6–11  the counts summed (sum_columns);
//   12    shift_and_saturate by 11.
Bits attention_element(Gates g, const AttentionBlock& block, const std::vector<Bits>& values, const Bits& anchor,
                       const Bits& level, const Bits& running, std::span<const int> weights, const Enable& enable);

// The weights' sum after this block: min(4095, sum_before + Σ_t p_t), p_t as for attention_element,
// as 12 bits (the sum is never negative; sum_before is 13 bits). Eight stages: attention_element's
// first four, the cap (a neuron), the sum in binary in two, and a copy of its bits so that one stage
// writes them all.
Bits attention_weight_sum(Gates g, const AttentionBlock& block, const Bits& anchor, const Bits& level,
                          const Bits& sum_before, std::span<const int> weights, const Enable& enable);

// An output element: 0 when the weights' sum D (13 bits, 0..4095) is 0, else
// sat13(round_shift(running · reciprocals[j], 4 + e)) with e = ⌊log2 D⌋ and j = (D·2^8 >> e) − 256
// (reciprocals: 256 values of 16 bits). Eight stages: e, j and [D > 0] from D's leading bit (a step
// per leading bit and output bit), then table_product_element's seven.
Bits attention_output(Gates g, const Bits& running, const Bits& sum, std::span<const int> reciprocals,
                      const Enable& enable);

}  // namespace rvformer::circuit
