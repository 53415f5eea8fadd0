// cpu/decode.cpp — the instruction decoder: one MLP stage of AND neurons over the fetched bits.
#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {

using circuit::Literal;
using circuit::sum_of;

// Literals matching bits [low, low + width) of the instruction against `value`.
void match_field(const Bits& insn, int low, int width, unsigned value, std::vector<Literal>& out) {
  for (int i = 0; i < width; ++i)
    out.push_back((value >> i) & 1 ? circuit::lit(insn[low + i]) : circuit::nlit(insn[low + i]));
}

}  // namespace

void MachineBuilder::add_decoder() {
  circuit::Gates g = gates("decode");
  auto opcode_literals = [&](unsigned opcode) {
    std::vector<Literal> literals{circuit::lit(legal_)};
    match_field(insn_, 2, 5, opcode >> 2, literals);
    return literals;
  };
  for (int op = 0; op < kOpCount; ++op) {
    const Rv32Encoding& e = kRv32Encodings[op];
    std::vector<Literal> literals = opcode_literals(e.opcode);
    if (e.funct3 >= 0) match_field(insn_, 12, 3, e.funct3, literals);
    if (e.funct7 >= 0) match_field(insn_, 25, 7, e.funct7, literals);
    literals.push_back(circuit::lit(active_));
    op_[op] = g.all(e.name, literals);
  }

  rd_nonzero_ = g.any("rd_nonzero", sum_of(slice(insn_, 7, 5)));

  // Immediates by format: bit i of an immediate is one instruction bit, selected by the opcode.
  auto immediate = [&](const std::string& name, std::initializer_list<unsigned> opcodes, auto source_bit) {
    Bits imm;
    for (int i = 0; i < 32; ++i) {
      int source = source_bit(i);
      if (source < 0) {
        imm.push_back(zero_);
        continue;
      }
      SignalId bit = g.signal(name + "[" + std::to_string(i) + "]");
      for (unsigned opcode : opcodes) {
        std::vector<Literal> literals = opcode_literals(opcode);
        literals.push_back(circuit::lit(insn_[source]));
        g.add_all(bit, literals);
      }
      imm.push_back(bit);
    }
    return imm;
  };
  imm_i_ = immediate("imm_i", {0x03, 0x13, 0x67}, [](int i) { return i < 11 ? 20 + i : 31; });
  imm_s_ = immediate("imm_s", {0x23}, [](int i) { return i < 5 ? 7 + i : i < 11 ? 20 + i : 31; });
  imm_b_ = immediate("imm_b", {0x63}, [](int i) {
    return i == 0 ? -1 : i < 5 ? 7 + i : i < 11 ? 20 + i : i == 11 ? 7 : 31;
  });
  imm_u_ = immediate("imm_u", {0x37, 0x17}, [](int i) { return i < 12 ? -1 : i; });
  imm_j_ = immediate("imm_j", {0x6F}, [](int i) {
    return i == 0 ? -1 : i < 11 ? 20 + i : i == 11 ? 20 : i < 20 ? i : 31;
  });
  for (int s = 0; s < 32; ++s) {
    std::vector<Literal> literals = opcode_literals(0x13);
    match_field(insn_, 20, 5, s, literals);
    shamt_imm_.push_back(g.all("shamt[" + std::to_string(s) + "]", literals));
  }
}

}  // namespace rvformer::cpu
