// verify/machine_state.h — reads the architectural state of the compiled machine (PC, registers,
// RAM words, the big-integer unit's memories, the vector unit's weight memory) out of a model's GDN recurrent state, given where placement put each bank (the
// compiled machine's bank_heads). Every lane must hold exactly 0 or the bit value V; anything else
// is reported as corruption.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "compiler/placement.h"
#include "cpu/machine.h"
#include "engine/state.h"

namespace rvformer::verify {

class MachineStateReader {
 public:
  MachineStateReader(const cpu::Machine& machine, std::vector<compiler::HeadSlot> bank_heads);

  // Throw rvformer::Error naming the bank, row and lane of a value that is neither 0 nor V.
  std::uint32_t pc(const engine::RecurrentStateView& state) const;  // byte address of the next instruction
  std::array<std::uint32_t, 32> registers(const engine::RecurrentStateView& state) const;
  std::uint32_t ram_word(const engine::RecurrentStateView& state, std::uint32_t address) const;  // address in RAM
  // Entry `index` of the big-integer unit's memory A (memory 0) or B (1), from each of its eight
  // copies; throws when the copies disagree (docs/bigint-unit.md).
  std::uint32_t bigint_entry(const engine::RecurrentStateView& state, int memory, int index) const;
  // The vector unit's weight memory word at byte address `address` (a multiple of 4); its lanes must
  // hold the levels 0 or V·2^k, k ≤ 14 (docs/machine-layout.md).
  std::uint32_t vector_weight_word(const engine::RecurrentStateView& state, std::uint32_t address) const;
  // Its configuration register r (VL, COLS, SRC, AUX, HS: the funct7 of the vu.set* that writes it).
  std::uint32_t vector_register(const engine::RecurrentStateView& state, int r) const;

 private:
  bool bit(const engine::RecurrentStateView& state, int bank, int row, int half, int lane) const;

  const cpu::Machine& machine_;
  std::vector<compiler::HeadSlot> bank_heads_;
};

}  // namespace rvformer::verify
