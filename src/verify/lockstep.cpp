// verify/lockstep.cpp — see lockstep.h.
//
// The run itself is driver::run_program's; this file only observes it. After each pass the model's
// registers and PC must equal the golden machine's after the instructions retired so far (a
// register is written in the pass after its instruction, docs/trace-protocol.md), and after each
// retired store the RAM word it wrote must match (a store writes memory in its own pass), and so
// must the big-integer unit's entry after each bz.puta or bz.putb.
#include "verify/lockstep.h"

#include <fmt/format.h>

#include "driver/trace_protocol.h"
#include "emulator/emulator.h"
#include "isa/instruction_set.h"
#include "isa/trap.h"
#include "support/error.h"
#include "verify/machine_state.h"

namespace rvformer::verify {
namespace {

class Lockstep {
 public:
  Lockstep(const cpu::Machine& machine, const std::vector<compiler::HeadSlot>& bank_heads, driver::StatefulTokenMachine& model,
           const program::ProgramImage& image, const LockstepOptions& options)
      : reader_(machine, bank_heads), protocol_(machine.spec), model_(model), image_(image), golden_(image),
        options_(options) {
    golden_.set_input([this] { return next_input(golden_read_); });
  }

  LockstepReport run() {
    driver::RunOptions run{.max_instructions = options_.max_instructions,
                           .console = [this](std::uint8_t byte) { console_byte_ = byte; },
                           .input = [this] { return next_input(model_read_); },
                           .on_token = [this](std::uint32_t) { if (options_.progress) options_.progress(report_.instructions); },
                           .after_pass = [this] { return after_pass(); },
                           .on_retired = [this](std::uint64_t) { return retire(); },
                           .checkpoint_every = options_.checkpoint_every,
                           .checkpoint = options_.checkpoint,
                           .resume_from = options_.resume_from};
    if (options_.resume_from) catch_up(options_.resume_from->instructions);
    model_read_ = golden_read_;  // a resumed model has read what the golden machine read catching up
    driver::RunResult result = driver::run_program(model_, image_, protocol_, run);
    if (!report_.difference) compare_ending(result);
    if (!report_.difference && options_.free_run && result.end != driver::RunEnd::kInstructionLimit)
      compare_registers(/*with_pc=*/false);
    return report_;
  }

 private:
  int next_input(std::size_t& read) {
    if (read == input_.size() && !input_ended_) {
      int byte = options_.input ? options_.input() : -1;
      if (byte < 0) input_ended_ = true;
      else input_.push_back(static_cast<std::uint8_t>(byte));
    }
    return read < input_.size() ? input_[read++] : -1;
  }

  bool differ(const std::string& what) {
    report_.difference = fmt::format("after {} instructions (golden pc 0x{:08x}): {}", report_.instructions,
                                     golden_.pc(), what);
    return false;
  }

  // A resumed run: the golden machine reruns the instructions the checkpoint has behind it.
  void catch_up(std::uint64_t instructions) {
    emulator::RunResult result = golden_.run(instructions, [](std::uint8_t) {});
    if (result.reason != emulator::StopReason::kInstructionLimit)
      fail("the checkpoint is {} instructions into the run, but the program ends after {}", instructions,
           golden_.instructions_retired());
    report_.instructions = instructions;
  }

  bool after_pass() {
    if (options_.free_run || report_.instructions % options_.check_every != 0) return true;
    return compare_registers();
  }

  // After the final pass the PC latch still holds the exit or trapping instruction (no pass moves
  // it on), so the final comparison leaves the PC out.
  bool compare_registers(bool with_pc = true) {
    ++report_.checks;
    std::uint32_t pc = reader_.pc(model_.recurrent_state());
    if (with_pc && pc != golden_.pc())
      return differ(fmt::format("pc is 0x{:08x} in the weights, 0x{:08x} on the golden machine", pc, golden_.pc()));
    std::array<std::uint32_t, 32> x = reader_.registers(model_.recurrent_state());
    for (unsigned r = 1; r < 32; ++r)
      if (x[r] != golden_.reg(r))
        return differ(fmt::format("x{} is 0x{:08x} in the weights, 0x{:08x} on the golden machine", r, x[r],
                                  golden_.reg(r)));
    return true;
  }

  // Steps the golden machine through the instruction the model just retired and checks its effect.
  bool retire() {
    if (golden_exit_) return differ("the golden machine exited where the weights went on");
    std::uint32_t pc = golden_.pc();
    isa::Instruction instruction = isa::decode(golden_.read_word(pc).value_or(0));
    std::uint32_t address = golden_.reg(instruction.rs1) + static_cast<std::uint32_t>(instruction.imm);
    std::optional<std::uint8_t> printed = std::exchange(console_byte_, std::nullopt);
    emulator::StepResult step = golden_.step();
    ++report_.instructions;
    bool golden_printed = step.event == emulator::Event::kConsoleByte;
    if (printed && (!golden_printed || step.console_byte != *printed))
      return differ(fmt::format("the weights printed byte {} where the golden machine did not", *printed));
    if (!printed && golden_printed)
      return differ(fmt::format("the golden machine printed byte {} where the weights did not", step.console_byte));
    if (printed && options_.console) options_.console(*printed);
    if (step.event == emulator::Event::kTrap)
      return differ("the golden machine trapped (" + isa::describe_trap(step.trap, image_.map) +
                    ") where the weights retired the instruction");
    if (step.event == emulator::Event::kExit) golden_exit_ = step.exit_code;
    if (!options_.free_run && (instruction.op == isa::Op::kBzPuta || instruction.op == isa::Op::kBzPutb))
      return compare_bigint_entry(instruction.op == isa::Op::kBzPuta ? 0 : 1, golden_.reg(instruction.rs1) % 128);
    if (options_.free_run || !isa::is_store(instruction.op) || !image_.map.ram.contains(address)) return true;
    std::uint32_t word_address = address & ~3u;
    std::uint32_t got = reader_.ram_word(model_.recurrent_state(), word_address);
    std::uint32_t expected = golden_.read_word(word_address).value_or(0);
    if (got == expected) return true;
    return differ(fmt::format("RAM word 0x{:08x} is 0x{:08x} in the weights, 0x{:08x} on the golden machine",
                              word_address, got, expected));
  }

  // The entry a bz.puta or bz.putb wrote (it writes the unit's memory in its own pass).
  bool compare_bigint_entry(int memory, std::uint32_t index) {
    std::uint32_t got = reader_.bigint_entry(model_.recurrent_state(), memory, static_cast<int>(index));
    std::uint32_t expected = (memory == 0 ? golden_.bigint_a() : golden_.bigint_b())[index];
    if (got == expected) return true;
    return differ(fmt::format("big-integer memory {}[{}] is 0x{:08x} in the weights, 0x{:08x} on the golden machine",
                              memory == 0 ? 'A' : 'B', index, got, expected));
  }

  void compare_ending(const driver::RunResult& result) {
    switch (result.end) {
      case driver::RunEnd::kExited:
        if (!golden_exit_ || isa::exit_status(*golden_exit_) != result.exit_code)
          return void(differ(fmt::format("the weights exited with status {} where the golden machine did not",
                                         result.exit_code)));
        report_.ending = fmt::format("exit {}", result.exit_code);
        return;
      case driver::RunEnd::kTrapped: {
        std::string got = isa::describe_trap(result.trap, image_.map);
        emulator::StepResult step = golden_.step();
        if (step.event != emulator::Event::kTrap)
          return void(differ("the weights trapped (" + got + ") where the golden machine did not"));
        std::string expected = isa::describe_trap(step.trap, image_.map);
        if (got != expected)
          return void(differ(fmt::format("trap \"{}\" in the weights, \"{}\" on the golden machine", got, expected)));
        report_.ending = "trap: " + got;
        return;
      }
      case driver::RunEnd::kInstructionLimit:
        if (golden_exit_) return void(differ("the golden machine exited where the weights went on"));
        if (std::uint32_t pc = driver::next_instruction_address(result.position, protocol_); pc != golden_.pc())
          return void(differ(fmt::format("the driver says the run stopped at pc 0x{:08x}", pc)));
        // One more pass commits the last instruction's register write and moves the PC on; what
        // else it does belongs to the next instruction and is not compared.
        model_.feed(result.position.next_token);
        if (compare_registers()) report_.ending = "instruction limit";
        return;
      case driver::RunEnd::kStopped:
      case driver::RunEnd::kAwaitingInput:  // the lockstep's input never waits
        return;
    }
  }

  MachineStateReader reader_;
  driver::Protocol protocol_;
  driver::StatefulTokenMachine& model_;
  const program::ProgramImage& image_;
  emulator::Emulator golden_;
  const LockstepOptions& options_;
  LockstepReport report_;
  std::optional<std::uint8_t> console_byte_;  // printed by the instruction being retired
  std::vector<std::uint8_t> input_;  // console input read so far
  bool input_ended_ = false;
  std::size_t golden_read_ = 0, model_read_ = 0;  // bytes of input_ each machine has read
  std::optional<std::uint32_t> golden_exit_;
};

}  // namespace

LockstepReport run_lockstep(const cpu::Machine& machine, const std::vector<compiler::HeadSlot>& bank_heads,
                            driver::StatefulTokenMachine& model, const program::ProgramImage& image,
                            const LockstepOptions& options) {
  return Lockstep(machine, bank_heads, model, image, options).run();
}

}  // namespace rvformer::verify
