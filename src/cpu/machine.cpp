// cpu/machine.cpp — build_machine(): the units in pipeline order (see machine_builder.h), and the
// helpers they share.
#include "cpu/machine.h"

#include "cpu/machine_builder.h"
#include "support/error.h"

namespace rvformer::cpu {

Bits slice(const Bits& bits, int low, int count) { return Bits(bits.begin() + low, bits.begin() + low + count); }

circuit::RowSelect binary_select(const Bits& address, std::vector<Literal> match, std::vector<circuit::LinearForm> conditions,
                                 int ago) {
  return circuit::RowSelect{{}, address, std::move(match), std::move(conditions), ago};
}

circuit::Bank single_row_bank(const std::string& name) {
  circuit::Bank bank{name, 1};
  bank.has_write = bank.has_read = true;
  bank.write.row.one_hot = {circuit::kOne};
  bank.read.row.one_hot = {circuit::kOne};
  return bank;
}

circuit::LinearForm looking_back(const Form& form, int ago) {
  circuit::LinearForm terms = form.terms();
  for (circuit::Term& t : terms) t.ago = static_cast<std::uint8_t>(ago);
  return terms;
}

void MachineBuilder::build() {
  word_bits_ = spec_.code_word_bits();
  add_token_inputs();
  zero_ = c_.add_input("zero");
  add_token_outputs();
  add_token_families();
  add_history();
  add_latch_and_counters();
  add_program_counter();
  add_loader();
  add_code_rom();
  add_decoder();
  add_late_value();
  add_register_file();
  add_bigint_unit();  // before the memories, so that its banks take the first layer after the registers
  add_execute();
  add_memory();
  add_vector_unit();
  add_divide();
  add_multiplier();
  add_next_token();
  add_token_registers();
}

void MachineBuilder::add_token_registers() {
  for (std::size_t first = 0; first < token_registers_.size(); first += 2) {
    const std::size_t count = std::min<std::size_t>(2, token_registers_.size() - first);
    std::string name = token_registers_[first].name;
    if (count == 2) name += "+" + token_registers_[first + 1].name;
    circuit::Bank bank = single_row_bank(name);
    for (std::size_t h = 0; h < count; ++h) {
      const TokenRegister& r = token_registers_[first + h];
      bank.write.beta[h] = r.beta;
      bank.write.lanes[h] = r.lanes;
      for (SignalId read : r.read) bank.read.lanes[h].push_back({{read, 1}});
    }
    c_.add_bank(std::move(bank));
  }
  token_registers_.clear();
}

std::vector<WeightRegion> weight_memory_regions(int banks) {
  std::vector<WeightRegion> regions;
  int first_bank = 0;
  for (int b = 30; b >= 0; --b)
    if ((banks >> b) & 1) {
      regions.push_back({first_bank, b, static_cast<std::uint32_t>(first_bank) * kRowsPerBank});
      first_bank += 1 << b;
    }
  return regions;
}

WeightPlace weight_memory_place(int banks, std::uint32_t address) {
  const std::uint32_t line = address / kVectorWeightLineBytes;
  const int half = static_cast<int>(address >> 5 & 1), word = static_cast<int>(address >> 2 & 7);
  for (const WeightRegion& region : weight_memory_regions(banks))
    if (line - region.first_line < (std::uint32_t{kRowsPerBank} << region.bank_bits))
      return {region.first_bank + static_cast<int>(line & ((1u << region.bank_bits) - 1)),
              static_cast<int>(line >> region.bank_bits & (kRowsPerBank - 1)), half, word};
  fail("the weight memory has no byte {}", address);
}

bool decodes_op(const program::MachineSpec& spec, int op) {
  if (op < kFirstBigintOp) return true;
  if (op < kFirstVectorOp) return spec.bigint_unit;
  const bool configures = op >= kVuSetvl && op <= kVuSeths;
  const bool moves = op == kVuPut || op == kVuGet || op == kVuWget || op == kVuKput || op == kVuVput;
  const bool by_lines = op == kVuAdd16 || op == kVuMul16 || op == kVuSilu || op == kVuArgmax || op == kVuRmsnorm ||
                        op == kVuRope || op == kVuRow16 || op == kVuMatvec16;
  return (moves || configures || by_lines) && spec.vector_weight_bytes != 0;
}

std::unique_ptr<Machine> build_machine(const program::MachineSpec& spec) {
  auto machine = std::make_unique<Machine>(spec);
  MachineBuilder(*machine).build();
  return machine;
}

}  // namespace rvformer::cpu
