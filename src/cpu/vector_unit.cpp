// cpu/vector_unit.cpp — the vector unit's part of the machine so far (docs/vector-unit.md): its
// weight memory (WM), filled by the loader from the program image's third part, vu.wget, which
// reads a word of it into rd, and the configuration registers the vu.set* instructions write.
//
// WM is banks of 128 rows × 16 words (8 per half) at four bits a lane, each lane the level 0 or
// 2^(n − 1) of its nibble n: a word takes 8 lanes, a bank 8 KiB, so 384 KiB take 48 banks where two
// bits a lane would take 96. vu.wget's address is rs1 itself: bank rs1[18:13], row rs1[12:6], half
// rs1[5], word rs1[4:2]; an address outside WM or not a multiple of 4 makes it an illegal
// instruction, as on the golden emulator.
#include <bit>

#include "cpu/machine_builder.h"
#include "support/error.h"

namespace rvformer::cpu {

void MachineBuilder::add_vector_unit() {
  if (!spec_.vector_weight_bytes) return;
  add_vector_weight_memory();
  add_vector_registers();
}

void MachineBuilder::add_vector_weight_memory() {
  const int banks = static_cast<int>(spec_.vector_weight_bytes / kVectorWeightBankBytes);
  const int bank_bits = std::bit_width(static_cast<unsigned>(banks - 1));
  const int half_row_bits = 8 + bank_bits;
  if (spec_.vector_weight_bytes % kVectorWeightBankBytes != 0 || half_row_bits > word_bits_ - 1)
    fail("cpu: the {} machine's weight memory ({} bytes) is not whole banks the loader can address", spec_.name,
         spec_.vector_weight_bytes);
  Gates g = gates("vector");
  SignalId wget = decoded_.op[kVuWget];
  const Bits& address = operands_.rs1;
  constexpr int kLow = 13;  // the bank's bits start here
  const int top = kLow + bank_bits;

  // Illegal operands: a low bit set, a bit above the banks set, or a bank number past the last.
  Form outside = F(address[0]) + F(address[1]);
  for (int i = top; i < 32; ++i) outside += F(address[i]);
  SignalId past_last = g.signal("past_last_bank");
  g.add_step(past_last, circuit::binary_value(slice(address, kLow, bank_bits)), banks);
  outside += F(past_last);
  SignalId illegal = g.all("illegal_operand", {lit(wget), lit(g.any("outside", outside))});
  illegal_operands_.push_back(illegal);

  const double top_level = stored_level((1 << kVectorWeightLaneBits) - 1);
  std::vector<std::vector<SignalId>> read =
      add_read_slots("vector.weights", 2 * kVectorWeightWordsPerHalf, kVectorWeightLanes, top_level);
  std::vector<circuit::RowSelect> read_rows;
  for (int k = 0; k < banks; ++k)
    read_rows.push_back(
        binary_select(slice(address, 6, 7), match_bits(address, kLow, bank_bits, static_cast<std::uint32_t>(k)), {F(wget)}));
  m_.layout.vector_weight_banks = add_loaded_memory({.name = "vector.weights",
                                                     .bank_bits = bank_bits,
                                                     .region = staged_.vector_weight_region,
                                                     .commit = F(in_.stage_slot[kVectorWeightSlots - 1]),
                                                     .staged = staged_.vector_weight_lanes,
                                                     .read = read,
                                                     .read_rows = std::move(read_rows)});

  // The addressed word, by address[5:2], into the value payload (not when it traps: the trap report
  // takes the payload).
  Gates w = g.sub("wget");
  Bits word;
  for (int i = 0; i < 32; ++i) word.push_back(w.signal("word[" + std::to_string(i) + "]"));
  for (int slot = 0; slot < 2 * kVectorWeightWordsPerHalf; ++slot)
    add_levels_as_bits(w, read[slot], join(match_bits(address, 2, 4, static_cast<std::uint32_t>(slot)), {lit(wget)}),
                       word, kVectorWeightLaneBits);
  write_result(forms_of(word), "vector.wget", {nlit(illegal)});
}

// The configuration registers, two to a single-row bank (a write replaces its half only): each
// vu.set* writes rs1's bits into its register's half.
void MachineBuilder::add_vector_registers() {
  constexpr int kRegisters = kVuSeths - kVuSetvl + 1;
  for (int bank_index = 0; 2 * bank_index < kRegisters; ++bank_index) {
    circuit::Bank bank = single_row_bank("vector.registers" + std::to_string(bank_index));
    bank.has_read = false;
    for (int h = 0; h < 2 && 2 * bank_index + h < kRegisters; ++h) {
      bank.write.beta[h] = F(decoded_.op[kVuSetvl + 2 * bank_index + h]);
      for (int i = 0; i < 32; ++i) bank.write.lanes[h].push_back(F(operands_.rs1[i]));
    }
    m_.layout.vector_register_banks.push_back(c_.add_bank(std::move(bank)));
  }
}

}  // namespace rvformer::cpu
