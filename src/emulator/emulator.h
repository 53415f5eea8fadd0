// emulator/emulator.h — the golden RV32IM + Zba machine: the oracle every other implementation of
// the CPU (the circuit, the weights) is checked against. It runs a ProgramImage on the image's
// memory map with the map's protections, console and exit registers, and the map's units (the
// big-integer unit, the vector unit). Any fault ends the run with an isa::Trap; nothing is ever
// handled by a trap handler (the machine has no CSRs).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emulator/vector_unit.h"
#include "isa/instruction_set.h"
#include "isa/trap.h"
#include "program/program_image.h"

namespace rvformer::emulator {

enum class Event : std::uint8_t {
  kRetired,      // an ordinary instruction completed
  kConsoleByte,  // a byte store to the console register completed
  kExit,         // a word store to the exit register completed; the program has ended
  kTrap,         // the instruction did not complete; the program has ended
};

struct StepResult {
  Event event = Event::kRetired;
  std::uint8_t console_byte = 0;  // for kConsoleByte
  std::uint32_t exit_code = 0;    // for kExit
  isa::Trap trap;                 // for kTrap
};

enum class StopReason : std::uint8_t { kExited, kTrapped, kInstructionLimit };

struct RunResult {
  StopReason reason = StopReason::kInstructionLimit;
  std::uint32_t exit_code = 0;  // for kExited
  isa::Trap trap;               // for kTrapped
};

using ConsoleSink = std::function<void(std::uint8_t)>;
// The next byte of console input (0-255), or -1 at its end.
using InputSource = std::function<int()>;
// Console input that gives the bytes of `text`, then the end.
InputSource text_input(std::string text);

class Emulator {
 public:
  // Registers start at zero (crt0 sets sp, gp and tp), RAM holds image.ram and zeros.
  explicit Emulator(const program::ProgramImage& image);

  // Where word loads from the map's input register take their bytes; without one, input is empty.
  void set_input(InputSource source) { input_ = std::move(source); }

  // Executes one instruction. Once the program has exited or trapped, returns that final result
  // again without executing anything.
  StepResult step();

  // Executes until the program exits or traps, or `max_instructions` more have retired.
  RunResult run(std::uint64_t max_instructions, const ConsoleSink& console);

  std::uint32_t pc() const { return pc_; }
  std::uint32_t reg(unsigned index) const { return registers_.at(index); }
  std::array<std::uint32_t, 32> registers() const;
  std::uint64_t instructions_retired() const { return retired_; }
  bool halted() const { return final_.has_value(); }
  const program::MemoryMap& map() const { return map_; }

  // The big-integer unit's operand memories (docs/bigint-unit.md), all zero without the unit.
  const std::array<std::uint32_t, 128>& bigint_a() const { return bigint_a_; }
  const std::array<std::uint32_t, 128>& bigint_b() const { return bigint_b_; }

  // The vector unit's state (docs/vector-unit.md): the weight memory WM (bytes), the activation
  // memory AM (int16 elements) and the configuration registers VL, COLS, SRC, AUX, HS. Without the
  // unit the memories are empty and the registers zero.
  std::span<const std::uint8_t> vector_weights() const { return vector_unit_.weights(); }
  std::span<const std::int16_t> vector_activations() const { return vector_unit_.activations(); }
  const std::array<std::int16_t, VectorUnit::kLineElements>& vector_line_buffer() const { return vector_unit_.line_buffer(); }
  std::span<const std::int16_t> vector_keys() const { return vector_unit_.keys(); }
  std::span<const std::int16_t> vector_values() const { return vector_unit_.values(); }
  const std::array<std::uint32_t, VectorUnit::kRegisterCount>& vector_registers() const {
    return vector_unit_.registers();
  }

  // The aligned word at `address` in the code ROM, read-only data or RAM, regardless of access
  // permissions; nothing for MMIO, unmapped or misaligned addresses.
  std::optional<std::uint32_t> read_word(std::uint32_t address) const;

 private:
  // The register index that writes to x0 are decoded to, so that x0 stays zero without a check.
  static constexpr std::uint8_t kDiscardRegister = 32;

  StepResult execute(std::uint64_t budget);
  StepResult halt(const StepResult& result);
  StepResult trap(isa::TrapCause cause, std::uint32_t pc, std::uint32_t address);
  StepResult store_outside_ram(std::uint32_t pc, std::uint32_t address, unsigned width,
                               std::uint32_t value);
  template <typename T>
  bool load(std::uint32_t address, std::uint32_t& value) const;
  template <typename T>
  bool store_to_ram(std::uint32_t address, std::uint32_t value);
  std::uint32_t code_word(std::uint32_t pc) const;
  std::uint64_t bigint_dot(std::uint32_t a_index, std::uint32_t b_index) const;

  program::MemoryMap map_;
  std::vector<std::uint8_t> code_;  // the whole code ROM, for read_word and trap reports
  std::vector<std::uint8_t> rodata_;
  std::vector<std::uint8_t> ram_;
  std::vector<isa::Instruction> decoded_;  // one per code ROM word, rd = kDiscardRegister for x0
  std::array<std::uint32_t, 33> registers_{};
  std::array<std::uint32_t, 128> bigint_a_{}, bigint_b_{};
  VectorUnit vector_unit_;
  std::uint32_t pc_ = 0;
  std::uint64_t retired_ = 0;
  std::optional<StepResult> final_;
  InputSource input_;
};

}  // namespace rvformer::emulator
