// circuit/vector_reduce.h — the vector unit's reductions (docs/vector-unit.md): one token computed
// from a whole vector that a pass reads at once, as SwiGLU neurons, bit for bit with
// firmware/story/story_ops.h. The elements that depend on it come in later passes
// (vector_elementwise.h), each from its own operands and this token.
#pragma once

#include <vector>

#include "circuit/vector_arith.h"

namespace rvformer::circuit {

// The operands of story_rmsnorm_scale.
struct NormScaleOperands {
  std::vector<Bits> elements;  // x_i, each 2..16 bits in two's complement; at most 512
  std::vector<SignalId> log2_length;  // one-hot: log2_length[s] is 1 when 2^s is the smallest power of two ≥ n
  Bits epsilon;                // eps_term, unsigned, at most 32 bits
};

// story_rmsnorm_scale as its one 12-bit token: bits 0–7 the table entry (0..191), bits 8–11 e/2
// (0..14). With S = eps_term·2^s + Σ x_i² and ss = floor(S / 2^s), the entry and e/2 come from the
// leading pair of ss's bits: for ss in [2^2P, 2^(2P+2)) (P = 0..14), e/2 = 14 − P and the entry is
// the eight bits of ss from 2P − 6 up, less 64; ss = 0 reads as 1, and ss ≥ 2^30 as the cap 2^30
// (the last entry, e/2 = 0). All zero, with every neuron off, when `enable` is off. Nine stages for
// 64 elements of 13 bits:
//   1     S as column counts: each square's bit products (x_b·x_c for b < c once, at twice the
//         weight; the sign bit's products complemented, as in ColumnSum::add_product) and, a choice
//         per bit among the shifts, eps_term·2^s;
//   2–7   the counts summed (sum_columns);
//   8     ss = S >> s, an AND per shift and bit;
//   9     a step per leading pair P and output bit: the bit of ss (or the pair's) with the pair not
//         zero and every bit above it zero; a step for the cap.
Bits rmsnorm_scale(Gates g, const NormScaleOperands& x, const Enable& enable);

}  // namespace rvformer::circuit
