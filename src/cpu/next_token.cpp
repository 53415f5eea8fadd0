// cpu/next_token.cpp — traps, and the choice of the next trace token with its payload.
//
// Exactly one family is emitted per pass, in this order of precedence: while loading, VAL; in
// the four passes after a FAULT, HI words reporting the trap's PC and address; on a resync pass,
// JUMP(pc); on a trap, FAULT(cause); otherwise what the instruction needs (docs/trace-protocol.md).
#include "cpu/machine_builder.h"
#include "cpu/trace_tokens.h"

namespace rvformer::cpu {
namespace {

using circuit::lit;
using circuit::nlit;

// Byte address of a code word index (17 bits): 0x100000 + 4·word.
std::vector<Form> code_address(const Bits& word) {
  std::vector<Form> address(32);
  for (int i = 0; i < 17; ++i) address[i + 2] = F(word[i]);
  address[20] = Form(1.0);
  return address;
}

}  // namespace

void MachineBuilder::add_faults() {
  circuit::Gates g = gates("trap");
  Form any_op;
  for (int op = 0; op < kOpCount; ++op) any_op += F(op_[op]);
  SignalId fetch_outside = g.all("fetch_outside", {lit(active_), lit(pc_[16])});
  SignalId illegal = g.relu("illegal", F(active_) - F(pc_[16]) - any_op, 1);
  SignalId misaligned_target = g.all("misaligned_target", {lit(target_misaligned_), lit(is_jump_op_)});
  SignalId outside_target = g.signal("outside_target");
  g.add_relu(outside_target, F(is_jump_op_) + F(target_outside_) - F(target_misaligned_) - 1);
  fault_cause_.assign(kFaultCauseCount, Form());
  fault_cause_[static_cast<int>(FaultCause::kIllegalInstruction)] = F(illegal);
  fault_cause_[static_cast<int>(FaultCause::kInstructionAddressMisaligned)] = F(misaligned_target);
  fault_cause_[static_cast<int>(FaultCause::kFetchAccessSequential)] = F(fetch_outside);
  fault_cause_[static_cast<int>(FaultCause::kFetchAccessAfterJump)] = F(outside_target);
  fault_cause_[static_cast<int>(FaultCause::kLoadAddressMisaligned)] = F(load_misaligned_);
  fault_cause_[static_cast<int>(FaultCause::kLoadAccessFault)] = F(load_outside_);
  fault_cause_[static_cast<int>(FaultCause::kStoreAddressMisaligned)] = F(store_misaligned_);
  fault_cause_[static_cast<int>(FaultCause::kStoreAccessFault)] = F(store_outside_);
  Form faulting;
  for (const Form& cause : fault_cause_) faulting += cause;
  faulting_ = g.any("faulting", faulting);

  // The trap's PC: the fetch address after a jump out of the code ROM, else this instruction's.
  // Its address: the data address for loads and stores, the jump target for jumps, else the PC.
  std::vector<Form> pc_address = code_address(pc_);
  Form jump_fault = F(misaligned_target) + F(outside_target);
  Form data_fault = F(load_misaligned_) + F(load_outside_) + F(store_misaligned_) + F(store_outside_);
  fault_pc_.assign(32, Form());
  fault_address_.assign(32, Form());
  for (int i = 0; i < 32; ++i) {
    SignalId pc_bit = g.signal("pc[" + std::to_string(i) + "]");
    SignalId address_bit = g.signal("address[" + std::to_string(i) + "]");
    if (!pc_address[i].terms().empty()) {
      g.add_relu(pc_bit, pc_address[i] - F(outside_target));
      g.add_relu(address_bit, pc_address[i] - jump_fault - data_fault);
    }
    g.add_all(pc_bit, {lit(target_address_[i]), lit(outside_target)});
    g.add_relu(address_bit, F(target_address_[i]) + jump_fault - 1);
    g.add_relu(address_bit, F(address_[i]) + data_fault - 1);
    fault_pc_[i] = F(pc_bit);
    fault_address_[i] = F(address_bit);
  }
}

void MachineBuilder::add_next_token() {
  circuit::Gates g = gates("next");
  SignalId result_needed = late_write_;  // a late result for a register other than x0
  // Does the result fit in a sign-extended halfword? Bits 15..31 all 0 or all 1.
  Form high;
  for (int i = 15; i < 32; ++i) high += result_[i];
  SignalId fits_halfword = g.signal("fits_halfword");
  g.add_relu(fits_halfword, Form(1.0) - high);
  g.add_relu(fits_halfword, high - 16);
  SignalId jump_taken = g.signal("jump_taken");
  g.add_relu(jump_taken, F(is_jump_op_) - F(faulting_));

  // Each emit signal is a sum of exclusive cases; `proceed` = executing and not trapping.
  Form proceed = F(executing_) - F(faulting_);
  auto emit = [&](const std::string& name) { return g.signal("emit_" + name); };
  next_.emit_val = emit("val");
  next_.emit_hi = emit("hi");
  next_.emit_jump = emit("jump");
  next_.emit_fault = emit("fault");
  next_.emit_out = g.copy("emit_out", F(console_store_));
  next_.emit_exit = g.copy("emit_exit", F(exit_store_));
  // VAL: while loading or on the START pass (which executes nothing); a result that fits (or the
  // second half of one); any other plain step.
  g.add_relu(next_.emit_val, Form(1.0) - F(running_));
  g.add_relu(next_.emit_val, F(in_.is_start) - F(resync_));
  g.add_all(next_.emit_val, {lit(result_needed), lit(in_.is_hi)}, proceed);
  g.add_all(next_.emit_val, {lit(result_needed), nlit(in_.is_hi), lit(fits_halfword)}, proceed);
  g.add_relu(next_.emit_val, proceed - F(result_needed) - F(ram_byte_store_) - F(console_store_) -
                                 F(exit_store_) - F(jump_taken));
  // HI: a fault report word; the high half of a 32-bit result; the halfword an sb merges into.
  g.add_relu(next_.emit_hi, F(in_report_) + F(running_) - 1);
  g.add_all(next_.emit_hi, {lit(result_needed), nlit(in_.is_hi), nlit(fits_halfword)}, proceed);
  g.add_all(next_.emit_hi, {lit(ram_byte_store_)}, proceed);
  // JUMP: a resync, or a jump or taken branch.
  g.add_relu(next_.emit_jump, F(resync_));
  g.add_relu(next_.emit_jump, F(jump_taken));
  g.add_all(next_.emit_fault, {lit(executing_), lit(faulting_)});

  // Payloads. Every source is zero unless its case applies, so plain sums select them.
  next_.val.assign(16, Form());
  next_.hi.assign(16, Form());
  next_.jump.assign(16, Form());
  next_.byte.assign(8, Form());
  for (int i = 0; i < 16; ++i) {
    next_.val[i] = result_[i];
    SignalId report = g.signal("report[" + std::to_string(i) + "]");
    g.add_all(report, {lit(report_position_[0])}, fault_pc_[16 + i]);
    g.add_all(report, {lit(report_position_[1])}, fault_pc_[i]);
    g.add_all(report, {lit(report_position_[2])}, fault_address_[16 + i]);
    g.add_all(report, {lit(report_position_[3])}, fault_address_[i]);
    next_.hi[i] = result_[16 + i] + F(old_half_[i]) + F(report);
    next_.jump[i] = F(g.all("resync_pc[" + std::to_string(i) + "]", {lit(resync_), lit(pc_[i])})) + target_word_[i];
  }
  SignalId byte_store = g.any("byte_store", F(console_store_) + F(exit_store_));
  for (int i = 0; i < 8; ++i) next_.byte[i] = F(g.all("byte[" + std::to_string(i) + "]", {lit(byte_store), lit(rs2_value_[i])}));
  next_.cause = fault_cause_;
}

}  // namespace rvformer::cpu
