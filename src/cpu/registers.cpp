// cpu/registers.cpp — early results, the delay line and the register file.
//
// The register file is read and written in the same GDN layer, and a read there sees that pass's
// write. An instruction's own result is only known after that layer, so every register write
// happens one pass later: the delay line hands the next pass this pass's destination register,
// whether the value is early (lui, auipc, jal, jalr: computed before the delay line, and carried
// by it) or late (everything else: carried by the next token, VAL, or HI then VAL for 32 bits).
// Two identical copies of the registers give two read ports (rs1, rs2), addressed by the rd, rs1
// and rs2 fields in binary; row 0 (x0) is never written, so it reads 0.
#include <cmath>

#include "cpu/machine_builder.h"
#include "circuit/arith.h"

namespace rvformer::cpu {
namespace {

// Byte address of a code word index: 0x100000 + 4·word (17-bit word index; no carries).
std::vector<Form> code_address(const Bits& word) {
  std::vector<Form> address(32);
  for (int i = 0; i < 17; ++i) address[i + 2] = F(word[i]);
  address[20] = Form(1.0);
  return address;
}

}  // namespace

void MachineBuilder::add_early_results() {
  circuit::Gates g = gates("early");
  // Every early result is word-aligned: bits 0 and 1 are always 0.
  early_value_.assign(2, zero_);
  for (int i = 2; i < 32; ++i) early_value_.push_back(g.signal("value[" + std::to_string(i) + "]"));
  // lui: the immediate.
  for (int i = 12; i < 32; ++i) g.add_all(early_value_[i], {circuit::lit(op_[kLui]), circuit::lit(imm_u_[i])});
  // jal, jalr: the address of the next instruction.
  std::vector<Form> link = code_address(next_pc_);
  for (int i = 0; i < 32; ++i)
    if (!link[i].terms().empty())
      g.add_relu(early_value_[i], link[i] + F(op_[kJal]) + F(op_[kJalr]) - 1);
  // auipc: pc + (imm_u): the low 12 bits are the pc's; the top 20 are a 20-bit sum.
  std::vector<Form> pc_address = code_address(pc_);
  for (int i = 0; i < 12; ++i)
    if (!pc_address[i].terms().empty()) g.add_relu(early_value_[i], pc_address[i] + F(op_[kAuipc]) - 1);
  Bits top(early_value_.begin() + 12, early_value_.end());
  std::vector<Form> pc_top(pc_address.begin() + 12, pc_address.end());
  add_narrow_sum(g, top, pc_top, forms_of(Bits(imm_u_.begin() + 12, imm_u_.end())), F(op_[kAuipc]));

  // Writes to x0 and effects of passes that only report a fault are dropped here.
  std::vector<circuit::Literal> writes{circuit::lit(rd_nonzero_), circuit::lit(executing_)};
  early_write_ = g.all("write", writes, F(op_[kLui]) + F(op_[kAuipc]) + F(op_[kJal]) + F(op_[kJalr]));
  Form late;
  for (int op = kLb; op < kOpCount; ++op)
    if (op != kSb && op != kSh && op != kSw && op != kFence) late += F(op_[op]);
  late_write_ = g.all("late_write", writes, late);
}

void MachineBuilder::add_register_file() {
  circuit::Gates g = gates("registers");
  // Last pass's instruction, as seen by this pass.
  Bits pending_rd;
  for (int i = 0; i < 5; ++i) pending_rd.push_back(c_.add_delay(insn_[7 + i], "registers.pending_rd[" + std::to_string(i) + "]"));
  SignalId pending_early = c_.add_delay(early_write_, "registers.pending_early");
  SignalId pending_late = c_.add_delay(late_write_, "registers.pending_late");
  Bits pending_value;
  for (int i = 0; i < 32; ++i)
    pending_value.push_back(c_.add_delay(early_value_[i], "registers.pending_value[" + std::to_string(i) + "]"));
  SignalId previous_hi = c_.add_delay(in_.is_hi, "registers.previous_is_hi");
  Bits previous_hi_payload;
  for (int i = 0; i < 16; ++i) previous_hi_payload.push_back(c_.add_delay(in_.hi[i], "registers.previous_hi[" + std::to_string(i) + "]"));

  // A late value arrives with VAL; an early one is committed by whatever token completes the step.
  SignalId write = g.signal("write");
  g.add_all(write, {circuit::lit(pending_late), circuit::lit(in_.is_val)});
  g.add_relu(write, F(pending_early) + F(in_.is_val) + F(in_.is_jump) - 1);
  // VAL(x) alone means sign-extended x; after HI(y) it means (y << 16) | x.
  SignalId sign_extension = g.all("sign_extension", {circuit::lit(in_.val[15]), circuit::nlit(previous_hi)});

  rs1_value_.clear();
  rs2_value_.clear();
  for (int i = 0; i < 32; ++i) {
    rs1_value_.push_back(c_.add_read_signal("registers.rs1[" + std::to_string(i) + "]"));
    rs2_value_.push_back(c_.add_read_signal("registers.rs2[" + std::to_string(i) + "]"));
  }
  Form uses_rs1, uses_rs2;
  for (int op = 0; op < kOpCount; ++op) {
    if (op != kLui && op != kAuipc && op != kJal && op != kFence) uses_rs1 += F(op_[op]);
    if ((op >= kBeq && op <= kBgeu) || (op >= kSb && op <= kSw) || (op >= kAdd && op <= kSh3add)) uses_rs2 += F(op_[op]);
  }
  for (int port = 0; port < 2; ++port) {
    circuit::Bank bank{port == 0 ? "registers.rs1_port" : "registers.rs2_port", 32};
    bank.has_write = bank.has_read = true;
    bank.write.row = binary_select(pending_rd, {}, {F(write)});
    for (int h = 0; h < 2; ++h) {
      bank.write.beta[h] = Form(1.0);
      for (int i = 16 * h; i < 16 * h + 16; ++i) {
        Form value = F(pending_value[i]);
        value += h == 0 ? F(in_.val[i]) : F(previous_hi_payload[i - 16]) + F(sign_extension);
        bank.write.lanes[h].push_back(value);
      }
    }
    bank.read.row = binary_select(slice(insn_, port == 0 ? 15 : 20, 5), {}, {port == 0 ? uses_rs1 : uses_rs2});
    const Bits& value = port == 0 ? rs1_value_ : rs2_value_;
    for (int h = 0; h < 2; ++h)
      for (int i = 16 * h; i < 16 * h + 16; ++i) bank.read.lanes[h].push_back({{value[i], 1}});
    int index = c_.add_bank(std::move(bank));
    if (port == 0) m_.layout.register_bank = index;
  }
}

}  // namespace rvformer::cpu
