// Tests of the CPU description that need no program: its decode table agrees with the golden
// emulator's on edge and random instruction words, and its vocabulary matches trace_tokens.h.
#include <gtest/gtest.h>

#include <random>

#include "cpu/machine.h"
#include "cpu/rv32_ops.h"
#include "cpu/trace_tokens.h"
#include "isa/instruction_set.h"
#include "support/error.h"

namespace rvformer::cpu {
namespace {

TEST(Rv32Ops, DecodeAgreesWithTheGoldenMachine) {
  std::mt19937 random(11);
  auto check = [](std::uint32_t word) {
    int ours = decode_rv32_op(word);
    isa::Op golden = isa::decode(word).op;
    std::string golden_name = golden == isa::Op::kIllegal ? "illegal" : std::string(isa::op_info(golden).name);
    std::string our_name = ours == kOpCount ? "illegal" : kRv32Encodings[ours].name;
    EXPECT_EQ(our_name, golden_name) << std::hex << word;
  };
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t word = static_cast<std::uint32_t>(random());
    // Half of the words get a valid opcode so that every funct3/funct7 combination is reached.
    if (i & 1) word = (word & ~0x7Fu) | kRv32Encodings[random() % kOpCount].opcode;
    check(word);
  }
  for (const Rv32Encoding& e : kRv32Encodings) check(e.opcode | (e.funct3 > 0 ? e.funct3 << 12 : 0) | (e.funct7 > 0 ? e.funct7 << 25 : 0));
}

TEST(TraceTokens, MachineVocabularyMatchesTheProtocol) {
  auto machine = build_machine();
  const TraceVocabulary& v = machine->vocabulary;
  EXPECT_EQ(machine->circuit.vocab_size(), v.size());
  EXPECT_LE(v.size(), 16384u);
  for (const TokenFamily& f : v.families())
    if (f.count) EXPECT_EQ(machine->circuit.token_id(f.name, f.count - 1), f.first + f.count - 1) << f.name;
  EXPECT_EQ(v.family(TokenKind::kVec).count + v.family(TokenKind::kLine).count, 0u);
  EXPECT_EQ(v.decode(v.id(TokenKind::kOut, 'A')).payload, static_cast<std::uint32_t>('A'));
  EXPECT_EQ(v.describe(v.id(TokenKind::kDiv, division_payload(3, 5, 1))), "DIV(3, 5, -)");
  EXPECT_THROW(v.decode(v.size()), Error);
  EXPECT_THROW(v.id(TokenKind::kDiv, kDivisionPositions << 4), Error);
}

// The vector unit's machine adds VEC (13-bit elements) and LINE after the others, whose ids stay.
TEST(TraceTokens, TheVectorMachinesVocabularyAddsItsOperationsFamilies) {
  auto machine = build_machine(program::kVectorMachine);
  const TraceVocabulary& v = machine->vocabulary;
  const TraceVocabulary standard(program::kDefaultMachine);
  EXPECT_EQ(machine->circuit.vocab_size(), v.size());
  EXPECT_EQ(v.size(), standard.size() + 8192 + 256);
  EXPECT_EQ(v.id(TokenKind::kPad), standard.id(TokenKind::kPad));
  for (TokenKind kind : {TokenKind::kVec, TokenKind::kLine}) {
    const TokenFamily& f = v.family(kind);
    EXPECT_EQ(machine->circuit.token_id(f.name, f.count - 1), f.first + f.count - 1) << f.name;
  }
  EXPECT_EQ(v.describe(v.id(TokenKind::kVec, 0x1FFB)), "VEC(-5)");
  EXPECT_EQ(v.describe(v.id(TokenKind::kVec, 4095)), "VEC(4095)");
  EXPECT_EQ(v.describe(v.id(TokenKind::kLine, 3)), "LINE(3)");
  EXPECT_THROW(v.id(TokenKind::kVec, 8192), Error);
  EXPECT_THROW(standard.id(TokenKind::kVec, 0), Error);
}

// The large machine's jump payloads are a bit wider: only FAR grows.
TEST(TraceTokens, TheLargeMachinesVocabularyGrowsByItsFarTargets) {
  TraceVocabulary standard(program::kDefaultMachine), large(program::kLargeMachine);
  EXPECT_EQ(large.family(TokenKind::kFar).count, 2 * standard.family(TokenKind::kFar).count);
  EXPECT_EQ(large.size() - standard.size(), standard.family(TokenKind::kFar).count);
}

}  // namespace
}  // namespace rvformer::cpu
