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
  EXPECT_EQ(machine->circuit.vocab_size(), kTraceVocabularySize);
  EXPECT_EQ(machine->circuit.token_id("HI", 5), hi_token(5));
  EXPECT_EQ(machine->circuit.token_id("FAULT", 3), fault_token(FaultCause::kFetchAccessAfterJump));
  EXPECT_EQ(decode_token(out_token('A')).payload, 'A');
  EXPECT_THROW(decode_token(kTraceVocabularySize), Error);
}

}  // namespace
}  // namespace rvformer::cpu
