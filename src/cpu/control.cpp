// cpu/control.cpp — the token history, the PC latch, the counters and the program counter.
//
// A pass cannot increment a counter stored in GDN state (it reads the state after the layer that
// must write it), so the PC is a base and a step count: a jump writes the base and resets a counter
// lane to 1, and every completed step halves it (write strength 1/2 towards 0); the lane reads 2^-n.
// The code ROM is read at the base's row directly, and the pass selects the instruction at slot
// base[3:0] + n of the row's 16; when that leaves the row, the pass re-anchors the base instead of
// executing (a resync). The other counters work alike: HI/TOP tokens since the step began, DIV
// tokens since then, trap report words since a FAULT. All of them sit in the first layer, written
// from the token alone (docs/trace-protocol.md).
#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {

Bits delayed(circuit::Circuit& c, const Bits& bits, const std::string& name, int ago) {
  Bits out;
  for (std::size_t i = 0; i < bits.size(); ++i)
    out.push_back(c.add_delay(bits[i], name + "[" + std::to_string(i) + "]", ago));
  return out;
}

// One counter lane in half `half` of `bank`: reset to 1 where `reset` is 1, halved where `halve`
// is 1 (both 0/1 forms of this pass's token, never both 1).
void add_counter(circuit::Bank& bank, int half, const Form& reset, const Form& halve, SignalId read) {
  bank.write.beta[half] = reset + 0.5 * halve;
  bank.write.lanes[half] = {reset};
  bank.read.lanes[half] = {{{read, 1}}};
}

constexpr double kCounterQuantum = 1.0 / (1 << 25);

}  // namespace

void MachineBuilder::add_history() {
  history_.previous_hi = c_.add_delay(in_.is(TokenKind::kHi), "history.previous_hi", 1);
  history_.previous_top = c_.add_delay(in_.is(TokenKind::kTop), "history.previous_top", 1);
  history_.two_back_top = c_.add_delay(in_.is(TokenKind::kTop), "history.two_back_top", 2);
  history_.previous_hi_payload = delayed(c_, in_.hi, "history.previous_hi_payload", 1);
  history_.two_back_top_payload = delayed(c_, in_.top, "history.two_back_top_payload", 2);
  for (int k = 0; k < 3; ++k) history_.val_back[k] = delayed(c_, in_.val, "history.val_back" + std::to_string(k + 1), k + 1);
}

void MachineBuilder::add_latch_and_counters() {
  auto is = [&](TokenKind kind) { return F(in_.is(kind)); };
  // The latch: a near JUMP sets the base's low 12 bits, a far jump (FAR h, then JLO l) all of them.
  // A lane takes one token's bits, so bits 8..11 have a lane for each kind of jump; they add up.
  control_.base.clear();
  for (int i = 0; i < word_bits_; ++i) control_.base.push_back(c_.add_read_signal("pc.base[" + std::to_string(i) + "]"));
  circuit::Bank latch = single_row_bank("pc.latch");
  latch.write.beta[0] = is(TokenKind::kJump) + is(TokenKind::kJlo);
  latch.write.beta[1] = is(TokenKind::kJlo);
  auto far_bit = [&](int bit) { return circuit::LinearForm{{in_.far[bit - kJumpLowBits], 1, 1}}; };
  for (int i = 0; i < kJumpLowBits; ++i) {
    latch.write.lanes[0].push_back(F(in_.jump[i]) + F(in_.jlo[i]));
    latch.read.lanes[0].push_back({{control_.base[i], 1}});
  }
  for (int i = kJumpLowBits; i < kValueBits; ++i) {
    latch.write.lanes[0].push_back(F(in_.jump[i]));
    latch.read.lanes[0].push_back({{control_.base[i], 1}});
  }
  for (int i = kJumpLowBits; i < kValueBits; ++i) {
    latch.write.lanes[0].push_back(far_bit(i));
    latch.read.lanes[0].push_back({{control_.base[i], 1}});
  }
  for (int i = kValueBits; i < word_bits_; ++i) {
    latch.write.lanes[1].push_back(far_bit(i));
    latch.read.lanes[1].push_back({{control_.base[i], 1}});
  }
  m_.layout.latch_bank = c_.add_bank(std::move(latch));

  Form completes = in_.completes();
  control_.step_count = c_.add_read_signal("pc.step_count", 0, 1, kCounterQuantum);
  control_.running = c_.add_read_signal("control.running");
  circuit::Bank control = single_row_bank("control");
  add_counter(control, 0, is(TokenKind::kJump) + is(TokenKind::kJlo),
              is(TokenKind::kVal) + is(TokenKind::kOut) + is(TokenKind::kIn) + is(TokenKind::kEof), control_.step_count);
  add_counter(control, 1, is(TokenKind::kStart), Form(), control_.running);
  m_.layout.control_bank = c_.add_bank(std::move(control));

  SignalId hi_count = c_.add_read_signal("control.hi_count", 0, 1, kCounterQuantum);
  SignalId div_count = c_.add_read_signal("control.div_count", 0, 1, kCounterQuantum);
  circuit::Bank steps = single_row_bank("control.step_parts");
  add_counter(steps, 0, completes + is(TokenKind::kDiv), is(TokenKind::kHi) + is(TokenKind::kTop), hi_count);
  add_counter(steps, 1, completes, is(TokenKind::kDiv), div_count);
  c_.add_bank(std::move(steps));

  // The report counter starts at 0 (START writes 0) and is 1 after a FAULT.
  SignalId report_count = c_.add_read_signal("control.report_count", 0, 1, kCounterQuantum);
  add_token_register({.name = "control.report",
                      .beta = is(TokenKind::kFault) + is(TokenKind::kStart) + 0.5 * is(TokenKind::kHi),
                      .lanes = {is(TokenKind::kFault)},
                      .read = {report_count}});

  Gates g = gates("control");
  control_.n = g.counter_one_hot("n", control_.step_count, kCounterLevels);
  control_.hi_position = g.counter_one_hot("hi_position", hi_count, 4);
  control_.div_hops = g.counter_one_hot("div_hops", div_count, 12);
  control_.report_position = g.counter_one_hot("report_position", report_count, kReportWords + 1);
  control_.in_report = g.any("in_report", circuit::sum_of(control_.report_position));
}

// pc = base + n and next_pc = pc + 1 (narrow sums); the slot of the row and whether it left it.
void MachineBuilder::add_program_counter() {
  Gates g = gates("pc");
  auto binary_of_n = [&](int offset) {
    std::vector<Form> bits(5);
    for (int k = 0; k < kCounterLevels; ++k)
      for (int i = 0; i < 5; ++i)
        if (((k + offset) >> i) & 1) bits[i] += F(control_.n[k]);
    return bits;
  };
  control_.pc = circuit::narrow_sum(g, "pc", word_bits_ + 1, forms_of(control_.base), binary_of_n(0));
  control_.next_pc = circuit::narrow_sum(g, "next_pc", word_bits_ + 1, forms_of(control_.base), binary_of_n(1));

  control_.slot.clear();
  for (int s = 0; s < 16; ++s) control_.slot.push_back(g.signal("slot[" + std::to_string(s) + "]"));
  control_.resync = g.signal("resync");
  for (int low = 0; low < 16; ++low)
    for (int k = 0; k < kCounterLevels && low + k <= 16; ++k) {
      SignalId target = low + k == 16 ? control_.resync : control_.slot[low + k];
      g.add_all(target, join(match_bits(control_.base, 0, 4, low), {lit(control_.n[k])}));
    }

  Gates c = gates("control");
  SignalId past_rom = control_.pc[word_bits_];
  control_.fetch_outside = c.all("fetch_outside", {lit(control_.running), nlit(control_.in_report), lit(past_rom)});
  control_.active = c.all("active", {lit(control_.running), nlit(control_.resync), nlit(past_rom)});
  control_.executing = c.all("executing", {lit(control_.running), nlit(control_.resync), nlit(past_rom),
                                           nlit(control_.in_report)});
}

}  // namespace rvformer::cpu
