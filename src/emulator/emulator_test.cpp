// emulator/emulator_test.cpp — every instruction on hand-computed operands (including the edge
// cases of division, shifts and x0), memory protection, MMIO, traps and the step/run API.
#include "emulator/emulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "support/error.h"

namespace rvformer::emulator {

using namespace isa;  // the instruction set and traps of the machine
namespace {

using program::kQemuVirtMap;
using program::kRvformerMap;
using program::MemoryMap;
using program::ProgramImage;
using ::testing::HasSubstr;

constexpr std::uint32_t kCodeBase = kRvformerMap.code.base;
constexpr std::uint32_t kRamBase = kRvformerMap.ram.base;
constexpr std::uint32_t kRodataBase = kRvformerMap.rodata.base;
constexpr std::uint32_t kIntMin = 0x80000000u, kIntMax = 0x7FFFFFFFu, kMinusOne = 0xFFFFFFFFu;
constexpr std::uint8_t kZero = 0, kRa = 1, kT0 = 5, kT1 = 6, kT2 = 7, kT3 = 28;

std::uint32_t r_type(Op op, std::uint8_t rd, std::uint8_t rs1, std::uint8_t rs2) {
  return encode({.op = op, .rd = rd, .rs1 = rs1, .rs2 = rs2, .imm = 0});
}
std::uint32_t i_type(Op op, std::uint8_t rd, std::uint8_t rs1, std::int32_t imm) {
  return encode({.op = op, .rd = rd, .rs1 = rs1, .rs2 = 0, .imm = imm});
}
std::uint32_t s_type(Op op, std::uint8_t rs2, std::uint8_t rs1, std::int32_t imm) {
  return encode({.op = op, .rd = 0, .rs1 = rs1, .rs2 = rs2, .imm = imm});
}
std::uint32_t b_type(Op op, std::uint8_t rs1, std::uint8_t rs2, std::int32_t offset) {
  return encode({.op = op, .rd = 0, .rs1 = rs1, .rs2 = rs2, .imm = offset});
}
std::uint32_t u_type(Op op, std::uint8_t rd, std::uint32_t value) {
  return encode({.op = op, .rd = rd, .rs1 = 0, .rs2 = 0, .imm = static_cast<std::int32_t>(value)});
}

// A program under construction: machine words placed from the start of the code ROM.
struct Code {
  std::vector<std::uint32_t> words;

  Code& li(std::uint8_t rd, std::uint32_t value) {
    for (std::uint32_t word : load_immediate(rd, value)) words.push_back(word);
    return *this;
  }
  Code& add(std::uint32_t word) {
    words.push_back(word);
    return *this;
  }
  // Ends the program with exit code `code` on the rvformer map.
  Code& exit_with(std::uint32_t code) {
    return li(kT0, kRvformerMap.exit_address).li(kT1, code).add(s_type(Op::kSw, kT1, kT0, 0));
  }
};

ProgramImage image_of(const Code& code, const MemoryMap& map = kRvformerMap) {
  ProgramImage image;
  image.map = map;
  for (std::uint32_t word : code.words) {
    for (int shift = 0; shift < 32; shift += 8) image.code.push_back(word >> shift & 0xFF);
  }
  image.entry = map.code.base;
  return image;
}

void ignore_console(std::uint8_t) {}

// Runs every instruction of `code` once (no jumps expected) and returns the machine.
Emulator run_straight(const Code& code, ProgramImage image) {
  Emulator emulator(image);
  RunResult result = emulator.run(code.words.size(), ignore_console);
  EXPECT_EQ(result.reason, StopReason::kInstructionLimit) << describe_trap(result.trap, image.map);
  return emulator;
}
Emulator run_straight(const Code& code) { return run_straight(code, image_of(code)); }

Trap run_to_trap(const ProgramImage& image) {
  Emulator emulator(image);
  RunResult result = emulator.run(1'000'000, ignore_console);
  EXPECT_EQ(result.reason, StopReason::kTrapped);
  return result.trap;
}
Trap run_to_trap(const Code& code) { return run_to_trap(image_of(code)); }

struct BinaryCase {
  Op op;
  std::uint32_t a, b, expected;
};

// op t2, t0, t1 with t0 = a, t1 = b.
const BinaryCase kRegisterCases[] = {
    {Op::kAdd, 1, 2, 3},
    {Op::kAdd, kMinusOne, 1, 0},
    {Op::kAdd, kIntMax, 1, kIntMin},
    {Op::kAdd, kIntMin, kIntMin, 0},
    {Op::kSub, 3, 5, 0xFFFFFFFE},
    {Op::kSub, kIntMin, 1, kIntMax},
    {Op::kSub, 0, kIntMin, kIntMin},
    {Op::kSll, 1, 31, kIntMin},
    {Op::kSll, 1, 32, 1},  // only the low 5 bits of the amount count
    {Op::kSll, kMinusOne, 4, 0xFFFFFFF0},
    {Op::kSll, 3, 0xFFFFFFE1, 6},
    {Op::kSlt, kMinusOne, 0, 1},
    {Op::kSlt, 0, kMinusOne, 0},
    {Op::kSlt, kIntMin, kIntMax, 1},
    {Op::kSlt, 5, 5, 0},
    {Op::kSltu, kMinusOne, 0, 0},
    {Op::kSltu, 0, kMinusOne, 1},
    {Op::kSltu, kIntMin, kIntMax, 0},
    {Op::kSltu, 0, 1, 1},
    {Op::kXor, 0xF0F0F0F0, 0xFFFF0000, 0x0F0FF0F0},
    {Op::kSrl, kIntMin, 31, 1},
    {Op::kSrl, kIntMin, 32, kIntMin},
    {Op::kSrl, kMinusOne, 4, 0x0FFFFFFF},
    {Op::kSra, kIntMin, 31, kMinusOne},
    {Op::kSra, kIntMin, 1, 0xC0000000},
    {Op::kSra, kIntMax, 30, 1},
    {Op::kSra, kIntMin, 0x20, kIntMin},
    {Op::kOr, 0xF0F00000, 0x0000F0F0, 0xF0F0F0F0},
    {Op::kAnd, 0xF0F0F0F0, 0xFF00FF00, 0xF000F000},
    {Op::kMul, 3, static_cast<std::uint32_t>(-4), 0xFFFFFFF4},
    {Op::kMul, kIntMin, kMinusOne, kIntMin},
    {Op::kMul, kMinusOne, kMinusOne, 1},
    {Op::kMul, 0x10000, 0x10000, 0},
    {Op::kMul, 123456789, 987654321, 0xFBFF5385},
    {Op::kMulh, kMinusOne, kMinusOne, 0},
    {Op::kMulh, kIntMin, kIntMin, 0x40000000},
    {Op::kMulh, kIntMin, kMinusOne, 0},
    {Op::kMulh, kMinusOne, 1, kMinusOne},
    {Op::kMulh, kIntMax, kIntMax, 0x3FFFFFFF},
    {Op::kMulhsu, kMinusOne, kMinusOne, kMinusOne},
    {Op::kMulhsu, kIntMin, kMinusOne, kIntMin},
    {Op::kMulhsu, 1, kMinusOne, 0},
    {Op::kMulhsu, 2, kIntMin, 1},
    {Op::kMulhu, kMinusOne, kMinusOne, 0xFFFFFFFE},
    {Op::kMulhu, kIntMin, 2, 1},
    {Op::kMulhu, 1, 1, 0},
    {Op::kDiv, 7, 2, 3},
    {Op::kDiv, static_cast<std::uint32_t>(-7), 2, static_cast<std::uint32_t>(-3)},
    {Op::kDiv, 7, static_cast<std::uint32_t>(-2), static_cast<std::uint32_t>(-3)},
    {Op::kDiv, static_cast<std::uint32_t>(-7), static_cast<std::uint32_t>(-2), 3},
    {Op::kDiv, 5, 0, kMinusOne},
    {Op::kDiv, 0, 0, kMinusOne},
    {Op::kDiv, kIntMin, kMinusOne, kIntMin},
    {Op::kDivu, 7, 2, 3},
    {Op::kDivu, kMinusOne, 2, kIntMax},
    {Op::kDivu, 5, 0, kMinusOne},
    {Op::kDivu, kIntMin, kMinusOne, 0},
    {Op::kRem, 7, 2, 1},
    {Op::kRem, static_cast<std::uint32_t>(-7), 2, kMinusOne},
    {Op::kRem, 7, static_cast<std::uint32_t>(-2), 1},
    {Op::kRem, static_cast<std::uint32_t>(-7), static_cast<std::uint32_t>(-2), kMinusOne},
    {Op::kRem, 5, 0, 5},
    {Op::kRem, static_cast<std::uint32_t>(-5), 0, static_cast<std::uint32_t>(-5)},
    {Op::kRem, kIntMin, kMinusOne, 0},
    {Op::kRemu, 7, 2, 1},
    {Op::kRemu, kMinusOne, 10, 5},
    {Op::kRemu, 5, 0, 5},
    {Op::kSh1add, 5, 1, 11},
    {Op::kSh1add, kIntMin, 1, 1},
    {Op::kSh1add, kMinusOne, 0, 0xFFFFFFFE},
    {Op::kSh2add, 5, 1, 21},
    {Op::kSh2add, 0x40000000, 7, 7},
    {Op::kSh3add, 5, 1, 41},
    {Op::kSh3add, 0x20000000, 3, 3},
    {Op::kSh3add, kMinusOne, 8, 0},
};

TEST(Instructions, RegisterRegister) {
  for (const BinaryCase& c : kRegisterCases) {
    Code code;
    code.li(kT0, c.a).li(kT1, c.b).add(r_type(c.op, kT2, kT0, kT1));
    EXPECT_EQ(run_straight(code).reg(kT2), c.expected)
        << op_info(c.op).name << " " << std::hex << c.a << ", " << c.b;
  }
}

// op t2, t0, imm with t0 = a.
const BinaryCase kImmediateCases[] = {
    {Op::kAddi, 1, static_cast<std::uint32_t>(-1), 0},
    {Op::kAddi, kIntMax, 1, kIntMin},
    {Op::kAddi, 0, static_cast<std::uint32_t>(-2048), 0xFFFFF800},
    {Op::kAddi, 0, 2047, 0x7FF},
    {Op::kSlti, kMinusOne, 0, 1},
    {Op::kSlti, 0, static_cast<std::uint32_t>(-1), 0},
    {Op::kSlti, kIntMin, static_cast<std::uint32_t>(-2048), 1},
    {Op::kSlti, 5, 5, 0},
    {Op::kSlti, 4, 5, 1},
    {Op::kSltiu, 0, static_cast<std::uint32_t>(-1), 1},  // the immediate is sign-extended first
    {Op::kSltiu, 0xFFFFFFFE, static_cast<std::uint32_t>(-1), 1},
    {Op::kSltiu, kMinusOne, static_cast<std::uint32_t>(-1), 0},
    {Op::kSltiu, 0, 1, 1},
    {Op::kSltiu, 1, 1, 0},
    {Op::kXori, 0x12345678, static_cast<std::uint32_t>(-1), 0xEDCBA987},
    {Op::kXori, 0xFF, 0x0F, 0xF0},
    {Op::kOri, kIntMin, 0x7FF, 0x800007FF},
    {Op::kOri, 0, static_cast<std::uint32_t>(-2048), 0xFFFFF800},
    {Op::kAndi, kMinusOne, 0x7FF, 0x7FF},
    {Op::kAndi, 0x12345678, static_cast<std::uint32_t>(-16), 0x12345670},
    {Op::kSlli, 1, 31, kIntMin},
    {Op::kSlli, kMinusOne, 0, kMinusOne},
    {Op::kSlli, 0x12345678, 4, 0x23456780},
    {Op::kSrli, kIntMin, 31, 1},
    {Op::kSrli, kMinusOne, 1, kIntMax},
    {Op::kSrai, kIntMin, 31, kMinusOne},
    {Op::kSrai, kIntMin, 4, 0xF8000000},
    {Op::kSrai, kIntMax, 31, 0},
};

TEST(Instructions, RegisterImmediate) {
  for (const BinaryCase& c : kImmediateCases) {
    Code code;
    code.li(kT0, c.a).add(i_type(c.op, kT2, kT0, static_cast<std::int32_t>(c.b)));
    EXPECT_EQ(run_straight(code).reg(kT2), c.expected)
        << op_info(c.op).name << " " << std::hex << c.a << ", " << c.b;
  }
}

TEST(Instructions, UpperImmediates) {
  Code code;
  code.add(u_type(Op::kLui, kT0, 0x12345000))
      .add(u_type(Op::kLui, kT1, 0xFFFFF000))
      .add(u_type(Op::kAuipc, kT2, 0x00001000))   // at kCodeBase + 8
      .add(u_type(Op::kAuipc, kT3, 0x80000000));  // at kCodeBase + 12
  Emulator emulator = run_straight(code);
  EXPECT_EQ(emulator.reg(kT0), 0x12345000u);
  EXPECT_EQ(emulator.reg(kT1), 0xFFFFF000u);
  EXPECT_EQ(emulator.reg(kT2), 0x00101008u);
  EXPECT_EQ(emulator.reg(kT3), 0x8010000Cu);
}

struct BranchCase {
  Op op;
  std::uint32_t a, b;
  bool taken;
};

const BranchCase kBranchCases[] = {
    {Op::kBeq, 5, 5, true},          {Op::kBeq, 5, 6, false},
    {Op::kBne, 5, 6, true},          {Op::kBne, kMinusOne, kMinusOne, false},
    {Op::kBlt, kMinusOne, 0, true},  {Op::kBlt, 0, kMinusOne, false},
    {Op::kBlt, kIntMin, kIntMax, true}, {Op::kBlt, 5, 5, false},
    {Op::kBge, 0, kMinusOne, true},  {Op::kBge, 5, 5, true},
    {Op::kBge, kIntMin, kIntMax, false},
    {Op::kBltu, 0, kMinusOne, true}, {Op::kBltu, kMinusOne, 0, false},
    {Op::kBltu, 5, 5, false},
    {Op::kBgeu, kMinusOne, 0, true}, {Op::kBgeu, 5, 5, true},
    {Op::kBgeu, 0, 1, false},
};

TEST(Instructions, Branches) {
  for (const BranchCase& c : kBranchCases) {
    // The branch skips `addi t2, zero, 1` when taken.
    Code code;
    code.li(kT0, c.a).li(kT1, c.b).add(b_type(c.op, kT0, kT1, 8))
        .add(i_type(Op::kAddi, kT2, kZero, 1)).add(i_type(Op::kAddi, kT3, kZero, 2));
    Emulator emulator(image_of(code));
    emulator.run(c.taken ? 6 : 7, ignore_console);
    EXPECT_EQ(emulator.reg(kT2), c.taken ? 0u : 1u) << op_info(c.op).name << std::hex << c.a;
    EXPECT_EQ(emulator.reg(kT3), 2u);
    EXPECT_EQ(emulator.pc(), kCodeBase + 28);
  }
}

TEST(Instructions, BackwardBranchLoops) {
  Code code;  // t0 = 10; do { t1 += 3; t0 -= 1 } while (t0 != 0)
  code.li(kT0, 10)
      .add(i_type(Op::kAddi, kT1, kT1, 3))
      .add(i_type(Op::kAddi, kT0, kT0, -1))
      .add(b_type(Op::kBne, kT0, kZero, -8));
  Emulator emulator(image_of(code));
  emulator.run(2 + 30, ignore_console);
  EXPECT_EQ(emulator.reg(kT1), 30u);
  EXPECT_EQ(emulator.pc(), kCodeBase + 20);
}

TEST(Instructions, JumpAndLink) {
  Code code;
  code.add(encode({.op = Op::kJal, .rd = kRa, .rs1 = 0, .rs2 = 0, .imm = 12}));  // to +12
  code.add(0).add(0);
  code.add(encode({.op = Op::kJal, .rd = kZero, .rs1 = 0, .rs2 = 0, .imm = -8}));  // to +4
  Emulator emulator(image_of(code));
  emulator.run(2, ignore_console);
  EXPECT_EQ(emulator.reg(kRa), kCodeBase + 4);
  EXPECT_EQ(emulator.reg(kZero), 0u);
  EXPECT_EQ(emulator.pc(), kCodeBase + 4);
}

TEST(Instructions, JumpAndLinkRegisterClearsBitZero) {
  Code code;
  code.li(kT0, kCodeBase + 0x11)                        // odd base
      .add(i_type(Op::kJalr, kRa, kT0, 3))              // (0x...11 + 3) & ~1 = +0x14
      .add(0).add(0)
      .add(i_type(Op::kJalr, kT1, kT1, 0));             // +0x14: rd == rs1, reads before writing
  Emulator emulator(image_of(code));
  emulator.run(3, ignore_console);
  EXPECT_EQ(emulator.reg(kRa), kCodeBase + 12);
  EXPECT_EQ(emulator.pc(), kCodeBase + 0x14);
  emulator.run(1, ignore_console);  // jalr t1, 0(t1) with t1 = 0: jumps to 0
  EXPECT_EQ(emulator.pc(), 0u);
  EXPECT_EQ(emulator.reg(kT1), kCodeBase + 0x18);
}

ProgramImage image_with_data(const Code& code) {
  ProgramImage image = image_of(code);
  image.ram = {0x80, 0xFF, 0x7F, 0x01, 0x78, 0x56, 0x34, 0x12};
  image.rodata = {0x11, 0x22, 0x33, 0x44};
  return image;
}

struct LoadCase {
  Op op;
  std::uint32_t base;
  std::int32_t offset;
  std::uint32_t expected;
};

const LoadCase kLoadCases[] = {
    {Op::kLb, kRamBase, 0, 0xFFFFFF80},     {Op::kLb, kRamBase, 2, 0x7F},
    {Op::kLb, kRamBase + 8, -8, 0xFFFFFF80}, {Op::kLbu, kRamBase, 0, 0x80},
    {Op::kLbu, kRamBase, 1, 0xFF},          {Op::kLh, kRamBase, 0, 0xFFFFFF80},
    {Op::kLh, kRamBase, 2, 0x017F},         {Op::kLhu, kRamBase, 0, 0xFF80},
    {Op::kLhu, kRamBase, 6, 0x1234},        {Op::kLw, kRamBase, 4, 0x12345678},
    {Op::kLw, kRamBase, 0, 0x017FFF80},     {Op::kLw, kRodataBase, 0, 0x44332211},
    {Op::kLbu, kRodataBase, 3, 0x44},       {Op::kLw, kRamBase + 2048, -2044, 0x12345678},
};

TEST(Instructions, Loads) {
  for (const LoadCase& c : kLoadCases) {
    Code code;
    code.li(kT0, c.base).add(i_type(c.op, kT2, kT0, c.offset));
    EXPECT_EQ(run_straight(code, image_with_data(code)).reg(kT2), c.expected)
        << op_info(c.op).name << " " << std::hex << c.base << " " << std::dec << c.offset;
  }
}

TEST(Instructions, StoresWriteOnlyTheirBytes) {
  Code code;
  code.li(kT0, kRamBase + 16)
      .li(kT1, 0xAABBCCDD)
      .add(s_type(Op::kSb, kT1, kT0, -15))  // byte 1 of word 0
      .add(s_type(Op::kSh, kT1, kT0, -10))  // bytes 2-3 of word 1
      .add(s_type(Op::kSw, kT1, kT0, -8));  // word 2
  Emulator emulator = run_straight(code, image_with_data(code));
  EXPECT_EQ(emulator.read_word(kRamBase), 0x017FDD80u);
  EXPECT_EQ(emulator.read_word(kRamBase + 4), 0xCCDD5678u);
  EXPECT_EQ(emulator.read_word(kRamBase + 8), 0xAABBCCDDu);
  EXPECT_EQ(emulator.read_word(kRamBase + 12), 0u);
}

TEST(Instructions, StoresReachTheLastWordOfRam) {
  Code code;
  code.li(kT1, 0x01020304).add(s_type(Op::kSw, kT1, kZero, -4));  // 0xFFFFFFFC
  EXPECT_EQ(run_straight(code).read_word(0xFFFFFFFC), 0x01020304u);
}

TEST(Instructions, FenceDoesNothing) {
  Code code;
  code.li(kT0, 9).add(encode({.op = Op::kFence, .rd = 0, .rs1 = 0, .rs2 = 0, .imm = 0}));
  Emulator emulator = run_straight(code);
  EXPECT_EQ(emulator.reg(kT0), 9u);
  EXPECT_EQ(emulator.pc(), kCodeBase + 12);
  EXPECT_EQ(emulator.instructions_retired(), 3u);
}

TEST(Instructions, ZeroRegisterStaysZero) {
  Code code;
  code.add(i_type(Op::kAddi, kZero, kZero, 5))
      .add(u_type(Op::kLui, kZero, 0x12345000))
      .add(r_type(Op::kSub, kZero, kZero, kZero))
      .li(kT0, kRamBase + 4)
      .add(i_type(Op::kLw, kZero, kT0, 0))
      .add(r_type(Op::kAdd, kT1, kZero, kZero));
  Emulator emulator = run_straight(code, image_with_data(code));
  EXPECT_EQ(emulator.reg(kZero), 0u);
  EXPECT_EQ(emulator.reg(kT1), 0u);
  EXPECT_EQ(emulator.registers()[0], 0u);
}

// The big-integer unit: random limbs put into A and B, then dot products over windows that wrap
// around both memories, against the sum computed here.
TEST(Instructions, BigintUnitDotProducts) {
  constexpr MemoryMap kBigint = program::kBigintMachine.memory_map();
  std::mt19937 random(3);
  std::array<std::uint32_t, 128> a{}, b{};
  Code code;
  for (int round = 0; round < 2; ++round) {  // the second round overwrites every entry
    for (std::uint32_t index = 0; index < 128; ++index) {
      // Values of 32 bits: the unit keeps the low 30; indices above 127 wrap.
      std::uint32_t va = random(), vb = random() | (round ? 0xC0000000u : 0);
      a[index] = va & 0x3FFFFFFF;
      b[index] = vb & 0x3FFFFFFF;
      code.li(kT0, index + 128 * round).li(kT1, va).li(kT2, vb);
      code.add(encode({.op = Op::kBzPuta, .rd = 0, .rs1 = kT0, .rs2 = kT1, .imm = 0}));
      code.add(encode({.op = Op::kBzPutb, .rd = 0, .rs1 = kT0, .rs2 = kT2, .imm = 0}));
    }
  }
  constexpr std::uint32_t kWindows[][2] = {{0, 7}, {120, 3}, {127, 0}, {5, 0xFFFFFFFF}, {64, 64}};
  for (std::size_t w = 0; w < std::size(kWindows); ++w) {
    code.li(kT0, kWindows[w][0]).li(kT1, kWindows[w][1]);
    code.add(r_type(Op::kBzDotlo, static_cast<std::uint8_t>(10 + 2 * w), kT0, kT1));
    code.add(r_type(Op::kBzDothi, static_cast<std::uint8_t>(11 + 2 * w), kT0, kT1));
  }
  Emulator emulator = run_straight(code, image_of(code, kBigint));
  EXPECT_EQ(emulator.bigint_a(), a);
  EXPECT_EQ(emulator.bigint_b(), b);
  for (std::size_t w = 0; w < std::size(kWindows); ++w) {
    std::uint64_t sum = 0;
    for (std::uint32_t t = 0; t < 8; ++t)
      sum += std::uint64_t{a[(kWindows[w][0] + t) % 128]} * b[(kWindows[w][1] - t) % 128];
    EXPECT_EQ(emulator.reg(static_cast<unsigned>(10 + 2 * w)), static_cast<std::uint32_t>(sum)) << w;
    EXPECT_EQ(emulator.reg(static_cast<unsigned>(11 + 2 * w)), static_cast<std::uint32_t>(sum >> 32)) << w;
  }
}

TEST(Traps, BigintInstructionsAreIllegalWithoutTheUnit) {
  for (Op op : {Op::kBzPuta, Op::kBzPutb, Op::kBzDotlo, Op::kBzDothi}) {
    std::uint32_t word = encode({.op = op, .rd = op == Op::kBzDotlo || op == Op::kBzDothi ? kT2 : kZero,
                                 .rs1 = kT0, .rs2 = kT1, .imm = 0});
    Trap trap = run_to_trap(Code().add(word));
    EXPECT_EQ(trap.cause, TrapCause::kIllegalInstruction) << disassemble(word);
    EXPECT_EQ(trap.instruction, word);
  }
  // bz.puta and bz.putb have no rd: a word that names one is not theirs.
  EXPECT_EQ(decode(0x0062800Bu).op, Op::kBzPuta);
  EXPECT_EQ(decode(0x0062818Bu).op, Op::kIllegal);
  EXPECT_EQ(disassemble(0x0062800Bu), "bz.puta t0, t1");
}

// Instructions whose tests are hand-written programs rather than rows of the case tables.
const Op kOpsWithOwnTests[] = {Op::kLui, Op::kAuipc,  Op::kJal,    Op::kJalr,    Op::kSb,      Op::kSh,
                               Op::kSw,  Op::kFence,  Op::kBzPuta, Op::kBzPutb,  Op::kBzDotlo, Op::kBzDothi};

TEST(Instructions, EveryInstructionIsCovered) {
  std::set<Op> covered(std::begin(kOpsWithOwnTests), std::end(kOpsWithOwnTests));
  for (const BinaryCase& c : kRegisterCases) covered.insert(c.op);
  for (const BinaryCase& c : kImmediateCases) covered.insert(c.op);
  for (const BranchCase& c : kBranchCases) covered.insert(c.op);
  for (const LoadCase& c : kLoadCases) covered.insert(c.op);
  for (const OpInfo& info : instruction_table()) {
    if (is_vector(info.op)) continue;  // vector_unit_test runs the vector unit's
    EXPECT_TRUE(covered.contains(info.op)) << info.name;
  }
}

TEST(Traps, IllegalInstructions) {
  for (std::uint32_t word : {0x00000073u, 0x00100073u, 0x34011073u, 0x0000100Fu, 0x00000000u,
                             0x00004501u, 0x40C57533u}) {
    Code code;
    code.add(i_type(Op::kAddi, kT0, kZero, 1)).add(word);
    Trap trap = run_to_trap(code);
    EXPECT_EQ(trap.cause, TrapCause::kIllegalInstruction);
    EXPECT_EQ(trap.pc, kCodeBase + 4);
    EXPECT_EQ(trap.instruction, word);
    EXPECT_EQ(describe_trap(trap, kRvformerMap),
              fmt::format("illegal instruction at pc 0x00100004 (instruction 0x{:08x})", word));
  }
}

TEST(Traps, RunningIntoTheZeroWordsAfterTheProgram) {
  Code code;
  code.add(i_type(Op::kAddi, kT0, kZero, 1));
  Trap trap = run_to_trap(code);
  EXPECT_EQ(trap.cause, TrapCause::kIllegalInstruction);
  EXPECT_EQ(trap.pc, kCodeBase + 4);
}

TEST(Traps, MisalignedLoadsAndStores) {
  struct Case {
    Op op;
    std::int32_t offset;
    TrapCause cause;
  };
  const Case cases[] = {
      {Op::kLh, 1, TrapCause::kLoadAddressMisaligned},
      {Op::kLhu, 3, TrapCause::kLoadAddressMisaligned},
      {Op::kLw, 2, TrapCause::kLoadAddressMisaligned},
      {Op::kSh, 1, TrapCause::kStoreAddressMisaligned},
      {Op::kSw, 3, TrapCause::kStoreAddressMisaligned},
  };
  for (const Case& c : cases) {
    Code code;
    code.li(kT0, kRamBase);
    code.add(is_load(c.op) ? i_type(c.op, kT2, kT0, c.offset) : s_type(c.op, kT2, kT0, c.offset));
    Trap trap = run_to_trap(code);
    EXPECT_EQ(trap.cause, c.cause) << op_info(c.op).name;
    EXPECT_EQ(trap.address, kRamBase + c.offset);
    EXPECT_EQ(trap.pc, kCodeBase + 8);
  }
}

TEST(Traps, MisalignedMessageNamesTheWidth) {
  Code code;
  code.li(kT0, kRamBase).add(i_type(Op::kLw, kT2, kT0, 2));
  EXPECT_EQ(describe_trap(run_to_trap(code), kRvformerMap),
            "load address misaligned at pc 0x00100008 (instruction 0x0022a383: lw t2, 2(t0)): "
            "address 0xffff8002 is not 4-byte aligned");
}

struct AccessCase {
  Op op;
  std::uint32_t address;
  TrapCause cause;
  const char* reason;
};

const AccessCase kAccessCases[] = {
    {Op::kSw, kCodeBase, TrapCause::kStoreAccessFault, "in the code ROM, which is execute-only"},
    {Op::kSb, kRodataBase + 5, TrapCause::kStoreAccessFault, "in read-only data"},
    {Op::kSw, 0x00000000, TrapCause::kStoreAccessFault, "not mapped"},
    {Op::kSh, 0x50000000, TrapCause::kStoreAccessFault, "not mapped"},
    {Op::kSw, 0xFFFF7FFC, TrapCause::kStoreAccessFault, "not mapped"},
    {Op::kLw, kCodeBase, TrapCause::kLoadAccessFault, "in the code ROM, which is execute-only"},
    {Op::kLbu, 0x00000FFF, TrapCause::kLoadAccessFault, "not mapped"},
    {Op::kLw, 0x00021000, TrapCause::kLoadAccessFault, "not mapped"},
    {Op::kLb, 0xFFFF0000, TrapCause::kLoadAccessFault, "an output register, which cannot be read"},
    {Op::kLw, 0xFFFF0004, TrapCause::kLoadAccessFault, "an output register, which cannot be read"},
    {Op::kSh, 0xFFFF0000, TrapCause::kStoreAccessFault, "the console register, which takes only"},
    {Op::kSw, 0xFFFF0000, TrapCause::kStoreAccessFault, "the console register, which takes only"},
    {Op::kSb, 0xFFFF0004, TrapCause::kStoreAccessFault, "the exit register, which takes only word"},
    {Op::kSw, 0xFFFF0008, TrapCause::kStoreAccessFault, "not mapped"},
};

TEST(Traps, ProtectedUnmappedAndMmioAccesses) {
  for (const AccessCase& c : kAccessCases) {
    Code code;
    code.li(kT0, c.address);
    code.add(is_load(c.op) ? i_type(c.op, kT2, kT0, 0) : s_type(c.op, kT2, kT0, 0));
    Trap trap = run_to_trap(image_with_data(code));
    EXPECT_EQ(trap.cause, c.cause) << op_info(c.op).name << std::hex << c.address;
    EXPECT_EQ(trap.address, c.address);
    EXPECT_THAT(describe_trap(trap, kRvformerMap), HasSubstr(c.reason));
  }
}

TEST(Traps, FetchOutsideTheCodeRom) {
  for (std::uint32_t target : {kRodataBase, kRamBase, 0x00000000u, kCodeBase - 4}) {
    Code code;
    code.li(kT0, target).add(i_type(Op::kJalr, kZero, kT0, 0));
    Trap trap = run_to_trap(code);
    EXPECT_EQ(trap.cause, TrapCause::kInstructionAccessFault);
    EXPECT_EQ(trap.pc, target);
    EXPECT_EQ(trap.instruction, 0u);
  }
  Code code;
  code.li(kT0, kRodataBase).add(i_type(Op::kJalr, kZero, kT0, 0));
  EXPECT_EQ(describe_trap(run_to_trap(code), kRvformerMap),
            "instruction access fault at pc 0x00001000: outside the code ROM "
            "(0x00100000-0x0013ffff)");
}

TEST(Traps, FallingOffTheEndOfTheCodeRom) {
  Code code;
  code.words.assign(kRvformerMap.code.size / 4, i_type(Op::kAddi, kZero, kZero, 0));
  Emulator emulator(image_of(code));
  RunResult result = emulator.run(1'000'000, ignore_console);
  ASSERT_EQ(result.reason, StopReason::kTrapped);
  EXPECT_EQ(result.trap.cause, TrapCause::kInstructionAccessFault);
  EXPECT_EQ(result.trap.pc, kCodeBase + kRvformerMap.code.size);
  EXPECT_EQ(emulator.instructions_retired(), kRvformerMap.code.size / 4);
}

TEST(Traps, MisalignedJumpTargets) {
  Code jalr;
  jalr.li(kT0, kCodeBase + 0x102).add(i_type(Op::kJalr, kRa, kT0, 0));
  Trap trap = run_to_trap(jalr);
  EXPECT_EQ(trap.cause, TrapCause::kInstructionAddressMisaligned);
  EXPECT_EQ(trap.pc, kCodeBase + 8);
  EXPECT_EQ(trap.address, kCodeBase + 0x102);
  EXPECT_THAT(describe_trap(trap, kRvformerMap),
              HasSubstr("jump target 0x00100102 is not 4-byte aligned"));

  Code jal;
  jal.add(encode({.op = Op::kJal, .rd = kRa, .rs1 = 0, .rs2 = 0, .imm = 6}));
  Emulator emulator(image_of(jal));
  EXPECT_EQ(emulator.step().trap.cause, TrapCause::kInstructionAddressMisaligned);
  EXPECT_EQ(emulator.reg(kRa), 0u);  // a trapping jump does not link

  Code branch;  // a not-taken branch with a misaligned target is fine; a taken one traps
  branch.add(b_type(Op::kBne, kZero, kZero, 6)).add(b_type(Op::kBeq, kZero, kZero, 6));
  EXPECT_EQ(run_to_trap(branch).pc, kCodeBase + 4);
}

TEST(Mmio, ConsoleAndExit) {
  Code code;
  code.li(kT0, kRvformerMap.console_address)
      .li(kT1, 'h').add(s_type(Op::kSb, kT1, kT0, 0))
      .li(kT1, 'i').add(s_type(Op::kSb, kT1, kT0, 0))
      .exit_with(0xFFFFFFFE);
  Emulator emulator(image_of(code));
  std::string console;
  RunResult result = emulator.run(1000, [&](std::uint8_t byte) { console += char(byte); });
  EXPECT_EQ(result.reason, StopReason::kExited);
  EXPECT_EQ(result.exit_code, 0xFFFFFFFEu);
  EXPECT_EQ(console, "hi");
  EXPECT_EQ(emulator.instructions_retired(), code.words.size());
}

TEST(Mmio, QemuVirtFinisherAndUart) {
  struct Case {
    std::uint32_t value;
    std::optional<std::uint32_t> exit_code;
  };
  for (Case c : {Case{0x5555, 0}, Case{0x00033333, 3}, Case{0xFFFF3333, 0xFFFF},
                 Case{0x1234, std::nullopt}, Case{0x7777, std::nullopt}}) {
    Code code;
    code.li(kT0, kQemuVirtMap.console_address).li(kT1, 'q').add(s_type(Op::kSb, kT1, kT0, 0))
        .li(kT0, kQemuVirtMap.exit_address).li(kT1, c.value).add(s_type(Op::kSw, kT1, kT0, 0));
    Emulator emulator(image_of(code, kQemuVirtMap));
    std::string console;
    RunResult result = emulator.run(1000, [&](std::uint8_t byte) { console += char(byte); });
    EXPECT_EQ(console, "q");
    if (c.exit_code) {
      EXPECT_EQ(result.reason, StopReason::kExited);
      EXPECT_EQ(result.exit_code, *c.exit_code);
    } else {
      EXPECT_EQ(result.reason, StopReason::kTrapped);
      EXPECT_THAT(describe_trap(result.trap, kQemuVirtMap), HasSubstr("sifive_test finisher"));
    }
  }
}

TEST(Api, StepReportsEachEventAndStaysHalted) {
  Code code;
  code.li(kT0, kRvformerMap.console_address).li(kT1, 'x').add(s_type(Op::kSb, kT1, kT0, 0))
      .exit_with(7);
  Emulator emulator(image_of(code));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(emulator.step().event, Event::kRetired);
  StepResult console = emulator.step();
  EXPECT_EQ(console.event, Event::kConsoleByte);
  EXPECT_EQ(console.console_byte, 'x');
  EXPECT_EQ(emulator.pc(), kCodeBase + 20);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(emulator.step().event, Event::kRetired);
  StepResult exit = emulator.step();
  EXPECT_EQ(exit.event, Event::kExit);
  EXPECT_EQ(exit.exit_code, 7u);
  EXPECT_TRUE(emulator.halted());
  EXPECT_EQ(emulator.instructions_retired(), 10u);
  EXPECT_EQ(emulator.step().event, Event::kExit);
  EXPECT_EQ(emulator.run(100, ignore_console).reason, StopReason::kExited);
  EXPECT_EQ(emulator.instructions_retired(), 10u);
}

TEST(Api, InstructionLimitStopsAnEndlessLoop) {
  Code code;
  code.add(encode({.op = Op::kJal, .rd = kZero, .rs1 = 0, .rs2 = 0, .imm = 0}));
  Emulator emulator(image_of(code));
  EXPECT_EQ(emulator.run(1000, ignore_console).reason, StopReason::kInstructionLimit);
  EXPECT_EQ(emulator.instructions_retired(), 1000u);
  EXPECT_EQ(emulator.run(24, ignore_console).reason, StopReason::kInstructionLimit);
  EXPECT_EQ(emulator.instructions_retired(), 1024u);
  EXPECT_FALSE(emulator.halted());
}

TEST(Api, ReadWordSeesEveryRegionButNotMmio) {
  Code code;
  code.add(0x00c58533);
  Emulator emulator(image_with_data(code));
  EXPECT_EQ(emulator.read_word(kCodeBase), 0x00c58533u);
  EXPECT_EQ(emulator.read_word(kRodataBase), 0x44332211u);
  EXPECT_EQ(emulator.read_word(kRamBase + 4), 0x12345678u);
  EXPECT_EQ(emulator.read_word(kRvformerMap.ram.end() - 4), 0u);
  EXPECT_EQ(emulator.read_word(kRamBase + 2), std::nullopt);
  EXPECT_EQ(emulator.read_word(0xFFFF0000), std::nullopt);
  EXPECT_EQ(emulator.read_word(0), std::nullopt);
}

TEST(Api, RejectsImagesThatDoNotFitTheMap) {
  ProgramImage image = image_of(Code{{0x00c58533}});
  image.entry = kCodeBase + 4;
  EXPECT_NO_THROW(Emulator{image});  // runs into zero words and traps, but is a valid image
  image.entry = kCodeBase + 2;
  EXPECT_THROW(Emulator{image}, Error);
  image.entry = kCodeBase;
  image.ram.assign(kRvformerMap.ram.size + 1, 0);
  EXPECT_THROW(Emulator{image}, Error);
}

}  // namespace
}  // namespace rvformer::emulator
