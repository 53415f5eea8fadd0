// cpu/execute.cpp — the ALU, branches and jump targets.
//
// Every unit is gated by the one-hot instruction, so exactly one unit produces a non-zero result
// and the result is their plain sum. Register-immediate instructions read no rs2 (its read is
// disabled) and register-register ones have no immediate, so "rs2 + imm" is the second operand of
// both without a multiplexer stage.
#include "circuit/arith.h"
#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {


using circuit::lit;
using circuit::nlit;

Forms sum_forms(const Bits& a, const Bits& b) {
  Forms s;
  for (std::size_t i = 0; i < a.size(); ++i) s.push_back(F(a[i]) + F(b[i]));
  return s;
}

Forms complement(const std::vector<Form>& bits) {
  Forms c;
  for (const Form& b : bits) c.push_back(Form(1.0) - b);
  return c;
}

// (a << k): k zero bits, then a, truncated to 32 bits.
Forms shifted_left(const Bits& a, int k) {
  Forms s(32);
  for (int i = k; i < 32; ++i) s[i] = F(a[i - k]);
  return s;
}

}  // namespace

void MachineBuilder::add_execute() {
  circuit::Gates g = gates("alu");
  Forms a = forms_of(rs1_value_);
  Forms operand2 = sum_forms(rs2_value_, imm_i_);  // rs2 or the I immediate
  auto op = [&](int o) { return F(op_[o]); };
  auto unit = [&](const std::string& name, const Form& ops) {
    return g.all(name + ".enable", {lit(executing_)}, ops);
  };
  // The one- and two-stage units are summed into one collected value as soon as they are done,
  // so their separate outputs do not stay in the residual stream until the pass ends.
  Forms quick(32);
  auto add_to_result = [&](const Bits& bits) {
    for (std::size_t i = 0; i < bits.size(); ++i) quick[i] += F(bits[i]);
  };

  // Address of loads, stores and jalr: rs1 + imm (I or S format; the other is zero).
  address_ = circuit::add32(g.sub("address"), a, sum_forms(imm_i_, imm_s_), Form(),
                     g.all("address.enable", {lit(active_)},
                           op(kLb) + op(kLh) + op(kLw) + op(kLbu) + op(kLhu) + op(kSb) + op(kSh) + op(kSw) + op(kJalr)));

  add_to_result(circuit::add32(g.sub("add"), a, operand2, Form(), unit("add", op(kAdd) + op(kAddi))));
  add_to_result(circuit::add32(g.sub("sub"), a, complement(operand2), Form(1.0), unit("sub", op(kSub))));
  for (int k = 1; k <= 3; ++k) {
    int zba = kSh1add + k - 1;
    add_to_result(circuit::add32(g.sub("sh" + std::to_string(k) + "add"), shifted_left(rs1_value_, k), forms_of(rs2_value_),
                          Form(), unit("sh" + std::to_string(k) + "add", op(zba))));
  }

  // Comparisons: slt(i)(u) and branches.
  Form compares = op(kSlt) + op(kSltu) + op(kSlti) + op(kSltiu);
  for (int b = kBeq; b <= kBgeu; ++b) compares += op(b);
  circuit::Comparison cmp = circuit::compare32(g.sub("compare"), a, operand2, g.all("compare.enable", {lit(active_)}, compares));
  SignalId set_less = g.signal("set_less");
  g.add_all(set_less, {lit(cmp.less_signed), lit(executing_)}, op(kSlt) + op(kSlti));
  g.add_all(set_less, {lit(cmp.less_unsigned), lit(executing_)}, op(kSltu) + op(kSltiu));
  quick[0] += F(set_less);
  branch_taken_ = g.signal("branch_taken");
  g.add_all(branch_taken_, {lit(cmp.equal)}, op(kBeq));
  g.add_all(branch_taken_, {nlit(cmp.equal)}, op(kBne));
  g.add_all(branch_taken_, {lit(cmp.less_signed)}, op(kBlt));
  g.add_all(branch_taken_, {nlit(cmp.less_signed)}, op(kBge));
  g.add_all(branch_taken_, {lit(cmp.less_unsigned)}, op(kBltu));
  g.add_all(branch_taken_, {nlit(cmp.less_unsigned)}, op(kBgeu));

  // Bitwise operations, one neuron (AND), two (OR, XOR) per bit.
  SignalId and_unit = unit("and", op(kAnd) + op(kAndi));
  SignalId or_unit = unit("or", op(kOr) + op(kOri));
  SignalId xor_unit = unit("xor", op(kXor) + op(kXori));
  Bits bitwise;
  for (int i = 0; i < 32; ++i) {
    SignalId bit = g.signal("bitwise[" + std::to_string(i) + "]");
    Form both = a[i] + operand2[i];
    g.add_relu(bit, both + F(and_unit) - 2);
    g.add_step(bit, both + 2 * F(or_unit), 3);
    g.add_relu(bit, both + 2 * F(xor_unit) - 2);
    g.add_relu(bit, both + 2 * F(xor_unit) - 3, -2);
    bitwise.push_back(bit);
  }
  add_to_result(bitwise);

  // Shifts: the amount is the I immediate's one-hot, or one made from rs2's low five bits.
  Form register_shift = op(kSll) + op(kSrl) + op(kSra);
  circuit::Gates shamt = g.sub("shamt");
  std::vector<SignalId> register_amount = circuit::decode_one_hot(shamt, "register", slice(rs2_value_, 0, 5), register_shift);
  Forms amount;
  for (int s = 0; s < 32; ++s) amount.push_back(F(register_amount[s]) + F(shamt_imm_[s]));
  using circuit::ShiftKind;
  add_to_result(circuit::shift32(g.sub("sll"), rs1_value_, amount, ShiftKind::kLeft, unit("sll", op(kSll) + op(kSlli))));
  add_to_result(circuit::shift32(g.sub("srl"), rs1_value_, amount, ShiftKind::kRightLogical, unit("srl", op(kSrl) + op(kSrli))));
  add_to_result(circuit::shift32(g.sub("sra"), rs1_value_, amount, ShiftKind::kRightArithmetic, unit("sra", op(kSra) + op(kSrai))));

  result_.assign(32, Form());
  for (int i = 0; i < 32; ++i) result_[i] = F(g.relu("quick_result[" + std::to_string(i) + "]", quick[i], 1));

  // Multiplication (6 stages) and division (37 stages) join the result later.
  auto add_late = [&](const Bits& bits) {
    for (std::size_t i = 0; i < bits.size(); ++i) result_[i] += F(bits[i]);
  };
  add_late(circuit::multiply32(g.sub("mul"), rs1_value_, rs2_value_, op(kMulh) + op(kMulhsu), op(kMulh),
                               op(kMulh) + op(kMulhsu) + op(kMulhu),
                               unit("mul", op(kMul) + op(kMulh) + op(kMulhsu) + op(kMulhu))));
  add_late(circuit::divide32(g.sub("div"), rs1_value_, rs2_value_, op(kDiv), op(kDivu), op(kRem), op(kRemu),
                             unit("div", op(kDiv) + op(kDivu) + op(kRem) + op(kRemu))));

  // Loads add their value in memory.cpp; jumps and branches need their targets (below).
  // jal and branches: pc + imm as a 22-bit byte address (never negative: the ROM starts at 1 MB).
  Forms pc_address(22);
  for (int i = 0; i < 17; ++i) pc_address[i + 2] = F(pc_[i]);
  pc_address[20] = Form(1.0);
  Form relative = op(kJal);
  for (int b = kBeq; b <= kBgeu; ++b) relative += op(b);
  Bits relative_target = narrow_sum(g, "relative_target", 22, pc_address,
                                    sum_forms(Bits(imm_j_.begin(), imm_j_.begin() + 22), Bits(imm_b_.begin(), imm_b_.begin() + 22)));
  // jalr: (rs1 + imm) & ~1.
  target_address_.clear();
  for (int i = 0; i < 32; ++i) {
    SignalId bit = g.signal("target_address[" + std::to_string(i) + "]");
    if (i < 22) g.add_all(bit, {lit(relative_target[i])}, relative);
    if (i > 0) g.add_all(bit, {lit(address_[i])}, op(kJalr));
    target_address_.push_back(bit);
  }
  is_jump_op_ = g.signal("is_jump");
  g.add_relu(is_jump_op_, op(kJal) + op(kJalr));
  g.add_relu(is_jump_op_, F(branch_taken_));
  // Outside the code ROM [0x100000, 0x140000): any of bits 31..18 differs from 0b00000000000100.
  Form mismatches;
  for (int i = 18; i < 32; ++i) mismatches += i == 20 ? Form(1.0) - F(target_address_[i]) : F(target_address_[i]);
  target_outside_ = g.any("target_outside", mismatches);
  target_misaligned_ = g.copy("target_misaligned", F(target_address_[1]));
  target_word_.assign(16, Form());
  for (int i = 0; i < 16; ++i) target_word_[i] = F(target_address_[i + 2]);
}

}  // namespace rvformer::cpu
