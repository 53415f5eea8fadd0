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
// is Σ_t [Σ_{j<i} 2^j (a_j + b_j) ≥ t·2^i] over t = 1..max_carry. Digits of a or b may exceed 1
// (a carry in joined to bit 0, several operands summed into one form) as long as no carry exceeds
// max_carry. Adds into `out` when `condition` holds (a 0/1 form; empty: always).
void add_narrow_sum(Gates& g, const Bits& out, const Forms& a, const Forms& b, const Form& condition = Form(),
                    int max_carry = 1);
Bits narrow_sum(Gates& g, const std::string& name, int width, const Forms& a, const Forms& b,
                const Form& condition = Form(), int max_carry = 1);

// (a + b) mod 2^width (16 < width ≤ 38) in two stages: a narrow sum of the low 16 bits and its
// carry out c, the high bits once for every possible c, then c picks. No carry may exceed
// max_carry, even with any carry in up to max_carry at bit 16 (true when no digit exceeds
// max_carry + 1).
Bits carry_select_sum(Gates g, int width, const Forms& a, const Forms& b, int max_carry, const Enable& enable);

// (a + b + carry_in) mod 2^32 in two stages (carry-select on 16-bit halves).
Bits add32(Gates g, const Forms& a, const Forms& b, const Form& carry_in, const Enable& enable);

struct Comparison {
  SignalId equal, less_signed, less_unsigned;
};
// a vs b (32 bits) in two stages: exact differences of the halves, then their combination.
Comparison compare32(Gates g, const Forms& a, const Forms& b, const Enable& enable);

// The one-hot of a little-endian field (one AND neuron per value) under `condition`.
std::vector<SignalId> decode_one_hot(Gates& g, const std::string& name, const Bits& field,
                                     const Form& condition = Form());

enum class ShiftKind { kLeft, kRightLogical, kRightArithmetic };
// value shifted by the amount given one-hot over 0..31 (forms), in one stage.
Bits shift32(Gates g, const Bits& value, const Forms& amount_one_hot, ShiftKind kind, const Enable& enable);

// The 64-bit product a·b of two 32-bit operands, each read as signed when one of its enables holds
// (they exclude each other, and each implies `enable`), and its low or high 32 bits as the result
// (high when `high` is 1). Six stages: partial products counted per column, three rounds of column
// counts rewritten in binary, then a carry-lookahead add. The first stage takes literals only.
Bits multiply32(Gates g, const Bits& a, const Bits& b, const std::vector<Enable>& a_signed,
                const std::vector<Enable>& b_signed, const Form& high, const Enable& enable);

// Σ_n 2^n·columns[n] mod 2^width in binary, column n a non-negative integer form at most max[n]
// (at most 64 columns): counts over 127 first carry their eights, rounds of rewriting in binary
// bring every digit to at most 2, then a carry-lookahead adds them; a stage each, two for the last.
Bits sum_columns(Gates g, const std::vector<Form>& columns, const std::vector<int>& max, int width);

// One more term of a multiply-accumulate: 1 at `column` when every literal holds.
struct ExtraRow {
  int column;
  std::vector<Literal> literals;
  bool later = false;  // its literals come later than the operands': counted apart, a layer later
};
// multiply32 with further terms added into the sum (for a·b + c, or a sum without the product:
// `product` switches the partial products on, `any` (a bit, 1 whenever `product` holds or a row
// may be non-zero) the output); the rows land in the low 32 bits.
Bits multiply_accumulate(Gates g, const Bits& a, const Bits& b, const std::vector<Enable>& a_signed,
                         const std::vector<Enable>& b_signed, const Form& high, const Enable& product,
                         const std::vector<ExtraRow>& rows, SignalId any);

}  // namespace rvformer::circuit
