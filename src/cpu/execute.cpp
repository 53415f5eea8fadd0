// cpu/execute.cpp — the ALU, branches and jump targets.
//
// Each unit's first stage is switched on by its instruction's stored class and funct bits (the
// one-hot instruction is decoded in the same MLP), so at most one unit computes anything; the
// units' results are then added into the value payload by one writer neuron per bit, gated by
// whether the step emits a value (docs/machine-layout.md).
#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {

Forms complement(const Forms& bits) {
  Forms c;
  for (const Form& b : bits) c.push_back(Form(1.0) - b);
  return c;
}

}  // namespace

void MachineBuilder::add_execute() {
  Gates g = gates("alu");
  Forms a = forms_of(operands_.rs1);
  Forms b = forms_of(operands_.rs2);
  auto op = [&](int o) { return F(decoded_.op[o]); };
  auto first = [&](int o) { return decoded_.first_stage(o, control_.executing); };
  Forms result(32);  // every unit finishing by the quick results' stage adds its bits here
  auto add = [&](Forms& into, const Bits& bits) {
    for (std::size_t i = 0; i < bits.size(); ++i) into[i] += F(bits[i]);
  };

  add(result, circuit::add32(g.sub("add"), a, b, Form(), first(kAdd)));
  add(result, circuit::add32(g.sub("sub"), a, complement(b), Form(1.0), first(kSub)));
  // rs1 + the I immediate serves addi, jalr and every load's address: computed whatever the
  // instruction, picked by its users.
  rs1_plus_imm_ = circuit::add32(g.sub("rs1_plus_imm"), a, decoded_.imm_i, Form(), control_.active);

  // slt(u) and slt(i)(u): funct3 = 01x.
  auto set_less = [&](const std::string& name, int cls, const Forms& operand) {
    std::vector<Literal> literals = join(insn_.is_class(cls), match_bits(insn_.stored, 11, 2, 1));
    if (cls == kClassOp) literals = join(literals, match_bits(insn_.stored, 23, 7, 0));
    literals.push_back(lit(control_.executing));
    circuit::Comparison cmp = circuit::compare32(g.sub(name), a, operand, Enable(literals));
    SignalId bit = g.signal(name + ".less");
    // funct3 bit 0 (stored bit 10) picks unsigned.
    g.add_all(bit, {lit(cmp.less_signed), nlit(insn_.stored[10])});
    g.add_all(bit, {lit(cmp.less_unsigned), lit(insn_.stored[10])});
    result[0] += F(bit);
  };
  set_less("slt", kClassOp, b);
  set_less("slti", kClassOpImm, decoded_.imm_i);

  // and/or/xor with rs2 or the I immediate: one neuron (AND) or two (OR, XOR) per bit.
  auto logic = [&](const std::string& name, int and_op, int or_op, int xor_op, const Forms& operand) {
    for (int i = 0; i < 32; ++i) {
      SignalId bit = g.signal(name + "[" + std::to_string(i) + "]");
      Form both = a[i] + operand[i];
      g.add_relu(bit, both + first(and_op).on() - 2);
      g.add_step(bit, both + 2 * first(or_op).on(), 3);
      g.add_relu(bit, both + 2 * first(xor_op).on() - 2);
      g.add_relu(bit, both + 2 * first(xor_op).on() - 3, -2);
      result[i] += F(bit);
    }
  };
  logic("logic", kAnd, kOr, kXor, b);
  logic("logic_imm", kAndi, kOri, kXori, decoded_.imm_i);

  // Shifts: the amount is rs2[4:0] (OP) or the rs2 field (OP-IMM); funct3 = x01.
  {
    Gates s = g.sub("shift");
    std::vector<Literal> shift = match_bits(insn_.stored, 10, 2, 1);
    std::vector<Literal> by_register = join(join(insn_.is_class(kClassOp), shift), {lit(control_.executing)});
    std::vector<Literal> by_immediate = join(join(insn_.is_class(kClassOpImm), shift), {lit(control_.executing)});
    std::vector<SignalId> amount_register = circuit::decode_one_hot(s, "register", slice(operands_.rs2, 0, 5), Enable(by_register).on());
    std::vector<SignalId> amount_immediate = circuit::decode_one_hot(s, "immediate", insn_.rs2(), Enable(by_immediate).on());
    Forms amount;
    for (int k = 0; k < 32; ++k) amount.push_back(F(amount_register[k]) + F(amount_immediate[k]));
    SignalId left = s.signal("left"), logical = s.signal("logical"), arithmetic = s.signal("arithmetic");
    for (auto [kind, reg, imm] : {std::tuple{left, kSll, kSlli}, {logical, kSrl, kSrli}, {arithmetic, kSra, kSrai}}) {
      s.add_relu(kind, op(reg));
      s.add_relu(kind, op(imm));
    }
    using circuit::ShiftKind;
    add(result, circuit::shift32(s.sub("sll"), operands_.rs1, amount, ShiftKind::kLeft, left));
    add(result, circuit::shift32(s.sub("srl"), operands_.rs1, amount, ShiftKind::kRightLogical, logical));
    add(result, circuit::shift32(s.sub("sra"), operands_.rs1, amount, ShiftKind::kRightArithmetic, arithmetic));
  }

  // auipc: pc + imm_u; the low 12 bits are the pc's, the top 20 a 20-bit sum.
  {
    Forms pc_address(32);
    for (int i = 0; i <= word_bits_; ++i) pc_address[i + 2] = F(control_.pc[i]);
    pc_address[20] += Form(1.0);
    Enable auipc(join(insn_.is_class(kClassAuipc), {lit(control_.executing)}));
    Gates u = g.sub("auipc");
    for (int i = 2; i < 12; ++i)
      if (!pc_address[i].terms().empty()) result[i] += F(u.all("low" + std::to_string(i), auipc.literals(), pc_address[i]));
    Bits top = circuit::narrow_sum(u, "top", 20, Forms(pc_address.begin() + 12, pc_address.end()),
                                   Forms(decoded_.imm_u.begin() + 12, decoded_.imm_u.end()), auipc.on());
    for (int i = 0; i < 20; ++i) result[12 + i] += F(top[i]);
  }

  // The quick results join the value payload.
  Gates w = gates("alu.result");
  SignalId rd_nonzero = w.any("rd_nonzero", circuit::sum_of(insn_.rd()));
  Form late_op;
  for (int o = kLb; o < kOpCount; ++o)
    if (o != kSb && o != kSh && o != kSw && o != kFence && decodes(o)) late_op += op(o);
  late_op += op(kAuipc);
  value_step_ = w.all("value_step", {lit(rd_nonzero), lit(control_.executing)}, late_op);
  write_result(result, "alu");
  write_result(forms_of(rs1_plus_imm_), "alu.addi", {lit(decoded_.op[kAddi])});

  // Jump targets. jal and branches: S = 0x40000 + pc + imm[21:2], a 20-bit sum in code words
  // whose byte address is 4·S + imm[1] (every such target lies below 4 MB); jalr: (rs1 + imm) & ~1.
  auto relative = [&](const std::string& name, const Forms& imm, int cls) {
    Forms words(20), offset(20);
    for (int i = 0; i <= word_bits_; ++i) words[i] = F(control_.pc[i]);
    words[18] += Form(1.0);
    for (int i = 0; i < 20; ++i) offset[i] = imm[i + 2];
    return circuit::narrow_sum(g, name, 20, words, offset, Enable(join(insn_.is_class(cls), {lit(control_.active)})).on());
  };
  Bits jal = relative("jal_target", decoded_.imm_j, kClassJal);
  Bits branch = relative("branch_target", decoded_.imm_b, kClassBranch);
  const Bits& jalr = rs1_plus_imm_;
  circuit::Comparison cmp = circuit::compare32(g.sub("branch"), a, b,
                                               Enable(join(insn_.is_class(kClassBranch), {lit(control_.active)})));
  SignalId taken = g.signal("branch_taken");
  g.add_all(taken, {lit(cmp.equal)}, op(kBeq));
  g.add_all(taken, {nlit(cmp.equal)}, op(kBne));
  g.add_all(taken, {lit(cmp.less_signed)}, op(kBlt));
  g.add_all(taken, {nlit(cmp.less_signed)}, op(kBge));
  g.add_all(taken, {lit(cmp.less_unsigned)}, op(kBltu));
  g.add_all(taken, {nlit(cmp.less_unsigned)}, op(kBgeu));
  // Trap causes per kind of jump, each as early as its inputs allow: a target is misaligned when
  // its bit 1 is set (an immediate bit for jal and branches), outside the ROM when its bits above
  // the ROM's differ from 0x100000's; a branch's count only when it is taken.
  Gates t = g.sub("target");
  auto rom_pattern = [&](const Bits& bits, int low) {  // the bits from `low` (byte address bit 2 + ...)
    return match_bits(bits, low, 20 - word_bits_, (1u << 18) >> word_bits_);
  };
  auto outside = [&](const std::string& name, const std::vector<Literal>& when, const std::vector<Literal>& inside) {
    SignalId out = t.signal(name);
    t.add_all(out, when);
    t.add_all(out, join(when, inside), Form(), -1);
    return out;
  };
  std::vector<Literal> is_jal = join(insn_.is_class(kClassJal), {lit(control_.active)});
  std::vector<Literal> is_branch = join(insn_.is_class(kClassBranch), {lit(control_.active)});
  std::vector<Literal> is_jalr = join(insn_.is_class(kClassJalr), {lit(control_.active)});
  SignalId jal_misaligned = t.all("jal_misaligned", join(is_jal, {lit(insn_.word(21))}));
  SignalId branch_misaligned_if_taken = t.all("branch_misaligned", join(is_branch, {lit(insn_.word(8))}));
  SignalId jalr_misaligned = t.all("jalr_misaligned", join(is_jalr, {lit(jalr[1])}));
  SignalId jal_outside = outside("jal_outside", join(is_jal, {nlit(insn_.word(21))}), rom_pattern(jal, word_bits_));
  SignalId branch_outside_if_taken = outside("branch_outside", join(is_branch, {nlit(insn_.word(8))}), rom_pattern(branch, word_bits_));
  // jalr: address bits 2.. of (rs1 + imm); bits 22.. must be 0 as well.
  std::vector<Literal> jalr_inside = join(match_bits(jalr, word_bits_ + 2, 20 - (word_bits_ + 2), 0), match_bits(jalr, 20, 12, 1));
  SignalId jalr_outside = outside("jalr_outside", join(is_jalr, {nlit(jalr[1])}), jalr_inside);
  target_misaligned_ = t.signal("misaligned");
  t.add_relu(target_misaligned_, F(jal_misaligned) + F(jalr_misaligned));
  t.add_all(target_misaligned_, {lit(branch_misaligned_if_taken), lit(taken)});
  target_outside_ = t.signal("outside");
  t.add_relu(target_outside_, F(jal_outside) + F(jalr_outside));
  t.add_all(target_outside_, {lit(branch_outside_if_taken), lit(taken)});

  // The target's code word (the JUMP family's payload) and its byte address (for trap reports).
  jump_taken_ = g.signal("jump_taken");
  g.add_relu(jump_taken_, op(kJal) + op(kJalr));
  g.add_relu(jump_taken_, F(taken));
  target_.clear();
  for (int i = 0; i < word_bits_; ++i) {
    SignalId bit = t.signal("word[" + std::to_string(i) + "]");
    t.add_all(bit, join(is_jal, {lit(jal[i])}));
    t.add_all(bit, {lit(taken), lit(branch[i])});
    t.add_all(bit, join(is_jalr, {lit(jalr[i + 2])}));
    target_.push_back(bit);
  }
  // A branch's address is only live when it is taken, so that the address a trap report gives is
  // that of the jump that happened. jal and branches: 4·S + imm[1] (below 4 MB); jalr: (rs1 + imm) & ~1.
  target_address_.clear();
  target_address_.push_back(zero_);  // targets are even
  for (int i = 1; i < 32; ++i) {
    SignalId bit = t.signal("address[" + std::to_string(i) + "]");
    if (i >= 2 && i < 22) t.add_all(bit, join(is_jal, {lit(jal[i - 2])}));
    if (i >= 2 && i < 22) t.add_all(bit, {lit(taken), lit(branch[i - 2])});
    if (i == 1) t.add_all(bit, join(is_jal, {lit(insn_.word(21))}));
    if (i == 1) t.add_all(bit, {lit(taken), lit(insn_.word(8))});
    t.add_all(bit, join(is_jalr, {lit(jalr[i])}));
    target_address_.push_back(bit);
  }
}

// The multiply-accumulate: products (mul*: funct7 = 1, funct3 = 0xx, the signedness from the
// one-hot instruction, a stage later), sums of shifted operands (sh1add..sh3add), a division's
// partial remainders and signed quotient (its rows) and the big-integer unit's dot products (its
// rows). The sum is the step's value except while a division holds it, when its pieces go out as HI
// tokens.
void MachineBuilder::add_multiplier() {
  Gates g = gates("alu");
  auto op = [&](int o) { return F(decoded_.op[o]); };
  std::vector<Literal> multiply = join(join(insn_.is_class(kClassOp), match_bits(insn_.stored, 23, 7, 1)),
                                       {nlit(insn_.stored[12]), lit(control_.executing)});
  auto with_funct3 = [&](std::uint32_t funct3) { return Enable(join(multiply, match_bits(insn_.stored, 10, 3, funct3))); };
  Enable mulh = with_funct3(1), mulhsu = with_funct3(2);
  std::vector<circuit::ExtraRow> rows = division_.rows;
  rows.insert(rows.end(), bigint_rows_.begin(), bigint_rows_.end());
  SignalId any = g.signal("mul.any");
  g.add_all(any, multiply);
  g.add_relu(any, F(division_.rows_on));
  if (bigint_dot_) g.add_relu(any, F(bigint_dot_));
  for (int k = 1; k <= 3; ++k) {
    std::vector<Literal> shift_add = decoded_.first_stage(kSh1add + k - 1, control_.executing).literals();
    g.add_all(any, shift_add);
    for (int i = 0; i < 32; ++i) {
      if (i + k < 32) rows.push_back({i + k, join(shift_add, {lit(operands_.rs1[i])})});
      rows.push_back({i, join(shift_add, {lit(operands_.rs2[i])})});
    }
  }
  Form high = op(kMulh) + op(kMulhsu) + op(kMulhu);
  if (decodes(kBzDothi)) high += op(kBzDothi);
  Bits sum = circuit::multiply_accumulate(g.sub("mul"), operands_.rs1, operands_.rs2, {mulh, mulhsu}, {mulh},
                                          high, Enable(multiply), rows, any);
  write_result(forms_of(sum), "mul", {nlit(division_.holds)});
  Gates pieces = gates("div.piece");
  for (int j = 0; j < 3; ++j)
    for (int b = 0; b < kValueBits && kValueBits * j + b < 32; ++b)
      add_result_bit(pieces, kValueBits + b, {lit(division_.emits_piece[j])}, F(sum[kValueBits * j + b]));
}

// Adds `bits` (0/1 forms, zero unless their unit computed) into the value payload when the step
// emits a value: bits 12.. only before an HI has been sent, 24.. only before a TOP (docs/trace-protocol.md).
void MachineBuilder::write_result(const Forms& bits, const std::string& unit, const std::vector<Literal>& gate) {
  Gates g = gates(unit + ".result");
  for (int i = 0; i < 32; ++i) {
    if (bits[i].terms().empty()) continue;
    std::vector<Literal> literals = join({lit(value_step_)}, gate);
    if (i >= kValueBits) literals.push_back(nlit(in_.is(TokenKind::kHi)));
    if (i >= 2 * kValueBits) literals.push_back(nlit(in_.is(TokenKind::kTop)));
    add_result_bit(g, i, literals, bits[i]);
  }
}

}  // namespace rvformer::cpu
