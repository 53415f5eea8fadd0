// circuit/arith.h — exact integer arithmetic on bit vectors, as SwiGLU neurons.
//
// Operands are little-endian vectors of 0/1 forms (a bit signal, or a sum of bit signals of which
// at most one is 1, or a constant). Results are new bit signals. A unit with an `enable` bit gives
// all-zero results (and, where noted, all-zero intermediates) when enable is 0, so a sparse
// executor skips it for other instructions. Stage counts are MLP layers on the longest path;
// every threshold below is on an exact integer under 2^23 (docs/circuit-encoding.md).
#pragma once

#include <string>
#include <vector>

#include "circuit/gates.h"

namespace rvformer::circuit {

using Forms = std::vector<Form>;

Forms forms_of(const Bits& bits);

// (a + b) mod 2^width in ONE stage, when every partial sum stays below 2^23 (width ≤ 22): carry i
// is the threshold [Σ_{j<i} 2^j (a_j + b_j) ≥ 2^i]. Digits of a or b may exceed 1 (a carry in
// joined to bit 0) as long as the true sum fits. Adds into `out` when `condition` holds (a 0/1
// form; empty: always).
void add_narrow_sum(Gates& g, const Bits& out, const Forms& a, const Forms& b, const Form& condition = Form());
Bits narrow_sum(Gates& g, const std::string& name, int width, const Forms& a, const Forms& b,
                const Form& condition = Form());

// (a + b + carry_in) mod 2^32 in two stages (carry-select on 16-bit halves).
Bits add32(Gates g, const Forms& a, const Forms& b, const Form& carry_in, SignalId enable);

struct Comparison {
  SignalId equal, less_signed, less_unsigned;
};
// a vs b (32 bits) in two stages: exact differences of the halves, then their combination.
Comparison compare32(Gates g, const Forms& a, const Forms& b, SignalId enable);

// The one-hot of a little-endian field (one AND neuron per value) under `condition`.
std::vector<SignalId> decode_one_hot(Gates& g, const std::string& name, const Bits& field,
                                     const Form& condition = Form());

enum class ShiftKind { kLeft, kRightLogical, kRightArithmetic };
// value shifted by the amount given one-hot over 0..31 (forms), in one stage.
Bits shift32(Gates g, const Bits& value, const Forms& amount_one_hot, ShiftKind kind, SignalId enable);

// The 64-bit product a·b of two 32-bit operands, each read as signed when its form is 1, and its
// low or high 32 bits as the result (high when `high` is 1). Six stages: partial products counted
// per column, three rounds of column counts rewritten in binary, then a carry-lookahead add.
Bits multiply32(Gates g, const Bits& a, const Bits& b, const Form& a_signed, const Form& b_signed,
                const Form& high, SignalId enable);

}  // namespace rvformer::circuit
