// cpu/decode.cpp — the instruction decoder: the one-hot instruction (one AND neuron per op over the
// stored class and the funct fields) and the immediates, which are linear views of the word.
#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {

// Sign-extended immediate from word bits: source(i) is the word bit of immediate bit i, or −1 (0).
Forms immediate(const Instruction& insn, int (*source)(int)) {
  Forms imm(32);
  for (int i = 0; i < 32; ++i)
    if (int bit = source(i); bit >= 0) imm[i] = F(bit == 31 && (i / 8) % 2 ? insn.sign_copy : insn.word(bit));
  return imm;
}

}  // namespace

Bits Instruction::word_bits(int low, int count) const {
  Bits bits;
  for (int i = 0; i < count; ++i) bits.push_back(word(low + i));
  return bits;
}

Enable Decoded::first_stage(int op, SignalId state) const {
  const Rv32Encoding& e = kRv32Encodings[op];
  std::vector<Literal> literals = insn->is_class(instruction_class(e.opcode));
  if (e.funct3 >= 0) literals = join(literals, match_bits(insn->stored, 10, 3, static_cast<std::uint32_t>(e.funct3)));
  if (e.funct7 >= 0) literals = join(literals, match_bits(insn->stored, 23, 7, static_cast<std::uint32_t>(e.funct7)));
  if (e.no_rd) literals = join(literals, match_bits(insn->stored, 5, 5, 0));
  if (e.no_rs2) literals = join(literals, match_bits(insn->stored, 18, 5, 0));
  literals.push_back(lit(state));
  return Enable(literals);
}

void MachineBuilder::add_decoder() {
  Gates g = gates("decode");
  decoded_.insn = &insn_;
  Form any_op;
  for (int op = 0; op < kOpCount; ++op) {
    if (!decodes(op)) {
      decoded_.op[op] = zero_;
      continue;
    }
    decoded_.op[op] = g.all(kRv32Encodings[op].name, decoded_.first_stage(op, control_.active).literals());
    any_op += F(decoded_.op[op]);
  }
  decoded_.illegal = g.relu("illegal", F(control_.active) - any_op, 1);
  decoded_.imm_i = immediate(insn_, [](int i) { return i < 11 ? 20 + i : 31; });
  decoded_.imm_s = immediate(insn_, [](int i) { return i < 5 ? 7 + i : i < 11 ? 20 + i : 31; });
  decoded_.imm_b = immediate(insn_, [](int i) { return i == 0 ? -1 : i < 5 ? 7 + i : i < 11 ? 20 + i : i == 11 ? 7 : 31; });
  decoded_.imm_u = immediate(insn_, [](int i) { return i < 12 ? -1 : i; });
  decoded_.imm_j = immediate(insn_, [](int i) { return i == 0 ? -1 : i < 11 ? 20 + i : i == 11 ? 20 : i < 20 ? i : 31; });
}

}  // namespace rvformer::cpu
