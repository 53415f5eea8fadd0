// cpu/divide.cpp — division and remainder: one pass for most, a long division for the rest.
//
// The quotient is found radix 8, highest digit first, as truncating division does it on the
// operands' magnitudes. A digit pass compares the partial remainder's magnitude |T| with m·|D|·8^p
// for every position p < 11 and digit m < 8 at once (each comparison exact on linear forms of
// the bits, below), and so finds the highest non-zero digit: m at p. Unless that finishes the
// division, the pass emits DIV(p, m, s), s the quotient's sign. The next three passes compute the
// new partial remainder T − q·D·8^p (q = ±m) on the multiplier, from the DIV token's operand −q·8^p
// and T (the dividend N at first), and emit its pieces as HI tokens, which banks keep for the
// next digit pass; a digit at position 0 ends the digits, and the passes after it emit the result:
// the last partial remainder (the remainder, with the dividend's sign) or the quotient Σ q·8^p
// from the digits' banks, each an output of the multiplier. T ≡ N (mod 8^p) keeps the signs of
// both right without ever negating them (docs/trace-protocol.md).
//
// The first pass finishes a division by zero, INT_MIN / −1, a quotient of 0 and a non-negative
// quotient below 8 itself: the values are there or take no multiplication.
#include <cmath>

#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {

constexpr double kOff = 4194304;  // 2^22: beyond every comparison's |H| and |L|, and with them below 2^24 (exact)

// x, or −x (mod 2^32) when the literals of `negate` hold, as bits that are 0 unless the literals of
// `gate` hold, in one stage: a negated x's bit i flips when a lower bit is set, x_i XOR [L ≥ 1] =
// OR − AND = [x_i + L ≥ 1] − [i·x_i + L ≥ i + 1] (L = Σ_{j<i} x_j). With negate = "signed and bit 31", |x|.
Bits negated(Gates g, const Bits& x, const std::vector<Literal>& negate, const Enable& gate) {
  Form negating = Enable(gate.with(negate)).on();
  Bits out;
  Form lower;
  for (int i = 0; i < 32; ++i) {
    SignalId bit = g.signal(indexed("bit", i));
    // Not negated: some literal of `negate` fails, the first one at j.
    for (std::size_t j = 0; j < negate.size(); ++j) {
      std::vector<Literal> literals(negate.begin(), negate.begin() + static_cast<long>(j));
      literals.push_back(~negate[j]);
      g.add_all(bit, gate.with(join(literals, {lit(x[i])})));
    }
    Form push = (negating - 1) * (i + 1);
    g.add_step(bit, F(x[i]) + lower + push, 1);
    if (i > 0) g.add_step(bit, i * F(x[i]) + lower + push, i + 1, -1);
    lower += F(x[i]);
    out.push_back(bit);
  }
  return out;
}

// [x ≥ m·8^p·y] for unsigned 32-bit x and y (0/1 forms) and 1 ≤ m ≤ 7, 0 when `off` is 1. With
// x − m·8^p·y = H·2^16 + L, L the terms of weight below 2^16 (so −m·2^16 < L < 2^16), it holds
// exactly when H ≥ u = ⌈−L/2^16⌉ ∈ [0, m]: a sum of m steps of L, then a threshold of H − u. A
// term of y of weight 2^32 or more enters H with weight 2^16 only: with it alone H < 0 (x < 2^32),
// as it should be, and |H| stays below 2^21.5.
SignalId at_least_multiple(Gates& g, const std::string& name, const Forms& x, const Forms& y, int m, int p,
                           const Form& off) {
  Form high, low;
  for (int i = 0; i < 32; ++i) {
    (i < 16 ? low : high) += x[i] * std::ldexp(1.0, i < 16 ? i : i - 16);
    int k = i + 3 * p;
    if (k < 16) low -= y[i] * (m * std::ldexp(1.0, k));
    else high -= y[i] * (k < 32 ? m * std::ldexp(1.0, k - 16) : 65536.0);
  }
  SignalId u = g.signal(name + ".carry", 0, m);
  for (int v = 0; v < m; ++v) g.add_step(u, -low - off * kOff, v * 65536.0 + 1);  // [L < −v·2^16]
  return g.at_least(name, high - F(u) - off * kOff, 0);
}

}  // namespace

void MachineBuilder::add_divide() {
  Gates g = gates("div");
  Division& division = division_;
  auto is = [&](TokenKind kind) { return F(in_.is(kind)); };
  // div (funct3 100), divu (101), rem (110), remu (111), with funct7 = 1.
  std::vector<Literal> dividing = join(join(insn_.is_class(kClassOp), match_bits(insn_.stored, 23, 7, 1)),
                                       {lit(insn_.stored[12]), lit(control_.executing)});
  Literal is_signed = nlit(insn_.stored[10]);
  SignalId remainder_op = insn_.stored[11];
  const Bits& n = operands_.rs1;
  const Bits& d = operands_.rs2;

  // The last DIV token: its position (one-hot), sign and operand −q·8^p.
  std::vector<SignalId> last_position;
  Bits last_addend;
  SignalId last_sign = c_.add_read_signal("div.last_sign");
  {
    TokenRegister last{.name = "div.last", .beta = is(TokenKind::kDiv), .lanes = {}, .read = {}};
    auto lane = [&](SignalId input, SignalId read) {
      last.lanes.push_back(F(input));
      last.read.push_back(read);
    };
    for (int p = 0; p < kDivisionPositions; ++p) {
      last_position.push_back(c_.add_read_signal(indexed("div.last_position", p)));
      lane(in_.div_position[p], last_position.back());
    }
    lane(in_.div_sign, last_sign);
    for (int i = 0; i < 32; ++i) {
      last_addend.push_back(c_.add_read_signal(indexed("div.last_addend", i)));
      lane(in_.div_addend[i], last_addend.back());
    }
    add_token_register(std::move(last));
  }
  // Where the step stands: no DIV yet (the first pass), HI piece j of a partial remainder after
  // a DIV at p ≥ 1, a digit pass after its three pieces, or the result after a DIV at 0. The
  // partial remainders alternate between two sets of banks: hop k (the k-th DIV) writes set
  // (k − 1) mod 2, and reads the previous one from set k mod 2.
  Gates st = g.sub("stage");
  const std::vector<SignalId>& hops = control_.div_hops;
  SignalId first = hops[0];
  Form last_high;
  for (int p = 1; p < kDivisionPositions; ++p) last_high += F(last_position[p]);
  Form odd, even;
  for (std::size_t k = 1; k < hops.size(); ++k) (k % 2 ? odd : even) += F(hops[k]);
  SignalId hops_odd = st.relu("hops_odd", odd, 1), hops_even = st.relu("hops_even", even, 1);
  std::array<SignalId, 3> piece_stage{};
  for (int j = 0; j < 3; ++j)
    piece_stage[j] = st.all(indexed("piece", j), {nlit(first), lit(control_.hi_position[j])}, last_high);
  SignalId again = st.all("again", {nlit(first), lit(control_.hi_position[3])}, last_high);

  // The partial remainder's pieces, as the HI tokens after a DIV at p ≥ 1 bring them: row s of a
  // bank holds set s, pieces 0 and 1 in the halves of one bank, piece 2 in another. A digit pass
  // reads the latest set, the others the previous one.
  SignalId read_set = st.signal("read_set");
  st.add_all(read_set, {lit(again), lit(hops_even)});
  st.add_all(read_set, {nlit(again), lit(hops_odd)});
  Bits remainder;
  for (int bank_index = 0; bank_index < 2; ++bank_index) {
    circuit::Bank bank{indexed("div.remainder", bank_index), 2};
    bank.has_write = bank.has_read = true;
    bank.write.row.binary = {hops_even};
    bank.read.row.binary = {read_set};
    for (int h = 0; h < circuit::kBankHalves && 2 * bank_index + h < 3; ++h) {
      int j = 2 * bank_index + h;
      bank.write.beta[h] = F(st.all(indexed("write", j), {lit(in_.is(TokenKind::kHi)), nlit(first), lit(control_.hi_position[j + 1])},
                                    last_high));
      for (int b = 0; b < kValueBits && kValueBits * j + b < 32; ++b) {
        remainder.push_back(c_.add_read_signal(indexed("div.remainder", kValueBits * j + b)));
        bank.write.lanes[h].push_back(F(in_.hi[b]));
        bank.read.lanes[h].push_back({{remainder.back(), 1}});
      }
    }
    c_.add_bank(std::move(bank));
  }

  // A digit pass: |T| (T = N in the first pass, else the latest set) against m·|D|·8^p.
  SignalId digit_stage = st.signal("digit");
  st.add_all(digit_stage, join(dividing, {lit(first)}));
  st.add_all(digit_stage, join(dividing, {lit(again)}));
  Bits abs_n = negated(g.sub("abs_n"), n, {is_signed, lit(n[31])}, Enable(join(dividing, {lit(first)})));
  Bits abs_t = negated(g.sub("abs_t"), remainder, {is_signed, lit(remainder[31])}, Enable(join(dividing, {lit(again)})));
  Bits abs_d = negated(g.sub("abs_d"), d, {is_signed, lit(d[31])}, Enable(dividing));
  Forms x = forms_of(abs_n);
  for (int i = 0; i < 32; ++i) x[i] += F(abs_t[i]);
  Form off = Form(1.0) - F(digit_stage);
  // at_least[p][m] = [|T| ≥ m·|D|·8^p], m = 1..7; at_least[p][8] = at_least[p + 1][1].
  std::vector<std::array<SignalId, 9>> at_least(kDivisionPositions + 1);
  Gates cmp = g.sub("compare");
  for (int p = 0; p < kDivisionPositions; ++p)
    for (int m = 1; m <= 7; ++m)
      at_least[p][m] = at_least_multiple(cmp, "ge" + std::to_string(p) + "x" + std::to_string(m), x, forms_of(abs_d), m, p, off);
  for (int p = 0; p < kDivisionPositions; ++p) at_least[p][8] = p + 1 < kDivisionPositions ? at_least[p + 1][1] : zero_;
  // The highest non-zero digit is m at p when [m at p] and not [m + 1 at p] (8 at p is 1 at p + 1);
  // with none (|T| < |D|), the digits are done: DIV(0, 0, s).
  auto digit_is = [&](int p, int m) {
    std::vector<Literal> literals{lit(at_least[p][m]), nlit(at_least[p][m + 1])};
    if (m < 7) literals.push_back(nlit(at_least[p][8]));
    return literals;
  };
  SignalId sign = g.signal("quotient_sign");  // (the quotient's, for a signed division)
  g.add_all(sign, {is_signed, lit(n[31]), nlit(d[31])});
  g.add_all(sign, {is_signed, nlit(n[31]), lit(d[31])});

  // What the first pass finishes.
  std::vector<Literal> first_pass = join(dividing, {lit(first)});
  SignalId by_zero = g.all("by_zero", join(first_pass, match_bits(d, 0, 32, 0)));
  SignalId overflow = g.all("overflow", join(join(join(first_pass, {is_signed}), match_bits(n, 0, 32, 0x80000000u)),
                                             match_bits(d, 0, 32, 0xFFFFFFFFu)));
  std::vector<Literal> below_divisor = join(first_pass, {nlit(at_least[0][1])});
  std::vector<Literal> small = join(first_pass, {nlit(sign), nlit(remainder_op)});
  SignalId finished = g.signal("finished");
  g.add_relu(finished, F(by_zero) + F(overflow));
  g.add_all(finished, below_divisor);
  for (int m = 1; m <= 7; ++m) g.add_all(finished, join(small, digit_is(0, m)));
  Forms result(32);
  for (int i = 0; i < 32; ++i) {
    SignalId bit = g.signal(indexed("result", i));
    g.add_all(bit, {lit(by_zero), nlit(remainder_op)});
    g.add_all(bit, {lit(by_zero), lit(remainder_op), lit(n[i])});
    if (i == 31) g.add_all(bit, {lit(overflow), nlit(remainder_op)});
    g.add_all(bit, join(below_divisor, {lit(remainder_op), lit(n[i])}));
    if (i < kDigitBits)
      for (int m = 1; m <= 7; ++m)
        if ((m >> i) & 1) g.add_all(bit, join(small, digit_is(0, m)));
    result[i] = F(bit);
  }
  write_result(result, "div");

  // Otherwise the pass emits DIV(p, m, s): m in r[2:0], s in r[3], p in r[7:4].
  std::vector<Literal> emits = {lit(value_step_), lit(digit_stage), nlit(finished)};
  division.emits_digit = g.all("emits_digit", emits);
  Gates out = g.sub("digit");
  for (int p = 0; p < kDivisionPositions; ++p)
    for (int m = 1; m <= 7; ++m)
      for (int k = 0; k < kDigitBits; ++k)
        if ((m >> k) & 1) add_result_bit(out, k, join(emits, digit_is(p, m)));
  add_result_bit(out, 3, join(emits, {lit(sign)}));
  for (int p = 1; p < kDivisionPositions; ++p)
    for (int b = 0; b < 4; ++b)
      if ((p >> b) & 1) add_result_bit(out, 4 + b, join(emits, {lit(at_least[p][1]), nlit(at_least[p][8])}));

  // After a DIV, the multiplier computes the partial remainder T + (−q·8^p)·D (T = N after the
  // first DIV, else the previous set): the step's value after a DIV at 0 for a remainder.
  std::vector<Literal> started = join(dividing, {nlit(first)});
  division.rows_on = g.all("rows_on", started);
  division.holds = g.signal("holds");
  g.add_all(division.holds, started, last_high);
  g.add_all(division.holds, join(started, {lit(last_position[0]), nlit(remainder_op)}));
  std::vector<circuit::ExtraRow>& rows = division.rows;
  for (int i = 0; i < 32; ++i) {
    rows.push_back({i, join(started, {lit(hops[1]), lit(n[i])})});
    rows.push_back({i, join(started, {nlit(hops[1]), lit(remainder[i])})});
    for (int j = 0; i + j < 32; ++j) rows.push_back({i + j, join(started, {lit(last_addend[i]), lit(d[j])})});
  }
  // And for a quotient, Σ q·8^p: the digits of every position, from banks cleared when a step
  // completes, negated for a negative quotient.
  Bits quotient_digits;  // bit 3p + k: bit k of the digit at position p
  for (int pair = 0; 2 * pair < kDivisionPositions; ++pair) {
    circuit::Bank bank = single_row_bank(indexed("div.digits", pair));
    for (int h = 0; h < circuit::kBankHalves && 2 * pair + h < kDivisionPositions; ++h) {
      int p = 2 * pair + h;
      bank.write.beta[h] = F(in_.div_position[p]) + in_.completes();
      for (int k = 0; k < kDigitBits; ++k) {
        quotient_digits.push_back(c_.add_read_signal(indexed("div.digit", 3 * p + k)));
        bank.write.lanes[h].push_back(F(in_.div_digit[k]));
        bank.read.lanes[h].push_back({{quotient_digits.back(), 1}});
      }
    }
    c_.add_bank(std::move(bank));
  }
  write_result(forms_of(negated(g.sub("quotient"), quotient_digits, {lit(last_sign)},
                       Enable(join(started, {lit(last_position[0]), nlit(remainder_op)})))),
               "div.quotient");
  for (int j = 0; j < 3; ++j)
    division.emits_piece[j] = g.all(indexed("emits_piece", j), join(join(dividing, {lit(value_step_)}), {lit(piece_stage[j])}));
}

}  // namespace rvformer::cpu
