// Every RV32IM + Zba instruction inside the compiled weights, in lockstep with the golden emulator
// (label weights): one program per instruction runs it on edge-case operands (0, ±1, INT_MIN,
// INT_MAX, shift amounts around 31, every byte and halfword offset, taken and untaken branches,
// forward and backward jumps), and the registers, PC and stored words are compared after every
// instruction. The programs are machine words written directly, so each tests exactly its
// instruction.
#include <gtest/gtest.h>

#include "driver/compiled_machine.h"
#include "driver/model_machine.h"
#include "emulator/differential.h"
#include "isa/instruction_set.h"
#include "verify/assembler_testing.h"
#include "verify/lockstep.h"

namespace rvformer::verify {
namespace {

using isa::Format;
using isa::Op;
using testing::Assembler;
using program::kRvformerMap;

constexpr std::uint8_t kRa = 1, kT0 = 5, kT1 = 6, kT2 = 7, kT3 = 28;

const std::uint32_t kEdgeValues[] = {0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 7, 0xFFFFFFF9, 0x12345678, 0x10000, 31, 32};

void register_register(Assembler& a, Op op) {
  for (std::uint32_t x : kEdgeValues)
    for (std::uint32_t y : kEdgeValues) a.li(kT0, x).li(kT1, y).add(op, kT2, kT0, kT1, 0);
  a.add(op, kT0, kT0, kT1, 0).add(op, 0, kT0, kT1, 0);  // rd = rs1; rd = x0
}

void register_immediate(Assembler& a, Op op, std::initializer_list<std::int32_t> immediates) {
  for (std::uint32_t x : kEdgeValues)
    for (std::int32_t imm : immediates) a.li(kT0, x).add(op, kT2, kT0, 0, imm);
  a.add(op, kT0, kT0, 0, 1).add(op, 0, kT0, 0, 1);
}

// A pattern in the first RAM words, then the load at every offset its width allows, from a base
// above and below the address.
void loads(Assembler& a, Op op, int width) {
  const std::uint32_t base = kRvformerMap.ram.base + 64;
  a.li(kT0, base).li(kT1, 0x80FF7F01).add(Op::kSw, 0, kT0, kT1, 0).li(kT1, 0xFEDC8001).add(Op::kSw, 0, kT0, kT1, 4);
  for (int offset = 0; offset < 8; offset += width) {
    a.add(op, kT2, kT0, 0, offset);
    a.li(kT3, base + 2048).add(op, kT2, kT3, 0, offset - 2048);
  }
  a.add(op, kT0, kT0, 0, 4);  // rd = rs1
}

void stores(Assembler& a, Op op, int width) {
  const std::uint32_t base = kRvformerMap.ram.base + 128;
  a.li(kT0, base);
  for (std::uint32_t value : kEdgeValues)
    for (int offset = 0; offset < 8; offset += width) a.li(kT1, value).add(op, 0, kT0, kT1, offset);
  a.li(kT3, base + 2047).add(op, 0, kT3, kT1, -2047 + 4);  // a negative offset
  a.li(kT3, kRvformerMap.ram.base + kRvformerMap.ram.size - 4).add(op, 0, kT3, kT1, 0);  // the last word
  a.add(Op::kLw, kT2, kT0, 0, 0).add(Op::kLw, kT2, kT0, 0, 4);
}

// Each pair once forward (taken skips one instruction) and a three-round backward loop.
void branches(Assembler& a, Op op) {
  for (std::uint32_t x : kEdgeValues)
    for (std::uint32_t y : {0u, 1u, 0xFFFFFFFFu, 0x80000000u, 7u})
      a.li(kT0, x).li(kT1, y).add(op, 0, kT0, kT1, 8).add(Op::kAddi, kT2, kT2, 0, 1);
  a.add(op, 0, kT0, kT0, 8).add(Op::kAddi, kT2, kT2, 0, 1);  // rs1 = rs2
  // bge and bgeu count t3 down from 3 and stay while t3 >= t1 (-1, or 1 unsigned); beq leaves the
  // loop when t3 - 3 == 0; the others count up while t3 < 3 (or != 3).
  const bool counts_down = op == Op::kBge || op == Op::kBgeu;
  a.li(kT1, counts_down ? (op == Op::kBgeu ? 1u : 0xFFFFFFFFu) : 3u).li(kT3, counts_down ? 3u : 0u);
  a.add(Op::kAddi, kT3, kT3, 0, counts_down ? -1 : 1);
  if (op == Op::kBeq) a.add(Op::kAddi, kT2, kT3, 0, -3).add(op, 0, kT2, 0, 8).add(Op::kJal, 0, 0, 0, -12);
  else a.add(op, 0, kT3, kT1, -4);
}

void jumps(Assembler& a, Op op) {
  if (op == Op::kJal) {
    a.add(Op::kJal, kRa, 0, 0, 8).add(Op::kAddi, kT2, kT2, 0, 1);  // forward, skipping one
    a.add(Op::kJal, 0, 0, 0, 12).add(Op::kJal, 0, 0, 0, 12).add(Op::kAddi, kT2, kT2, 0, 1);
    a.add(Op::kJal, kT1, 0, 0, -8);  // backward to the second jal, which goes on past this one
    a.add(Op::kJal, 0, 0, 0, 4);
    return;
  }
  // auipc t0, 0 names this instruction's address; the targets lie 12 bytes after it.
  for (std::int32_t offset : {12, 13}) a.add(Op::kAuipc, kT0, 0, 0, 0).add(Op::kJalr, kRa, kT0, 0, offset).add(Op::kAddi, kT2, kT2, 0, 1);
  a.add(Op::kAuipc, kT0, 0, 0, 0).add(Op::kAddi, kT0, kT0, 0, 2047).add(Op::kJalr, 0, kT0, 0, -2047 + 16).add(Op::kAddi, kT2, kT2, 0, 1);
  a.add(Op::kAuipc, kT0, 0, 0, 0).add(Op::kJalr, kT0, kT0, 0, 12).add(Op::kAddi, kT2, kT2, 0, 1);  // rd = rs1
}

void upper_immediates(Assembler& a, Op op) {
  for (std::uint32_t value : {0u, 0x1000u, 0xFFFFF000u, 0x80000000u, 0x7FFFF000u, 0x12345000u})
    a.add(op, kT2, 0, 0, static_cast<std::int32_t>(value));
}

program::ProgramImage program_for(const isa::OpInfo& info) {
  Assembler a;
  switch (info.format) {
    case Format::kR:
    case Format::kPut:
    case Format::kSource:
    case Format::kUnary: register_register(a, info.op); break;
    case Format::kI: register_immediate(a, info.op, {0, 1, -1, 2047, -2048, 0x555, -0x556}); break;
    case Format::kShift: register_immediate(a, info.op, {0, 1, 4, 15, 16, 31}); break;
    case Format::kMemory:
      if (info.op == Op::kJalr) jumps(a, info.op);
      else loads(a, info.op, info.op == Op::kLw ? 4 : (info.op == Op::kLh || info.op == Op::kLhu) ? 2 : 1);
      break;
    case Format::kS: stores(a, info.op, info.op == Op::kSw ? 4 : info.op == Op::kSh ? 2 : 1); break;
    case Format::kB: branches(a, info.op); break;
    case Format::kU: upper_immediates(a, info.op); break;
    case Format::kJ: jumps(a, info.op); break;
    case Format::kNone: a.li(kT0, 9).add(info.op, 0, 0, 0, 0).add(Op::kAddi, kT0, kT0, 0, 1); break;
  }
  return a.exit_and_link();
}

TEST(Instructions, EveryInstructionRunsInLockstepInsideTheWeights) {
  auto machine = cpu::build_machine();
  auto checkpoint = driver::machine_checkpoint(*machine, std::nullopt, [](const std::string&) {});
  auto bank_heads = driver::read_machine_info(checkpoint).bank_heads;
  engine::FastModel model = engine::FastModel::load(checkpoint);
  for (const isa::OpInfo& info : isa::instruction_table()) {
    if (isa::is_bigint(info.op)) continue;  // illegal here; verify_test's BigintUnit runs them
    if (isa::is_vector(info.op)) continue;  // illegal here; verify_test's VectorUnit runs vu.wget
    SCOPED_TRACE(std::string(info.name));
    program::ProgramImage image = program_for(info);
    const emulator::MachineRun golden = emulator::run_on_emulator(image, 1'000'000);
    ASSERT_EQ(golden.failure, "");
    driver::FastModelMachine weights(model);
    LockstepReport report = run_lockstep(*machine, bank_heads, weights, image, {});
    EXPECT_FALSE(report.difference) << *report.difference;
    EXPECT_EQ(report.ending, "exit 0");
    EXPECT_EQ(report.instructions, golden.instructions);
  }
}

}  // namespace
}  // namespace rvformer::verify
