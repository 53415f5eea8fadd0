// cpu/registers.cpp — the value a completing token brings, and the register file.
//
// The register file is read and written in the same GDN layer, and a read there sees that pass's
// write. An instruction's result is only known after that layer, so every register write happens
// one pass later, in the pass of the token that completes the instruction: its row (rd), whether
// it writes at all, and the early values come through the conv's previous-token tap; the late value
// comes with the token itself. Each register bit has three lanes, of which at most one is 1:
//   * lui:  the U immediate, for LUI (an AND in the lane value: the class and the bit);
//   * link: the address after the instruction, for JAL and JALR (class bits 3..1 = 011);
//   * late: the value the completing token brings (VAL, after HI and TOP; IN; EOF).
// Two identical copies give two read ports (rs1, rs2); row 0 (x0) is never written.
#include <algorithm>

#include "cpu/machine_builder.h"
#include "support/error.h"

namespace rvformer::cpu {
namespace {

// AND of class literals and `bit` (a 0/1 form) as a lane value, looking one pass back: `bit` minus
// the signals that are 1 where a literal fails, so that a true lane's only term is its bit (the
// lane's terms then stay within circuit::kLaneMagnitudeLimit).
circuit::LinearForm previous_and(const Instruction& insn, const std::vector<Literal>& literals, const Form& bit) {
  Form sum = bit;
  for (const Literal& l : literals) {
    auto b = std::find(insn.stored.begin(), insn.stored.begin() + Instruction::kClassBits, l.signal) - insn.stored.begin();
    if (b == Instruction::kClassBits) fail("cpu: a register lane ANDs a literal that is not a class bit");
    sum -= F(l.negated ? insn.stored[b] : insn.class_complement[b]);
  }
  return looking_back(sum, 1);
}

}  // namespace

// VAL(x) alone is x sign-extended; after HI(y) it is (y << 12) | x sign-extended from bit 23;
// after TOP(z), HI(y) it is (z << 24) | (y << 12) | x. IN(b) is b; EOF is all ones.
void MachineBuilder::add_late_value() {
  Gates g = gates("late");
  SignalId from_val = g.all("sign_from_val", {lit(in_.val[kValueBits - 1]), nlit(history_.previous_hi)});
  SignalId from_hi = g.all("sign_from_hi", {lit(history_.previous_hi_payload[kValueBits - 1]), lit(history_.previous_hi),
                                            nlit(history_.two_back_top)});
  late_.assign(32, Form());
  for (int i = 0; i < 32; ++i) {
    late_[i] = F(in_.is(TokenKind::kEof));
    if (i < kValueBits) late_[i] += F(in_.val[i]);
    if (i < 8) late_[i] += F(in_.in[i]);
    if (i >= kValueBits) late_[i] += F(from_val);
    if (i >= kValueBits && i < 2 * kValueBits) late_[i] += F(history_.previous_hi_payload[i - kValueBits]);
    if (i >= 2 * kValueBits) late_[i] += F(history_.two_back_top_payload[i - 2 * kValueBits]) + F(from_hi);
  }
}

void MachineBuilder::add_register_file() {
  // The address after this instruction: 0x100000 + 4·next_pc.
  std::vector<Form> link(32);
  for (int i = 0; i <= word_bits_; ++i) link[i + 2] = F(control_.next_pc[i]);
  link[20] += Form(1.0);
  std::vector<Literal> is_lui = insn_.is_class(kClassLui);
  std::vector<Literal> is_jal_or_jalr = match_bits(insn_.stored, 1, 3, kClassJal >> 1);

  operands_.rs1.clear();
  operands_.rs2.clear();
  for (int i = 0; i < 32; ++i) {
    operands_.rs1.push_back(c_.add_read_signal("registers.rs1[" + std::to_string(i) + "]"));
    operands_.rs2.push_back(c_.add_read_signal("registers.rs2[" + std::to_string(i) + "]"));
  }
  for (int port = 0; port < 2; ++port) {
    circuit::Bank bank{port == 0 ? "registers.rs1_port" : "registers.rs2_port", 32};
    bank.has_write = bank.has_read = true;
    bank.write.row = binary_select(insn_.rd(), {}, {F(insn_.writes_rd()), F(control_.executing)}, 1);
    bank.write.first_written_row = 1;
    bank.read.row = binary_select(port == 0 ? insn_.rs1() : insn_.rs2());
    const Bits& value = port == 0 ? operands_.rs1 : operands_.rs2;
    for (int h = 0; h < 2; ++h) {
      bank.write.beta[h] = in_.completes();
      for (int set = 0; set < kRegisterLaneSets; ++set)
        for (int i = 16 * h; i < 16 * h + 16; ++i) {
          circuit::LinearForm lane;
          if (set == 0 && i >= 12) lane = previous_and(insn_, is_lui, F(insn_.word(i)));
          if (set == 1 && !link[i].terms().empty()) lane = previous_and(insn_, is_jal_or_jalr, link[i]);
          if (set == 2) lane = late_[i];
          bank.write.lanes[h].push_back(lane);
          bank.read.lanes[h].push_back({{value[i], 1}});
        }
    }
    int index = c_.add_bank(std::move(bank));
    if (port == 0) m_.layout.register_bank = index;
  }
}

}  // namespace rvformer::cpu
