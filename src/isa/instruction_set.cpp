// isa/instruction_set.cpp — the encoding table and the field layouts of each format.
#include "isa/instruction_set.h"

#include <fmt/format.h>

#include "support/error.h"

namespace rvformer::isa {
namespace {

constexpr std::uint8_t kOpcodeLoad = 0x03, kOpcodeMiscMem = 0x0F, kOpcodeOpImm = 0x13;
constexpr std::uint8_t kOpcodeAuipc = 0x17, kOpcodeStore = 0x23, kOpcodeOp = 0x33;
constexpr std::uint8_t kOpcodeLui = 0x37, kOpcodeBranch = 0x63, kOpcodeJalr = 0x67;
constexpr std::uint8_t kOpcodeJal = 0x6F, kOpcodeCustom0 = 0x0B, kOpcodeCustom1 = 0x2B;
constexpr std::uint8_t kFunct7Base = 0x00, kFunct7Alternate = 0x20, kFunct7MulDiv = 0x01;
constexpr std::uint8_t kFunct7Zba = 0x10;
// `fence` in assembly orders everything: predecessor and successor sets iorw.
constexpr std::uint32_t kFenceAllOrderings = 0x0FF00000;

using enum Op;
using enum Format;

constexpr std::array<OpInfo, kInstructionCount> kTable = {{
    {kLui, "lui", kU, kOpcodeLui, 0, 0},
    {kAuipc, "auipc", kU, kOpcodeAuipc, 0, 0},
    {kJal, "jal", kJ, kOpcodeJal, 0, 0},
    {kJalr, "jalr", kMemory, kOpcodeJalr, 0, 0},
    {kBeq, "beq", kB, kOpcodeBranch, 0, 0},
    {kBne, "bne", kB, kOpcodeBranch, 1, 0},
    {kBlt, "blt", kB, kOpcodeBranch, 4, 0},
    {kBge, "bge", kB, kOpcodeBranch, 5, 0},
    {kBltu, "bltu", kB, kOpcodeBranch, 6, 0},
    {kBgeu, "bgeu", kB, kOpcodeBranch, 7, 0},
    {kLb, "lb", kMemory, kOpcodeLoad, 0, 0},
    {kLh, "lh", kMemory, kOpcodeLoad, 1, 0},
    {kLw, "lw", kMemory, kOpcodeLoad, 2, 0},
    {kLbu, "lbu", kMemory, kOpcodeLoad, 4, 0},
    {kLhu, "lhu", kMemory, kOpcodeLoad, 5, 0},
    {kSb, "sb", kS, kOpcodeStore, 0, 0},
    {kSh, "sh", kS, kOpcodeStore, 1, 0},
    {kSw, "sw", kS, kOpcodeStore, 2, 0},
    {kAddi, "addi", kI, kOpcodeOpImm, 0, 0},
    {kSlti, "slti", kI, kOpcodeOpImm, 2, 0},
    {kSltiu, "sltiu", kI, kOpcodeOpImm, 3, 0},
    {kXori, "xori", kI, kOpcodeOpImm, 4, 0},
    {kOri, "ori", kI, kOpcodeOpImm, 6, 0},
    {kAndi, "andi", kI, kOpcodeOpImm, 7, 0},
    {kSlli, "slli", kShift, kOpcodeOpImm, 1, kFunct7Base},
    {kSrli, "srli", kShift, kOpcodeOpImm, 5, kFunct7Base},
    {kSrai, "srai", kShift, kOpcodeOpImm, 5, kFunct7Alternate},
    {kAdd, "add", kR, kOpcodeOp, 0, kFunct7Base},
    {kSub, "sub", kR, kOpcodeOp, 0, kFunct7Alternate},
    {kSll, "sll", kR, kOpcodeOp, 1, kFunct7Base},
    {kSlt, "slt", kR, kOpcodeOp, 2, kFunct7Base},
    {kSltu, "sltu", kR, kOpcodeOp, 3, kFunct7Base},
    {kXor, "xor", kR, kOpcodeOp, 4, kFunct7Base},
    {kSrl, "srl", kR, kOpcodeOp, 5, kFunct7Base},
    {kSra, "sra", kR, kOpcodeOp, 5, kFunct7Alternate},
    {kOr, "or", kR, kOpcodeOp, 6, kFunct7Base},
    {kAnd, "and", kR, kOpcodeOp, 7, kFunct7Base},
    {kMul, "mul", kR, kOpcodeOp, 0, kFunct7MulDiv},
    {kMulh, "mulh", kR, kOpcodeOp, 1, kFunct7MulDiv},
    {kMulhsu, "mulhsu", kR, kOpcodeOp, 2, kFunct7MulDiv},
    {kMulhu, "mulhu", kR, kOpcodeOp, 3, kFunct7MulDiv},
    {kDiv, "div", kR, kOpcodeOp, 4, kFunct7MulDiv},
    {kDivu, "divu", kR, kOpcodeOp, 5, kFunct7MulDiv},
    {kRem, "rem", kR, kOpcodeOp, 6, kFunct7MulDiv},
    {kRemu, "remu", kR, kOpcodeOp, 7, kFunct7MulDiv},
    {kSh1add, "sh1add", kR, kOpcodeOp, 2, kFunct7Zba},
    {kSh2add, "sh2add", kR, kOpcodeOp, 4, kFunct7Zba},
    {kSh3add, "sh3add", kR, kOpcodeOp, 6, kFunct7Zba},
    {kFence, "fence", kNone, kOpcodeMiscMem, 0, 0},
    {kBzPuta, "bz.puta", kPut, kOpcodeCustom0, 0, 0},
    {kBzPutb, "bz.putb", kPut, kOpcodeCustom0, 1, 0},
    {kBzDotlo, "bz.dotlo", kR, kOpcodeCustom0, 2, 0},
    {kBzDothi, "bz.dothi", kR, kOpcodeCustom0, 3, 0},
    // The vector unit: funct3 0 sets configuration register funct7, 1 moves data, 2 operates on
    // the activation memory, 3 writes rd (runtime/rvformer_vector.h).
    {kVuSetvl, "vu.setvl", kSource, kOpcodeCustom1, 0, 0},
    {kVuSetcols, "vu.setcols", kSource, kOpcodeCustom1, 0, 1},
    {kVuSetsrc, "vu.setsrc", kSource, kOpcodeCustom1, 0, 2},
    {kVuSetaux, "vu.setaux", kSource, kOpcodeCustom1, 0, 3},
    {kVuSeths, "vu.seths", kSource, kOpcodeCustom1, 0, 4},
    {kVuPut, "vu.put", kPut, kOpcodeCustom1, 1, 1},
    {kVuGet, "vu.get", kUnary, kOpcodeCustom1, 1, 2},
    {kVuWget, "vu.wget", kUnary, kOpcodeCustom1, 1, 3},
    {kVuKput, "vu.kput", kPut, kOpcodeCustom1, 1, 4},
    {kVuVput, "vu.vput", kPut, kOpcodeCustom1, 1, 5},
    {kVuMatvec16, "vu.matvec16", kPut, kOpcodeCustom1, 2, 0},
    {kVuRow16, "vu.row16", kPut, kOpcodeCustom1, 2, 2},
    {kVuAdd16, "vu.add16", kPut, kOpcodeCustom1, 2, 3},
    {kVuMul16, "vu.mul16", kPut, kOpcodeCustom1, 2, 4},
    {kVuRmsnorm, "vu.rmsnorm", kPut, kOpcodeCustom1, 2, 5},
    {kVuSilu, "vu.silu", kSource, kOpcodeCustom1, 2, 6},
    {kVuRope, "vu.rope", kPut, kOpcodeCustom1, 2, 7},
    {kVuAttend, "vu.attend", kPut, kOpcodeCustom1, 2, 8},
    {kVuArgmax, "vu.argmax", kUnary, kOpcodeCustom1, 3, 0},
}};

constexpr bool table_is_in_op_order() {
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<std::size_t>(kTable[i].op) != i) return false;
  }
  return true;
}
static_assert(table_is_in_op_order(), "op_info() indexes the table by Op");

constexpr bool has_funct3(Format format) { return format != kU && format != kJ; }
// R-type layouts: rd, rs1 and rs2 fields, of which kPut, kSource and kUnary leave some unused.
constexpr bool is_r_type(Format format) {
  return format == kR || format == kPut || format == kSource || format == kUnary;
}
constexpr bool has_funct7(Format format) { return is_r_type(format) || format == kShift; }

std::uint32_t bits(std::uint32_t word, int high, int low) {
  return (word >> low) & ((1u << (high - low + 1)) - 1);
}

// Sign-extends the low `width` bits of `value`.
std::int32_t sign_extend(std::uint32_t value, int width) {
  auto shift = 32 - width;
  return static_cast<std::int32_t>(value << shift) >> shift;
}

// Which register fields a format uses: rd, rs1, rs2.
struct RegisterFields {
  bool rd, rs1, rs2;
};

RegisterFields register_fields(Format format) {
  switch (format) {
    case kR: return {true, true, true};
    case kI: case kShift: case kMemory: return {true, true, false};
    case kS: case kB: case kPut: return {false, true, true};
    case kU: case kJ: return {true, false, false};
    case kSource: return {false, true, false};
    case kUnary: return {true, true, false};
    case kNone: return {false, false, false};
  }
  return {false, false, false};
}

// An R-type register field that the instruction does not use must be 0: a word that names a
// register there is some other (illegal) instruction.
bool unused_registers_are_zero(Format format, std::uint32_t word) {
  if (!is_r_type(format)) return true;
  RegisterFields fields = register_fields(format);
  return (fields.rd || bits(word, 11, 7) == 0) && (fields.rs2 || bits(word, 24, 20) == 0);
}

bool matches(const OpInfo& info, std::uint32_t word) {
  if (bits(word, 6, 0) != info.opcode) return false;
  if (has_funct3(info.format) && bits(word, 14, 12) != info.funct3) return false;
  if (has_funct7(info.format) && bits(word, 31, 25) != info.funct7) return false;
  return unused_registers_are_zero(info.format, word);
}

std::int32_t decode_immediate(Format format, std::uint32_t word) {
  switch (format) {
    case kI:
    case kMemory:
      return sign_extend(bits(word, 31, 20), 12);
    case kShift:
      return static_cast<std::int32_t>(bits(word, 24, 20));
    case kS:
      return sign_extend(bits(word, 31, 25) << 5 | bits(word, 11, 7), 12);
    case kB:
      return sign_extend(bits(word, 31, 31) << 12 | bits(word, 7, 7) << 11 |
                             bits(word, 30, 25) << 5 | bits(word, 11, 8) << 1, 13);
    case kU:
      return static_cast<std::int32_t>(word & 0xFFFFF000u);
    case kJ:
      return sign_extend(bits(word, 31, 31) << 20 | bits(word, 19, 12) << 12 |
                             bits(word, 20, 20) << 11 | bits(word, 30, 21) << 1, 21);
    case kR:
    case kPut:
    case kSource:
    case kUnary:
    case kNone:
      return 0;
  }
  return 0;
}

void check_fits(const OpInfo& info, std::int32_t value, std::int32_t low, std::int32_t high,
                std::int32_t multiple) {
  if (value < low || value > high || value % multiple != 0) {
    fail("{}: immediate {} does not fit (range {}..{}, multiple of {})", info.name, value, low,
         high, multiple);
  }
}

std::uint32_t encode_immediate(const OpInfo& info, std::int32_t imm) {
  auto value = static_cast<std::uint32_t>(imm);
  switch (info.format) {
    case kI:
    case kMemory:
      check_fits(info, imm, -2048, 2047, 1);
      return bits(value, 11, 0) << 20;
    case kShift:
      check_fits(info, imm, 0, 31, 1);
      return value << 20;
    case kS:
      check_fits(info, imm, -2048, 2047, 1);
      return bits(value, 11, 5) << 25 | bits(value, 4, 0) << 7;
    case kB:
      check_fits(info, imm, -4096, 4094, 2);
      return bits(value, 12, 12) << 31 | bits(value, 10, 5) << 25 | bits(value, 4, 1) << 8 |
             bits(value, 11, 11) << 7;
    case kU:
      if (value & 0xFFF) fail("{}: immediate 0x{:x} has low bits set", info.name, value);
      return value;
    case kJ:
      check_fits(info, imm, -(1 << 20), (1 << 20) - 2, 2);
      return bits(value, 20, 20) << 31 | bits(value, 10, 1) << 21 | bits(value, 11, 11) << 20 |
             bits(value, 19, 12) << 12;
    case kR:
    case kPut:
    case kSource:
    case kUnary:
    case kNone:
      return 0;
  }
  return 0;
}

}  // namespace

const std::array<OpInfo, kInstructionCount>& instruction_table() { return kTable; }

const OpInfo& op_info(Op op) { return kTable.at(static_cast<std::size_t>(op)); }

Instruction decode(std::uint32_t word) {
  for (const OpInfo& info : kTable) {
    if (!matches(info, word)) continue;
    RegisterFields fields = register_fields(info.format);
    return {
        .op = info.op,
        .rd = static_cast<std::uint8_t>(fields.rd ? bits(word, 11, 7) : 0),
        .rs1 = static_cast<std::uint8_t>(fields.rs1 ? bits(word, 19, 15) : 0),
        .rs2 = static_cast<std::uint8_t>(fields.rs2 ? bits(word, 24, 20) : 0),
        .imm = decode_immediate(info.format, word),
    };
  }
  return {};
}

std::uint32_t encode(const Instruction& instruction) {
  if (instruction.op == kIllegal) fail("cannot encode an illegal instruction");
  const OpInfo& info = op_info(instruction.op);
  if (instruction.rd > 31 || instruction.rs1 > 31 || instruction.rs2 > 31) {
    fail("{}: register number out of range", info.name);
  }
  std::uint32_t word = info.opcode | encode_immediate(info, instruction.imm);
  RegisterFields fields = register_fields(info.format);
  if (fields.rd) word |= std::uint32_t{instruction.rd} << 7;
  if (fields.rs1) word |= std::uint32_t{instruction.rs1} << 15;
  if (fields.rs2) word |= std::uint32_t{instruction.rs2} << 20;
  if (has_funct3(info.format)) word |= std::uint32_t{info.funct3} << 12;
  if (has_funct7(info.format)) word |= std::uint32_t{info.funct7} << 25;
  if (info.format == kNone) word |= kFenceAllOrderings;
  return word;
}

unsigned memory_access_width(Op op) {
  switch (op) {
    case kLb: case kLbu: case kSb: return 1;
    case kLh: case kLhu: case kSh: return 2;
    case kLw: case kSw: return 4;
    default: return 0;
  }
}

bool is_load(Op op) { return op != kIllegal && op_info(op).opcode == kOpcodeLoad; }
bool is_store(Op op) { return op != kIllegal && op_info(op).opcode == kOpcodeStore; }
bool is_bigint(Op op) { return op != kIllegal && op_info(op).opcode == kOpcodeCustom0; }
bool is_vector(Op op) { return op != kIllegal && op_info(op).opcode == kOpcodeCustom1; }

std::array<std::uint32_t, 2> load_immediate(std::uint8_t rd, std::uint32_t value) {
  // addi sign-extends its 12 bits, so round the upper part to compensate.
  std::uint32_t upper = (value + 0x800) & 0xFFFFF000u;
  auto lower = static_cast<std::int32_t>(value - upper);
  return {encode({.op = kLui, .rd = rd, .imm = static_cast<std::int32_t>(upper)}),
          encode({.op = kAddi, .rd = rd, .rs1 = rd, .imm = lower})};
}

std::string_view register_name(unsigned index) {
  static constexpr std::array<std::string_view, 32> kNames = {
      "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0",
      "a1",   "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5",
      "s6",   "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"};
  return kNames.at(index);
}

std::string disassemble(std::uint32_t word) {
  Instruction in = decode(word);
  if (in.op == kIllegal) return fmt::format("illegal 0x{:08x}", word);
  const OpInfo& info = op_info(in.op);
  auto reg = [](std::uint8_t index) { return register_name(index); };
  switch (info.format) {
    case kR:
      return fmt::format("{} {}, {}, {}", info.name, reg(in.rd), reg(in.rs1), reg(in.rs2));
    case kI:
    case kShift:
      return fmt::format("{} {}, {}, {}", info.name, reg(in.rd), reg(in.rs1), in.imm);
    case kMemory:
      return fmt::format("{} {}, {}({})", info.name, reg(in.rd), in.imm, reg(in.rs1));
    case kS:
      return fmt::format("{} {}, {}({})", info.name, reg(in.rs2), in.imm, reg(in.rs1));
    case kB:
      return fmt::format("{} {}, {}, {:+}", info.name, reg(in.rs1), reg(in.rs2), in.imm);
    case kU:
      return fmt::format("{} {}, 0x{:x}", info.name, reg(in.rd),
                         static_cast<std::uint32_t>(in.imm) >> 12);
    case kJ:
      return fmt::format("{} {}, {:+}", info.name, reg(in.rd), in.imm);
    case kPut:
      return fmt::format("{} {}, {}", info.name, reg(in.rs1), reg(in.rs2));
    case kSource:
      return fmt::format("{} {}", info.name, reg(in.rs1));
    case kUnary:
      return fmt::format("{} {}, {}", info.name, reg(in.rd), reg(in.rs1));
    case kNone:
      return std::string(info.name);
  }
  return {};
}

}  // namespace rvformer::isa
