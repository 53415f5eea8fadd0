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
  Bits partial;                // the squares of elements read in earlier passes, summed, unsigned, at most 39 bits
};

// story_rmsnorm_scale as its one 12-bit token: bits 0–7 the table entry (0..191), bits 8–11 e/2
// (0..14). With S = eps_term·2^s + Σ x_i² (+ partial) and ss = floor(S / 2^s), the entry and e/2 come from the
// leading pair of ss's bits: for ss in [2^2P, 2^(2P+2)) (P = 0..14), e/2 = 14 − P and the entry is
// the eight bits of ss from 2P − 6 up, less 64; ss = 0 reads as 1, and ss ≥ 2^30 as the cap 2^30
// (the last entry, e/2 = 0). All zero, with every neuron off, when `enable` is off. Eight stages for
// 64 elements of 13 bits:
//   1     S as column counts: each square's bit products (x_b·x_c for b < c once, at twice the
//         weight; the sign bit's products complemented, as in ColumnSum::add_product) and, a choice
//         per bit among the shifts, eps_term·2^s;
//   2–7   the counts summed (sum_columns);
//   8     a step per shift s, leading pair P and output bit: the bit of ss = S >> s (or the pair's)
//         with s the one given, the pair not zero and every bit above it zero; a step per shift for
//         the cap. Reading ss off S for every s costs neurons (a copy per shift) but saves the stage
//         that would shift S first, which the vector machine's depth needs.
Bits rmsnorm_scale(Gates g, const NormScaleOperands& x, const Enable& enable);

// rmsnorm_scale's two parts, for a scale whose elements come in several passes: S = eps_term·2^s +
// Σ x_i² + partial in binary (stages 1–7), and the scale's token from S (stage 8).
Bits norm_square_sum(Gates g, const NormScaleOperands& x, const Enable& enable);
Bits norm_scale_of_sum(Gates g, const Bits& sum, const std::vector<SignalId>& log2_length, const Enable& enable);

// vu.argmax (story_argmax16) over a vector read a line of L elements a pass, in two halves of
// passes, each emitting one 13-bit token: the running maximum m, from −4096, m = max(m, the line's
// largest); then, with m the vector's maximum, the first index where it occurs, as the token
// `found·2^12 + index` (12 bits of index), kept once found.
struct ArgmaxLine {
  std::vector<Bits> values;    // the line's elements, 13 bits in two's complement each
  std::vector<SignalId> count;  // one-hot: count[c − 1] is 1 when the first c elements are the vector's
};

// max(previous, the line's valid elements) as 13 bits (previous is 13 bits in two's complement).
// Two stages: a step per pair of candidates, [x_a ≥ x_b], an invalid element always losing; then a
// step per candidate and output bit that holds when the candidate beats every other (ties to the
// earlier one, `previous` first) and has the bit.
Bits running_maximum(Gates g, const ArgmaxLine& line, const Bits& previous, const Enable& enable);

// The first-index token after this line: `found_so_far` (13 bits: the flag, then the index) when
// its flag is set, else, when a valid element of the line equals `maximum`, the flag and
// line_number·L + the first such element's position (L a power of two, line_number its bits); else
// zero. Two stages: [x_a = maximum] per element (three neurons), then a step per element and output
// bit that holds when the element is the line's first match; the earlier token is copied by ANDs.
Bits first_index_of(Gates g, const ArgmaxLine& line, const Bits& maximum, const Bits& found_so_far,
                    const Bits& line_number, const Enable& enable);

}  // namespace rvformer::circuit
