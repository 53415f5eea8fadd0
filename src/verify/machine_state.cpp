// verify/machine_state.cpp — see machine_state.h.
#include "verify/machine_state.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "compiler/physical.h"
#include "program/machine_spec.h"
#include "support/error.h"

namespace rvformer::verify {
namespace {

// Bits [first, first + count) of `bits` as a number, low bit first.
std::uint32_t packed(const std::vector<bool>& bits, std::size_t first, int count) {
  std::uint32_t value = 0;
  for (int b = 0; b < count; ++b) value |= std::uint32_t{bits[first + static_cast<std::size_t>(b)]} << b;
  return value;
}

// A 13-bit value's bits as the number.
std::int16_t sign_extended_element(std::uint32_t bits) {
  const std::uint32_t sign = 1u << (cpu::kVectorElementBits - 1);
  return static_cast<std::int16_t>(static_cast<std::int32_t>((bits ^ sign) - sign));
}

}  // namespace

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
  const cpu::MachineLayout& layout = machine_.layout;
  int word_bits = machine_.spec.code_word_bits();
  // The latch: base bits 0..7 in half 0 lanes 0..7, bits 8..11 from a near jump in lanes 8..11 or
  // from a far one in lanes 12..15 (one of them is zero), bits 12.. in half 1.
  std::uint32_t base = 0;
  for (int i = 0; i < cpu::kJumpLowBits; ++i) base |= std::uint32_t{bit(state, layout.latch_bank, 0, 0, i)} << i;
  for (int i = cpu::kJumpLowBits; i < cpu::kValueBits; ++i) {
    bool near = bit(state, layout.latch_bank, 0, 0, i), far = bit(state, layout.latch_bank, 0, 0, i + 4);
    if (near && far) fail("machine state corrupt: the PC latch holds bit {} from a near and a far jump", i);
    base |= std::uint32_t{near || far} << i;
  }
  for (int i = cpu::kValueBits; i < word_bits; ++i)
    base |= std::uint32_t{bit(state, layout.latch_bank, 0, 1, i - cpu::kValueBits)} << i;
  // The step counter lane holds V·2^-n.
  const compiler::HeadSlot& slot = bank_heads_[layout.control_bank];
  float counter = state.recurrent_head(slot.layer, 2 * slot.head)[0];
  int exponent = 0;
  double mantissa = std::frexp(static_cast<double>(counter) / compiler::kBitValue, &exponent);
  if (counter <= 0 || mantissa != 0.5 || exponent > 1 || exponent < 1 - cpu::kCounterLevels)
    fail("machine state corrupt: the PC step counter holds {}", counter);
  return machine_.spec.memory_map().code.base + 4 * (base + static_cast<std::uint32_t>(1 - exponent));
}

// A register is the sum of its three lane sets, at most one of them non-zero.
std::array<std::uint32_t, 32> MachineStateReader::registers(const engine::RecurrentStateView& state) const {
  std::array<std::uint32_t, 32> x{};
  for (int r = 1; r < 32; ++r)
    for (int i = 0; i < 32; ++i) {
      int sets = 0;
      for (int s = 0; s < cpu::kRegisterLaneSets; ++s) sets += bit(state, machine_.layout.register_bank, r, i / 16, 16 * s + i % 16);
      if (sets > 1) fail("machine state corrupt: register x{} bit {} is set in {} lane sets", r, i, sets);
      x[r] |= std::uint32_t{sets == 1} << i;
    }
  return x;
}

// RAM: bank address[..:10], row address[9:3], half address[2], one word per half.
std::uint32_t MachineStateReader::ram_word(const engine::RecurrentStateView& state, std::uint32_t address) const {
  std::uint32_t offset = address - machine_.spec.memory_map().ram.base;
  int bank = machine_.layout.ram_banks.at(offset >> 10);
  int row = static_cast<int>((offset >> 3) & 127), half = static_cast<int>((offset >> 2) & 1);
  std::uint32_t word = 0;
  for (int i = 0; i < 32; ++i) word |= std::uint32_t{bit(state, bank, row, half, i)} << i;
  return word;
}

std::uint32_t MachineStateReader::bigint_entry(const engine::RecurrentStateView& state, int memory, int index) const {
  const std::vector<int>& banks = memory == 0 ? machine_.layout.bigint_a_banks : machine_.layout.bigint_b_banks;
  if (banks.empty()) fail("the {} machine has no big-integer unit", machine_.spec.name);
  std::optional<std::uint32_t> entry;
  for (int t = 0; t < static_cast<int>(banks.size()); ++t) {
    // Copy t of A holds A[r + t] in row r, copy t of B holds B[r − t].
    int row = (memory == 0 ? index - t : index + t) & (cpu::kRowsPerBank - 1);
    std::uint32_t value = 0;
    for (int i = 0; i < cpu::kBigintLimbBits; ++i) value |= std::uint32_t{bit(state, banks[t], row, 0, i)} << i;
    if (entry && value != *entry)
      fail("big-integer memory {}[{}] is 0x{:08x} in copy 0 but 0x{:08x} in copy {}", memory == 0 ? 'A' : 'B', index,
           *entry, value, t);
    entry = value;
  }
  return *entry;
}

const std::vector<int>& MachineStateReader::vector_banks(const std::vector<int>& banks) const {
  if (banks.empty()) fail("the {} machine has no vector unit", machine_.spec.name);
  return banks;
}

std::vector<bool> MachineStateReader::level_bits(const engine::RecurrentStateView& state, int bank, int row, int half,
                                                 int first_lane, int count, int lane_bits,
                                                 const std::function<std::string()>& what) const {
  const compiler::HeadSlot& slot = bank_heads_[bank];
  const float* lanes = state.recurrent_head(slot.layer, 2 * slot.head + half).data() + row * compiler::kKeyDim + first_lane;
  std::vector<bool> bits;
  for (int m = 0; static_cast<int>(bits.size()) < count; ++m) {
    const int width = std::min(lane_bits, count - static_cast<int>(bits.size()));
    int n = 0;
    while (n < (1 << width) && lanes[m] != static_cast<float>(cpu::stored_level(n) * compiler::kBitValue)) ++n;
    if (n == 1 << width) fail("machine state corrupt: {} lane {} holds {} (not a stored level)", what(), m, lanes[m]);
    for (int b = 0; b < width; ++b) bits.push_back((n >> b & 1) != 0);
  }
  return bits;
}

std::uint32_t MachineStateReader::vector_register(const engine::RecurrentStateView& state, int r) const {
  const std::vector<int>& banks = vector_banks(machine_.layout.vector_register_banks);
  std::uint32_t value = 0;
  for (int i = 0; i < 32; ++i) value |= std::uint32_t{bit(state, banks.at(r / 2), 0, r % 2, i)} << i;
  return value;
}

// The word's bank and row as cpu::weight_memory_place gives them, half address[5], word
// address[4:2]: lanes 8w..8w+7, the nibble n of a lane stored as the level 2^(n − 1).
std::uint32_t MachineStateReader::vector_weight_word(const engine::RecurrentStateView& state,
                                                     std::uint32_t address) const {
  const std::vector<int>& banks = vector_banks(machine_.layout.vector_weight_banks);
  const cpu::WeightPlace place = cpu::weight_memory_place(static_cast<int>(banks.size()), address);
  return packed(level_bits(state, banks.at(place.bank), place.row, place.half, place.word * cpu::kVectorWeightLanes, 32,
                           cpu::kVectorWeightLaneBits,
                           [&] { return fmt::format("weight memory word 0x{:05x}", address); }),
                0, 32);
}

std::int16_t MachineStateReader::element(const engine::RecurrentStateView& state, int bank, int row, int half,
                                         int first_lane, const std::function<std::string()>& what) const {
  return sign_extended_element(packed(
      level_bits(state, bank, row, half, first_lane, cpu::kVectorElementBits, cpu::kVectorElementLaneBits, what), 0,
      cpu::kVectorElementBits));
}

// Bank element[7:5], row element[14:8], half element[4], lanes from 7·element[3:0].
std::int16_t MachineStateReader::vector_activation(const engine::RecurrentStateView& state, std::uint32_t index) const {
  const std::vector<int>& banks = vector_banks(machine_.layout.vector_activation_banks);
  if (index >= program::kVectorActivationElements) fail("AM has no element {}", index);
  return element(state, banks.at((index >> 5) & 7), static_cast<int>(index >> 8), static_cast<int>((index >> 4) & 1),
                 cpu::kVectorElementLanes * static_cast<int>(index & 15), [&] { return fmt::format("AM element {}", index); });
}

std::int16_t MachineStateReader::vector_line_slot(const engine::RecurrentStateView& state, int k) const {
  const std::vector<int>& banks = vector_banks(machine_.layout.vector_line_banks);
  return element(state, banks.at(k / 2), 0, k % 2, 0, [&] { return fmt::format("line buffer slot {}", k); });
}

// Bank slot[4:0], row slot[11:5]: element i's bit b at bit 13i + b of the half's lanes of four bits.
std::array<std::int16_t, program::kVectorKvElements> MachineStateReader::vector_kv_vector(
    const engine::RecurrentStateView& state, std::uint32_t slot, int half) const {
  const std::vector<int>& banks = vector_banks(machine_.layout.vector_kv_banks);
  if (slot >= program::kVectorKvSlots) fail("the KV cache has no slot {}", slot);
  const std::vector<bool> bits =
      level_bits(state, banks.at(slot % banks.size()), static_cast<int>(slot / banks.size()), half, 0,
                 cpu::kVectorKvVectorBits, cpu::kVectorKvLaneBits,
                 [&] { return fmt::format("KV slot {} {}", slot, half ? "values" : "keys"); });
  std::array<std::int16_t, program::kVectorKvElements> vector{};
  for (std::size_t i = 0; i < vector.size(); ++i)
    vector[i] = sign_extended_element(packed(bits, cpu::kVectorElementBits * i, cpu::kVectorElementBits));
  return vector;
}

}  // namespace rvformer::verify
