// cpu/trace_tokens.h — the trace vocabulary: every token the computer reads or writes, and its id.
//
// A pass of the model executes (or loads) one step and emits one token. Payload families carry 16
// bits; their ids are family base + payload. docs/trace-protocol.md gives the meaning of each token
// in each situation; in short:
//   VAL(x)   the step is complete; a pending register write takes x (sign-extended, or joined under
//            a preceding HI); the PC advances. While loading: the next halfword of the image.
//   HI(x)    the step is not complete: the same instruction runs again with x available (the high
//            half of a 32-bit result, an old halfword to merge, or a fault-report word).
//   JUMP(x)  the PC becomes code word x. While loading: the next image row to fill is x.
//   OUT(b)   the console prints byte b; the PC advances.
//   EXIT(b)  the program ended with exit status b.
//   FAULT(c) the instruction trapped with cause c; four HI tokens follow with the trap's PC and
//            address.
//   START    loading is over; the next token (a JUMP to the entry point) starts the program.
//   PAD      a token that changes nothing (for prompts before the image).
#pragma once

#include <cstdint>
#include <string>

#include "isa/trap.h"

namespace rvformer::cpu {

enum class TokenKind : std::uint8_t { kVal, kHi, kJump, kOut, kExit, kFault, kStart, kPad };

// Causes a FAULT token reports. An access fault after a jump is separate from one reached by
// running off the end of the code ROM, because the jump itself retires (as on the golden machine).
enum class FaultCause : std::uint8_t {
  kIllegalInstruction,
  kInstructionAddressMisaligned,
  kFetchAccessSequential,
  kFetchAccessAfterJump,
  kLoadAddressMisaligned,
  kLoadAccessFault,
  kStoreAddressMisaligned,
  kStoreAccessFault,
};
inline constexpr int kFaultCauseCount = 8;

// The trap a FAULT cause reports (both fetch access faults are an instruction access fault).
isa::TrapCause trap_cause(FaultCause cause);

inline constexpr std::uint32_t kPayloadCount = 1u << 16;
inline constexpr std::uint32_t kValBase = 0;
inline constexpr std::uint32_t kHiBase = kValBase + kPayloadCount;
inline constexpr std::uint32_t kJumpBase = kHiBase + kPayloadCount;
inline constexpr std::uint32_t kOutBase = kJumpBase + kPayloadCount;
inline constexpr std::uint32_t kExitBase = kOutBase + 256;
inline constexpr std::uint32_t kFaultBase = kExitBase + 256;
inline constexpr std::uint32_t kStartToken = kFaultBase + kFaultCauseCount;
inline constexpr std::uint32_t kPadToken = kStartToken + 1;
inline constexpr std::uint32_t kTraceVocabularySize = kPadToken + 1;

struct TraceToken {
  TokenKind kind;
  std::uint32_t payload = 0;  // the 16-bit value, byte, or fault cause
};

inline constexpr std::uint32_t val_token(std::uint32_t x) { return kValBase + (x & 0xFFFF); }
inline constexpr std::uint32_t hi_token(std::uint32_t x) { return kHiBase + (x & 0xFFFF); }
inline constexpr std::uint32_t jump_token(std::uint32_t x) { return kJumpBase + (x & 0xFFFF); }
inline constexpr std::uint32_t out_token(std::uint32_t b) { return kOutBase + (b & 0xFF); }
inline constexpr std::uint32_t exit_token(std::uint32_t b) { return kExitBase + (b & 0xFF); }
inline constexpr std::uint32_t fault_token(FaultCause c) { return kFaultBase + static_cast<std::uint32_t>(c); }

// Throws rvformer::Error for ids outside the vocabulary.
TraceToken decode_token(std::uint32_t id);
// "VAL(0x1234)", "OUT('A')", "FAULT(illegal instruction)", ...
std::string describe_token(std::uint32_t id);

}  // namespace rvformer::cpu
