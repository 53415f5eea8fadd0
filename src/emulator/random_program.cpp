// emulator/random_program.cpp — the stream generator, the shared dump routine and the ELF layout.
#include "emulator/random_program.h"

#include <fmt/format.h>

#include <array>
#include <random>

#include "isa/instruction_set.h"
#include "program/elf_format.h"
#include "program/elf_loader.h"
#include "program/elf_writer.h"

namespace rvformer::emulator {

using namespace isa;  // the instruction set and traps of the machine
namespace {

constexpr std::uint8_t kZero = 0, kRa = 1, kT0 = 5, kT1 = 6, kT2 = 7, kA0 = 10;
constexpr std::uint8_t kT3 = 28, kT4 = 29, kT5 = 30;
constexpr std::int32_t kScratchOffset = kDumpRegisterWords * 4;
constexpr std::int32_t kAreaBytes = kDumpWords * 4;

constexpr Op kRegisterOps[] = {Op::kAdd,  Op::kSub,    Op::kSll,    Op::kSlt,   Op::kSltu,
                               Op::kXor,  Op::kSrl,    Op::kSra,    Op::kOr,    Op::kAnd,
                               Op::kMul,  Op::kMulh,   Op::kMulhsu, Op::kMulhu, Op::kDiv,
                               Op::kDivu, Op::kRem,    Op::kRemu,   Op::kSh1add, Op::kSh2add,
                               Op::kSh3add};
constexpr Op kImmediateOps[] = {Op::kAddi, Op::kSlti, Op::kSltiu, Op::kXori, Op::kOri, Op::kAndi};
constexpr Op kShiftOps[] = {Op::kSlli, Op::kSrli, Op::kSrai};
constexpr Op kLoadOps[] = {Op::kLb, Op::kLh, Op::kLw, Op::kLbu, Op::kLhu};
constexpr Op kStoreOps[] = {Op::kSb, Op::kSh, Op::kSw};
constexpr Op kBranchOps[] = {Op::kBeq, Op::kBne, Op::kBlt, Op::kBge, Op::kBltu, Op::kBgeu};

// A group of instructions that a forward jump may skip as a whole. When the last instruction is
// a jump or branch, its target is the start of the item `skip` items after the next one (0-3);
// the offset is filled in at layout.
struct Item {
  std::vector<Instruction> instructions;
  int skip = 0;
  bool jump_from_auipc = false;  // jalr: the offset counts from the auipc before it
  std::int32_t jalr_low_bit = 0;  // jalr ignores bit 0 of its target
};

Instruction make(Op op, std::uint8_t rd, std::uint8_t rs1, std::uint8_t rs2, std::int32_t imm) {
  return {.op = op, .rd = rd, .rs1 = rs1, .rs2 = rs2, .imm = imm};
}

void append_load_immediate(std::vector<Instruction>& out, std::uint8_t rd, std::uint32_t value) {
  for (std::uint32_t word : load_immediate(rd, value)) out.push_back(decode(word));
}

void append_encoded(std::vector<std::uint32_t>& code, const std::vector<Instruction>& instructions) {
  for (const Instruction& instruction : instructions) code.push_back(encode(instruction));
}

bool is_jump(const Item& item) {
  Op last = item.instructions.back().op;
  return last == Op::kJal || last == Op::kJalr || op_info(last).format == Format::kB;
}

class StreamGenerator {
 public:
  StreamGenerator(std::uint64_t seed, const program::MemoryMap& map)
      : random_(seed), area_(map.ram.base), bigint_(map.bigint_unit), vector_(map.vector_unit), line_operations_(seed) {}

  // The random instructions of the stream.
  std::vector<Item> body(int length) {
    std::vector<Item> items;
    for (int i = 0; i < length; ++i) items.push_back(random_item(length - 1 - i));
    return items;
  }

  // Chooses the register that holds the dump area's address, fills the scratch words and sets
  // every other register.
  std::vector<Instruction> set_up() {
    base_ = static_cast<std::uint8_t>(pick(1, 31));
    std::vector<Instruction> out;
    append_load_immediate(out, base_, area_);
    std::uint8_t temporary = base_ == 1 ? 2 : 1;
    for (int word = 0; word < kDumpScratchWords; ++word) {
      append_load_immediate(out, temporary, random_word());
      out.push_back(make(Op::kSw, 0, base_, temporary, kScratchOffset + 4 * word));
    }
    for (std::uint8_t reg = 1; reg < 32; ++reg) {
      if (reg != base_) append_load_immediate(out, reg, edge_value());
    }
    return out;
  }

  // Stores every register into the dump area and calls the dump routine with a0 = the area.
  std::vector<Instruction> dump(std::uint32_t address, std::uint32_t dump_routine) {
    std::vector<Instruction> out;
    for (std::uint8_t reg = 0; reg < 32; ++reg) out.push_back(make(Op::kSw, 0, base_, reg, 4 * reg));
    out.push_back(make(Op::kAddi, kA0, base_, 0, 0));
    std::uint32_t jal_address = address + 4 * static_cast<std::uint32_t>(out.size());
    out.push_back(make(Op::kJal, kRa, 0, 0, static_cast<std::int32_t>(dump_routine - jal_address)));
    return out;
  }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }
  std::uint32_t random_word() { return static_cast<std::uint32_t>(random_()); }
  template <typename T, std::size_t N>
  T pick_from(const T (&choices)[N]) {
    return choices[pick(0, static_cast<int>(N) - 1)];
  }

  std::uint8_t any_register() { return static_cast<std::uint8_t>(pick(0, 31)); }
  // Every register but the one holding the dump area's address.
  std::uint8_t destination() {
    std::uint8_t reg;
    do reg = any_register();
    while (reg == base_);
    return reg;
  }

  std::uint32_t edge_value() {
    int bit = pick(0, 31);
    switch (pick(0, 11)) {
      case 0: return 0;
      case 1: return 1;
      case 2: return 0xFFFFFFFFu;
      case 3: return 0x80000000u;
      case 4: return 0x7FFFFFFFu;
      case 5: return 1u << bit;
      case 6: return ~(1u << bit) + (pick(0, 1) ? 1 : 0);  // -(2^bit) or ~(2^bit)
      case 7: return static_cast<std::uint32_t>(pick(-16, 16));
      case 8: return pick(0, 1) ? 0x80000001u : 0x7FFFFFFEu;
      default: return random_word();
    }
  }

  std::int32_t immediate12() {
    switch (pick(0, 6)) {
      case 0: return 0;
      case 1: return 1;
      case 2: return -1;
      case 3: return 2047;
      case 4: return -2048;
      case 5: return pick(-16, 16);
      default: return pick(-2048, 2047);
    }
  }

  std::int32_t shift_amount() {
    static constexpr std::int32_t kEdges[] = {0, 1, 31};
    return pick(0, 1) ? pick_from(kEdges) : pick(0, 31);
  }

  std::int32_t upper_immediate() {
    static constexpr std::uint32_t kEdges[] = {0, 0xFFFFF000u, 0x80000000u, 0x7FFFF000u, 0x1000};
    std::uint32_t value = pick(0, 1) ? pick_from(kEdges) : random_word() & 0xFFFFF000u;
    return static_cast<std::int32_t>(value);
  }

  // An aligned offset into the dump area for an access of `width` bytes.
  std::int32_t area_offset(unsigned width) {
    return pick(0, kAreaBytes / static_cast<int>(width) - 1) * static_cast<std::int32_t>(width);
  }

  Item memory_access(Op op) {
    bool store = is_store(op);
    std::int32_t offset = area_offset(memory_access_width(op));
    Item item;
    if (pick(0, 2) != 0) {  // relative to the dump area's register
      item.instructions.push_back(store ? make(op, 0, base_, any_register(), offset)
                                        : make(op, destination(), base_, 0, offset));
      return item;
    }
    // Through a fresh pointer, with an offset anywhere in the 12-bit range.
    std::uint8_t pointer = operand_register();
    std::int32_t displacement = immediate12();
    append_load_immediate(item.instructions, pointer,
                          area_ + static_cast<std::uint32_t>(offset - displacement));
    item.instructions.push_back(store ? make(op, 0, pointer, any_register(), displacement)
                                      : make(op, destination(), pointer, 0, displacement));
    return item;
  }

  Item jump(int items_left) {
    Item item;
    item.skip = std::min(pick(0, 3), items_left);
    switch (pick(0, 3)) {
      case 0:
        item.instructions.push_back(make(Op::kJal, destination(), 0, 0, 0));
        break;
      case 1: {
        std::uint8_t pointer = operand_register();
        std::uint8_t link = pick(0, 3) == 0 ? pointer : destination();  // rd == rs1 now and then
        item.instructions.push_back(make(Op::kAuipc, pointer, 0, 0, 0));
        item.instructions.push_back(make(Op::kJalr, link, pointer, 0, 0));
        item.jump_from_auipc = true;
        item.jalr_low_bit = pick(0, 1);
        break;
      }
      default: {
        std::uint8_t left = any_register();
        std::uint8_t right = pick(0, 4) == 0 ? left : any_register();  // equal operands now and then
        item.instructions.push_back(make(pick_from(kBranchOps), 0, left, right, 0));
        break;
      }
    }
    return item;
  }

  // A register other than x0 and the dump area's register.
  std::uint8_t operand_register() {
    std::uint8_t reg;
    do reg = destination();
    while (reg == kZero);
    return reg;
  }

  // Fresh edge values right before the operation make pairs like INT_MIN / -1 common; the result
  // is also stored in the scratch area, where later instructions rarely overwrite it.
  Item edge_operands(Op op) {
    Item item;
    std::uint8_t left = operand_register(), right = operand_register(), result = destination();
    append_load_immediate(item.instructions, left, edge_value());
    append_load_immediate(item.instructions, right, edge_value());
    item.instructions.push_back(make(op, result, left, right, 0));
    std::int32_t slot = kScratchOffset + 4 * pick(0, kDumpScratchWords - 1);
    item.instructions.push_back(make(Op::kSw, 0, base_, result, slot));
    return item;
  }

  Item random_item(int items_left) {
    Item item;
    int kind = pick(0, 99);
    if (kind < 15) return edge_operands(pick_from(kRegisterOps));
    if (kind < 34) {
      item.instructions.push_back(
          make(pick_from(kRegisterOps), destination(), any_register(), any_register(), 0));
    } else if (kind < 46) {
      item.instructions.push_back(
          make(pick_from(kImmediateOps), destination(), any_register(), 0, immediate12()));
    } else if (kind < 52) {
      item.instructions.push_back(
          make(pick_from(kShiftOps), destination(), any_register(), 0, shift_amount()));
    } else if (kind < 56) {
      item.instructions.push_back(
          make(pick(0, 1) ? Op::kLui : Op::kAuipc, destination(), 0, 0, upper_immediate()));
    } else if (kind < 66) {
      return memory_access(pick_from(kLoadOps));
    } else if (kind < 75) {
      return memory_access(pick_from(kStoreOps));
    } else if (kind < 89) {
      return jump(items_left);
    } else if (kind < 90) {
      item.instructions.push_back(make(Op::kFence, 0, 0, 0, 0));
    } else if (bigint_ && kind >= 94) {
      return bigint_access();
    } else if (vector_ && kind >= 90) {
      return vector_access();
    } else {
      append_load_immediate(item.instructions, destination(), edge_value());
    }
    return item;
  }

  // The big-integer unit: runs of puts at consecutive indices (any of the four 128-entry windows of
  // a register's low bits, 32-bit values of which the unit keeps 30), puts from any registers, and
  // dot products at fresh or any indices.
  Item bigint_access() {
    Item item;
    std::uint8_t index = operand_register(), value = operand_register();
    switch (pick(0, 3)) {
      case 0:
      case 1: {
        Op put = pick(0, 1) ? Op::kBzPuta : Op::kBzPutb;
        std::uint32_t first = (random_word() & ~127u) | static_cast<std::uint32_t>(pick(0, 127));
        for (std::uint32_t k = 0, count = static_cast<std::uint32_t>(pick(1, 10)); k < count; ++k) {
          append_load_immediate(item.instructions, index, first + k);
          append_load_immediate(item.instructions, value, random_word());
          item.instructions.push_back(make(put, 0, index, value, 0));
        }
        break;
      }
      case 2:
        item.instructions.push_back(make(pick(0, 1) ? Op::kBzPuta : Op::kBzPutb, 0, any_register(), any_register(), 0));
        break;
      default:
        if (pick(0, 1)) {
          append_load_immediate(item.instructions, index, random_word());
          append_load_immediate(item.instructions, value, random_word());
        } else {
          index = any_register();
          value = any_register();
        }
        item.instructions.push_back(make(pick(0, 1) ? Op::kBzDotlo : Op::kBzDothi, destination(), index, value, 0));
        break;
    }
    return item;
  }

  // The vector unit: a configuration register set from any register, a weight memory word read at
  // a random aligned address inside it, a run of vu.put up to the end of a random line (which commits
  // it) or a single one, all of 13-bit values, a random AM row copied into a random KV slot, an
  // operation over up to three lines, or an element read back with vu.get.
  Item vector_access() {
    Item item;
    const std::uint8_t address = operand_register();
    std::uint8_t value;
    do value = operand_register();
    while (value == address);
    switch (pick(0, 7)) {
      case 0: {
        const auto setter = static_cast<Op>(static_cast<int>(Op::kVuSetvl) + pick(0, 4));
        item.instructions.push_back(make(setter, 0, any_register(), 0, 0));
        break;
      }
      case 1:
        append_load_immediate(item.instructions, address, 4 * static_cast<std::uint32_t>(pick(0, program::kVectorWeightBytes / 4 - 1)));
        item.instructions.push_back(make(Op::kVuWget, destination(), address, 0, 0));
        break;
      case 2:
      case 3: {
        constexpr std::uint32_t kLine = program::kVectorLineElements;
        const std::uint32_t last = random_element() | (kLine - 1);
        for (std::uint32_t e = last - static_cast<std::uint32_t>(pick(0, put_run_length())); e <= last; ++e) {
          append_load_immediate(item.instructions, address, e);
          append_load_immediate(item.instructions, value, static_cast<std::uint32_t>(pick(-4096, 4095)));
          item.instructions.push_back(make(Op::kVuPut, 0, address, value, 0));
        }
        break;
      }
      case 4: {
        constexpr std::uint32_t kVector = program::kVectorKvElements;
        append_load_immediate(item.instructions, address, kVector * static_cast<std::uint32_t>(pick(0, program::kVectorActivationElements / kVector - 1)));
        append_load_immediate(item.instructions, value, static_cast<std::uint32_t>(pick(0, program::kVectorKvSlots - 1)));
        item.instructions.push_back(make(pick(0, 1) ? Op::kVuKput : Op::kVuVput, 0, address, value, 0));
        break;
      }
      case 5:
      case 6:
        line_operation(item, address, value);
        break;
      default:
        append_load_immediate(item.instructions, address, random_element());
        item.instructions.push_back(make(Op::kVuGet, destination(), address, 0, 0));
        break;
    }
    return item;
  }
  // vu.add16, vu.mul16 (a random shift), vu.silu, vu.argmax, vu.rmsnorm (a random epsilon term),
  // vu.rope, vu.row16 and vu.matvec16 in turn, over 1..48 elements or rows (an even count for
  // vu.rope, up to 64 for vu.row16) at a random line x, the second operand x itself or the line 32
  // elements off it (bit 5 flipped), for the norm a random vector within one AM row, as the unit
  // requires, for vu.rope a random table of WM, for vu.row16 a random WM line and one of the pairs
  // at kRandomStreamPairs, for vu.matvec16 a matrix of 1..64 columns at a random WM line, whatever
  // its bytes (every pair is one), and its input at a random multiple of 64.
  void line_operation(Item& item, std::uint8_t address, std::uint8_t value) {
    constexpr std::uint32_t kLine = program::kVectorLineElements, kBankRow = 2 * kLine, kRow = 8 * kBankRow;
    constexpr std::array kOps{Op::kVuAdd16, Op::kVuMul16, Op::kVuSilu,  Op::kVuArgmax,
                              Op::kVuRmsnorm, Op::kVuRope, Op::kVuRow16, Op::kVuMatvec16};
    constexpr std::uint32_t kRopeTable = 32, kWeightLine = 64;
    const Op op = kOps[line_operations_++ % kOps.size()];
    const auto count = static_cast<std::uint32_t>(op == Op::kVuRope    ? 2 * pick(1, 3 * kLine / 2)
                                                  : op == Op::kVuRow16 ? pick(1, 4 * kLine)
                                                                       : pick(1, 3 * kLine));
    append_load_immediate(item.instructions, address, count);
    item.instructions.push_back(make(Op::kVuSetvl, 0, address, 0, 0));
    if (op == Op::kVuMul16 || op == Op::kVuRmsnorm || op == Op::kVuRow16) {
      const std::uint32_t aux = op == Op::kVuMul16   ? static_cast<std::uint32_t>(pick(1, 30))
                                : op == Op::kVuRow16 ? kRandomStreamPairs + 8 * static_cast<std::uint32_t>(pick(0, kRandomStreamPairCount - 1))
                                : pick(0, 1)         ? static_cast<std::uint32_t>(pick(0, 5000))
                                                     : static_cast<std::uint32_t>(random_());
      append_load_immediate(item.instructions, address, aux);
      item.instructions.push_back(make(Op::kVuSetaux, 0, address, 0, 0));
    }
    if (op == Op::kVuMatvec16) {
      append_load_immediate(item.instructions, address, static_cast<std::uint32_t>(pick(1, 4 * kLine)));
      item.instructions.push_back(make(Op::kVuSetcols, 0, address, 0, 0));
      append_load_immediate(item.instructions, address,
                            4 * kLine * static_cast<std::uint32_t>(pick(0, program::kVectorActivationElements / (4 * kLine) - 1)));
      item.instructions.push_back(make(Op::kVuSetsrc, 0, address, 0, 0));
    }
    const std::uint32_t x = kLine * static_cast<std::uint32_t>(pick(0, program::kVectorActivationElements / kLine - 8));
    append_load_immediate(item.instructions, address, x);
    const bool two_operands = op == Op::kVuAdd16 || op == Op::kVuMul16 || op == Op::kVuRmsnorm || op == Op::kVuRope ||
                              op == Op::kVuRow16 || op == Op::kVuMatvec16;
    if (op == Op::kVuRope || op == Op::kVuRow16) {
      const std::uint32_t size = op == Op::kVuRope ? kRopeTable : kWeightLine;
      append_load_immediate(item.instructions, value, size * static_cast<std::uint32_t>(pick(0, program::kVectorWeightBytes / size - 1)));
    } else if (op == Op::kVuMatvec16) {
      const std::uint32_t lines = (8 * count + kWeightLine - 1) / kWeightLine + count;  // its pairs' and its rows'
      append_load_immediate(item.instructions, value,
                            kWeightLine * static_cast<std::uint32_t>(pick(0, program::kVectorWeightBytes / kWeightLine - lines)));
    } else if (op == Op::kVuRmsnorm) {
      const int last_bank = count > kBankRow ? 6 : 7;
      append_load_immediate(item.instructions, value,
                            kRow * static_cast<std::uint32_t>(pick(0, program::kVectorActivationElements / kRow - 1)) +
                                kBankRow * static_cast<std::uint32_t>(pick(0, last_bank)));
    } else {
      append_load_immediate(item.instructions, value, pick(0, 3) ? x ^ 2 * kLine : x);
    }
    item.instructions.push_back(make(op, op == Op::kVuArgmax ? destination() : 0, address, two_operands ? value : 0, 0));
  }
  std::uint32_t random_element() { return static_cast<std::uint32_t>(pick(0, program::kVectorActivationElements - 1)); }
  // Most runs put a whole line; some only its last few elements.
  int put_run_length() { return pick(0, 3) ? static_cast<int>(program::kVectorLineElements) - 1 : pick(0, 3); }

  std::mt19937_64 random_;
  std::uint32_t area_;
  std::uint8_t base_ = 1;
  bool bigint_ = false;
  bool vector_ = false;
  std::size_t line_operations_ = 0;
};

// Encodes the items, filling in each jump's offset to the start of the item it lands on.
std::vector<std::uint32_t> lay_out(std::vector<Item> items) {
  std::vector<std::size_t> starts;  // word index of each item, then the end
  std::size_t words = 0;
  for (const Item& item : items) {
    starts.push_back(words);
    words += item.instructions.size();
  }
  starts.push_back(words);
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (is_jump(items[i])) {
      std::size_t jump_word = starts[i + 1] - 1;
      std::size_t origin = items[i].jump_from_auipc ? jump_word - 1 : jump_word;
      auto offset = static_cast<std::int32_t>(4 * (starts[i + 1 + items[i].skip] - origin));
      items[i].instructions.back().imm = offset + items[i].jalr_low_bit;
    }
    append_encoded(out, items[i].instructions);
  }
  return out;
}

// Prints 48 words at a0 as hex, separated by spaces, then a newline; returns through ra. Uses
// t0-t5, which the caller has already dumped.
std::vector<std::uint32_t> dump_routine(const program::MemoryMap& map) {
  std::vector<Instruction> code;
  append_load_immediate(code, kT0, map.console_address);
  code.push_back(make(Op::kAddi, kT1, kZero, 0, kDumpWords));
  // word loop (index 3):
  code.push_back(make(Op::kLw, kT2, kA0, 0, 0));
  code.push_back(make(Op::kAddi, kT3, kZero, 0, 8));
  // nibble loop (index 5):
  code.push_back(make(Op::kSrli, kT4, kT2, 0, 28));
  code.push_back(make(Op::kSlli, kT2, kT2, 0, 4));
  code.push_back(make(Op::kSltiu, kT5, kT4, 0, 10));
  code.push_back(make(Op::kAddi, kT4, kT4, 0, '0'));
  code.push_back(make(Op::kBne, 0, kT5, kZero, 8));             // digits skip the next line
  code.push_back(make(Op::kAddi, kT4, kT4, 0, 'a' - '0' - 10));
  code.push_back(make(Op::kSb, 0, kT0, kT4, 0));
  code.push_back(make(Op::kAddi, kT3, kT3, 0, -1));
  code.push_back(make(Op::kBne, 0, kT3, kZero, -8 * 4));        // to the nibble loop
  code.push_back(make(Op::kAddi, kA0, kA0, 0, 4));
  code.push_back(make(Op::kAddi, kT1, kT1, 0, -1));
  code.push_back(make(Op::kAddi, kT4, kZero, 0, ' '));
  code.push_back(make(Op::kBne, 0, kT1, kZero, 8));             // last word: newline instead
  code.push_back(make(Op::kAddi, kT4, kZero, 0, '\n'));
  code.push_back(make(Op::kSb, 0, kT0, kT4, 0));
  code.push_back(make(Op::kBne, 0, kT1, kZero, -17 * 4));       // to the word loop
  code.push_back(make(Op::kJalr, kZero, kRa, 0, 0));
  std::vector<std::uint32_t> words;
  append_encoded(words, code);
  return words;
}

std::vector<std::uint32_t> exit_successfully(const program::MemoryMap& map) {
  std::vector<Instruction> code;
  append_load_immediate(code, kT0, map.exit_address);
  bool finisher = map.exit_convention == program::ExitConvention::kSifiveTestFinisher;
  append_load_immediate(code, kT1, finisher ? 0x5555u : 0u);
  code.push_back(make(Op::kSw, 0, kT0, kT1, 0));
  code.push_back(make(Op::kJal, kZero, 0, 0, 0));  // QEMU may take a moment to stop
  std::vector<std::uint32_t> words;
  append_encoded(words, code);
  return words;
}

// A weight memory image with kRandomStreamPairCount valid requantisation pairs at kRandomStreamPairs:
// multipliers 0..255, shifts mostly 1..20 (where outputs are not all 0), some up to 62.
std::vector<std::uint8_t> stream_pairs(std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::uint8_t> weights(program::kVectorWeightBytes);
  for (std::uint32_t i = 0; i < kRandomStreamPairCount; ++i) {
    const std::uint32_t multiplier = random() % 256, shift = 1 + (i % 4 ? random() % 20 : random() % 62);
    for (int b = 0; b < 4; ++b) {
      weights[kRandomStreamPairs + 8 * i + b] = static_cast<std::uint8_t>(multiplier >> (8 * b));
      weights[kRandomStreamPairs + 8 * i + 4 + b] = static_cast<std::uint8_t>(shift >> (8 * b));
    }
  }
  return weights;
}

}  // namespace

program::ProgramImage random_program_image(const RandomProgram& program, const program::MemoryMap& map) {
  program::ProgramImage image = program::load_elf(program.elf, map, "random program");
  image.weights = program.weights;
  return image;
}

std::string dump_word_name(int index) {
  if (index < kDumpRegisterWords) return fmt::format("x{}", index);
  return fmt::format("scratch+{}", 4 * (index - kDumpRegisterWords));
}

RandomProgram generate_random_program(const RandomProgramOptions& options) {
  const program::MemoryMap& map = options.map;
  std::mt19937_64 seeds(options.seed);
  std::uniform_int_distribution<int> length(options.min_stream_length, options.max_stream_length);
  RandomProgram program;
  std::vector<std::uint32_t>& code = program.code;
  auto address_of_next_word = [&] {
    return map.code.base + 4 * static_cast<std::uint32_t>(code.size());
  };
  // QEMU's virt machine starts at the base of RAM whatever the entry point says, so the program
  // starts there and jumps over the dump routine that follows.
  std::vector<std::uint32_t> routine = dump_routine(map);
  auto routine_bytes = static_cast<std::int32_t>(4 * routine.size());
  code.push_back(encode(make(Op::kJal, kZero, 0, 0, 4 + routine_bytes)));
  const std::uint32_t routine_address = address_of_next_word();
  code.insert(code.end(), routine.begin(), routine.end());
  for (int stream = 0; stream < options.streams; ++stream) {
    StreamGenerator generator(seeds(), map);
    append_encoded(code, generator.set_up());
    std::uint32_t first = address_of_next_word();
    std::vector<std::uint32_t> body = lay_out(generator.body(length(seeds)));
    code.insert(code.end(), body.begin(), body.end());
    program.stream_code.emplace_back(first, address_of_next_word());
    append_encoded(code, generator.dump(address_of_next_word(), routine_address));
  }
  std::vector<std::uint32_t> exit = exit_successfully(map);
  code.insert(code.end(), exit.begin(), exit.end());

  program::ElfSegment segment{.address = map.code.base, .bytes = {}, .memory_size = 0,
                              .flags = program::elf::kSegmentRead | program::elf::kSegmentExecute};
  for (std::uint32_t word : code) {
    for (int shift = 0; shift < 32; shift += 8) segment.bytes.push_back(word >> shift & 0xFF);
  }
  program.elf = program::write_elf(map.code.base, std::vector{segment});
  if (map.vector_unit) program.weights = stream_pairs(options.seed);
  return program;
}

}  // namespace rvformer::emulator
