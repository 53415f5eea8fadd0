// verify/machine_state.cpp — see machine_state.h.
#include "verify/machine_state.h"

#include <cmath>

#include "compiler/physical.h"
#include "program/memory_map.h"
#include "support/error.h"

namespace rvformer::verify {

MachineStateReader::MachineStateReader(const cpu::Machine& machine, std::vector<compiler::HeadSlot> bank_heads)
    : machine_(machine), bank_heads_(std::move(bank_heads)) {
  if (bank_heads_.size() != machine_.circuit.banks().size())
    fail("the compiled machine places {} memory banks, the machine description has {}", bank_heads_.size(),
         machine_.circuit.banks().size());
}

bool MachineStateReader::bit(const engine::RecurrentStateView& state, int bank, int row, int half, int lane) const {
  const compiler::HeadSlot& slot = bank_heads_[bank];
  float value = state.recurrent_head(slot.layer, 2 * slot.head + half)[row * compiler::kKeyDim + lane];
  if (value == 0) return false;
  if (value == static_cast<float>(compiler::kBitValue)) return true;
  fail("machine state corrupt: bank {} row {} half {} lane {} holds {} (neither 0 nor the bit value)",
       machine_.circuit.banks()[bank].name, row, half, lane, value);
}

std::uint32_t MachineStateReader::pc(const engine::RecurrentStateView& state) const {
  int bank = machine_.layout.pc_bank;
  std::uint32_t base = 0;
  for (int i = 0; i < 16; ++i) base |= std::uint32_t{bit(state, bank, 0, 0, i)} << i;
  const compiler::HeadSlot& slot = bank_heads_[bank];
  // The step counter lane holds V·2^-n.
  float counter = state.recurrent_head(slot.layer, 2 * slot.head + 1)[0];
  int exponent = 0;
  double mantissa = std::frexp(static_cast<double>(counter) / compiler::kBitValue, &exponent);
  if (counter <= 0 || mantissa != 0.5 || exponent > 1 || exponent < 1 - cpu::kCounterLevels)
    fail("machine state corrupt: the PC step counter holds {}", counter);
  return program::kRvformerMap.code.base + 4 * (base + static_cast<std::uint32_t>(1 - exponent));
}

std::array<std::uint32_t, 32> MachineStateReader::registers(const engine::RecurrentStateView& state) const {
  std::array<std::uint32_t, 32> x{};
  for (int r = 1; r < 32; ++r)
    for (int i = 0; i < 32; ++i) x[r] |= std::uint32_t{bit(state, machine_.layout.register_bank, r, i / 16, i % 16)} << i;
  return x;
}

std::uint32_t MachineStateReader::ram_word(const engine::RecurrentStateView& state, std::uint32_t address) const {
  int bank = machine_.layout.ram_banks.at((address >> 9) & 63);
  int row = (address >> 2) & 127;
  std::uint32_t word = 0;
  for (int i = 0; i < 32; ++i) word |= std::uint32_t{bit(state, bank, row, i / 16, i % 16)} << i;
  return word;
}

}  // namespace rvformer::verify
