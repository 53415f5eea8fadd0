// circuit/vector_elementwise.h — the vector unit's elementwise operations (docs/vector-unit.md): one
// output element of story_add16, story_mul16, story_silu or a pair of story_rope
// (firmware/story/story_ops.h) from its operands' bits, as SwiGLU neurons, bit for bit. Operands
// are AM elements, 13 bits in two's complement (tables in WM are int16, 16 bits); each result is 13
// bits in two's complement, all zero with every neuron off when `enable` is off. The sums and the final shift are vector_arith.h's.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "circuit/vector_arith.h"

namespace rvformer::circuit {

// sat13(x + y). Two stages:
//   1  x + y in 14 bits (a narrow sum of the operands extended by their signs);
//   2  shift_and_saturate by 0.
Bits add16_element(Gates g, const Bits& x, const Bits& y, const Enable& enable);

// sat13(round_shift(a·b, s)) for s = 1..30 given in 5 bits: an element of vu.mul16, and of vu.row16
// (a an int8 weight, b its multiplier, s capped at 16); |a·b| ≤ 2^24, so shifts from 26 up give 0
// and need no neurons. Seven stages:
//   1    a·b + 2^(s−1) mod 2^27 as column counts (ColumnSum::add_product, a rounding row per shift);
//   2–6  the counts summed (sum_columns: three rounds of rewriting in binary, the lookahead);
//   7    shift_and_saturate.
Bits mul16_element(Gates g, const Bits& a, const Bits& b, const Bits& shift, const Enable& enable);

// story_silu of h with the table Y (its 65 values, STORY_SILU, each in 13 bits): with
// o = h + 4096, j = o >> 7 and r = o & 127, Y[j] + round_shift((Y[j+1] − Y[j])·r, 7), which lies
// between Y[j] and Y[j+1] and so needs no saturation. Five stages:
//   1    q = 128·Y[j] + 64 + (Y[j+1] − Y[j])·r mod 2^20 as column counts: a segment j is an AND of h's
//        bits 7–12 (the sign complemented), and q is one choice among the segments' 128·Y[j] + 64,
//        plus one per pair of r's bits among the segments' multiples of the pair's values
//        (ColumnSum::add_one_of): at most five in a column;
//   2–5  the counts summed (sum_columns: two rounds, the lookahead); the result is q's bits 7–19.
Bits silu_element(Gates g, const Bits& h, std::span<const int> table, const Enable& enable);

// sat13(round_shift(x·table[entry], shifts[field])): x in two's complement (2..16 bits), the entry
// spelled by its bits (below the table's size, at most 256 values of 16 bits), and the shift, 1..40,
// chosen by a small field (shifts[v] for the field's value v; shifts has 2^|field| values at most).
// Seven stages:
//   1    x·table[entry] + 2^(shift−1) as column counts: for each bit of x one choice among the
//        entries (ColumnSum::add_one_of, the entry spelled by its literals), the rounding a row per
//        field value;
//   2–6  the counts summed (sum_columns: three rounds, the lookahead);
//   7    shift_and_saturate by the field's shift.
Bits table_product_element(Gates g, const Bits& x, const Bits& entry, const Bits& field, std::span<const int> table,
                           std::span<const int> shifts, const Enable& enable);

// story_rmsnorm_element of x (13 bits) with the scale a first pass gives (story_rmsnorm_scale): the
// table entry (8 bits, below the table's size) and e/2 (4 bits, 0..14), as the one 12-bit token that
// pass emits: sat13(round_shift(x·R[entry], 21 − e/2)) with R the inverse roots (STORY_RSQRT, 16
// bits). table_product_element's seven stages.
Bits rmsnorm_element(Gates g, const Bits& x, const Bits& entry, const Bits& half_e, std::span<const int> table,
                     const Enable& enable);

// The operands of one pair of story_rope: the elements a = x[2j], b = x[2j+1] and the table entries
// cos[j], sin[j] (Q14).
struct RopeOperands {
  Bits a, b, cos, sin;
};

// x'[2j] = sat13(round_shift(a·cos − b·sin, 14)) and x'[2j+1] = sat13(round_shift(a·sin + b·cos, 14)),
// side by side in seven stages:
//   1    a·cos + b·¬sin + b + 2^13 (−b·sin = b·¬sin + b, ¬sin = −sin − 1) and a·sin + b·cos + 2^13,
//        mod 2^30, as column counts;
//   2–6  the counts summed (sum_columns: three rounds, the lookahead);
//   7    shift_and_saturate by 14.
std::array<Bits, 2> rope_pair(Gates g, const RopeOperands& x, const Enable& enable);

}  // namespace rvformer::circuit
