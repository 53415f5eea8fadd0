// isa/trap_test.cpp — the one description of each kind of trap and the run-ending messages both
// machines print (the emulator's tests check that it raises these traps where it should).
#include "isa/trap.h"

#include <gtest/gtest.h>

#include "isa/instruction_set.h"
#include "program/machine_spec.h"

namespace rvformer::isa {
namespace {

using program::kRvformerMap;

TEST(Trap, DescribesEachCauseWithTheInstructionAndTheAddress) {
  const std::uint32_t lw = encode({.op = Op::kLw, .rd = 7, .rs1 = 5, .rs2 = 0, .imm = 2});
  const std::uint32_t sw = encode({.op = Op::kSw, .rd = 0, .rs1 = 0, .rs2 = 10, .imm = 0});
  const std::uint32_t jalr = encode({.op = Op::kJalr, .rd = 1, .rs1 = 5, .rs2 = 0, .imm = 0});
  EXPECT_EQ(describe_trap({TrapCause::kIllegalInstruction, 0x00100004, 0x00000073, 0}, kRvformerMap),
            "illegal instruction at pc 0x00100004 (instruction 0x00000073)");
  const std::uint32_t dot = encode({.op = Op::kBzDotlo, .rd = 10, .rs1 = 5, .rs2 = 6, .imm = 0});
  EXPECT_EQ(describe_trap({TrapCause::kIllegalInstruction, 0x00100004, dot, 0}, kRvformerMap),
            "illegal instruction at pc 0x00100004 (instruction 0x0062a50b: bz.dotlo a0, t0, t1): the rvformer "
            "machine has no big-integer unit (rvformer-bigint has)");
  EXPECT_EQ(describe_trap({TrapCause::kLoadAddressMisaligned, 0x00100008, lw, 0xffff8002}, kRvformerMap),
            "load address misaligned at pc 0x00100008 (instruction 0x0022a383: lw t2, 2(t0)): "
            "address 0xffff8002 is not 4-byte aligned");
  EXPECT_EQ(describe_trap({TrapCause::kStoreAccessFault, 0x00100010, sw, 0}, kRvformerMap),
            "store access fault at pc 0x00100010 (instruction 0x00a02023: sw a0, 0(zero)): "
            "address 0x00000000 is not mapped");
  EXPECT_EQ(describe_trap({TrapCause::kInstructionAddressMisaligned, 0x00100008, jalr, 0x00100102}, kRvformerMap),
            "instruction address misaligned at pc 0x00100008 (instruction 0x000280e7: jalr ra, 0(t0)): "
            "jump target 0x00100102 is not 4-byte aligned");
  EXPECT_EQ(describe_trap({TrapCause::kInstructionAccessFault, 0x00001000, 0, 0x00001000}, kRvformerMap),
            "instruction access fault at pc 0x00001000: outside the code ROM (0x00100000-0x0013ffff)");
}

// A vector unit instruction is illegal on a machine without the unit, or with operands out of range
// on the one that has it; a word that only shares its opcode is an ordinary illegal instruction.
TEST(Trap, IllegalVectorUnitInstructionsSayWhy) {
  const std::uint32_t matvec = encode({.op = Op::kVuMatvec16, .rd = 0, .rs1 = 10, .rs2 = 11, .imm = 0});
  const Trap trap{TrapCause::kIllegalInstruction, 0x00100004, matvec, 0};
  EXPECT_EQ(describe_trap(trap, kRvformerMap),
            "illegal instruction at pc 0x00100004 (instruction 0x00b5202b: vu.matvec16 a0, a1): the rvformer "
            "machine has no vector unit (rvformer-vector has)");
  EXPECT_EQ(describe_trap(trap, program::kVectorMap),
            "illegal instruction at pc 0x00100004 (instruction 0x00b5202b: vu.matvec16 a0, a1): its operands "
            "are out of range (docs/vector-unit.md)");
  const std::uint32_t put_with_rd = 0x02d6102bu | (5u << 7);
  EXPECT_EQ(describe_trap({TrapCause::kIllegalInstruction, 0x00100004, put_with_rd, 0}, program::kVectorMap),
            "illegal instruction at pc 0x00100004 (instruction 0x02d612ab)");
}

TEST(Trap, RunEndingMessages) {
  EXPECT_EQ(trapped_message({TrapCause::kIllegalInstruction, 0x00100004, 0x00000073, 0}, kRvformerMap),
            "the program trapped: illegal instruction at pc 0x00100004 (instruction 0x00000073)");
  EXPECT_EQ(instruction_limit_message(1000, 0x0010002c),
            "the program did not finish within 1000 instructions (stopped at pc 0x0010002c)");
}

TEST(Trap, ExitStatusIsTheLowEightBitsOfTheCode) {
  EXPECT_EQ(exit_status(0), 0);
  EXPECT_EQ(exit_status(7), 7);
  EXPECT_EQ(exit_status(300), 44);
  EXPECT_EQ(exit_status(0xFFFFFFFFu), 255);  // exit(-1)
}

}  // namespace
}  // namespace rvformer::isa
