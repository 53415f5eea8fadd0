// cpu/vector_unit.cpp — the vector unit's part of the machine so far (docs/vector-unit.md): its
// weight memory (WM), filled by the loader from the program image's third part, vu.wget, which
// reads a word of it into rd; its activation memory (AM), which vu.put writes a line at a time
// through a line buffer and vu.get reads an element of; its KV cache, which vu.kput and vu.vput
// fill from AM rows; and the configuration registers the vu.set* instructions write.
//
// WM is banks of 128 rows × 16 words (8 per half) at four bits a lane, each lane the level 0 or
// 2^(n − 1) of its nibble n: a word takes 8 lanes, a bank 8 KiB, so 384 KiB take 48 banks where two
// bits a lane would take 96. vu.wget's address is rs1 itself: bank rs1[18:13], row rs1[12:6], half
// rs1[5], word rs1[4:2]; an address outside WM or not a multiple of 4 makes it an illegal
// instruction, as on the golden emulator.
//
// AM is 8 banks of 128 rows × 32 elements (16 per half) of 13 bits, two bits a lane: element e is
// in bank e[7:5], row e[14:8], half e[4], lanes 7·e[3:0] .. + 6. A write replaces a half-row, so
// vu.put writes its value's lanes into slot e[3:0] of a line buffer (single-row banks, a slot a
// half) and, at slot 15, reads the buffer back and writes it into the line's half-row whole, as the
// golden emulator's vu.put commits its buffer.
//
// The KV cache is 32 banks of 128 rows, slot s in bank s[4:0], row s[11:5], its key vector in half
// 0 and its value vector in half 1: 32 elements of 13 bits packed four bits a lane (104 lanes, each
// the level 0 or 2^(n − 1) of its nibble n, as WM's), so that an attention pass can read a block of
// 32 consecutive slots, a row of every bank. vu.kput and vu.vput read the 32 elements as one row
// of one AM bank.
#include <bit>

#include "cpu/machine_builder.h"
#include "support/error.h"

namespace rvformer::cpu {

void MachineBuilder::add_vector_unit() {
  if (!spec_.vector_weight_bytes) return;
  add_vector_weight_memory();
  add_vector_kv_cache(add_vector_activation_memory());
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

std::vector<std::vector<SignalId>> MachineBuilder::add_vector_activation_memory() {
  Gates g = gates("vector.am");
  const SignalId put = decoded_.op[kVuPut], get = decoded_.op[kVuGet];
  const Bits& element = operands_.rs1;
  const Bits& value = operands_.rs2;
  static_assert(kVectorActivationBanks * kRowsPerBank * 2 * kVectorLineElements == 1 << kVectorElementAddressBits);

  // Out of range: an element past AM, or a put value whose bits 31..12 are not all equal.
  Form high_bits;
  for (int i = kVectorElementAddressBits; i < 32; ++i) high_bits += F(element[i]);
  SignalId element_outside = g.any("element_outside", high_bits);
  Form sign_bits;
  for (int i = kVectorElementBits - 1; i < 32; ++i) sign_bits += F(value[i]);
  SignalId value_outside = g.signal("value_outside");
  g.add_step(value_outside, sign_bits, 1);
  g.add_step(value_outside, sign_bits, 33 - kVectorElementBits, -1);
  SignalId illegal_put = g.signal("illegal_put");
  g.add_step(illegal_put, 2 * F(put) + F(element_outside) + F(value_outside), 3);
  SignalId illegal_get = g.all("illegal_get", {lit(get), lit(element_outside)});
  illegal_operands_.push_back(illegal_put);
  illegal_operands_.push_back(illegal_get);

  // The put value as AM stores it, two bits a lane (the level 0, 1, 2 or 4; bit 12 alone in the
  // last lane), in the line buffer's slot k, written by a legal put at an element ≡ k; the buffer is
  // read every pass.
  std::vector<SignalId> value_levels;
  for (int m = 0; m < kVectorElementLanes; ++m)
    value_levels.push_back(c_.add_stored_levels_signal("vector.am.value_level[" + std::to_string(m) + "]"));
  add_bits_as_levels(g, value_levels, slice(value, 0, kVectorElementBits), {}, kVectorElementLaneBits);
  std::vector<SignalId> puts_slot;
  for (int k = 0; k < kVectorLineElements; ++k)
    puts_slot.push_back(g.all("put_slot" + std::to_string(k),
                              join(match_bits(element, 0, 4, static_cast<std::uint32_t>(k)),
                                   {lit(put), nlit(element_outside), nlit(value_outside)})));
  std::vector<std::vector<SignalId>> line = add_read_slots("vector.line", kVectorLineElements, kVectorElementLanes);
  for (int b = 0; 2 * b < kVectorLineElements; ++b) {
    circuit::Bank bank = single_row_bank("vector.line" + std::to_string(b));
    bank.write.row.conditions = {F(put)};
    for (int h = 0; h < 2; ++h) {
      bank.write.beta[h] = F(puts_slot[2 * b + h]);
      for (int m = 0; m < kVectorElementLanes; ++m) {
        bank.write.lanes[h].push_back(F(value_levels[m]));
        bank.read.lanes[h].push_back({{line[2 * b + h][m], 1}});
      }
    }
    m_.layout.vector_line_banks.push_back(c_.add_bank(std::move(bank)));
  }

  // The put at slot 15 commits the buffer into its line's half-row, lane for lane.
  const SignalId commit = puts_slot.back();
  std::vector<SignalId> levels;
  for (int k = 0; k < kVectorLineElements; ++k)
    for (int m = 0; m < kVectorElementLanes; ++m) {
      levels.push_back(c_.add_stored_levels_signal("vector.am.level" + std::to_string(k) + "[" + std::to_string(m) + "]"));
      g.add_relu(levels.back(), F(line[k][m]));
    }
  std::vector<std::vector<SignalId>> read =
      add_read_slots("vector.am", 2 * kVectorLineElements, kVectorElementLanes);
  for (int b = 0; b < kVectorActivationBanks; ++b) {
    circuit::Bank bank{"vector.am" + std::to_string(b), kRowsPerBank};
    bank.has_read = bank.has_write = true;
    const std::vector<Literal> this_bank = match_bits(element, 5, 3, static_cast<std::uint32_t>(b));
    bank.write.row = binary_select(slice(element, 8, 7), this_bank, {F(commit)});
    bank.read.row = binary_select(slice(element, 8, 7), this_bank, {F(get) + F(decoded_.op[kVuKput]) + F(decoded_.op[kVuVput])});
    for (int h = 0; h < 2; ++h) {
      bank.write.beta[h] = h ? F(element[4]) : Form(1.0) - F(element[4]);
      for (SignalId level : levels) bank.write.lanes[h].push_back(F(level));
      for (int k = 0; k < kVectorLineElements; ++k)
        for (SignalId lane : read[kVectorLineElements * h + k]) bank.read.lanes[h].push_back({{lane, 1}});
    }
    m_.layout.vector_activation_banks.push_back(c_.add_bank(std::move(bank)));
  }

  // vu.get: the element at e[4:0] of the row read, sign-extended from bit 12.
  Gates r = g.sub("get");
  Bits bits;
  for (int i = 0; i < kVectorElementBits; ++i) bits.push_back(r.signal("bit[" + std::to_string(i) + "]"));
  for (int slot = 0; slot < 2 * kVectorLineElements; ++slot)
    add_levels_as_bits(r, read[slot], join(match_bits(element, 0, 5, static_cast<std::uint32_t>(slot)), {lit(get)}), bits,
                       kVectorElementLaneBits);
  Forms word = forms_of(bits);
  word.resize(32, F(bits.back()));
  write_result(word, "vector.get", {nlit(illegal_get)});
  return read;
}

void MachineBuilder::add_vector_kv_cache(const std::vector<std::vector<SignalId>>& am_row) {
  Gates g = gates("vector.kv");
  const SignalId kput = decoded_.op[kVuKput], vput = decoded_.op[kVuVput];
  const Bits& element = operands_.rs1;
  const Bits& slot = operands_.rs2;
  constexpr int kSlotBits = 12, kBankBits = 5;  // 4,096 slots: bank slot[4:0], row slot[11:5]
  static_assert(program::kVectorKvSlots == 1u << kSlotBits && kVectorKvBanks == 1 << kBankBits);

  // Out of range: an element not a multiple of 32 or past AM, a slot past the cache.
  Form outside;
  for (int i = 0; i < 32; ++i)
    if (i < kBankBits || i >= kVectorElementAddressBits) outside += F(element[i]);
  for (int i = kSlotBits; i < 32; ++i) outside += F(slot[i]);
  SignalId kv_outside = g.any("outside", outside);
  SignalId illegal = g.signal("illegal");
  g.add_step(illegal, 2 * (F(kput) + F(vput)) + F(kv_outside), 3);
  illegal_operands_.push_back(illegal);
  const SignalId writes_keys = g.all("writes_keys", {lit(kput), nlit(kv_outside)});
  const SignalId writes_values = g.all("writes_values", {lit(vput), nlit(kv_outside)});

  // The row's 32 elements as bits, element i's bit b at 13i + b, then four bits a lane as stored
  // levels. The first pass writes the slot's half with zeros, since a lane of four bits is only
  // overwritten exactly upwards or with 0 (docs/circuit-encoding.md); it sends HI(0), and the
  // second writes the levels and completes the step.
  const SignalId to_kv = g.relu("to_kv", F(kput) + F(vput), 1);
  const SignalId clear_pass = g.all("clear_pass", {lit(to_kv), lit(control_.hi_position[0])});
  hi_passes_.push_back(clear_pass);
  Gates d = g.sub("bits");
  Bits bits;
  for (int i = 0; i < kVectorKvVectorBits; ++i) bits.push_back(d.signal("bit[" + std::to_string(i) + "]"));
  for (int k = 0; k < static_cast<int>(program::kVectorKvElements); ++k)
    add_levels_as_bits(d, am_row[k], {lit(to_kv)}, slice(bits, kVectorElementBits * k, kVectorElementBits),
                       kVectorElementLaneBits);
  std::vector<SignalId> lanes;
  for (int m = 0; m < kVectorKvLanes; ++m)
    lanes.push_back(c_.add_stored_levels_signal("vector.kv.level[" + std::to_string(m) + "]",
                                                stored_level((1 << kVectorKvLaneBits) - 1)));
  add_bits_as_levels(g, lanes, bits, {lit(control_.hi_position[1])}, kVectorKvLaneBits);
  for (int b = 0; b < kVectorKvBanks; ++b) {
    circuit::Bank bank{"vector.kv" + std::to_string(b), kRowsPerBank};
    bank.has_write = true;
    bank.write.row = binary_select(slice(slot, kBankBits, kSlotBits - kBankBits),
                                   match_bits(slot, 0, kBankBits, static_cast<std::uint32_t>(b)),
                                   {F(writes_keys) + F(writes_values)});
    bank.write.beta[0] = F(writes_keys);
    bank.write.beta[1] = F(writes_values);
    for (int h = 0; h < 2; ++h)
      for (SignalId lane : lanes) bank.write.lanes[h].push_back(F(lane));
    m_.layout.vector_kv_banks.push_back(c_.add_bank(std::move(bank)));
  }
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
