// isa/trap.cpp — see trap.h.
#include "isa/trap.h"

#include <fmt/format.h>

#include "isa/instruction_set.h"

namespace rvformer::isa {
namespace {

using program::MemoryMap;

// What is at `address` that the access of `width` bytes may not touch.
std::string forbidden_access(const MemoryMap& map, std::uint32_t address, unsigned width,
                             bool store) {
  if (map.code.contains(address)) return "in the code ROM, which is execute-only";
  if (map.rodata.contains(address)) return "in read-only data";
  if (!store) {
    if (map.input_address != 0 && address == map.input_address) {
      return "the input register, which takes only word loads (lw)";
    }
    bool mmio = address == map.console_address || address == map.exit_address;
    return mmio ? "an output register, which cannot be read" : "not mapped";
  }
  if (address == map.console_address) {
    return "the console register, which takes only byte stores (sb)";
  }
  if (address == map.exit_address && width == 4) {
    return "the exit register (QEMU's sifive_test finisher), which takes only 0x5555 or "
           "(code << 16) | 0x3333";
  }
  if (address == map.exit_address) return "the exit register, which takes only word stores (sw)";
  return "not mapped";
}

// Why an instruction that decodes is illegal: its unit is missing, or (the vector unit's) its
// operands are out of range. `where` is the message up to the open parenthesis of the instruction.
std::string illegal_instruction(const std::string& where, std::uint32_t word, const MemoryMap& map) {
  const Op op = decode(word).op;
  if (is_bigint(op))
    return fmt::format("{}: {}): the {} machine has no big-integer unit (rvformer-bigint has)", where,
                       disassemble(word), map.name);
  if (is_vector(op) && !map.vector_unit)
    return fmt::format("{}: {}): the {} machine has no vector unit (rvformer-vector has)", where, disassemble(word),
                       map.name);
  if (is_vector(op))
    return fmt::format("{}: {}): its operands are out of range (docs/vector-unit.md)", where, disassemble(word));
  return where + ")";
}

}  // namespace

std::string_view trap_cause_name(TrapCause cause) {
  switch (cause) {
    case TrapCause::kInstructionAddressMisaligned: return "instruction address misaligned";
    case TrapCause::kInstructionAccessFault: return "instruction access fault";
    case TrapCause::kIllegalInstruction: return "illegal instruction";
    case TrapCause::kLoadAddressMisaligned: return "load address misaligned";
    case TrapCause::kLoadAccessFault: return "load access fault";
    case TrapCause::kStoreAddressMisaligned: return "store address misaligned";
    case TrapCause::kStoreAccessFault: return "store access fault";
  }
  return "trap";
}

std::string describe_trap(const Trap& trap, const MemoryMap& map) {
  std::string_view cause = trap_cause_name(trap.cause);
  if (trap.cause == TrapCause::kInstructionAccessFault) {
    return fmt::format("{} at pc 0x{:08x}: outside the code ROM (0x{:08x}-0x{:08x})", cause,
                       trap.pc, map.code.base, map.code.end() - 1);
  }
  std::string where = fmt::format("{} at pc 0x{:08x} (instruction 0x{:08x}", cause, trap.pc,
                                  trap.instruction);
  if (trap.cause == TrapCause::kIllegalInstruction) return illegal_instruction(where, trap.instruction, map);
  where += fmt::format(": {})", disassemble(trap.instruction));
  Op op = decode(trap.instruction).op;
  unsigned width = memory_access_width(op);
  switch (trap.cause) {
    case TrapCause::kInstructionAddressMisaligned:
      return fmt::format("{}: jump target 0x{:08x} is not 4-byte aligned", where, trap.address);
    case TrapCause::kLoadAddressMisaligned:
    case TrapCause::kStoreAddressMisaligned:
      return fmt::format("{}: address 0x{:08x} is not {}-byte aligned", where, trap.address,
                         width);
    default:
      return fmt::format("{}: address 0x{:08x} is {}", where, trap.address,
                         forbidden_access(map, trap.address, width, is_store(op)));
  }
}

std::string trapped_message(const Trap& trap, const MemoryMap& map) {
  return "the program trapped: " + describe_trap(trap, map);
}

std::string instruction_limit_message(std::uint64_t instructions, std::uint32_t pc) {
  return fmt::format("the program did not finish within {} instructions (stopped at pc 0x{:08x})", instructions, pc);
}

}  // namespace rvformer::isa
