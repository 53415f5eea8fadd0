// verify/assembler_testing.h — for tests: a program written as machine words from the start of the
// code ROM, so that each test runs exactly the instructions it names.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/instruction_set.h"
#include "program/machine_spec.h"
#include "program/program_image.h"

namespace rvformer::verify::testing {

class Assembler {
 public:
  Assembler& add(isa::Op op, std::uint8_t rd, std::uint8_t rs1, std::uint8_t rs2, std::int32_t imm) {
    words_.push_back(isa::encode({.op = op, .rd = rd, .rs1 = rs1, .rs2 = rs2, .imm = imm}));
    return *this;
  }
  Assembler& li(std::uint8_t rd, std::uint32_t value) {
    for (std::uint32_t word : isa::load_immediate(rd, value)) words_.push_back(word);
    return *this;
  }
  // Ends the program with exit code 0 (through t0) and places it in `map`'s code ROM.
  program::ProgramImage exit_and_link(const program::MemoryMap& map = program::kRvformerMap) {
    constexpr std::uint8_t kT0 = 5;
    li(kT0, map.exit_address).add(isa::Op::kSw, 0, kT0, 0, 0);
    program::ProgramImage image;
    image.map = map;
    for (std::uint32_t word : words_)
      for (int shift = 0; shift < 32; shift += 8) image.code.push_back(static_cast<std::uint8_t>(word >> shift));
    image.entry = map.code.base;
    return image;
  }

 private:
  std::vector<std::uint32_t> words_;
};

}  // namespace rvformer::verify::testing
