// cpu/machine.h — the RV32IM + Zba computer as a circuit, and where its state lives.
//
// build_machine() describes the whole machine in the circuit IR: the trace vocabulary, the program
// counter, the code ROM, read-only data and RAM as GDN banks, the register file, the decoder, the
// ALU and the logic that chooses the next trace token. The compiler turns it into weights; the
// exact evaluator runs it directly. The layout tells the driver and the verifier which bank row
// holds which register or memory word (docs/machine-layout.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "circuit/circuit.h"

namespace rvformer::cpu {

// Geometry of the memories inside the banks (each bank is one GDN key head of 128 rows).
inline constexpr int kCodeBanks = 64;         // 8 instructions per row: 64 × 128 × 8 × 4 B = 256 KB
inline constexpr int kInstructionsPerRow = 8;
inline constexpr int kRodataBanks = 64;       // 4 words per row: 64 × 128 × 16 B = 128 KB
inline constexpr int kRodataWordsPerRow = 4;
inline constexpr int kRamBanks = 64;          // 1 word per row (two halves): 64 × 128 × 4 B = 32 KB
inline constexpr int kRowsPerBank = 128;
inline constexpr int kStagingSlots = 16;      // halfwords gathered while loading one image row
inline constexpr int kCounterLevels = 17;     // PC counter values 0..16 (16 only while loading)
inline constexpr int kResyncAt = 15;          // a run of 15 sequential steps ends with a JUMP

// Where each part of the machine state is, as circuit bank indices.
struct MachineLayout {
  int mode_bank = -1;
  int pc_bank = -1;  // half 0: base (16 lanes), half 1: lane 0 = the halving step counter
  std::vector<int> code_banks;
  std::vector<int> rodata_banks;
  std::vector<int> ram_banks;
  int register_bank = -1;  // one of the two identical register copies (row r = x_r; row 0 stays 0)
};

struct Machine {
  circuit::Circuit circuit;
  MachineLayout layout;
};

std::unique_ptr<Machine> build_machine();

}  // namespace rvformer::cpu
