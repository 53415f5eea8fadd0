// cpu/memory.cpp — loads, stores and the memory-mapped registers.
//
// Read-only data: banks of 128 rows × 8 words (4 per half, two bits per lane), bank k holding the
// 4 KB page k + 1. RAM: banks of 128 rows × 2 words (one per half, a bit per lane), so that sw is a
// plain write of one half. A byte or halfword store must keep the rest of its word, which a GDN
// layer cannot read and write in one pass: its first two passes read the word and emit the bytes
// to keep as two HI words, and the third merges them with the new bits and writes the word
// (docs/trace-protocol.md). Addresses select banks and rows in binary; the one-stage sums of the
// low address bits come first, the whole 32-bit addresses (for region checks and fault reports) a
// stage later.
#include <algorithm>
#include <cmath>

#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {

int log2_exact(std::uint32_t value) {
  int bits = 0;
  while ((std::uint32_t{1} << bits) < value) ++bits;
  return bits;
}

Forms part(const Forms& forms, int low, int count) { return Forms(forms.begin() + low, forms.begin() + low + count); }

// [(rs1 + imm) >> p == value] (an imm of 12 bits sign-extended, p ≥ 12) in two stages: c, the
// carry out of the low p bits, then with s the immediate's sign, the top of rs1 must be
// value − c + s.
SignalId top_bits_equal(Gates& g, const std::string& name, const Bits& rs1, const Forms& imm, int p, std::uint32_t value,
                        const Enable& enable) {
  Form low;
  for (int i = 0; i < p; ++i) low += (F(rs1[i]) + imm[i]) * std::ldexp(1.0, i);
  SignalId carry = g.at_least(name + ".carry", low, std::ldexp(1.0, p));
  SignalId sign = imm[31].terms().front().signal;
  std::uint32_t mask = (1u << (32 - p)) - 1;
  auto top_is = [&](std::uint32_t v) { return match_bits(rs1, p, 32 - p, v & mask); };
  SignalId out = g.signal(name);
  g.add_all(out, enable.with(join(top_is(value), {nlit(sign), nlit(carry)})));
  g.add_all(out, enable.with(join(top_is(value - 1), {nlit(sign), lit(carry)})));
  g.add_all(out, enable.with(join(top_is(value + 1), {lit(sign), nlit(carry)})));
  g.add_all(out, enable.with(join(top_is(value), {lit(sign), lit(carry)})));
  return out;
}

}  // namespace

// Lane x = level(n) − K·(literals failing), with K above every level so that an unselected lane
// reads below 0. Output bit i is the piecewise linear function through (level(n), bit i of n):
// one ramp at each level but the highest, weighted by the change of its slope there.
void add_levels_as_bits(Gates& g, const std::vector<SignalId>& lanes, const std::vector<Literal>& select,
                        const std::vector<SignalId>& bits, int lane_bits, const std::vector<SignalId>& sign_copies) {
  const double off_weight = 2 * stored_level((1 << lane_bits) - 1);
  Form off;
  for (const Literal& l : select) off += l.negated ? F(l.signal) : Form(1.0) - F(l.signal);
  for (std::size_t m = 0; m < lanes.size(); ++m) {
    const int first = lane_bits * static_cast<int>(m);
    const int lane_width = std::min(lane_bits, static_cast<int>(bits.size()) - first);
    const int values = 1 << lane_width;
    auto slope = [&](int bit, int n) {  // of bit `bit` between the levels of n and n + 1
      if (n < 0 || n + 1 >= values) return 0.0;
      return (((n + 1) >> bit & 1) - (n >> bit & 1)) / (stored_level(n + 1) - stored_level(n));
    };
    Form x = F(lanes[m]) - off_weight * off;
    for (int n = 0; n + 1 < values; ++n) {
      std::vector<circuit::Term> down;
      for (int bit = 0; bit < lane_width; ++bit)
        if (double change = slope(bit, n) - slope(bit, n - 1); change != 0) {
          down.push_back({bits[first + bit], change});
          if (first + bit + 1 == static_cast<int>(bits.size()))
            for (SignalId copy : sign_copies) down.push_back({copy, change});
        }
      g.circuit().add_neuron({(x - stored_level(n)).terms(), Form(1.0).terms(), down, 1, g.unit()});
    }
  }
}

void add_bits_as_levels(Gates& g, const std::vector<SignalId>& lanes, const std::vector<SignalId>& bits,
                        const std::vector<Literal>& when, int lane_bits) {
  for (std::size_t m = 0; m < lanes.size(); ++m) {
    const int first = lane_bits * static_cast<int>(m);
    const int lane_width = std::min(lane_bits, static_cast<int>(bits.size()) - first);
    for (int n = 1; n < 1 << lane_width; ++n)
      g.add_all(lanes[m], join(when, match_bits(bits, first, lane_width, static_cast<std::uint32_t>(n))), Form(),
                stored_level(n));
  }
}

void MachineBuilder::add_memory() {
  const program::MemoryMap map = spec_.memory_map();
  Gates g = gates("memory");
  Forms a = forms_of(operands_.rs1);
  auto op = [&](int o) { return F(decoded_.op[o]); };
  Enable load_class(join(insn_.is_class(kClassLoad), {lit(control_.active)}));
  Enable store_class(join(insn_.is_class(kClassStore), {lit(control_.active)}));
  Form is_load = op(kLb) + op(kLh) + op(kLw) + op(kLbu) + op(kLhu);
  Form is_store = op(kSb) + op(kSh) + op(kSw);

  // Low 18 address bits in one stage, the whole addresses in two.
  Bits load_low = circuit::narrow_sum(g, "load_low", 18, part(a, 0, 18), part(decoded_.imm_i, 0, 18), load_class.on());
  Bits store_low = circuit::narrow_sum(g, "store_low", 18, part(a, 0, 18), part(decoded_.imm_s, 0, 18), store_class.on());
  const Bits& load_address = rs1_plus_imm_;
  Bits store_address = circuit::add32(g.sub("store_address"), a, decoded_.imm_s, Form(), store_class);
  data_address_.clear();
  for (int i = 0; i < 32; ++i)
    data_address_.push_back(g.all("address[" + std::to_string(i) + "]", load_class.with({lit(load_address[i])})));
  for (int i = 0; i < 32; ++i) g.add_relu(data_address_[i], F(store_address[i]));

  // Regions, in one stage from rs1 and the immediate (top_bits_equal) and the low sums.
  const int ram_bits = log2_exact(map.ram.size);
  const std::uint32_t all_ones = 0xFFFFFFFFu;
  SignalId store_in_ram = top_bits_equal(g, "store_in_ram", operands_.rs1, decoded_.imm_s, ram_bits, all_ones, store_class);
  SignalId load_in_ram = top_bits_equal(g, "load_in_ram", operands_.rs1, decoded_.imm_i, ram_bits, all_ones, load_class);
  // Read-only data: address[31:18] = 0 and the page address[17:12] in [1, pages].
  const int pages = static_cast<int>(map.rodata.size / 4096);
  SignalId load_low_18 = top_bits_equal(g, "load_below_256k", operands_.rs1, decoded_.imm_i, 18, 0, load_class);
  Form page = circuit::binary_value(slice(load_low, 12, 6)) - 64 * (Form(1.0) - F(load_low_18));
  SignalId load_in_rodata = g.signal("load_in_rodata");
  g.add_step(load_in_rodata, page, 1, 1);
  g.add_step(load_in_rodata, page, pages + 1, -1);
  // The MMIO registers: the address's top 16 bits and its low 16.
  const std::uint32_t mmio = map.console_address;
  SignalId store_mmio = top_bits_equal(g, "store_mmio_page", operands_.rs1, decoded_.imm_s, 16, mmio >> 16, store_class);
  SignalId load_mmio = top_bits_equal(g, "load_mmio_page", operands_.rs1, decoded_.imm_i, 16, mmio >> 16, load_class);
  auto at = [&](const std::string& name, SignalId page_ok, const Bits& low, std::uint32_t address, const Form& access) {
    return g.all(name, join(match_bits(low, 0, 16, address & 0xFFFF), {lit(page_ok)}), access);
  };
  SignalId console = at("console_sb", store_mmio, store_low, map.console_address, op(kSb));
  SignalId exit = at("exit_sw", store_mmio, store_low, map.exit_address, op(kSw));
  SignalId input_lw = at("input_lw", load_mmio, load_low, map.input_address, op(kLw));

  // Alignment, from the low sums: halfwords at even addresses, words at multiples of 4.
  Form halfword_load = op(kLh) + op(kLhu), halfword_store = op(kSh);
  SignalId load_misaligned = g.signal("load_misaligned");
  g.add_relu(load_misaligned, halfword_load + F(load_low[0]) - 1);
  g.add_step(load_misaligned, 2 * op(kLw) + F(load_low[0]) + F(load_low[1]), 3);
  SignalId store_misaligned = g.signal("store_misaligned");
  g.add_relu(store_misaligned, halfword_store + F(store_low[0]) - 1);
  g.add_step(store_misaligned, 2 * op(kSw) + F(store_low[0]) + F(store_low[1]), 3);

  SignalId executing = control_.executing;
  input_load_ = g.all("input_load", {lit(input_lw), lit(executing)});
  console_store_ = g.all("console", {lit(console), lit(executing)});
  exit_store_ = g.all("exit", {lit(exit), lit(executing)});
  SignalId load_outside = g.signal("load_outside");
  g.add_relu(load_outside, is_load - F(load_in_ram) - F(load_in_rodata) - F(load_misaligned) - F(input_lw));
  SignalId store_outside = g.signal("store_outside");
  g.add_relu(store_outside, is_store - F(store_in_ram) - F(store_misaligned) - F(console) - F(exit));
  faults_.push_back({FaultCause::kLoadAddressMisaligned, g.all("fault_load_misaligned", {lit(load_misaligned)}, is_load)});
  faults_.push_back({FaultCause::kLoadAccessFault, load_outside});
  faults_.push_back({FaultCause::kStoreAddressMisaligned, g.all("fault_store_misaligned", {lit(store_misaligned)}, is_store)});
  faults_.push_back({FaultCause::kStoreAccessFault, store_outside});

  // The address RAM rows are taken from: a load's or a store's.
  Bits memory;
  for (int i = 0; i < 18; ++i) {
    SignalId bit = g.signal("ram_address[" + std::to_string(i) + "]");
    g.add_all(bit, load_class.with({lit(load_low[i])}));
    g.add_all(bit, store_class.with({lit(store_low[i])}));
    memory.push_back(bit);
  }

  // Stores to RAM, all decided in one stage: sw writes its word's half; a byte or halfword store
  // (a misaligned sh traps in its first pass) sends the bytes its word keeps in two HI words, then
  // writes the word merged from them and rs2.
  Gates b = g.sub("byte_store");
  Form sub_word = op(kSb) + op(kSh);
  std::vector<Literal> in_ram{lit(store_in_ram), lit(executing)};
  byte_store_first_ = b.all("first", join(in_ram, {lit(control_.hi_position[0])}), sub_word);
  byte_store_second_ = b.all("second", join(in_ram, {lit(control_.hi_position[1])}), sub_word);
  hi_passes_.push_back(byte_store_first_);
  hi_passes_.push_back(byte_store_second_);
  std::vector<Literal> byte_store_last = join(in_ram, {lit(control_.hi_position[2])});
  std::vector<Literal> word_store = join(in_ram, {nlit(store_low[0]), nlit(store_low[1])});

  // RAM: bank address[ram_bits−1:10], row address[9:3], half address[2].
  const int ram_banks = static_cast<int>(map.ram.size / (kRowsPerBank * 2 * 4));
  const int bank_bits = ram_bits - 10;
  std::array<Bits, 2> ram_word;
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 32; ++i)
      ram_word[h].push_back(c_.add_read_signal("memory.ram" + std::to_string(h) + "[" + std::to_string(i) + "]"));
  std::array<SignalId, 2> write_half;
  for (int h = 0; h < 2; ++h) {
    write_half[h] = b.signal("write_half" + std::to_string(h));
    Literal half = h ? lit(store_low[2]) : nlit(store_low[2]);
    b.add_all(write_half[h], join(word_store, {half}), op(kSw));
    b.add_all(write_half[h], join(byte_store_last, {half}), sub_word);
  }
  // Where bit i of the word sits among the kept bits of a store at `offset`.
  auto kept_bit = [&](int i, int offset, bool halfword) -> int {
    int unit = halfword ? 16 : 8, index = i / unit, base_index = offset / (unit / 8);
    return (index < base_index ? index : index - 1) * unit + i % unit;
  };
  Bits store_value;
  for (int i = 0; i < 32; ++i) {
    SignalId bit = b.signal("value[" + std::to_string(i) + "]");
    b.add_all(bit, {lit(operands_.rs2[i])}, op(kSw));
    for (int offset = 0; offset < 4; ++offset) {
      std::vector<Literal> at_offset = join(match_bits(store_low, 0, 2, offset), {lit(control_.hi_position[2])});
      for (bool halfword : {false, true}) {
        if (halfword && offset % 2) continue;
        int unit = halfword ? 16 : 8;
        Form which = halfword ? op(kSh) : op(kSb);
        if (i / unit == offset / (unit / 8)) {
          b.add_all(bit, join(at_offset, {lit(operands_.rs2[i % unit])}), which);
        } else {
          int k = kept_bit(i, offset, halfword);
          SignalId kept = k < kValueBits ? history_.previous_hi_payload[k] : in_.hi[k - kValueBits];
          b.add_all(bit, join(at_offset, {lit(kept)}), which);
        }
      }
    }
    store_value.push_back(bit);
  }
  for (int k = 0; k < ram_banks; ++k) {
    circuit::Bank bank{"ram" + std::to_string(k), kRowsPerBank};
    bank.has_read = bank.has_write = true;
    std::vector<Literal> this_bank = match_bits(memory, 10, bank_bits, k);
    bank.read.row = binary_select(slice(memory, 3, 7), this_bank);
    bank.write.row = binary_select(slice(memory, 3, 7), this_bank);
    for (int h = 0; h < 2; ++h) {
      bank.write.beta[h] = F(write_half[h]);
      for (int i = 0; i < 32; ++i) {
        bank.write.lanes[h].push_back(F(store_value[i]));
        bank.read.lanes[h].push_back({{ram_word[h][i], 1}});
      }
    }
    m_.layout.ram_banks.push_back(c_.add_bank(std::move(bank)));
  }

  // Read-only data: bank = page − 1, row address[11:5], half address[4], word address[3:2].
  std::vector<std::vector<SignalId>> rodata_word = add_read_slots("memory.rodata", 2 * kRodataWordsPerHalf, kWordLanes);
  std::vector<circuit::RowSelect> read_rows;
  for (int k = 0; k < pages; ++k)
    read_rows.push_back(binary_select(slice(load_low, 5, 7), match_bits(load_low, 12, 6, k + 1)));
  m_.layout.rodata_banks =
      add_loaded_memory({.name = "rodata",
                         .staged = staged_.rodata_lanes,
                         .read = rodata_word,
                         .read_rows = std::move(read_rows),
                         .write_rows = loaded_rows(pages, 5, staged_.rodata_region, staged_.commit_rodata)});

  // The addressed word: RAM (by address[2]) or read-only data (by address[4:2]).
  Gates l = g.sub("load");
  Bits word;
  for (int i = 0; i < 32; ++i) word.push_back(l.signal("word[" + std::to_string(i) + "]"));
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 32; ++i) l.add_all(word[i], {lit(load_in_ram), h ? lit(load_low[2]) : nlit(load_low[2]), lit(ram_word[h][i])});
  for (int w = 0; w < 2 * kRodataWordsPerHalf; ++w)
    add_levels_as_bits(l, rodata_word[w], join(match_bits(load_low, 2, 3, w), {lit(load_in_rodata)}), word);
  // The old word's kept bytes, for the first two passes of a byte or halfword store (RAM only).
  for (int j = 0; j < kValueBits; ++j)
    for (int pass = 0; pass < 2; ++pass)
      for (int offset = 0; offset < 4; ++offset)
        for (bool halfword : {false, true}) {
          if (halfword && offset % 2) continue;
          int k = pass * kValueBits + j;  // position among the kept bits
          int unit = halfword ? 16 : 8, kept_units = halfword ? 1 : 3;
          if (k >= kept_units * unit) continue;
          int index = k / unit, base_index = offset / (unit / 8);
          int source = (index < base_index ? index : index + 1) * unit + k % unit;
          std::vector<Literal> literals =
              join(match_bits(store_low, 0, 2, offset), {lit(pass ? byte_store_second_ : byte_store_first_)});
          for (int h = 0; h < 2; ++h) {
            std::vector<Literal> with_half = join(literals, {h ? lit(store_low[2]) : nlit(store_low[2]), lit(ram_word[h][source])});
            add_result_bit(l, kValueBits + j, with_half, halfword ? op(kSh) : op(kSb));
          }
        }

  // The loaded value into the payload: the word, or a byte or halfword of it, extended.
  auto add_field = [&](int load_op, int width, bool sign_extend) {
    for (int i = 0; i < (sign_extend ? 32 : width); ++i)
      for (int offset = 0; offset < 4; offset += width / 8) {
        int source = 8 * offset + (i < width ? i : width - 1);
        std::vector<Literal> literals{lit(value_step_), nlit(input_load_), lit(word[source])};
        literals = join(literals, match_bits(load_low, 0, 2, offset));
        if (i >= kValueBits) literals.push_back(nlit(in_.is(TokenKind::kHi)));
        if (i >= 2 * kValueBits) literals.push_back(nlit(in_.is(TokenKind::kTop)));
        add_result_bit(l, i, literals, op(load_op));
      }
  };
  add_field(kLb, 8, true);
  add_field(kLbu, 8, false);
  add_field(kLh, 16, true);
  add_field(kLhu, 16, false);
  add_field(kLw, 32, false);

  // The byte OUT and EXIT print.
  Gates o = g.sub("byte_out");
  for (int i = 0; i < 8; ++i)
    add_result_bit(o, i, {lit(operands_.rs2[i])}, F(console_store_) + F(exit_store_));
}

}  // namespace rvformer::cpu
