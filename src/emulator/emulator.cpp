// emulator/emulator.cpp — instruction semantics, memory protection and MMIO of the golden machine.
// The code ROM is execute-only and never changes, so it is decoded once, at construction, and the
// interpreter loop dispatches on pre-decoded instructions.
#include "emulator/emulator.h"

#include <bit>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "support/error.h"

namespace rvformer::emulator {

using namespace isa;  // the instruction set and traps of the machine
namespace {

static_assert(std::endian::native == std::endian::little, "memory is accessed with memcpy");

using program::ExitConvention;
using program::MemoryMap;
using program::ProgramImage;

constexpr std::uint32_t kFinisherPass = 0x5555;
constexpr std::uint32_t kFinisherFail = 0x3333;

std::int32_t as_signed(std::uint32_t value) { return static_cast<std::int32_t>(value); }

std::uint32_t divide_signed(std::uint32_t dividend, std::uint32_t divisor) {
  if (divisor == 0) return 0xFFFFFFFFu;
  if (dividend == 0x80000000u && divisor == 0xFFFFFFFFu) return dividend;  // overflow
  return static_cast<std::uint32_t>(as_signed(dividend) / as_signed(divisor));
}

std::uint32_t remainder_signed(std::uint32_t dividend, std::uint32_t divisor) {
  if (divisor == 0) return dividend;
  if (dividend == 0x80000000u && divisor == 0xFFFFFFFFu) return 0;  // overflow
  return static_cast<std::uint32_t>(as_signed(dividend) % as_signed(divisor));
}

std::uint32_t multiply_high_signed(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::uint32_t>(
      (std::int64_t{as_signed(a)} * std::int64_t{as_signed(b)}) >> 32);
}

std::uint32_t multiply_high_signed_unsigned(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::uint32_t>((std::int64_t{as_signed(a)} * std::int64_t{b}) >> 32);
}

std::uint32_t multiply_high_unsigned(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::uint32_t>((std::uint64_t{a} * b) >> 32);
}

// The exit code a word store to the exit register means, or nothing for a value the exit
// register does not accept.
std::optional<std::uint32_t> exit_code_of(ExitConvention convention, std::uint32_t value) {
  if (convention == ExitConvention::kExitCode) return value;
  if ((value & 0xFFFF) == kFinisherPass) return 0;
  if ((value & 0xFFFF) == kFinisherFail) return value >> 16;
  return std::nullopt;
}

void check_fits(const std::vector<std::uint8_t>& bytes, const program::Region& region,
                const char* what) {
  if (bytes.size() > region.size) {
    fail("the program's {} ({} bytes) does not fit its {}-byte region", what, bytes.size(),
         region.size);
  }
}

std::vector<std::uint8_t> region_contents(const std::vector<std::uint8_t>& initial,
                                          const program::Region& region) {
  std::vector<std::uint8_t> bytes(region.size, 0);
  std::copy(initial.begin(), initial.end(), bytes.begin());
  return bytes;
}

// The big-integer unit keeps the low 30 bits of what bz.puta and bz.putb write.
constexpr std::uint32_t kLimbMask = (1u << 30) - 1;

// Sets `next` to a jump's target; false when the target is misaligned and the jump must trap.
bool jump_to(std::uint32_t target, std::uint32_t& next) {
  next = target;
  return target % 4 == 0;
}

}  // namespace

Emulator::Emulator(const ProgramImage& image)
    : map_(image.map),
      code_(region_contents(image.code, image.map.code)),
      rodata_(region_contents(image.rodata, image.map.rodata)),
      ram_(region_contents(image.ram, image.map.ram)),
      decoded_(map_.code.size / 4),
      vector_unit_(map_.vector_unit, image.weights),
      pc_(image.entry) {
  check_fits(image.code, map_.code, "code");
  check_fits(image.rodata, map_.rodata, "read-only data");
  check_fits(image.ram, map_.ram, "initialised RAM");
  if (!map_.code.contains(image.entry, 4) || image.entry % 4 != 0) {
    fail("the program's entry point 0x{:08x} is not an aligned address in the code ROM",
         image.entry);
  }
  // Words past the program's code are zero, which decodes as illegal: the default Instruction.
  for (std::size_t index = 0; index < image.code.size() / 4; ++index) {
    Instruction& instruction = decoded_[index];
    instruction = decode(code_word(map_.code.base + static_cast<std::uint32_t>(index) * 4));
    if (is_bigint(instruction.op) && !map_.bigint_unit) instruction = {};
    if (is_vector(instruction.op) && !map_.vector_unit) instruction = {};
    if (instruction.rd == 0) instruction.rd = kDiscardRegister;
  }
}

std::array<std::uint32_t, 32> Emulator::registers() const {
  std::array<std::uint32_t, 32> values;
  std::copy_n(registers_.begin(), 32, values.begin());
  return values;
}

std::uint32_t Emulator::code_word(std::uint32_t pc) const {
  std::uint32_t word;
  std::memcpy(&word, code_.data() + (pc - map_.code.base), 4);
  return word;
}

std::optional<std::uint32_t> Emulator::read_word(std::uint32_t address) const {
  if (address % 4 != 0) return std::nullopt;
  for (auto [region, bytes] : {std::pair{map_.code, &code_}, std::pair{map_.rodata, &rodata_},
                               std::pair{map_.ram, &ram_}}) {
    if (!region.contains(address, 4)) continue;
    std::uint32_t word;
    std::memcpy(&word, bytes->data() + (address - region.base), 4);
    return word;
  }
  return std::nullopt;
}

// Σ_{t<8} A[(i + t) mod 128] · B[(j − t) mod 128], below 8·2^60.
std::uint64_t Emulator::bigint_dot(std::uint32_t a_index, std::uint32_t b_index) const {
  std::uint64_t sum = 0;
  for (std::uint32_t t = 0; t < 8; ++t)
    sum += std::uint64_t{bigint_a_[(a_index + t) % 128]} * bigint_b_[(b_index - t) % 128];
  return sum;
}

StepResult Emulator::step() { return execute(1); }

RunResult Emulator::run(std::uint64_t max_instructions, const ConsoleSink& console) {
  const std::uint64_t limit =
      retired_ + std::min(max_instructions, std::numeric_limits<std::uint64_t>::max() - retired_);
  while (retired_ < limit || final_) {
    StepResult result = execute(limit - std::min(limit, retired_));
    switch (result.event) {
      case Event::kConsoleByte:
        console(result.console_byte);
        break;
      case Event::kExit:
        return {.reason = StopReason::kExited, .exit_code = result.exit_code, .trap = {}};
      case Event::kTrap:
        return {.reason = StopReason::kTrapped, .exit_code = 0, .trap = result.trap};
      case Event::kRetired:
        break;
    }
  }
  return {};
}

StepResult Emulator::halt(const StepResult& result) {
  final_ = result;
  return result;
}

StepResult Emulator::trap(TrapCause cause, std::uint32_t pc, std::uint32_t address) {
  bool fetched = cause != TrapCause::kInstructionAccessFault;
  pc_ = pc;
  return halt({.event = Event::kTrap,
               .console_byte = 0,
               .exit_code = 0,
               .trap = {.cause = cause,
                        .pc = pc,
                        .instruction = fetched ? code_word(pc) : 0,
                        .address = address}});
}

template <typename T>
bool Emulator::load(std::uint32_t address, std::uint32_t& value) const {
  if (address % sizeof(T) != 0) return false;
  const std::uint8_t* source;
  if (address - map_.ram.base < map_.ram.size) {
    source = ram_.data() + (address - map_.ram.base);
  } else if (address - map_.rodata.base < map_.rodata.size) {
    source = rodata_.data() + (address - map_.rodata.base);
  } else {
    return false;
  }
  T loaded;
  std::memcpy(&loaded, source, sizeof(T));
  // Through int32_t: signed types sign-extend, unsigned types zero-extend.
  value = static_cast<std::uint32_t>(static_cast<std::int32_t>(loaded));
  return true;
}

template <typename T>
bool Emulator::store_to_ram(std::uint32_t address, std::uint32_t value) {
  if (address % sizeof(T) != 0 || address - map_.ram.base >= map_.ram.size) return false;
  auto stored = static_cast<T>(value);
  std::memcpy(ram_.data() + (address - map_.ram.base), &stored, sizeof(T));
  return true;
}

// A store that is not an aligned RAM store: the console or exit register, or a fault. The
// instruction retires (pc_ and retired_ are updated here) unless it faults.
StepResult Emulator::store_outside_ram(std::uint32_t pc, std::uint32_t address, unsigned width,
                                       std::uint32_t value) {
  if (address % width != 0) return trap(TrapCause::kStoreAddressMisaligned, pc, address);
  StepResult result;
  std::optional<std::uint32_t> exit_code = exit_code_of(map_.exit_convention, value);
  if (address == map_.console_address && width == 1) {
    result.event = Event::kConsoleByte;
    result.console_byte = static_cast<std::uint8_t>(value);
  } else if (address == map_.exit_address && width == 4 && exit_code) {
    result.event = Event::kExit;
    result.exit_code = *exit_code;
  } else {
    return trap(TrapCause::kStoreAccessFault, pc, address);
  }
  pc_ = pc + 4;
  ++retired_;
  return result.event == Event::kExit ? halt(result) : result;
}

StepResult Emulator::execute(std::uint64_t budget) {
  if (final_) return *final_;
  std::uint32_t* const x = registers_.data();
  const Instruction* const decoded = decoded_.data();
  const std::uint32_t code_base = map_.code.base;
  const std::uint32_t code_size = map_.code.size;
  std::uint32_t pc = pc_;
  std::uint64_t remaining = budget;

  while (remaining > 0) {
    if (pc - code_base >= code_size) [[unlikely]] {
      retired_ += budget - remaining;
      return trap(TrapCause::kInstructionAccessFault, pc, pc);
    }
    const Instruction& in = decoded[(pc - code_base) >> 2];
    std::uint32_t next = pc + 4;
    const std::uint32_t a = x[in.rs1];
    const std::uint32_t b = x[in.rs2];
    const auto imm = static_cast<std::uint32_t>(in.imm);

    // Faults leave the switch through the labels below it, which end the batch.
    switch (in.op) {
      case Op::kLui: x[in.rd] = imm; break;
      case Op::kAuipc: x[in.rd] = pc + imm; break;
      case Op::kJal:
        if (!jump_to(pc + imm, next)) goto misaligned_target;
        x[in.rd] = pc + 4;
        break;
      case Op::kJalr:
        if (!jump_to((a + imm) & ~1u, next)) goto misaligned_target;
        x[in.rd] = pc + 4;
        break;
      case Op::kBeq: if (a == b && !jump_to(pc + imm, next)) goto misaligned_target; break;
      case Op::kBne: if (a != b && !jump_to(pc + imm, next)) goto misaligned_target; break;
      case Op::kBlt:
        if (as_signed(a) < as_signed(b) && !jump_to(pc + imm, next)) goto misaligned_target;
        break;
      case Op::kBge:
        if (as_signed(a) >= as_signed(b) && !jump_to(pc + imm, next)) goto misaligned_target;
        break;
      case Op::kBltu: if (a < b && !jump_to(pc + imm, next)) goto misaligned_target; break;
      case Op::kBgeu: if (a >= b && !jump_to(pc + imm, next)) goto misaligned_target; break;
      case Op::kLb: if (!load<std::int8_t>(a + imm, x[in.rd])) goto load_fault; break;
      case Op::kLh: if (!load<std::int16_t>(a + imm, x[in.rd])) goto load_fault; break;
      case Op::kLw: if (!load<std::uint32_t>(a + imm, x[in.rd])) goto load_fault; break;
      case Op::kLbu: if (!load<std::uint8_t>(a + imm, x[in.rd])) goto load_fault; break;
      case Op::kLhu: if (!load<std::uint16_t>(a + imm, x[in.rd])) goto load_fault; break;
      case Op::kSb: if (!store_to_ram<std::uint8_t>(a + imm, b)) goto other_store; break;
      case Op::kSh: if (!store_to_ram<std::uint16_t>(a + imm, b)) goto other_store; break;
      case Op::kSw: if (!store_to_ram<std::uint32_t>(a + imm, b)) goto other_store; break;
      case Op::kAddi: x[in.rd] = a + imm; break;
      case Op::kSlti: x[in.rd] = as_signed(a) < as_signed(imm); break;
      case Op::kSltiu: x[in.rd] = a < imm; break;
      case Op::kXori: x[in.rd] = a ^ imm; break;
      case Op::kOri: x[in.rd] = a | imm; break;
      case Op::kAndi: x[in.rd] = a & imm; break;
      case Op::kSlli: x[in.rd] = a << imm; break;
      case Op::kSrli: x[in.rd] = a >> imm; break;
      case Op::kSrai: x[in.rd] = static_cast<std::uint32_t>(as_signed(a) >> imm); break;
      case Op::kAdd: x[in.rd] = a + b; break;
      case Op::kSub: x[in.rd] = a - b; break;
      case Op::kSll: x[in.rd] = a << (b & 31); break;
      case Op::kSlt: x[in.rd] = as_signed(a) < as_signed(b); break;
      case Op::kSltu: x[in.rd] = a < b; break;
      case Op::kXor: x[in.rd] = a ^ b; break;
      case Op::kSrl: x[in.rd] = a >> (b & 31); break;
      case Op::kSra: x[in.rd] = static_cast<std::uint32_t>(as_signed(a) >> (b & 31)); break;
      case Op::kOr: x[in.rd] = a | b; break;
      case Op::kAnd: x[in.rd] = a & b; break;
      case Op::kMul: x[in.rd] = a * b; break;
      case Op::kMulh: x[in.rd] = multiply_high_signed(a, b); break;
      case Op::kMulhsu: x[in.rd] = multiply_high_signed_unsigned(a, b); break;
      case Op::kMulhu: x[in.rd] = multiply_high_unsigned(a, b); break;
      case Op::kDiv: x[in.rd] = divide_signed(a, b); break;
      case Op::kDivu: x[in.rd] = b == 0 ? 0xFFFFFFFFu : a / b; break;
      case Op::kRem: x[in.rd] = remainder_signed(a, b); break;
      case Op::kRemu: x[in.rd] = b == 0 ? a : a % b; break;
      case Op::kSh1add: x[in.rd] = (a << 1) + b; break;
      case Op::kSh2add: x[in.rd] = (a << 2) + b; break;
      case Op::kSh3add: x[in.rd] = (a << 3) + b; break;
      case Op::kFence: break;
      case Op::kBzPuta: bigint_a_[a % 128] = b & kLimbMask; break;
      case Op::kBzPutb: bigint_b_[a % 128] = b & kLimbMask; break;
      case Op::kBzDotlo: x[in.rd] = static_cast<std::uint32_t>(bigint_dot(a, b)); break;
      case Op::kBzDothi: x[in.rd] = static_cast<std::uint32_t>(bigint_dot(a, b) >> 32); break;
      // The vector unit's instructions run out of line; only vu.get, vu.wget and vu.argmax write rd (x0 for
      // the rest, which decoding turned into the discarded register).
      case Op::kVuSetvl: case Op::kVuSetcols: case Op::kVuSetsrc: case Op::kVuSetaux: case Op::kVuSeths:
      case Op::kVuPut: case Op::kVuGet: case Op::kVuWget: case Op::kVuKput: case Op::kVuVput:
      case Op::kVuMatvec16: case Op::kVuRow16: case Op::kVuAdd16: case Op::kVuMul16:
      case Op::kVuRmsnorm: case Op::kVuSilu: case Op::kVuRope: case Op::kVuAttend: case Op::kVuArgmax:
        if (!vector_unit_.execute(in.op, a, b, x[in.rd])) goto illegal;
        break;
      case Op::kIllegal: goto illegal;
    }
    pc = next;
    --remaining;
    continue;

  illegal:
    retired_ += budget - remaining;
    return trap(TrapCause::kIllegalInstruction, pc, pc);
  misaligned_target:
    retired_ += budget - remaining;
    return trap(TrapCause::kInstructionAddressMisaligned, pc, next);
  load_fault: {
    const std::uint32_t address = a + imm;
    if (in.op == Op::kLw && address == map_.input_address && map_.input_address != 0) {
      x[in.rd] = static_cast<std::uint32_t>(input_ ? input_() : -1);
      pc = next;
      --remaining;
      continue;
    }
    retired_ += budget - remaining;
    return trap(address % memory_access_width(in.op) != 0 ? TrapCause::kLoadAddressMisaligned
                                                          : TrapCause::kLoadAccessFault,
                pc, address);
  }
  other_store:
    retired_ += budget - remaining;
    return store_outside_ram(pc, a + imm, memory_access_width(in.op), b);
  }
  retired_ += budget;
  pc_ = pc;
  return {};
}

InputSource text_input(std::string text) {
  return [text = std::move(text), next = std::size_t{0}]() mutable {
    return next < text.size() ? static_cast<unsigned char>(text[next++]) : -1;
  };
}

}  // namespace rvformer::emulator
