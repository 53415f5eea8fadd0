// isa/trap.h — traps as every implementation of the machine reports them: one cause enum, one
// description, and the one-line messages for a run that did not end with the program's own exit.
// The golden emulator raises these traps; the driver rebuilds them from the model's FAULT reports,
// so both machines print the same words for the same event.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "program/memory_map.h"

namespace rvformer::isa {

enum class TrapCause : std::uint8_t {
  kInstructionAddressMisaligned,  // a jump or taken branch to an address that is not 4-byte aligned
  kInstructionAccessFault,        // instruction fetch outside the code ROM
  kIllegalInstruction,            // anything outside RV32IM + Zba + FENCE and the machine's units,
                                  // or a vector unit instruction with operands out of range
  kLoadAddressMisaligned,
  kLoadAccessFault,  // a load from the code ROM, an MMIO register or unmapped memory
  kStoreAddressMisaligned,
  kStoreAccessFault,  // a store to ROM or unmapped memory, or a bad MMIO access
};

std::string_view trap_cause_name(TrapCause cause);  // "illegal instruction", ...

struct Trap {
  TrapCause cause = TrapCause::kIllegalInstruction;
  std::uint32_t pc = 0;           // the instruction that trapped (for fetch faults: the fetch address)
  std::uint32_t instruction = 0;  // its word; 0 when the fetch itself faulted
  std::uint32_t address = 0;      // the data address, or the jump target, that faulted
};

// One line: cause, pc, instruction (word and disassembly) and what was wrong with the address.
std::string describe_trap(const Trap& trap, const program::MemoryMap& map);

// "the program trapped: <describe_trap>"
std::string trapped_message(const Trap& trap, const program::MemoryMap& map);
// "the program did not finish within N instructions (stopped at pc 0x...)": `pc` is the next
// instruction's.
std::string instruction_limit_message(std::uint64_t instructions, std::uint32_t pc);

// The process exit status a program's exit code becomes: its low 8 bits, as POSIX exit() keeps.
// The in-weights machine reports only these bits (EXIT(code & 0xFF)), so both machines report this.
constexpr std::uint8_t exit_status(std::uint32_t exit_code) { return static_cast<std::uint8_t>(exit_code & 0xFF); }

}  // namespace rvformer::isa
