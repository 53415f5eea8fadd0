// driver/trace_protocol.cpp — see trace_protocol.h.
#include "driver/trace_protocol.h"

#include <algorithm>

#include "cpu/machine.h"
#include "support/error.h"

namespace rvformer::driver {
namespace {

using cpu::TokenKind;

std::uint32_t halfword(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  auto byte = [&](std::size_t i) -> std::uint32_t { return i < bytes.size() ? bytes[i] : 0; };
  return byte(offset) | byte(offset + 1) << 8;
}

// Rows of `row_bytes` bytes, each as JUMP(destination | tag) and its halfwords; zero rows skipped.
void add_rows(const std::vector<std::uint8_t>& bytes, std::size_t row_bytes, std::uint32_t tag,
              std::vector<std::uint32_t>& tokens) {
  for (std::size_t row = 0; row * row_bytes < bytes.size(); ++row) {
    std::vector<std::uint32_t> halfwords;
    bool nonzero = false;
    for (std::size_t h = 0; h < row_bytes / 2; ++h) {
      halfwords.push_back(halfword(bytes, row * row_bytes + 2 * h));
      nonzero |= halfwords.back() != 0;
    }
    if (!nonzero) continue;
    tokens.push_back(cpu::jump_token(static_cast<std::uint32_t>(row) | tag));
    for (std::uint32_t h : halfwords) tokens.push_back(cpu::val_token(h));
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

std::vector<std::uint32_t> program_load_tokens(const program::ProgramImage& image) {
  if (image.map.name != program::kRvformerMap.name)
    fail("the in-weights machine runs programs linked for the rvformer memory map, not {}", image.map.name);
  // RAM starts zeroed, so zero-filled segments (.bss) need no tokens.
  if (std::any_of(image.ram.begin(), image.ram.end(), [](std::uint8_t b) { return b != 0; }))
    fail("the program initialises RAM directly; the in-weights machine loads code and read-only data only "
         "(the rvformer runtime's crt0 copies .data from read-only data)");
  std::vector<std::uint32_t> tokens;
  add_rows(image.code, cpu::kInstructionsPerRow * 4, 0, tokens);
  add_rows(image.rodata, cpu::kRodataWordsPerRow * 4, 1u << 13, tokens);
  tokens.push_back(cpu::kStartToken);
  tokens.push_back(cpu::jump_token((image.entry - image.map.code.base) / 4));
  return tokens;
}

RunResult run_program(TokenMachine& machine, const program::ProgramImage& image, const RunOptions& options) {
  RunResult result;
  auto feed = [&](std::uint32_t token) {
    if (options.on_token) options.on_token(token);
    return machine.feed(token);
  };
  // The driver mirrors the machine's step counter only to tell a resync JUMP (issued after
  // kResyncAt sequential steps, retiring nothing) from the JUMP of a jump instruction.
  int steps_since_jump = 0;
  std::uint32_t token = 0;
  if (options.resume_from) {
    const RunPosition& from = *options.resume_from;
    token = from.next_token;
    steps_since_jump = from.steps_since_jump;
    result.instructions = from.instructions;
    result.trace_tokens = from.trace_tokens;
    result.load_tokens = from.load_tokens;
    result.pc = from.pc;
  } else {
    std::vector<std::uint32_t> load = program_load_tokens(image);
    result.load_tokens = load.size() - 1;  // the final JUMP(entry) is the first step of the program
    for (std::size_t i = 0; i + 1 < load.size(); ++i) feed(load[i]);
    token = load.back();
    result.pc = image.entry;
  }
  bool stopped = false;
  auto retire = [&] {
    ++result.instructions;
    if (options.on_retired && !options.on_retired(result.instructions)) stopped = true;
  };
  for (;;) {
    if (result.instructions >= options.max_instructions) {
      result.pending_token = token;
      result.steps_since_jump = steps_since_jump;
      return result;
    }
    const std::uint64_t retired_before = result.instructions;
    cpu::TraceToken fed = cpu::decode_token(token);
    if (fed.kind == TokenKind::kJump) steps_since_jump = 0;
    if (fed.kind == TokenKind::kVal || fed.kind == TokenKind::kOut) ++steps_since_jump;
    std::uint32_t next = feed(token);
    ++result.trace_tokens;
    if (options.after_pass && !options.after_pass()) {
      result.end = RunEnd::kStopped;
      return result;
    }
    cpu::TraceToken emitted = cpu::decode_token(next);
    switch (emitted.kind) {
      case TokenKind::kVal:
        retire();
        result.pc += 4;
        break;
      case TokenKind::kHi: break;
      case TokenKind::kJump:
        if (steps_since_jump != cpu::kResyncAt) retire();
        result.pc = image.map.code.base + 4 * emitted.payload;
        break;
      case TokenKind::kOut:
        if (options.console) options.console(static_cast<std::uint8_t>(emitted.payload));
        retire();
        result.pc += 4;
        break;
      case TokenKind::kExit:
        retire();
        result.end = RunEnd::kExited;
        result.exit_code = emitted.payload;
        return result;
      case TokenKind::kFault: {
        const auto fault = static_cast<cpu::FaultCause>(emitted.payload);
        if (fault == cpu::FaultCause::kFetchAccessAfterJump) retire();
        // Four HI words follow: the trap's PC and address, high halves first.
        std::uint32_t words[4];
        std::uint32_t report = next;
        for (std::uint32_t& w : words) {
          report = feed(report);
          ++result.trace_tokens;
          cpu::TraceToken t = cpu::decode_token(report);
          if (t.kind != TokenKind::kHi) fail("the model broke the trap report protocol with {}", cpu::describe_token(report));
          w = t.payload;
        }
        result.trap = reported_trap(fault, words[0] << 16 | words[1], words[2] << 16 | words[3], image);
        result.end = RunEnd::kTrapped;
        return result;
      }
      case TokenKind::kStart:
      case TokenKind::kPad:
        fail("the model emitted {}, which only the driver may send", cpu::describe_token(next));
    }
    if (stopped) {
      result.end = RunEnd::kStopped;
      return result;
    }
    token = next;
    if (options.checkpoint && result.instructions != retired_before &&
        result.instructions % options.checkpoint_every == 0)
      options.checkpoint({token, steps_since_jump, result.instructions, result.trace_tokens, result.load_tokens, result.pc});
  }
}

}  // namespace rvformer::driver
