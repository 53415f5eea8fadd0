// isa/instruction_set_test.cpp — decoding, encoding and disassembly agree with the GNU
// assembler's encodings (words below were produced by riscv64-unknown-elf-as -march=rv32im_zba; the
// vector unit's by its `.insn r 0x2B, funct3, funct7, rd, rs1, rs2`, as runtime/rvformer_vector.h
// writes them).
#include "isa/instruction_set.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "support/error.h"

namespace rvformer::isa {
namespace {

struct KnownEncoding {
  std::uint32_t word;
  Instruction instruction;
  const char* text;
};

const KnownEncoding kKnown[] = {
    {0x00c58533, {Op::kAdd, 10, 11, 12, 0}, "add a0, a1, a2"},
    {0xfff50513, {Op::kAddi, 10, 10, 0, -1}, "addi a0, a0, -1"},
    {0x12345537, {Op::kLui, 10, 0, 0, 0x12345000}, "lui a0, 0x12345"},
    {0xfffff297, {Op::kAuipc, 5, 0, 0, static_cast<std::int32_t>(0xfffff000)}, "auipc t0, 0xfffff"},
    {0x00a12423, {Op::kSw, 0, 2, 10, 8}, "sw a0, 8(sp)"},
    {0x81fd8023, {Op::kSb, 0, 27, 31, -2048}, "sb t6, -2048(s11)"},
    {0x00b50863, {Op::kBeq, 0, 10, 11, 16}, "beq a0, a1, +16"},
    {0x8062f063, {Op::kBgeu, 0, 5, 6, -4096}, "bgeu t0, t1, -4096"},
    {0x001000ef, {Op::kJal, 1, 0, 0, 2048}, "jal ra, +2048"},
    {0x8000006f, {Op::kJal, 0, 0, 0, -1048576}, "jal zero, -1048576"},
    {0xfff38367, {Op::kJalr, 6, 7, 0, -1}, "jalr t1, -1(t2)"},
    {0x7ff7d483, {Op::kLhu, 9, 15, 0, 2047}, "lhu s1, 2047(a5)"},
    {0x41f5d513, {Op::kSrai, 10, 11, 0, 31}, "srai a0, a1, 31"},
    {0x00031293, {Op::kSlli, 5, 6, 0, 0}, "slli t0, t1, 0"},
    {0x02c5a533, {Op::kMulhsu, 10, 11, 12, 0}, "mulhsu a0, a1, a2"},
    {0x0324f433, {Op::kRemu, 8, 9, 18, 0}, "remu s0, s1, s2"},
    {0x20c5a533, {Op::kSh1add, 10, 11, 12, 0}, "sh1add a0, a1, a2"},
    {0x21eece33, {Op::kSh2add, 28, 29, 30, 0}, "sh2add t3, t4, t5"},
    {0x20f868b3, {Op::kSh3add, 17, 16, 15, 0}, "sh3add a7, a6, a5"},
    {0x0ff0000f, {Op::kFence, 0, 0, 0, 0}, "fence"},
};

const KnownEncoding kVectorUnit[] = {
    {0x0005002b, {Op::kVuSetvl, 0, 10, 0, 0}, "vu.setvl a0"},
    {0x0205802b, {Op::kVuSetcols, 0, 11, 0, 0}, "vu.setcols a1"},
    {0x0402802b, {Op::kVuSetsrc, 0, 5, 0, 0}, "vu.setsrc t0"},
    {0x060d802b, {Op::kVuSetaux, 0, 27, 0, 0}, "vu.setaux s11"},
    {0x080f802b, {Op::kVuSeths, 0, 31, 0, 0}, "vu.seths t6"},
    {0x02d6102b, {Op::kVuPut, 0, 12, 13, 0}, "vu.put a2, a3"},
    {0x0405952b, {Op::kVuGet, 10, 11, 0, 0}, "vu.get a0, a1"},
    {0x0605952b, {Op::kVuWget, 10, 11, 0, 0}, "vu.wget a0, a1"},
    {0x08b5102b, {Op::kVuKput, 0, 10, 11, 0}, "vu.kput a0, a1"},
    {0x0ab5102b, {Op::kVuVput, 0, 10, 11, 0}, "vu.vput a0, a1"},
    {0x00b5202b, {Op::kVuMatvec16, 0, 10, 11, 0}, "vu.matvec16 a0, a1"},
    {0x0473202b, {Op::kVuRow16, 0, 6, 7, 0}, "vu.row16 t1, t2"},
    {0x06f7202b, {Op::kVuAdd16, 0, 14, 15, 0}, "vu.add16 a4, a5"},
    {0x0918202b, {Op::kVuMul16, 0, 16, 17, 0}, "vu.mul16 a6, a7"},
    {0x0b5a202b, {Op::kVuRmsnorm, 0, 20, 21, 0}, "vu.rmsnorm s4, s5"},
    {0x0c05202b, {Op::kVuSilu, 0, 10, 0, 0}, "vu.silu a0"},
    {0x0fde202b, {Op::kVuRope, 0, 28, 29, 0}, "vu.rope t3, t4"},
    {0x1094202b, {Op::kVuAttend, 0, 8, 9, 0}, "vu.attend s0, s1"},
    {0x0005b52b, {Op::kVuArgmax, 10, 11, 0, 0}, "vu.argmax a0, a1"},
};

void expect_same(const Instruction& actual, const Instruction& expected, std::uint32_t word) {
  EXPECT_EQ(actual.op, expected.op) << std::hex << word;
  EXPECT_EQ(actual.rd, expected.rd) << std::hex << word;
  EXPECT_EQ(actual.rs1, expected.rs1) << std::hex << word;
  EXPECT_EQ(actual.rs2, expected.rs2) << std::hex << word;
  EXPECT_EQ(actual.imm, expected.imm) << std::hex << word;
}

TEST(InstructionSet, DecodesEncodesAndDisassemblesAssemblerOutput) {
  for (const KnownEncoding& known : kKnown) {
    expect_same(decode(known.word), known.instruction, known.word);
    EXPECT_EQ(encode(known.instruction), known.word) << known.text;
    EXPECT_EQ(disassemble(known.word), known.text);
  }
}

TEST(InstructionSet, EveryVectorUnitInstructionRoundTrips) {
  std::set<Op> seen;
  for (const KnownEncoding& known : kVectorUnit) {
    expect_same(decode(known.word), known.instruction, known.word);
    EXPECT_EQ(encode(known.instruction), known.word) << known.text;
    EXPECT_EQ(disassemble(known.word), known.text);
    EXPECT_TRUE(is_vector(known.instruction.op)) << known.text;
    EXPECT_FALSE(is_bigint(known.instruction.op)) << known.text;
    seen.insert(known.instruction.op);
  }
  for (const OpInfo& info : instruction_table())
    EXPECT_EQ(seen.contains(info.op), is_vector(info.op)) << info.name;
  EXPECT_FALSE(is_vector(Op::kBzDotlo));
  EXPECT_FALSE(is_vector(Op::kAdd));
  EXPECT_FALSE(is_vector(Op::kIllegal));
}

// A register field the instruction does not use, named anyway: the word is no instruction.
TEST(InstructionSet, VectorUnitWordsWithAnUnusedFieldSetAreIllegal) {
  constexpr std::uint32_t kRd = 5u << 7, kRs2 = 6u << 20;
  for (const KnownEncoding& known : kVectorUnit) {
    const Format format = op_info(known.instruction.op).format;
    const bool uses_rd = format == Format::kUnary, uses_rs2 = format == Format::kPut;
    EXPECT_EQ(decode(known.word | kRd).op, uses_rd ? known.instruction.op : Op::kIllegal) << known.text << " + rd";
    EXPECT_EQ(decode(known.word | kRs2).op, uses_rs2 ? known.instruction.op : Op::kIllegal) << known.text << " + rs2";
  }
  // funct7 values past the last register, data move and operation, and funct3 values past 3; funct7
  // 0 of the data moves and 1 of the operations are unused.
  for (std::uint32_t word :
       {0x0a05002bu, 0x0c05102bu, 0x1205202bu, 0x0205b52bu, 0x0005402bu, 0x0005702bu, 0x00b5102bu, 0x0339202bu})
    EXPECT_EQ(decode(word).op, Op::kIllegal) << std::hex << word;
}

TEST(InstructionSet, FenceIgnoresItsOperandFields) {
  EXPECT_EQ(decode(0x0330000f).op, Op::kFence);  // fence rw, rw
  EXPECT_EQ(decode(0x8330000f).op, Op::kFence);  // fence.tso
}

TEST(InstructionSet, EverythingOutsideRv32imZbaIsIllegal) {
  const std::uint32_t outside[] = {
      0x00000000,  // all zeros
      0xffffffff,  // all ones
      0x00000073,  // ecall
      0x00100073,  // ebreak
      0x30200073,  // mret
      0x34011073,  // csrrw sp, mscratch, sp
      0x0000100f,  // fence.i
      0x00004501,  // c.li a0, 0 (a compressed instruction in the low half)
      0x02051513,  // slli a0, a0, 32 (shamt[5] set: RV64 only)
      0x40055513 | (1u << 26),  // srai with a stray funct7 bit
      0x04c58533,  // funct7 0x02 on OP
      0x40c5f533,  // andn (Zbb)
      0x28c59533,  // bset (Zbs)
      0x00b52463,  // branch funct3 2
      0x00051567,  // jalr funct3 1
      0x0005b503,  // ld (funct3 3)
      0x00a5b023,  // sd (funct3 3)
      0x0005e503,  // load funct3 6
      0x00c5953b,  // sllw (OP-32, RV64)
      0x00000053,  // fadd.s (OP-FP)
      0x100522af,  // lr.w (A extension)
  };
  for (std::uint32_t word : outside) {
    EXPECT_EQ(decode(word).op, Op::kIllegal) << std::hex << word;
    EXPECT_EQ(disassemble(word), fmt::format("illegal 0x{:08x}", word));
  }
}

TEST(InstructionSet, RandomWordsRoundTrip) {
  std::mt19937 random(7);
  std::array<int, kInstructionCount> seen{};
  for (int trial = 0; trial < 2'000'000; ++trial) {
    std::uint32_t word = random();
    // Steer most words onto the opcodes in use so that every instruction shows up.
    static constexpr std::uint32_t kOpcodes[] = {0x03, 0x0B, 0x0F, 0x13, 0x17, 0x23, 0x2B,
                                                 0x33, 0x37, 0x63, 0x67, 0x6F};
    if (trial % 4 != 0) word = (word & ~0x7Fu) | kOpcodes[trial % std::size(kOpcodes)];
    // The vector unit's words: few funct7 values are used, and most leave rd or rs2 zero.
    if ((word & 0x7F) == 0x2B) {
      word = (word & 0x01FFFFFFu) | (random() % 16) << 25;
      if (random() % 2) word &= ~(0x1Fu << 7);
      if (random() % 2) word &= ~(0x1Fu << 20);
    }
    Instruction instruction = decode(word);
    if (instruction.op == Op::kIllegal) continue;
    ++seen[static_cast<std::size_t>(instruction.op)];
    if (instruction.op != Op::kFence) {
      ASSERT_EQ(encode(instruction), word) << std::hex << word;
    }
  }
  for (std::size_t op = 0; op < kInstructionCount; ++op) {
    EXPECT_GT(seen[op], 0) << instruction_table()[op].name;
  }
}

TEST(InstructionSet, EncodeRejectsOperandsThatDoNotFit) {
  EXPECT_THROW(encode({.op = Op::kAddi, .rd = 1, .rs1 = 1, .rs2 = 0, .imm = 2048}), Error);
  EXPECT_THROW(encode({.op = Op::kSlli, .rd = 1, .rs1 = 1, .rs2 = 0, .imm = 32}), Error);
  EXPECT_THROW(encode({.op = Op::kBeq, .rd = 0, .rs1 = 1, .rs2 = 2, .imm = 3}), Error);
  EXPECT_THROW(encode({.op = Op::kJal, .rd = 0, .rs1 = 0, .rs2 = 0, .imm = 1 << 20}), Error);
  EXPECT_THROW(encode({.op = Op::kLui, .rd = 1, .rs1 = 0, .rs2 = 0, .imm = 0x123}), Error);
  EXPECT_THROW(encode({.op = Op::kAdd, .rd = 32, .rs1 = 0, .rs2 = 0, .imm = 0}), Error);
  EXPECT_THROW(encode({}), Error);
}

TEST(InstructionSet, LoadImmediateCompensatesForTheSignedLowPart) {
  auto words = load_immediate(5, 0x12345FFF);
  EXPECT_EQ(decode(words[0]).imm, 0x12346000);
  EXPECT_EQ(decode(words[1]).imm, -1);
}

TEST(InstructionSet, MemoryAccessWidths) {
  EXPECT_EQ(memory_access_width(Op::kLb), 1u);
  EXPECT_EQ(memory_access_width(Op::kSh), 2u);
  EXPECT_EQ(memory_access_width(Op::kLw), 4u);
  EXPECT_EQ(memory_access_width(Op::kAdd), 0u);
  EXPECT_TRUE(is_load(Op::kLhu));
  EXPECT_TRUE(is_store(Op::kSb));
  EXPECT_FALSE(is_store(Op::kLw));
  EXPECT_FALSE(is_load(Op::kIllegal));
}

}  // namespace
}  // namespace rvformer::isa
