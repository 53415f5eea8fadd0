// cpu/machine.h — the RV32IM + Zba computer as a circuit, and where its state lives.
//
// build_machine(spec) describes the whole machine in the circuit IR from one MachineSpec: the trace
// vocabulary, the program counter, the code ROM, read-only data and RAM as GDN banks, the register
// file, the decoder, the ALU and the logic that chooses the next trace token. The compiler turns it
// into weights; the exact evaluator runs it directly. The layout tells the driver and the verifier
// which bank row holds which register or memory word (docs/machine-layout.md).
#pragma once

#include <memory>
#include <vector>

#include "circuit/circuit.h"
#include "cpu/trace_tokens.h"
#include "program/machine_spec.h"

namespace rvformer::cpu {

// Geometry of the memories inside the banks (each bank is one GDN key head of 128 rows with two
// value halves of 126 lanes).
inline constexpr int kRowsPerBank = 128;
inline constexpr int kInstructionLanes = 15;    // two bits each: a stored instruction
inline constexpr int kWordLanes = 16;           // two bits each: a word of read-only data
inline constexpr int kRegisterLaneSets = 3;     // per register bit: a lui lane, a link lane, a late lane
inline constexpr int kCounterLevels = 17;       // steps since the PC's base: 0..16 (16 crosses a row)
inline constexpr int kBigintLimbBits = 30;      // lanes of a big-integer unit entry
inline constexpr int kBigintTerms = 8;          // terms of its dot product, and copies of each memory
// The stored level of the value n of a lane of several bits: 0 or 2^(n − 1) (docs/circuit-encoding.md).
constexpr double stored_level(int n) { return n == 0 ? 0 : static_cast<double>(1 << (n - 1)); }
inline constexpr int kVectorWeightLanes = 8;    // four bits each (levels 0 and 2^0..2^14): a weight memory word
inline constexpr int kVectorWeightLaneBits = 4;
inline constexpr int kVectorWeightLanesPerByte = 8 / kVectorWeightLaneBits;
inline constexpr int kVectorWeightBankBytes = kRowsPerBank * 2 * kVectorWeightWordsPerHalf * 4;  // 8 KiB
// WM's 64-byte lines lie across its banks, so that a matrix row of up to 2 KiB that starts at a
// multiple of 64 is one row of consecutive banks, which one pass can read. The banks form regions
// of powers of two, largest first (48 = 32 + 16); line L of a region of 2^b banks is in the
// region's bank L[b − 1:0], row L[b + 6:b], and the region is told apart by L's bits from b + 7 up.
struct WeightRegion {
  int first_bank = 0;
  int bank_bits = 0;
  std::uint32_t first_line = 0;
};
std::vector<WeightRegion> weight_memory_regions(int banks);
struct WeightPlace {
  int bank = 0, row = 0, half = 0, word = 0;
};
// Where the word at WM byte `address` lies, in a weight memory of `banks` banks.
WeightPlace weight_memory_place(int banks, std::uint32_t address);
// AM: a half-row holds a line of 16 elements of 13 bits, two bits a lane (the top lane one bit),
// so a row of the 8 banks holds 256 elements.
inline constexpr int kVectorElementBits = 13;
inline constexpr int kVectorElementLaneBits = 2;
inline constexpr int kVectorElementLanes = (kVectorElementBits + kVectorElementLaneBits - 1) / kVectorElementLaneBits;
inline constexpr int kVectorElementAddressBits = 15;  // AM's 32,768 elements
inline constexpr int kVectorLineElements = static_cast<int>(program::kVectorLineElements);
inline constexpr int kVectorActivationBanks =
    static_cast<int>(program::kVectorActivationElements) / (kRowsPerBank * 2 * kVectorLineElements);
// The KV cache: a slot a bank row, its key vector in half 0 and its value vector in half 1, each 32
// elements of 13 bits packed four bits a lane.
inline constexpr int kVectorKvBanks = static_cast<int>(program::kVectorKvSlots) / kRowsPerBank;
inline constexpr int kVectorKvVectorBits = static_cast<int>(program::kVectorKvElements) * kVectorElementBits;
inline constexpr int kVectorKvLaneBits = 4;
inline constexpr int kVectorKvLanes = kVectorKvVectorBits / kVectorKvLaneBits;

// Where each part of the machine state is, as circuit bank indices.
struct MachineLayout {
  // Row 0. Half 0: lanes 0..7 base bits 0..7, lanes 8..11 bits 8..11 set by a near jump, lanes
  // 12..15 bits 8..11 set by a far one; half 1: lanes 0.. base bits 12 and up.
  int latch_bank = -1;
  int control_bank = -1;  // row 0: half 0 lane 0 the step counter (2^-n), half 1 lane 0 running
  std::vector<int> code_banks;    // row = word[10:4], half = word[3], slot = word[2:0]
  std::vector<int> rodata_banks;  // page (address[17:12]) k + 1; row = address[11:5], half = address[4]
  std::vector<int> ram_banks;     // bank = address[.. :10], row = address[9:3], half = address[2]
  // One copy of the register file: row r = x_r; per half h, lanes [16s, 16s + 16) hold bits
  // 16h.. of lane set s (lui, link, late); the register is their sum (at most one set is non-zero).
  int register_bank = -1;
  // The big-integer unit (docs/bigint-unit.md), empty without it: copy t of A holds A[(r + t) mod
  // 128] in row r, copy t of B holds B[(r − t) mod 128]; half 0, lanes 0..29 the value's bits.
  std::vector<int> bigint_a_banks, bigint_b_banks;
  // The vector unit's weight memory (docs/vector-unit.md), empty without it: the 64-byte line
  // address[..:6] in the bank and row weight_memory_place gives, half address[5], word
  // address[4:2], four bits a lane.
  std::vector<int> vector_weight_banks;
  // Its configuration registers, numbered as the funct7 of the vu.set* that writes them (VL, COLS,
  // SRC, AUX, HS): register r in bank vector_register_banks[r / 2], half r % 2, row 0, a bit a lane.
  std::vector<int> vector_register_banks;
  // Its activation memory: element e in bank vector_activation_banks[e[7:5]], row e[14:8], half
  // e[4], lanes 7·e[3:0] .. + 6 (bits 2m and 2m + 1 in lane m as the levels 0, 1, 2, 4; bit 12
  // alone in the last); vu.put's line buffer: slot k in bank vector_line_banks[k / 2], half k % 2,
  // row 0, lanes 0..6 as AM's.
  std::vector<int> vector_activation_banks, vector_line_banks;
  // Its KV cache: slot s in bank vector_kv_banks[s[4:0]], row s[11:5], the key vector in half 0 and
  // the value vector in half 1, element i's bit b at bit 13i + b of lanes of four bits (0 or 2^(n − 1)
  // for the nibble n).
  std::vector<int> vector_kv_banks;
};

struct Machine {
  explicit Machine(const program::MachineSpec& machine_spec) : spec(machine_spec), vocabulary(machine_spec) {}
  program::MachineSpec spec;
  TraceVocabulary vocabulary;
  circuit::Circuit circuit;
  MachineLayout layout;
};

// Whether the machine `spec` describes decodes `op` (rv32_ops.h): RV32IM, Zba and FENCE always, the
// big-integer unit's instructions with that unit, and with the vector unit its data moves (vu.put,
// vu.get, vu.wget, vu.kput, vu.vput), configuration writes (vu.set*) and the operations that go a
// line at a time (vu.add16, vu.mul16, vu.silu, vu.argmax, vu.rmsnorm, vu.rope). Every other word,
// the unit's other operations among them, is an illegal instruction there.
bool decodes_op(const program::MachineSpec& spec, int op);

std::unique_ptr<Machine> build_machine(const program::MachineSpec& spec = program::kDefaultMachine);

}  // namespace rvformer::cpu
