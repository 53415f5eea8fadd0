// isa/instruction_set.h — the RV32IM + Zba instruction set (plus FENCE as a no-op), the big-integer
// unit's custom-0 instructions (docs/bigint-unit.md) and the vector unit's custom-1 instructions
// (docs/vector-unit.md, runtime/rvformer_vector.h); only machines with a unit execute its
// instructions. One table of encodings from which instructions are decoded, encoded and
// disassembled. Every other encoding (compressed, CSR, ECALL/EBREAK, FENCE.I, a unit's word with a
// register field it does not use set, ...) decodes as Op::kIllegal.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rvformer::isa {

enum class Op : std::uint8_t {
  kLui, kAuipc, kJal, kJalr,
  kBeq, kBne, kBlt, kBge, kBltu, kBgeu,
  kLb, kLh, kLw, kLbu, kLhu,
  kSb, kSh, kSw,
  kAddi, kSlti, kSltiu, kXori, kOri, kAndi, kSlli, kSrli, kSrai,
  kAdd, kSub, kSll, kSlt, kSltu, kXor, kSrl, kSra, kOr, kAnd,
  kMul, kMulh, kMulhsu, kMulhu, kDiv, kDivu, kRem, kRemu,
  kSh1add, kSh2add, kSh3add,
  kFence,
  kBzPuta, kBzPutb, kBzDotlo, kBzDothi,
  kVuSetvl, kVuSetcols, kVuSetsrc, kVuSetaux, kVuSeths,
  kVuPut, kVuGet, kVuWget, kVuKput, kVuVput,
  kVuMatvec16, kVuRow16, kVuAdd16, kVuMul16, kVuRmsnorm, kVuSilu, kVuRope, kVuAttend,
  kVuArgmax,
  kIllegal,
};
inline constexpr std::size_t kInstructionCount = static_cast<std::size_t>(Op::kIllegal);

// Where the operands sit in the word, and how the instruction is written in assembly.
enum class Format : std::uint8_t {
  kR,       // op rd, rs1, rs2
  kI,       // op rd, rs1, imm
  kShift,   // op rd, rs1, shamt    (I-type with funct7 in the upper bits)
  kMemory,  // op rd, imm(rs1)      (loads and jalr: I-type)
  kS,       // op rs2, imm(rs1)
  kB,       // op rs1, rs2, offset
  kU,       // op rd, imm20
  kJ,       // op rd, offset
  kNone,    // fence                (its ordering fields are ignored)
  kPut,     // op rs1, rs2          (R-type with rd = 0)
  kSource,  // op rs1               (R-type with rd = 0 and rs2 = 0)
  kUnary,   // op rd, rs1           (R-type with rs2 = 0)
};

struct OpInfo {
  Op op;
  std::string_view name;
  Format format;
  std::uint8_t opcode;  // bits 6:0
  std::uint8_t funct3;  // bits 14:12 (unused by U and J)
  std::uint8_t funct7;  // bits 31:25 (R and shift formats only)
};

const std::array<OpInfo, kInstructionCount>& instruction_table();
const OpInfo& op_info(Op op);  // op != kIllegal

// A decoded instruction. `imm` is the value execution uses: sign-extended for I, S, B and J
// (B and J: the byte offset), the shifted value (imm20 << 12) for U, the shift amount for kShift.
struct Instruction {
  Op op = Op::kIllegal;
  std::uint8_t rd = 0;
  std::uint8_t rs1 = 0;
  std::uint8_t rs2 = 0;
  std::int32_t imm = 0;
};

Instruction decode(std::uint32_t word);

// Throws rvformer::Error for an operand that does not fit its field.
std::uint32_t encode(const Instruction& instruction);

// Bytes a load or store accesses (1, 2 or 4); 0 for every other instruction.
unsigned memory_access_width(Op op);
bool is_load(Op op);
bool is_store(Op op);
// The big-integer unit's instructions (bz.*).
bool is_bigint(Op op);
// The vector unit's instructions (vu.*).
bool is_vector(Op op);

// lui + addi that set `rd` to `value` (always two instructions).
std::array<std::uint32_t, 2> load_immediate(std::uint8_t rd, std::uint32_t value);

// "add a0, a1, a2"; "illegal 0x00000073" for anything outside the instruction set.
std::string disassemble(std::uint32_t word);

// ABI register names: zero, ra, sp, gp, tp, t0, ...
std::string_view register_name(unsigned index);

}  // namespace rvformer::isa
