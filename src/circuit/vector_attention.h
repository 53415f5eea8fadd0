// circuit/vector_attention.h — the passes of vu.attend (story_attention_head, docs/vector-unit.md,
// "Attention") as SwiGLU neurons, bit for bit: a pass over a block reads the query, the block's keys
// and, for an output element, its values, with the tokens of earlier passes, and gives one 13-bit
// token; the output passes read the element's running sum and the weights' sum.
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

// What the passes over a block read besides the block: the tokens of earlier passes and, for an
// element pass, the element's values.
struct AttentionPassOperands {
  std::vector<Bits> values;  // per position, the element's value (13 bits)
  Bits anchor;               // 12 bits: the anchor so far (an anchor pass) or the head's (the others)
  Bits level;                // 7 bits: the level so far (a mass pass) or the head's (sum and element passes)
  Bits before;               // 13 bits: the weights' sum so far (a sum pass) or the element's running sum
  SignalId first_block;      // 1 on the head's first block: a mass pass has no level before it
};

// The tables the passes read (story_ops.h's for the story).
struct AttentionTables {
  std::span<const int> weights;       // weights[k], Q10, for a distance of k eighths; then 0
  std::span<const int> mass_weights;  // the same in Q7, for the mass passes
  std::span<const std::int64_t> back;  // BACK(m) for m = 0..127, increasing, below 2^23
};

// Which pass runs: bits of which at most one is 1.
struct AttentionPassKinds {
  SignalId anchor, mass, sum, element;
};

// Each pass's token; every one but the running pass's is zero, with its neurons off.
struct AttentionPassResults {
  Bits anchor;   // max(anchor, ⌈s_t / 2^11⌉ for the block's valid positions), 12 bits in two's complement
  Bits level;    // LEVEL(BACK(level) + Σ_t mass_weights[u_t]), BACK 0 on the first block: 7 bits
  Bits sum;      // min(4095, before + Σ_t p_t): 12 bits
  Bits element;  // sat13(before + round_shift(Σ_t p_t·v_t, 11)): 13 bits in two's complement
};

// The four passes over a block of a head of at most 8 elements (its scores lie within ±2^22, so
// the anchor within ±1536), sharing their first stages: s_t, u_t the score's distance in eighths
// of a log2 unit below the anchor, p_t = weights[u_t + level] over the valid positions, and
// LEVEL(S) the number of k = 1..127 with S² ≥ BACK(k − 1)·BACK(k) (a head of 512 positions reaches
// about 80). For 32 positions:
//   1     the score's parts per position, Σ_i q_i·(k_i's bits 6–12) and Σ_i q_i·(k_i's bits 0–5), a
//         neuron per key bit (the query's value its up projection), for any of the four passes;
//   2     the high part clamped to ±2^14, a live position's score lifted by 3·2^20 (a position
//         beyond the count reads 0, below every live one);
//   anchor, stages 3–7: a step per pair of candidates (the anchor's 2^11·anchor, lifted alike, and
//         the positions'), M = the winner's value + 2^20 + 2^11 − 1, and ⌊M / 2^11⌋ − 2048 from
//         segments of 2^17: six bits from the full segments, six from what remains;
//   mass, sum and element, stages 3–4: the distance x_t = 2^11·(anchor + level) + 2^10 − s_t
//         (level 0 for the mass) cut into segments of eight steps, then the weight's bits, a step
//         per eighth (Q7 weights for the mass, Q10 shared by the sum and element passes);
//   mass, 5–6: BACK(level) (chosen in stages 1–2) plus the weights, cut into segments, a step per
//         threshold;
//   sum, 5–8: the capped sum, in binary in two stages, and a copy of its bits (one stage writes them);
//   element, 5–12: Σ_t p_t·v_t + 2^11·before + 2^10 as column counts, summed (sum_columns),
//         shift_and_saturate by 11.
AttentionPassResults attention_block_passes(Gates g, const AttentionBlock& block, const AttentionPassOperands& in,
                                            const AttentionTables& tables, const AttentionPassKinds& kinds,
                                            const Enable& enable);

// An output element: 0 when the weights' sum D (13 bits, 0..4095) is 0, else
// sat13(round_shift(running · reciprocals[j], 4 + e)) with e = ⌊log2 D⌋ and j = (D·2^8 >> e) − 256
// (reciprocals: 256 values of 16 bits). Eight stages: e, j and [D > 0] from D's leading bit (a step
// per leading bit and output bit), then table_product_element's seven.
Bits attention_output(Gates g, const Bits& running, const Bits& sum, std::span<const int> reciprocals,
                      const Enable& enable);

}  // namespace rvformer::circuit
