// cpu/rv32_ops.h — the instructions the in-weights CPU decodes: RV32I (without ECALL, EBREAK and
// CSRs), M, Zba, FENCE and the big-integer unit's custom-0 instructions (only a machine with the
// unit decodes those), each identified by its opcode, funct3 and funct7 fields and, for the units'
// instructions, the register fields they leave zero. Everything else is an illegal instruction. The
// vector unit's custom-1 instructions are all listed so that the table names every word the golden
// emulator decodes; a machine with the unit decodes those its circuit has (decodes_op in
// cpu/machine.h) and treats the others as illegal.
// (Written independently of the golden emulator's table, which checks it.)
#pragma once

#include <array>
#include <cstdint>

namespace rvformer::cpu {

enum Rv32Op : int {
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
  kOpCount
};
inline constexpr int kFirstBigintOp = kBzPuta;
inline constexpr int kFirstVectorOp = kVuSetvl;

struct Rv32Encoding {
  const char* name;
  std::uint8_t opcode;  // bits 6..0
  int funct3;           // bits 14..12, or -1 when not part of the encoding
  int funct7;           // bits 31..25, or -1
  bool no_rd = false;   // bits 11..7 must be 0
  bool no_rs2 = false;  // bits 24..20 must be 0
};

inline constexpr std::array<Rv32Encoding, kOpCount> kRv32Encodings = {{
    {"lui", 0x37, -1, -1},    {"auipc", 0x17, -1, -1},  {"jal", 0x6F, -1, -1},     {"jalr", 0x67, 0, -1},
    {"beq", 0x63, 0, -1},     {"bne", 0x63, 1, -1},     {"blt", 0x63, 4, -1},      {"bge", 0x63, 5, -1},
    {"bltu", 0x63, 6, -1},    {"bgeu", 0x63, 7, -1},
    {"lb", 0x03, 0, -1},      {"lh", 0x03, 1, -1},      {"lw", 0x03, 2, -1},       {"lbu", 0x03, 4, -1},
    {"lhu", 0x03, 5, -1},
    {"sb", 0x23, 0, -1},      {"sh", 0x23, 1, -1},      {"sw", 0x23, 2, -1},
    {"addi", 0x13, 0, -1},    {"slti", 0x13, 2, -1},    {"sltiu", 0x13, 3, -1},    {"xori", 0x13, 4, -1},
    {"ori", 0x13, 6, -1},     {"andi", 0x13, 7, -1},    {"slli", 0x13, 1, 0x00},   {"srli", 0x13, 5, 0x00},
    {"srai", 0x13, 5, 0x20},
    {"add", 0x33, 0, 0x00},   {"sub", 0x33, 0, 0x20},   {"sll", 0x33, 1, 0x00},    {"slt", 0x33, 2, 0x00},
    {"sltu", 0x33, 3, 0x00},  {"xor", 0x33, 4, 0x00},   {"srl", 0x33, 5, 0x00},    {"sra", 0x33, 5, 0x20},
    {"or", 0x33, 6, 0x00},    {"and", 0x33, 7, 0x00},
    {"mul", 0x33, 0, 0x01},   {"mulh", 0x33, 1, 0x01},  {"mulhsu", 0x33, 2, 0x01}, {"mulhu", 0x33, 3, 0x01},
    {"div", 0x33, 4, 0x01},   {"divu", 0x33, 5, 0x01},  {"rem", 0x33, 6, 0x01},    {"remu", 0x33, 7, 0x01},
    {"sh1add", 0x33, 2, 0x10}, {"sh2add", 0x33, 4, 0x10}, {"sh3add", 0x33, 6, 0x10},
    {"fence", 0x0F, 0, -1},
    {"bz.puta", 0x0B, 0, 0x00, true}, {"bz.putb", 0x0B, 1, 0x00, true}, {"bz.dotlo", 0x0B, 2, 0x00}, {"bz.dothi", 0x0B, 3, 0x00},
    {"vu.setvl", 0x2B, 0, 0, true, true},  {"vu.setcols", 0x2B, 0, 1, true, true}, {"vu.setsrc", 0x2B, 0, 2, true, true},
    {"vu.setaux", 0x2B, 0, 3, true, true}, {"vu.seths", 0x2B, 0, 4, true, true},
    {"vu.put", 0x2B, 1, 1, true},          {"vu.get", 0x2B, 1, 2, false, true},
    {"vu.wget", 0x2B, 1, 3, false, true},  {"vu.kput", 0x2B, 1, 4, true},          {"vu.vput", 0x2B, 1, 5, true},
    {"vu.matvec16", 0x2B, 2, 0, true},     {"vu.row16", 0x2B, 2, 2, true},
    {"vu.add16", 0x2B, 2, 3, true},        {"vu.mul16", 0x2B, 2, 4, true},         {"vu.rmsnorm", 0x2B, 2, 5, true},
    {"vu.silu", 0x2B, 2, 6, true, true},   {"vu.rope", 0x2B, 2, 7, true},          {"vu.attend", 0x2B, 2, 8, true},
    {"vu.argmax", 0x2B, 3, 0, false, true},
}};

// The op a word decodes to, or kOpCount for an illegal instruction.
constexpr int decode_rv32_op(std::uint32_t word) {
  for (int op = 0; op < kOpCount; ++op) {
    const Rv32Encoding& e = kRv32Encodings[op];
    if ((word & 0x7F) != e.opcode) continue;
    if (e.funct3 >= 0 && static_cast<int>((word >> 12) & 7) != e.funct3) continue;
    if (e.funct7 >= 0 && static_cast<int>(word >> 25) != e.funct7) continue;
    if (e.no_rd && ((word >> 7) & 0x1F) != 0) continue;
    if (e.no_rs2 && ((word >> 20) & 0x1F) != 0) continue;
    return op;
  }
  return kOpCount;
}

}  // namespace rvformer::cpu
