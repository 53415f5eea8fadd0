// cpu/memory.cpp — loads, stores and the memory-mapped registers.
//
// Read-only data: 64 banks × 128 rows × 4 words (two words per value half). RAM: 64 banks × 128
// rows × 1 word, its low halfword in value half 0 and its high halfword in half 1, so that sw and
// sh are plain writes (a write strength per half selects the halfword). An sb must keep the other
// byte of its halfword: its first pass reads the halfword and emits HI(old halfword), its second
// pass merges the byte in and writes the halfword (docs/trace-protocol.md).
#include "cpu/machine_builder.h"
#include "program/memory_map.h"

namespace rvformer::cpu {
namespace {

using circuit::lit;
using circuit::Literal;
using circuit::nlit;

std::vector<Literal> join(std::vector<Literal> a, const std::vector<Literal>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

constexpr program::MemoryMap kMap = program::kRvformerMap;

}  // namespace

void MachineBuilder::add_data_memory() {
  circuit::Gates g = gates("memory");
  Form is_load = F(op_[kLb]) + F(op_[kLh]) + F(op_[kLw]) + F(op_[kLbu]) + F(op_[kLhu]);
  Form is_store = F(op_[kSb]) + F(op_[kSh]) + F(op_[kSw]);
  Form halfword_access = F(op_[kLh]) + F(op_[kLhu]) + F(op_[kSh]);
  Form word_access = F(op_[kLw]) + F(op_[kSw]);

  // Regions, from the address bits (each an exact threshold or AND).
  static_assert(kMap.ram.base == 0xFFFF8000 && kMap.ram.size == 0x8000, "RAM is the top 32 KB");
  static_assert(kMap.rodata.base == 0x1000 && kMap.rodata.size == 0x20000, "rodata is 0x1000..0x21000");
  SignalId in_ram = g.all("in_ram", match_bits(address_, 15, 17, 0x1FFFF));
  // rodata: address[31:18] = 0 and address[17:12] in [1, 32]; a high bit pushes the sum past 32.
  Form page = circuit::binary_value(Bits(address_.begin() + 12, address_.begin() + 18));
  for (int i = 18; i < 32; ++i) page += F(address_[i]) * 64;
  SignalId in_rodata = g.signal("in_rodata");
  g.add_step(in_rodata, page, 1, 1);
  g.add_step(in_rodata, page, 33, -1);
  SignalId at_console = g.all("at_console", match_bits(address_, 0, 32, kMap.console_address));
  SignalId at_exit = g.all("at_exit", match_bits(address_, 0, 32, kMap.exit_address));
  // Misaligned: a halfword at an odd address, a word at an address with either low bit set.
  SignalId misaligned = g.signal("misaligned");
  g.add_relu(misaligned, halfword_access + F(address_[0]) - 1);
  g.add_step(misaligned, 2 * word_access + F(address_[0]) + F(address_[1]), 3);

  // Faults and MMIO stores (final decisions need the misalignment bit, one stage later).
  load_misaligned_ = g.all("load_misaligned", {lit(misaligned)}, is_load);
  load_outside_ = g.signal("load_outside");
  g.add_relu(load_outside_, is_load - F(in_ram) - F(in_rodata) - F(misaligned));
  store_misaligned_ = g.all("store_misaligned", {lit(misaligned)}, is_store);
  SignalId console = g.all("console_sb", {lit(at_console)}, F(op_[kSb]));
  SignalId exit = g.all("exit_sw", {lit(at_exit)}, F(op_[kSw]));
  store_outside_ = g.signal("store_outside");
  g.add_relu(store_outside_, is_store - F(in_ram) - F(misaligned) - F(console) - F(exit));
  console_store_ = g.all("console", {lit(console), lit(executing_)});
  exit_store_ = g.all("exit", {lit(exit), lit(executing_)});

  // Read-only data: bank = address[17:11] − 2, row = address[10:4], word = address[3:2]. Loading
  // fills a row (named by the JUMP token's payload) from the 8 staged halfwords.
  std::vector<std::vector<SignalId>> rodata_word(kRodataWordsPerRow);
  for (int w = 0; w < kRodataWordsPerRow; ++w)
    for (int i = 0; i < 32; ++i) rodata_word[w].push_back(c_.add_read_signal("memory.rodata" + std::to_string(w) + "[" + std::to_string(i) + "]"));
  for (int k = 0; k < kRodataBanks; ++k) {
    circuit::Bank bank{"rodata" + std::to_string(k), kRowsPerBank};
    bank.has_read = bank.has_write = true;
    bank.write.row = binary_select(slice(base_, 0, 7), match_bits(base_, 7, 6, k), {F(commit_rodata_)});
    bank.read.row = binary_select(slice(address_, 4, 7), match_bits(address_, 11, 7, k + 2), {is_load, F(in_rodata)});
    for (int h = 0; h < 2; ++h) {
      bank.write.beta[h] = Form(1.0);
      for (int w = 2 * h; w < 2 * h + 2; ++w)
        for (int i = 0; i < 32; ++i) {
          bank.write.lanes[h].push_back(F(staged_[2 * w + i / 16][i % 16]));
          bank.read.lanes[h].push_back({{rodata_word[w][i], 1}});
        }
    }
    m_.layout.rodata_banks.push_back(c_.add_bank(std::move(bank)));
  }

  // RAM: bank = address[14:9], row = address[8:2]; half 0 = bits 0..15, half 1 = bits 16..31.
  Bits ram_word;
  for (int i = 0; i < 32; ++i) ram_word.push_back(c_.add_read_signal("memory.ram[" + std::to_string(i) + "]"));
  SignalId sb_first = g.all("sb_first", {lit(in_ram), nlit(in_.is_hi), lit(executing_)}, F(op_[kSb]));
  SignalId sb_second = g.all("sb_second", {lit(in_ram), lit(in_.is_hi), lit(executing_)}, F(op_[kSb]));
  ram_byte_store_ = sb_first;
  // Which halves a store writes (0/1 each): sw both, sh and sb the one address bit 1 selects.
  SignalId write_half[2];
  for (int h = 0; h < 2; ++h) {
    write_half[h] = g.signal("write_half" + std::to_string(h));
    g.add_all(write_half[h], {lit(in_ram), lit(executing_)}, F(op_[kSw]));
    g.add_all(write_half[h], {lit(in_ram), lit(executing_), h ? lit(address_[1]) : nlit(address_[1])}, F(op_[kSh]));
    g.add_all(write_half[h], {h ? lit(address_[1]) : nlit(address_[1])}, F(sb_second));
  }
  // Lane values: sw writes rs2 bits 16h..16h+15, sh rs2 bits 0..15, and the second sb pass the old
  // halfword (from its HI token) with the addressed byte replaced by rs2 bits 0..7.
  std::vector<std::vector<SignalId>> lane(2);
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 16; ++i) {
      SignalId v = g.signal("store_half" + std::to_string(h) + "[" + std::to_string(i) + "]");
      g.add_all(v, {lit(rs2_value_[16 * h + i])}, F(op_[kSw]));
      g.add_all(v, {lit(rs2_value_[i])}, F(op_[kSh]));
      int byte = i / 8;
      // Byte `byte` of the halfword is replaced when address bit 0 equals it.
      g.add_all(v, {lit(rs2_value_[i % 8]), byte ? lit(address_[0]) : nlit(address_[0])}, F(sb_second));
      g.add_all(v, {lit(in_.hi[i]), byte ? nlit(address_[0]) : lit(address_[0])}, F(sb_second));
      lane[h].push_back(v);
    }
  Form reads_ram = is_load + F(op_[kSb]);
  for (int k = 0; k < kRamBanks; ++k) {
    // A write needs only the bank: its strength per half is 0 unless a RAM store takes effect.
    circuit::Bank bank{"ram" + std::to_string(k), kRowsPerBank};
    bank.has_read = bank.has_write = true;
    bank.read.row = binary_select(slice(address_, 2, 7), match_bits(address_, 9, 6, k), {reads_ram, F(in_ram)});
    bank.write.row = binary_select(slice(address_, 2, 7), match_bits(address_, 9, 6, k));
    for (int h = 0; h < 2; ++h) {
      bank.write.beta[h] = F(write_half[h]);
      for (int i = 0; i < 16; ++i) {
        bank.write.lanes[h].push_back(F(lane[h][i]));
        bank.read.lanes[h].push_back({{ram_word[16 * h + i], 1}});
      }
    }
    m_.layout.ram_banks.push_back(c_.add_bank(std::move(bank)));
  }

  // The addressed word, then the loaded value (byte or halfword selected and extended).
  Bits word;
  for (int i = 0; i < 32; ++i) {
    SignalId bit = g.signal("word[" + std::to_string(i) + "]");
    g.add_relu(bit, F(ram_word[i]));
    for (int w = 0; w < kRodataWordsPerRow; ++w)
      g.add_all(bit, join(match_bits(address_, 2, 2, w), {lit(rodata_word[w][i])}));
    word.push_back(bit);
  }
  loaded_.assign(32, Form());
  auto add_field = [&](const std::string& name, int op, int width, bool sign_extend) {
    for (int i = 0; i < (sign_extend ? 32 : width); ++i) {
      SignalId bit = g.signal(name + "[" + std::to_string(i) + "]");
      for (int offset = 0; offset < 4; offset += width / 8) {
        int source = 8 * offset + (i < width ? i : width - 1);
        g.add_all(bit, join(match_bits(address_, 0, 2, offset), {lit(word[source]), lit(executing_)}), F(op_[op]));
      }
      loaded_[i] += F(bit);
    }
  };
  add_field("lb", kLb, 8, true);
  add_field("lbu", kLbu, 8, false);
  add_field("lh", kLh, 16, true);
  add_field("lhu", kLhu, 16, false);
  for (int i = 0; i < 32; ++i)
    loaded_[i] += F(g.all("lw[" + std::to_string(i) + "]", {lit(word[i]), lit(executing_)}, F(op_[kLw])));
  // The halfword an sb merges into, for its first pass's HI token.
  old_half_.clear();
  for (int i = 0; i < 16; ++i) {
    SignalId bit = g.signal("old_half[" + std::to_string(i) + "]");
    g.add_all(bit, {nlit(address_[1]), lit(word[i])}, F(sb_first));
    g.add_all(bit, {lit(address_[1]), lit(word[16 + i])}, F(sb_first));
    old_half_.push_back(bit);
  }
}

}  // namespace rvformer::cpu
