// cpu/machine.cpp — build_machine(): the parts in pipeline order (see machine_builder.h).
#include "cpu/machine.h"

#include "cpu/machine_builder.h"

namespace rvformer::cpu {

void MachineBuilder::build() {
  add_token_inputs();
  zero_ = c_.add_input("zero");
  add_token_outputs();
  add_token_families();
  add_mode_and_pc_latch();
  add_program_counter();
  add_loader();
  add_code_rom();
  add_decoder();
  add_early_results();
  add_register_file();
  add_execute();
  add_data_memory();
  for (int i = 0; i < 32; ++i) result_[i] += loaded_[i];
  add_faults();
  add_next_token();
  add_output_code();
}

std::unique_ptr<Machine> build_machine() {
  auto machine = std::make_unique<Machine>();
  MachineBuilder(*machine).build();
  return machine;
}

}  // namespace rvformer::cpu
