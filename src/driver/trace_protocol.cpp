// driver/trace_protocol.cpp — see trace_protocol.h.
#include "driver/trace_protocol.h"

#include <algorithm>
#include <array>

#include "cpu/machine.h"
#include "cpu/rv32_ops.h"
#include "isa/instruction_set.h"
#include "support/error.h"

namespace rvformer::driver {
namespace {

using cpu::TokenKind;

// What the model's token of each family means to the driver.
enum class Role : std::uint8_t {
  kCompletes,   // the step is complete: an instruction retired
  kContinues,   // the step goes on; feed it back
  kJump,        // the PC moved: an instruction retired, unless the pass only re-anchored the PC
  kJumpHigh,    // the high bits of the next jump's target
  kConsole,     // a byte for the console; the step is complete
  kExit,        // the program ended
  kInput,       // the program reads input: the driver answers in its place
  kFault,       // a trap, with its report to follow
  kDriverOnly,  // the model may not emit it
};

constexpr std::array<Role, cpu::kTokenKindCount> kRoles = [] {
  std::array<Role, cpu::kTokenKindCount> roles{};
  auto set = [&](TokenKind kind, Role role) { roles[static_cast<int>(kind)] = role; };
  set(TokenKind::kVal, Role::kCompletes);
  set(TokenKind::kHi, Role::kContinues);
  set(TokenKind::kTop, Role::kContinues);
  set(TokenKind::kDiv, Role::kContinues);
  set(TokenKind::kVec, Role::kContinues);
  set(TokenKind::kLine, Role::kContinues);
  set(TokenKind::kWline, Role::kContinues);
  set(TokenKind::kJump, Role::kJump);
  set(TokenKind::kJlo, Role::kJump);
  set(TokenKind::kFar, Role::kJumpHigh);
  set(TokenKind::kOut, Role::kConsole);
  set(TokenKind::kExit, Role::kExit);
  set(TokenKind::kWant, Role::kInput);
  set(TokenKind::kFault, Role::kFault);
  for (TokenKind kind : {TokenKind::kIn, TokenKind::kEof, TokenKind::kStage, TokenKind::kStart, TokenKind::kPad})
    set(kind, Role::kDriverOnly);
  return roles;
}();

std::uint32_t bit_of(const std::vector<std::uint8_t>& bytes, std::size_t bit) {
  std::size_t byte = bit / 8;
  return byte < bytes.size() ? (bytes[byte] >> (bit % 8)) & 1 : 0;
}

// Each half-row of `row_bytes` bytes that is not all zero: FAR and JLO naming it (with `region`
// set for read-only data and the vector unit's weights), then its bits in slots of VAL VAL VAL STAGE.
void add_half_rows(const std::vector<std::uint8_t>& bytes, std::size_t row_bytes, int slots, std::uint32_t region,
                   const cpu::TraceVocabulary& v, std::vector<std::uint32_t>& tokens) {
  for (std::size_t row = 0; row * row_bytes < bytes.size(); ++row) {
    std::size_t first = row * row_bytes;
    if (std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(first),
                    bytes.begin() + static_cast<std::ptrdiff_t>(std::min(first + row_bytes, bytes.size())),
                    [](std::uint8_t b) { return b == 0; }))
      continue;
    auto address = static_cast<std::uint32_t>(row) | region;
    tokens.push_back(v.id(TokenKind::kFar, address >> cpu::kJumpLowBits));
    tokens.push_back(v.id(TokenKind::kJlo, address & 0xFF));
    auto bits = [&](std::size_t from, int count) {
      std::uint32_t x = 0;
      for (int i = 0; i < count; ++i)
        if (from + i < 8 * row_bytes) x |= bit_of(bytes, 8 * first + from + i) << i;
      return x;
    };
    for (int slot = 0; slot < slots; ++slot) {
      std::size_t at = static_cast<std::size_t>(slot) * cpu::kSlotBits;
      for (int k = 0; k < 3; ++k) tokens.push_back(v.val(bits(at + k * cpu::kValueBits, cpu::kValueBits)));
      tokens.push_back(v.stage(static_cast<std::uint32_t>(slot), bits(at + 3 * cpu::kValueBits, cpu::kStageBits)));
    }
  }
}

// The trap a FAULT report describes, with the instruction word from the image, as the golden
// machine gives it (no word when the fetch itself faulted).
isa::Trap reported_trap(cpu::FaultCause fault, std::uint32_t pc, std::uint32_t address,
                        const program::ProgramImage& image) {
  isa::Trap trap{cpu::trap_cause(fault), pc, 0, address};
  std::uint32_t offset = pc - image.map.code.base;
  if (trap.cause != isa::TrapCause::kInstructionAccessFault && offset + 4 <= image.code.size())
    for (int i = 0; i < 4; ++i) trap.instruction |= std::uint32_t{image.code[offset + i]} << (8 * i);
  return trap;
}

}  // namespace

std::vector<std::uint32_t> program_load_tokens(const program::ProgramImage& image, const Protocol& protocol) {
  const program::MemoryMap map = protocol.spec.memory_map();
  if (image.map.name != map.name || image.map.code.size != map.code.size || image.map.ram.base != map.ram.base)
    fail("the in-weights machine ({}) runs programs linked for its own memory map, not {}", map.name, image.map.name);
  // RAM starts zeroed, so zero-filled segments (.bss) need no tokens.
  if (std::any_of(image.ram.begin(), image.ram.end(), [](std::uint8_t b) { return b != 0; }))
    fail("the program initialises RAM directly; the in-weights machine loads code and read-only data only "
         "(the rvformer runtime's crt0 copies .data from read-only data)");
  if (image.weights.size() > protocol.spec.vector_weight_bytes) {
    if (!protocol.spec.vector_weight_bytes)
      fail("the program brings a vector weight memory, which the in-weights machine {} lacks", map.name);
    fail("the program's vector weight memory ({} bytes) does not fit the in-weights machine {}'s ({} bytes)",
         image.weights.size(), map.name, protocol.spec.vector_weight_bytes);
  }
  const cpu::TraceVocabulary& v = protocol.vocabulary;
  std::vector<std::uint32_t> tokens;
  add_half_rows(image.code, cpu::kInstructionsPerHalf * 4, cpu::kCodeSlots, 0, v, tokens);
  add_half_rows(image.rodata, cpu::kRodataWordsPerHalf * 4, cpu::kRodataSlots, 1u << (protocol.spec.code_word_bits() - 3), v,
                tokens);
  add_half_rows(image.weights, cpu::kVectorWeightWordsPerHalf * 4, cpu::kVectorWeightSlots,
                1u << (protocol.spec.code_word_bits() - 1), v, tokens);
  std::uint32_t entry = (image.entry - map.code.base) / 4;
  tokens.push_back(v.id(TokenKind::kFar, entry >> cpu::kJumpLowBits));
  tokens.push_back(v.id(TokenKind::kJlo, entry & 0xFF));
  tokens.push_back(v.id(TokenKind::kStart));
  return tokens;
}

void StepMirror::advance(const cpu::TraceToken& fed) {
  switch (fed.kind) {
    case TokenKind::kJump: base = (base & ~((1u << cpu::kValueBits) - 1)) | fed.payload, steps = 0; break;
    case TokenKind::kFar: far_high = fed.payload; break;
    case TokenKind::kJlo: base = far_high << cpu::kJumpLowBits | fed.payload, steps = 0; break;
    case TokenKind::kVal:
    case TokenKind::kOut:
    case TokenKind::kIn:
    case TokenKind::kEof: ++steps; break;
    default: break;
  }
}

std::uint32_t next_instruction_address(const RunPosition& position, const Protocol& protocol) {
  StepMirror after = position.mirror;
  after.advance(protocol.vocabulary.decode(position.next_token));
  return protocol.spec.memory_map().code.base + 4 * after.pc_word();
}

RunResult run_program(TokenMachine& machine, const program::ProgramImage& image, const Protocol& protocol,
                      const RunOptions& options) {
  const cpu::TraceVocabulary& v = protocol.vocabulary;
  RunResult result;
  StepMirror mirror;
  auto feed = [&](std::uint32_t token) {
    if (options.on_token) options.on_token(token);
    mirror.advance(v.decode(token));
    return machine.feed(token);
  };
  std::uint32_t token = 0;
  if (options.resume_from) {
    const RunPosition& from = *options.resume_from;
    token = from.next_token;
    mirror = from.mirror;
    result.instructions = from.instructions;
    result.trace_tokens = from.trace_tokens;
    result.load_tokens = from.load_tokens;
  } else {
    std::vector<std::uint32_t> load = program_load_tokens(image, protocol);
    result.load_tokens = load.size() - 1;  // START is the first step of the program
    for (std::size_t i = 0; i + 1 < load.size(); ++i) feed(load[i]);
    token = load.back();
  }
  auto stop_here = [&](RunEnd end) {
    result.end = end;
    result.position = {token, mirror, result.instructions, result.trace_tokens, result.load_tokens};
    return result;
  };
  bool stopped = false;
  auto retire = [&] {
    ++result.instructions;
    if (options.on_retired && !options.on_retired(result.instructions)) stopped = true;
  };
  // WANT is answered in the model's place: IN(byte) or EOF completes the read. Nothing, while the
  // input has no byte yet.
  auto answer_input = [&]() -> std::optional<std::uint32_t> {
    const int byte = options.input ? options.input() : kEndOfInput;
    if (byte == kNoInputYet) return std::nullopt;
    retire();
    return byte < 0 ? v.id(TokenKind::kEof) : v.id(TokenKind::kIn, static_cast<std::uint32_t>(byte & 0xFF));
  };
  if (v.decode(token).kind == TokenKind::kWant) {
    const std::optional<std::uint32_t> answer = answer_input();
    if (!answer) return stop_here(RunEnd::kAwaitingInput);
    token = *answer;
  }
  for (;;) {
    if (result.instructions >= options.max_instructions) return stop_here(RunEnd::kInstructionLimit);
    const std::uint64_t retired_before = result.instructions;
    std::uint32_t next = feed(token);
    const bool resync_due = mirror.resync_due();
    ++result.trace_tokens;
    if (options.after_pass && !options.after_pass()) return stop_here(RunEnd::kStopped);
    cpu::TraceToken emitted = v.decode(next);
    switch (kRoles[static_cast<int>(emitted.kind)]) {
      case Role::kCompletes: retire(); break;
      case Role::kContinues:
      case Role::kJumpHigh: break;
      case Role::kJump:
        if (!resync_due) retire();
        break;
      case Role::kConsole:
        if (options.console) options.console(static_cast<std::uint8_t>(emitted.payload));
        retire();
        break;
      case Role::kExit:
        retire();
        result.end = RunEnd::kExited;
        result.exit_code = emitted.payload;
        return result;
      case Role::kInput: {
        const std::optional<std::uint32_t> answer = answer_input();
        if (!answer) {
          token = next;
          return stop_here(RunEnd::kAwaitingInput);
        }
        next = *answer;
        break;
      }
      case Role::kFault: {
        const auto fault = static_cast<cpu::FaultCause>(emitted.payload);
        if (fault == cpu::FaultCause::kFetchAccessAfterJump) retire();
        // Six HI words follow: 64 bits, the trap's PC then its address, low bits first.
        std::uint64_t bits = 0;
        std::uint32_t report = next;
        for (int w = 0; w < cpu::kReportWords; ++w) {
          report = feed(report);
          ++result.trace_tokens;
          cpu::TraceToken t = v.decode(report);
          if (t.kind != TokenKind::kHi) fail("the model broke the trap report protocol with {}", v.describe(report));
          bits |= std::uint64_t{t.payload} << (cpu::kValueBits * w);
        }
        result.trap = reported_trap(fault, static_cast<std::uint32_t>(bits), static_cast<std::uint32_t>(bits >> 32), image);
        result.end = RunEnd::kTrapped;
        return result;
      }
      case Role::kDriverOnly: fail("the model emitted {}, which only the driver may send", v.describe(next));
    }
    token = next;
    if (stopped) return stop_here(RunEnd::kStopped);
    if (options.checkpoint && result.instructions != retired_before &&
        result.instructions % options.checkpoint_every == 0)
      options.checkpoint({token, mirror, result.instructions, result.trace_tokens, result.load_tokens});
  }
}

std::string trapped_message(const isa::Trap& trap, const program::MemoryMap& map, const Protocol& protocol) {
  const int op = cpu::decode_rv32_op(trap.instruction);
  if (trap.cause == isa::TrapCause::kIllegalInstruction && op >= cpu::kFirstVectorOp && op < cpu::kOpCount &&
      map.vector_unit && !cpu::decodes_op(protocol.spec, op))
    return fmt::format("the program trapped: illegal instruction at pc 0x{:08x} ({}): the {} machine's weights do "
                       "not have this vector unit instruction yet (--on emulator runs every vu.* instruction)",
                       trap.pc, isa::disassemble(trap.instruction), map.name);
  return isa::trapped_message(trap, map);
}

}  // namespace rvformer::driver
