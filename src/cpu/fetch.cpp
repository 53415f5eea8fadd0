// cpu/fetch.cpp — the mode latch, the program counter and the code ROM.
//
// A pass cannot increment a counter stored in GDN state (it reads the state after the layer that
// must write it), so the PC is a base and a step count: a JUMP token writes the base and resets a
// counter lane to 1, and every completed step halves that lane (write strength 1/2 towards 0). The
// lane reads 2^-n; decoding n and adding it to the base gives the PC. After 15 sequential steps the
// machine spends one token on JUMP(pc) to re-anchor the base (docs/trace-protocol.md).
#include <cmath>

#include "cpu/machine_builder.h"
#include "circuit/arith.h"

namespace rvformer::cpu {
namespace {

}  // namespace

circuit::RowSelect binary_select(const Bits& address, std::vector<circuit::Literal> match,
                                 std::vector<circuit::LinearForm> conditions) {
  return circuit::RowSelect{{}, address, std::move(match), std::move(conditions)};
}

std::vector<circuit::Literal> match_bits(const Bits& bits, int low, int width, std::uint32_t value) {
  std::vector<circuit::Literal> literals;
  for (int i = 0; i < width; ++i)
    literals.push_back((value >> i) & 1 ? circuit::lit(bits[low + i]) : circuit::nlit(bits[low + i]));
  return literals;
}

Bits slice(const Bits& bits, int low, int count) { return Bits(bits.begin() + low, bits.begin() + low + count); }

void MachineBuilder::add_mode_and_pc_latch() {
  running_ = c_.add_read_signal("mode.running");
  circuit::Bank mode{"mode", 1};
  mode.has_write = mode.has_read = true;
  mode.write.row = {.one_hot = {circuit::kOne}, .binary = {}, .match = {}, .conditions = {F(in_.is_start)}};
  mode.write.beta[0] = Form(1.0);
  mode.write.lanes[0] = {Form(1.0)};
  mode.read.row.one_hot = {circuit::kOne};
  mode.read.lanes[0] = {{{running_, 1}}};
  m_.layout.mode_bank = c_.add_bank(std::move(mode));

  for (int i = 0; i < 16; ++i) base_.push_back(c_.add_read_signal("pc.base[" + std::to_string(i) + "]"));
  step_count_ = c_.add_read_signal("pc.step_count", 0, 1, std::ldexp(1.0, -kCounterLevels - 4));
  circuit::Bank latch{"pc", 1};
  latch.has_write = latch.has_read = true;
  latch.write.row.one_hot = {circuit::kOne};
  // A JUMP overwrites the base and restarts the count; VAL and OUT complete a step.
  latch.write.beta[0] = F(in_.is_jump);
  latch.write.beta[1] = F(in_.is_jump) + 0.5 * (F(in_.is_val) + F(in_.is_out));
  for (SignalId b : in_.jump) latch.write.lanes[0].push_back(F(b));
  latch.write.lanes[1] = {F(in_.is_jump)};
  latch.read.row.one_hot = {circuit::kOne};
  for (int i = 0; i < 16; ++i) latch.read.lanes[0].push_back({{base_[i], 1}});
  latch.read.lanes[1] = {{{step_count_, 1}}};
  m_.layout.pc_bank = c_.add_bank(std::move(latch));
}

// pc = base + n and next_pc = base + n + 1, each a one-stage narrow sum.
void MachineBuilder::add_program_counter() {
  circuit::Gates g = gates("pc");
  n_ = g.counter_one_hot("n", step_count_, kCounterLevels);
  auto binary_of_n = [&](int offset) {
    std::vector<Form> bits(5);
    for (int k = 0; k < kCounterLevels; ++k)
      for (int i = 0; i < 5; ++i)
        if (((k + offset) >> i) & 1) bits[i] += F(n_[k]);
    return bits;
  };
  pc_ = narrow_sum(g, "pc", 17, forms_of(base_), binary_of_n(0));
  next_pc_ = narrow_sum(g, "next_pc", 17, forms_of(base_), binary_of_n(1));

  // Control: a resync pass re-anchors the PC; the four passes after a FAULT report it.
  circuit::Gates control = gates("control");
  SignalId fault1 = c_.add_delay(in_.is_fault, "control.fault_1_ago");
  SignalId fault2 = c_.add_delay(fault1, "control.fault_2_ago");
  SignalId fault3 = c_.add_delay(fault2, "control.fault_3_ago");
  report_position_ = {control.copy("report0", F(in_.is_fault)), control.copy("report1", F(fault1)),
                      control.copy("report2", F(fault2)), control.copy("report3", F(fault3))};
  Form reporting = F(in_.is_fault) + F(fault1) + F(fault2) + F(fault3);
  in_report_ = control.any("in_report", reporting);
  resync_ = control.all("resync", {circuit::lit(running_), circuit::lit(n_[kResyncAt])},
                        Form(1.0) - reporting);
  active_ = control.all("active", {circuit::lit(running_), circuit::nlit(n_[kResyncAt])});
  // The START pass already reads the machine as running (a bank read sees the same pass's write),
  // but it carries no step: whatever the PC latch points at must not take effect.
  executing_ = control.all("executing", {circuit::lit(running_), circuit::nlit(n_[kResyncAt]), circuit::nlit(in_.is_start)},
                           Form(1.0) - reporting);
}

// 64 banks × 128 rows × 8 instructions. A row holds bits 2..31 of each word plus a flag that its
// low bits were 0b11 (everything else is illegal), 31 lanes per instruction, 4 per half.
void MachineBuilder::add_code_rom() {
  circuit::Gates g = gates("fetch");
  std::vector<SignalId> slot;
  for (int s = 0; s < kInstructionsPerRow; ++s) slot.push_back(g.all("slot[" + std::to_string(s) + "]", match_bits(pc_, 0, 3, s)));

  std::vector<std::vector<SignalId>> fetched(kInstructionsPerRow);
  for (int s = 0; s < kInstructionsPerRow; ++s)
    for (int b = 0; b < 31; ++b)
      fetched[s].push_back(c_.add_read_signal("fetch.slot" + std::to_string(s) + "[" + std::to_string(b) + "]"));

  for (int k = 0; k < kCodeBanks; ++k) {
    circuit::Bank rom{"code" + std::to_string(k), kRowsPerBank};
    rom.has_read = rom.has_write = true;
    std::vector<circuit::Literal> bank = match_bits(pc_, 10, 6, k);
    bank.push_back(circuit::nlit(pc_[16]));
    rom.read.row = binary_select(slice(pc_, 3, 7), bank);
    rom.write.row = binary_select(slice(base_, 0, 7), match_bits(base_, 7, 6, k), {F(commit_code_)});
    for (int h = 0; h < 2; ++h) {
      rom.write.beta[h] = Form(1.0);
      for (int s = 4 * h; s < 4 * h + 4; ++s) {
        const Bits& low = staged_[2 * s];
        const Bits& high = staged_[2 * s + 1];
        for (int b = 0; b < 31; ++b) {
          // Lane b < 30 is word bit b + 2; lane 30 is the legality flag.
          Form lane = b == 30 ? F(legal_flags_[s]) : F(b + 2 < 16 ? low[b + 2] : high[b + 2 - 16]);
          rom.write.lanes[h].push_back(lane);
          rom.read.lanes[h].push_back({{fetched[s][b], 1}});
        }
      }
    }
    m_.layout.code_banks.push_back(c_.add_bank(std::move(rom)));
  }

  insn_.assign(32, zero_);
  for (int b = 0; b < 31; ++b) {
    SignalId bit = g.signal(b == 30 ? "legal" : "insn[" + std::to_string(b + 2) + "]");
    for (int s = 0; s < kInstructionsPerRow; ++s) g.add_all(bit, {circuit::lit(slot[s]), circuit::lit(fetched[s][b])});
    if (b == 30) legal_ = bit;
    else insn_[b + 2] = bit;
  }
}

}  // namespace rvformer::cpu
