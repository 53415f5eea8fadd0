// circuit/vector_arith.h — exact arithmetic of the vector unit's operations (docs/vector-unit.md):
// one output element of a function of firmware/story/story_ops.h from its operands' bits, as
// SwiGLU neurons, bit for bit.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "circuit/arith.h"

namespace rvformer::circuit {

// A sum of bit products Σ 2^e·AND(literals) mod 2^width, built row by row and summed as column
// counts: one stage of counts, then sum_columns. Signed terms enter modulo 2^width: −2^e·a is
// (2^width − 2^e)·a, one row with a bit at every column from e up (add_multiple); a negative
// product of several literals is best rewritten first, e.g. −2^e·(a∧b) = 2^e·(a∧¬b) − 2^e·a. A row
// is one neuron that adds 1 to each of its columns' counts.
class ColumnSum {
 public:
  explicit ColumnSum(int width) : width_(width) {}
  // 2^exponent · AND(literals); nothing from columns at or above the width.
  void add(int exponent, std::vector<Literal> literals);
  // value · AND(literals) mod 2^width, for any integer value (a constant with no literals).
  void add_multiple(std::int64_t value, const std::vector<Literal>& literals);
  // Σ_k value_k·AND(literals_k) mod 2^width where at most one AND holds (literal sets that exclude
  // each other): a neuron per choice, together at most 1 in each column's count.
  struct Choice {
    std::int64_t value;
    std::vector<Literal> literals;
  };
  void add_one_of(const std::vector<Choice>& choices);
  // 2^exponent·a for a two's complement a given by literals (a negated literal for a complemented
  // bit): the top bit weighs −2^(n−1).
  void add_signed(const std::vector<Literal>& a, int exponent = 0);
  // 2^exponent·a·b for two's complement a and b given by literals (Baugh–Wooley): the products of
  // bits of like sign as they are; a top bit t times a lower bit x of the other operand, weighing
  // −2^e, as 2^e·(t∧¬x) − 2^e·t, with the −2^e·t of every x summed into one multiple of t.
  void add_product(const std::vector<Literal>& a, const std::vector<Literal>& b, int exponent = 0);
  // The sum's `width` bits, every row ANDed with `enable`.
  Bits sum(Gates g, const Enable& enable) const;

 private:
  struct Row {
    std::uint64_t columns;  // a bit per column it adds to
    std::vector<Literal> literals;
    int group;  // rows of a group exclude each other
  };
  std::uint64_t columns_of(std::int64_t value) const;
  int width_;
  int groups_ = 0;
  std::vector<Row> rows_;
};

// `value` (an integer form, 0..largest) in binary, seven bits a stage from the top: each digit is
// the number of its steps [rest ≥ q·2^low] that hold, rest being the value less the digits above it.
// A bit collects up to 2·127 ramps of at most `largest`, so largest stays below 2^16.
Bits to_binary(Gates& g, const std::string& name, const Form& value, int largest);

// Each shift s a result may take, with the literals under which it applies (at most one holds).
using ShiftCases = std::vector<std::pair<int, std::vector<Literal>>>;

// sat13(q >> s), q being bits in two's complement (a rounding 2^(s−1) already added), as 13 bits,
// for the shift s whose literals hold; all zero when none does. One stage: an AND per shift and
// output bit, and a step per shift for saturation. Taking the literals of a binary shift field, not
// a one-hot signal, keeps one signal a shift out of the residual stream through the sum's stages.
Bits shift_and_saturate(Gates g, const Bits& q, const ShiftCases& shifts);

// The operands of one row of a requantised int8 matrix-vector product.
struct RowOperands {
  std::vector<Bits> weights;      // per column, the 8 bits of an int8 weight (two's complement)
  std::vector<Bits> activations;  // per column, the bits of a signed activation (two's complement, 2..16 bits)
  // Or per column a 13-bit activation as AM holds it, 7 lanes: lane i bits 2i and 2i + 1 as the
  // level 0, 1, 2 or 4, the last lane bit 12 alone. Read straight from AM's read-out, so that no
  // stage turns them into bits.
  std::vector<std::vector<SignalId>> activation_lanes;
  Bits multiplier;                // 8 bits: m = 0..255
  Bits shift;                     // 6 bits: s = 1..62; 0 and 63 make the result 0
};

// story_requant13 of the row's dot product, sat13(round_shift(m·Σ_j w_j·x_j, s)), as 13 bits in
// two's complement; all zero, with every neuron off, when `enable` is off. Eleven stages for 172
// columns of 13-bit activations:
//   1     plane sums U = Σ_j w_jb·g_j for every weight bit b and activation group g (bits 0–5,
//         6–11, …, then the sign bit alone): one neuron per weight bit and group (from AM's lanes,
//         one more for each lane of the group, which takes its level 4 back to 3), each sum
//         non-negative and below 2^15 for 512 columns (a sum of 13-bit values would reach 2^20, and
//         the steps that put it in binary would not add up exactly);
//   2–3   each U in binary, seven bits a stage from the top (a step neuron pair per digit value);
//   4     m·Σ ±2^(b + g's first bit)·U + 2^(s−1) as column counts of bit products (ColumnSum; a
//         negative plane, the weight's or the activation's sign, enters complemented);
//   5–10  the counts summed in binary (sum_columns: their eights carried, three rounds, lookahead);
//   11    shift_and_saturate.
// Shifts above log2 of the largest |m·Σ w·x| give 0 and need no neurons.
Bits requantised_row_product(Gates g, const RowOperands& row, const Enable& enable);

}  // namespace rvformer::circuit
