// cpu/next_token.cpp — traps, the trap report, and the gates of the next token's family.
//
// Exactly one gate is 1 in every pass, in this order of precedence: while loading, plain (VAL(0));
// in the six passes after a FAULT, HI report words; the PC past the code ROM, FAULT; a resync,
// the jump family for pc; and for an executing instruction: a trap, FAULT(cause); a jump or taken
// branch, the jump family; OUT, EXIT or WANT for the MMIO registers; HI for the kept bytes of a
// byte or halfword store, or in the first pass of vu.kput and vu.vput; an elementwise vector
// operation's VEC or LINE; a long division's DIV or
// remainder piece; a value (its first pass, or after TOP or HI); otherwise plain. A jump is near
// (JUMP) when its target keeps the base's bits above the low 12, else FAR then JLO
// (docs/trace-protocol.md).
#include <tuple>

#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {

// Byte address of a code word index: 0x100000 + 4·word.
Forms code_address(const Bits& word) {
  Forms address(32);
  for (std::size_t i = 0; i < word.size(); ++i) address[i + 2] = F(word[i]);
  address[20] += Form(1.0);
  return address;
}

}  // namespace

void MachineBuilder::add_next_token() {
  Gates g = gates("next");
  SignalId is_hi = in_.is(TokenKind::kHi), is_top = in_.is(TokenKind::kTop), is_far = in_.is(TokenKind::kFar);

  // Trap causes. The instruction's own (gated by `active`, so that the report passes see them too).
  SignalId misaligned_target = target_misaligned_;
  SignalId outside_target = target_outside_;
  std::vector<std::pair<FaultCause, SignalId>> causes = faults_;
  causes.push_back({FaultCause::kIllegalInstruction, decoded_.illegal});
  for (SignalId illegal : illegal_operands_) causes.push_back({FaultCause::kIllegalInstruction, illegal});
  causes.push_back({FaultCause::kInstructionAddressMisaligned, misaligned_target});
  causes.push_back({FaultCause::kFetchAccessAfterJump, outside_target});
  Form any_cause;
  for (auto& [cause, signal] : causes) any_cause += F(signal);
  SignalId trap = g.any("trap", any_cause);
  SignalId executing = control_.executing;
  for (auto& [cause, signal] : causes)
    g.add_all(out_.cause[static_cast<int>(cause)], {lit(signal), lit(executing)});
  g.add_relu(out_.cause[static_cast<int>(FaultCause::kFetchAccessSequential)], F(control_.fetch_outside));

  // The trap report: its PC (the jump target when the jump left the ROM) and its address (the data
  // address, the jump target, or the PC), in six words of 12 bits in r[23:12].
  Forms pc_address = code_address(control_.pc);
  Form data_fault;
  for (auto& [cause, signal] : faults_) data_fault += F(signal);
  Form jump_fault = F(misaligned_target) + F(outside_target);
  Gates r = g.sub("report");
  Bits trap_pc, trap_address;
  for (int i = 0; i < 32; ++i) {
    SignalId pc_bit = r.signal("pc[" + std::to_string(i) + "]");
    SignalId address_bit = r.signal("address[" + std::to_string(i) + "]");
    if (!pc_address[i].terms().empty()) {
      r.add_relu(pc_bit, pc_address[i] - F(outside_target));
      r.add_relu(address_bit, pc_address[i] - jump_fault - data_fault);
    }
    r.add_all(pc_bit, {lit(target_address_[i]), lit(outside_target)});
    r.add_relu(address_bit, F(target_address_[i]) + jump_fault - 1);
    r.add_relu(address_bit, F(data_address_[i]) + data_fault - 1);
    trap_pc.push_back(pc_bit);
    trap_address.push_back(address_bit);
  }
  Bits report_bits = trap_pc;  // 64 bits: the pc, then the address
  report_bits.insert(report_bits.end(), trap_address.begin(), trap_address.end());
  for (int word = 0; word < kReportWords; ++word)
    for (int j = 0; j < kValueBits && kValueBits * word + j < 64; ++j)
      add_result_bit(r, kValueBits + j, {lit(control_.in_report), lit(control_.report_position[word]),
                                         lit(report_bits[kValueBits * word + j])});

  // The jump family's target: pc for a resync, the jump's target otherwise. Near: same high bits.
  Gates jg = g.sub("jump");
  std::vector<Literal> resync{lit(control_.running), nlit(control_.in_report), nlit(control_.pc[word_bits_]),
                              lit(control_.resync)};
  std::vector<Literal> ok{lit(executing), nlit(trap)};
  std::vector<Literal> jumps = join(ok, {lit(jump_taken_)});
  // Near: the target's bits above the low 12 equal the base's (one AND per value of them).
  auto near = [&](const std::string& name, const Bits& target) {
    SignalId out = jg.signal(name);
    int high = word_bits_ - kValueBits;
    for (std::uint32_t v = 0; v < (1u << high); ++v)
      jg.add_all(out, join(match_bits(target, kValueBits, high, v), match_bits(control_.base, kValueBits, high, v)));
    return out;
  };
  for (auto [when, target, name] : {std::tuple{resync, &control_.pc, "near_resync"}, {jumps, &target_, "near"}}) {
    SignalId is_near = near(name, *target);
    jg.add_all(out_.jlo, join(when, {lit(is_far)}));
    jg.add_all(out_.jump, join(when, {nlit(is_far), lit(is_near)}));
    jg.add_all(out_.far, join(when, {nlit(is_far), nlit(is_near)}));
    for (int i = 0; i < word_bits_; ++i) {
      Form all;
      for (const Literal& l : when) all += l.negated ? Form(1.0) - F(l.signal) : F(l.signal);
      c_.add_neuron({(all + F((*target)[i]) - static_cast<double>(when.size())).terms(), Form(1.0).terms(),
                     {{out_.j[i], 1}, {out_.not_j[i], -1}}, 1, "next.jump"});
    }
  }

  // The rest, for an instruction that executes without a trap or a jump.
  std::vector<Literal> steps = join(ok, {nlit(jump_taken_)});
  g.add_relu(out_.fault, F(control_.fetch_outside));
  g.add_all(out_.fault, {lit(executing), lit(trap)});
  g.add_relu(out_.plain, Form(1.0) - F(control_.running));
  g.add_relu(out_.hi, F(control_.in_report));
  g.add_all(out_.out, join(steps, {lit(console_store_)}));
  g.add_all(out_.exit, join(steps, {lit(exit_store_)}));
  g.add_all(out_.want, join(steps, {lit(input_load_)}));
  std::vector<Literal> plain_step = join(steps, {nlit(console_store_), nlit(exit_store_), nlit(input_load_)});
  // A byte or halfword store's first two passes send the kept bytes, vu.kput's and vu.vput's first
  // pass zero: HI, with r[23:12] live.
  auto add_gate = [&](SignalId gate, const std::vector<Literal>& literals, int live_from, int live_to) {
    std::vector<circuit::Term> down{{gate, 1}};
    for (int i = live_from; i < live_to; ++i) down.push_back({out_.not_r[i], 1});
    Form sum;
    for (const Literal& l : literals) sum += l.negated ? Form(1.0) - F(l.signal) : F(l.signal);
    c_.add_neuron({(sum - static_cast<double>(literals.size() - 1)).terms(), Form(1.0).terms(), down, 1, "next"});
  };
  std::vector<Literal> no_kept = plain_step;
  for (SignalId pass : hi_passes_) {
    add_gate(out_.hi, join(plain_step, {lit(pass)}), kValueBits, 2 * kValueBits);
    no_kept.push_back(nlit(pass));
  }
  // A vector operation's passes: VEC with r[12:0] live, LINE, or WLINE with r[12:0] live.
  if (out_.vec) {
    add_gate(out_.vec, join(plain_step, {lit(vector_result_pass_)}), kValueBits, kVectorResultBits);
    g.add_all(out_.line, join(plain_step, {lit(vector_line_pass_)}));
    add_gate(out_.wline, join(plain_step, {lit(vector_wline_pass_)}), kValueBits, kVectorWeightLineBits);
    for (SignalId pass : {vector_result_pass_, vector_line_pass_, vector_wline_pass_}) no_kept.push_back(nlit(pass));
  }
  // A long division's passes: DIV, or HI with a piece of the partial remainder in r[23:12].
  g.add_all(out_.div, join(no_kept, {lit(division_.emits_digit)}));
  for (SignalId piece : division_.emits_piece) add_gate(out_.hi, join(no_kept, {lit(piece)}), kValueBits, 2 * kValueBits);
  // A value: the first pass (VAL, HI or TOP), after TOP (HI), after HI (VAL). The high payload bits
  // are live where a family reads them.
  std::vector<Literal> value = join(no_kept, {lit(value_step_), nlit(division_.emits_digit)});
  for (SignalId piece : division_.emits_piece) value.push_back(nlit(piece));
  add_gate(out_.first, join(value, {nlit(is_hi), nlit(is_top)}), kValueBits, 32);
  add_gate(out_.mid, join(value, {lit(is_top)}), kValueBits, 2 * kValueBits);
  add_gate(out_.last, join(value, {lit(is_hi)}), 0, 0);
  g.add_all(out_.plain, join(no_kept, {nlit(value_step_)}));
  // The report uses r[23:12].
  for (int i = kValueBits; i < 2 * kValueBits; ++i) g.add_relu(out_.not_r[i], F(control_.in_report));
}

}  // namespace rvformer::cpu
