// verify/machine_state.h — reads the architectural state of the compiled machine (PC, registers,
// RAM words, the big-integer unit's memories, the vector unit's memories) out of a model's GDN
// recurrent state, given where placement put each bank (the compiled machine's bank_heads). Every
// lane must hold exactly 0 or the bit value V, or a stored level where a memory keeps several bits
// a lane; anything else is reported as corruption.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
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
  // Its activation memory's element `element`, and slot k of vu.put's line buffer (13-bit values).
  std::int16_t vector_activation(const engine::RecurrentStateView& state, std::uint32_t element) const;
  std::int16_t vector_line_slot(const engine::RecurrentStateView& state, int k) const;
  // Its KV cache's key vector (half 0) or value vector (half 1) of slot `slot`.
  std::array<std::int16_t, program::kVectorKvElements> vector_kv_vector(const engine::RecurrentStateView& state,
                                                                         std::uint32_t slot, int half) const;

 private:
  bool bit(const engine::RecurrentStateView& state, int bank, int row, int half, int lane) const;
  // The `count` bits held from lane `first_lane` on, `lane_bits` a lane (the last lane may hold
  // fewer), each lane the level 0 or 2^(n − 1)·V of its value n; `what` names them in the error
  // for a lane that holds anything else.
  std::vector<bool> level_bits(const engine::RecurrentStateView& state, int bank, int row, int half, int first_lane,
                               int count, int lane_bits, const std::function<std::string()>& what) const;
  // A 13-bit element of AM's layout from lane `first_lane` on.
  std::int16_t element(const engine::RecurrentStateView& state, int bank, int row, int half, int first_lane,
                       const std::function<std::string()>& what) const;
  const std::vector<int>& vector_banks(const std::vector<int>& banks) const;

  const cpu::Machine& machine_;
  std::vector<compiler::HeadSlot> bank_heads_;
};

}  // namespace rvformer::verify
