// Tests of the CPU description that need no program: its decode table agrees with the golden
// emulator's on edge and random instruction words, its vocabulary matches trace_tokens.h, and the
// weight memory's words each have a place of their own, a matrix row's lines side by side.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>

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

TEST(WeightMemory, EveryWordHasAPlaceOfItsOwnAndARowOfLinesLiesAcrossBanks) {
  for (const int banks : {48, 32, 5}) {
    const std::uint32_t bytes = static_cast<std::uint32_t>(banks) * kVectorWeightBankBytes;
    std::set<std::tuple<int, int, int, int>> places;
    for (std::uint32_t address = 0; address < bytes; address += 4) {
      const WeightPlace p = weight_memory_place(banks, address);
      ASSERT_TRUE(p.bank >= 0 && p.bank < banks && p.row >= 0 && p.row < kRowsPerBank) << banks << " " << address;
      EXPECT_EQ(p.half * 8 + p.word, static_cast<int>(address >> 2 & 15));
      EXPECT_TRUE(places.insert({p.bank, p.row, p.half, p.word}).second) << banks << " " << address;
    }
    EXPECT_THROW(weight_memory_place(banks, bytes), Error);
  }
  // In the 48 banks, the 32 lines of 2 KiB from any multiple of 2 KiB in the first 256 KiB share a
  // row, and so do the 16 of 1 KiB in the rest.
  for (const auto& [first, lines] : {std::pair{0u, 32u}, {2048u * 77, 32u}, {262144u, 16u}, {262144u + 1024 * 100, 16u}}) {
    const WeightPlace start = weight_memory_place(48, first);
    for (std::uint32_t l = 0; l < lines; ++l) {
      const WeightPlace p = weight_memory_place(48, first + l * kVectorWeightLineBytes);
      EXPECT_EQ(p.row, start.row) << first << " line " << l;
      EXPECT_EQ(p.bank, start.bank + static_cast<int>(l)) << first << " line " << l;
    }
  }
}

TEST(TraceTokens, MachineVocabularyMatchesTheProtocol) {
  auto machine = build_machine();
  const TraceVocabulary& v = machine->vocabulary;
  EXPECT_EQ(machine->circuit.vocab_size(), v.size());
  EXPECT_LE(v.size(), 16384u);
  for (const TokenFamily& f : v.families()) {
    if (f.count) {
      EXPECT_EQ(machine->circuit.token_id(f.name, f.count - 1), f.first + f.count - 1) << f.name;
    }
  }
  EXPECT_EQ(v.family(TokenKind::kVec).count + v.family(TokenKind::kLine).count, 0u);
  EXPECT_EQ(v.decode(v.id(TokenKind::kOut, 'A')).payload, static_cast<std::uint32_t>('A'));
  EXPECT_EQ(v.describe(v.id(TokenKind::kDiv, division_payload(3, 5, 1))), "DIV(3, 5, -)");
  EXPECT_THROW(v.decode(v.size()), Error);
  EXPECT_THROW(v.id(TokenKind::kDiv, kDivisionPositions << 4), Error);
}

// The vector unit's machine adds VEC (13-bit elements), LINE and WLINE (a line of its weight
// memory) after the others, whose ids stay.
TEST(TraceTokens, TheVectorMachinesVocabularyAddsItsOperationsFamilies) {
  auto machine = build_machine(program::kVectorMachine);
  const TraceVocabulary& v = machine->vocabulary;
  const TraceVocabulary standard(program::kDefaultMachine);
  EXPECT_EQ(machine->circuit.vocab_size(), v.size());
  EXPECT_EQ(v.size(), standard.size() + 8192 + 512 + program::kVectorWeightBytes / 64);
  EXPECT_EQ(v.id(TokenKind::kPad), standard.id(TokenKind::kPad));
  for (TokenKind kind : {TokenKind::kVec, TokenKind::kLine, TokenKind::kWline}) {
    const TokenFamily& f = v.family(kind);
    EXPECT_EQ(machine->circuit.token_id(f.name, f.count - 1), f.first + f.count - 1) << f.name;
  }
  EXPECT_EQ(v.describe(v.id(TokenKind::kVec, 0x1FFB)), "VEC(-5)");
  EXPECT_EQ(v.describe(v.id(TokenKind::kVec, 4095)), "VEC(4095)");
  EXPECT_EQ(v.describe(v.id(TokenKind::kLine, 3)), "LINE(3)");
  EXPECT_EQ(v.describe(v.id(TokenKind::kLine, 511)), "LINE(511)");  // line 255 of a matrix product
  EXPECT_THROW(v.id(TokenKind::kLine, 512), Error);
  EXPECT_EQ(v.describe(v.id(TokenKind::kWline, 6143)), "WLINE(6143)");
  EXPECT_THROW(v.id(TokenKind::kWline, 6144), Error);
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
