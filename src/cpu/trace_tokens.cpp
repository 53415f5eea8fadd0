// cpu/trace_tokens.cpp — see trace_tokens.h.
#include "cpu/trace_tokens.h"

#include <fmt/format.h>

#include "support/error.h"

namespace rvformer::cpu {
namespace {

const char* cause_name(std::uint32_t cause) {
  static const char* const kNames[kFaultCauseCount] = {
      "illegal instruction",   "instruction address misaligned", "instruction access fault",
      "instruction access fault after a jump", "load address misaligned", "load access fault",
      "store address misaligned", "store access fault"};
  return cause < kFaultCauseCount ? kNames[cause] : "?";
}

}  // namespace

TraceToken decode_token(std::uint32_t id) {
  if (id < kHiBase) return {TokenKind::kVal, id - kValBase};
  if (id < kJumpBase) return {TokenKind::kHi, id - kHiBase};
  if (id < kOutBase) return {TokenKind::kJump, id - kJumpBase};
  if (id < kExitBase) return {TokenKind::kOut, id - kOutBase};
  if (id < kFaultBase) return {TokenKind::kExit, id - kExitBase};
  if (id < kStartToken) return {TokenKind::kFault, id - kFaultBase};
  if (id == kStartToken) return {TokenKind::kStart, 0};
  if (id == kPadToken) return {TokenKind::kPad, 0};
  fail("token id {} is outside the trace vocabulary of {} tokens", id, kTraceVocabularySize);
}

std::string describe_token(std::uint32_t id) {
  TraceToken t = decode_token(id);
  switch (t.kind) {
    case TokenKind::kVal: return fmt::format("VAL(0x{:04x})", t.payload);
    case TokenKind::kHi: return fmt::format("HI(0x{:04x})", t.payload);
    case TokenKind::kJump: return fmt::format("JUMP(0x{:04x})", t.payload);
    case TokenKind::kOut:
      return t.payload >= 32 && t.payload < 127 ? fmt::format("OUT('{}')", static_cast<char>(t.payload))
                                                 : fmt::format("OUT(0x{:02x})", t.payload);
    case TokenKind::kExit: return fmt::format("EXIT({})", t.payload);
    case TokenKind::kFault: return fmt::format("FAULT({})", cause_name(t.payload));
    case TokenKind::kStart: return "START";
    case TokenKind::kPad: return "PAD";
  }
  return "?";
}

}  // namespace rvformer::cpu
