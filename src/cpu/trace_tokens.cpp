// cpu/trace_tokens.cpp — see trace_tokens.h.
#include "cpu/trace_tokens.h"

#include <fmt/format.h>

#include "support/error.h"

namespace rvformer::cpu {
namespace {

// FAULT(c) for any payload c: a cause, or "?" for payloads no cause has.
std::string cause_name(std::uint32_t cause) {
  if (cause >= kFaultCauseCount) return "?";
  auto fault = static_cast<FaultCause>(cause);
  std::string name(isa::trap_cause_name(trap_cause(fault)));
  return fault == FaultCause::kFetchAccessAfterJump ? name + " after a jump" : name;
}

}  // namespace

isa::TrapCause trap_cause(FaultCause cause) {
  using isa::TrapCause;
  switch (cause) {
    case FaultCause::kIllegalInstruction: return TrapCause::kIllegalInstruction;
    case FaultCause::kInstructionAddressMisaligned: return TrapCause::kInstructionAddressMisaligned;
    case FaultCause::kFetchAccessSequential:
    case FaultCause::kFetchAccessAfterJump: return TrapCause::kInstructionAccessFault;
    case FaultCause::kLoadAddressMisaligned: return TrapCause::kLoadAddressMisaligned;
    case FaultCause::kLoadAccessFault: return TrapCause::kLoadAccessFault;
    case FaultCause::kStoreAddressMisaligned: return TrapCause::kStoreAddressMisaligned;
    case FaultCause::kStoreAccessFault: return TrapCause::kStoreAccessFault;
  }
  return TrapCause::kIllegalInstruction;
}

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
