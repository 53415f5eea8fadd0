// cpu/machine.cpp — build_machine(): the units in pipeline order (see machine_builder.h), and the
// helpers they share.
#include "cpu/machine.h"

#include "cpu/machine_builder.h"

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
}

bool decodes_op(const program::MachineSpec& spec, int op) {
  if (op < kFirstBigintOp) return true;
  if (op < kFirstVectorOp) return spec.bigint_unit;
  const bool configures = op >= kVuSetvl && op <= kVuSeths;
  const bool moves = op == kVuPut || op == kVuGet || op == kVuWget || op == kVuKput || op == kVuVput;
  const bool by_lines = op == kVuAdd16 || op == kVuMul16 || op == kVuSilu || op == kVuArgmax || op == kVuRmsnorm;
  return (moves || configures || by_lines) && spec.vector_weight_bytes != 0;
}

std::unique_ptr<Machine> build_machine(const program::MachineSpec& spec) {
  auto machine = std::make_unique<Machine>(spec);
  MachineBuilder(*machine).build();
  return machine;
}

}  // namespace rvformer::cpu
