// cpu/trace_tokens.h — the trace vocabulary: every token the computer reads or writes, as a table
// of families. A pass of the model executes (or loads) one step and emits one token; a token's id
// is its family's first id plus its payload. docs/trace-protocol.md gives the meaning of each
// token in each situation; in short:
//   VAL(x)   the step is complete; a pending register write takes the value x (12 bits, sign-
//            extended, or the low bits under a preceding HI/TOP). While loading: 12 image bits.
//   HI(x)    12 more bits: the middle bits of a value (then VAL), the bits a byte or halfword store
//            keeps, a remainder of a long division, or a trap report word. The step goes on.
//   TOP(x)   the top 8 bits of a value (then HI, then VAL).
//   JUMP(x)  the PC becomes code word x with the same bits above the low 12 (a near jump).
//   FAR(h)   the high bits of the next jump target (then JLO). While loading: the high bits of a half-row address.
//   JLO(l)   the PC becomes code word (FAR's h << 8) | l.
//   OUT(b)   the console prints byte b; the step is complete.
//   EXIT(b)  the program ended with exit status b.
//   WANT     the program reads console input: the driver answers IN(b) or EOF in its place.
//   IN(b)    a byte of console input (the read's value); the step is complete.
//   EOF      the end of console input (the read's value is -1); the step is complete.
//   FAULT(c) the instruction trapped with cause c; six HI report words follow.
//   DIV(p, m, s) a long division's quotient digit m (radix 8) at position p (weight 8^p), s the
//            quotient's sign; the step goes on.
//   STAGE(k, b) while loading: slot k of an image row is the last three tokens' payloads and b.
//   START    loading is over; the machine runs from the PC that FAR/JLO set.
//   PAD      a token that changes nothing (for prompts before the image).
//   VEC(x)   a vector operation's output element x (13 bits, two's complement); the step goes on.
//   LINE(l)  a vector operation starts line l of its output; the step goes on.
// (VEC and LINE are empty families on machines without the vector unit.)
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "isa/trap.h"
#include "program/machine_spec.h"

namespace rvformer::cpu {

enum class TokenKind : std::uint8_t {
  kVal, kHi, kJump, kTop, kFar, kJlo, kOut, kExit, kIn, kEof, kWant, kFault, kDiv, kStage, kStart, kPad, kVec, kLine,
  kWline,
};
inline constexpr int kTokenKindCount = static_cast<int>(TokenKind::kWline) + 1;

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

inline constexpr int kValueBits = 12;      // VAL, HI and JUMP payloads
inline constexpr int kTopBits = 8;         // TOP: value bits 24..31
inline constexpr int kJumpLowBits = 8;     // JLO: the low bits of a far jump target
inline constexpr int kReportWords = 6;     // HI words after a FAULT: the pc, then the address
inline constexpr int kStageSlots = 8;      // STAGE(k, b): k < 8
inline constexpr int kStageBits = 8;
inline constexpr int kVectorResultBits = 13;    // VEC(x): an AM element
// LINE(l): l[7:0] the line, < 256 (the lines of 4,096 elements); l[8] marks a line of vu.matvec16's
// outputs, whose passes read the WM line WLINE + k, row k of the line's 16.
inline constexpr int kVectorLineIndexBits = 9;
inline constexpr int kVectorLineNumberBits = 8;
inline constexpr int kVectorMatrixLineBit = 8;
inline constexpr int kVectorWeightLineBits = 13;  // WLINE(n): the weight memory's 64-byte line n
// DIV(p, m, s): payload p·16 + s·8 + m, for positions p < 11 (8^10 is the highest a 32-bit
// quotient needs) and digits m < 8.
inline constexpr int kDivisionPositions = 11;
inline constexpr int kDigitBits = 3;
inline constexpr std::uint32_t division_payload(int position, int digit, int sign) {
  return static_cast<std::uint32_t>(position << 4 | sign << 3 | digit);
}

// Loading: a half-row of the code ROM holds 8 instructions, of read-only data 4 words, of the vector
// unit's weight memory 8 words; its bits come in slots of VAL VAL VAL STAGE(k, b), 44 bits each: 6
// slots for code and weights, 3 for read-only data.
inline constexpr int kInstructionsPerHalf = 8;
inline constexpr int kRodataWordsPerHalf = 4;
inline constexpr int kVectorWeightWordsPerHalf = 8;
inline constexpr int kVectorWeightLineBytes = 2 * kVectorWeightWordsPerHalf * 4;  // a bank row: 64 bytes
inline constexpr int kSlotBits = 3 * kValueBits + kStageBits;
inline constexpr int kCodeSlots = 6;
inline constexpr int kRodataSlots = 3;
inline constexpr int kVectorWeightSlots = 6;

struct TokenFamily {
  TokenKind kind;
  const char* name;
  std::uint32_t first;  // id of payload 0
  std::uint32_t count;
};

struct TraceToken {
  TokenKind kind;
  std::uint32_t payload = 0;  // the value, byte, cause, digit or (for STAGE) k·256 + b
};

// The vocabulary of a machine: its families in id order. Only FAR's payload width depends on the
// machine (the code word index bits above the low 8).
class TraceVocabulary {
 public:
  explicit TraceVocabulary(const program::MachineSpec& spec);

  const std::vector<TokenFamily>& families() const { return families_; }
  const TokenFamily& family(TokenKind kind) const { return families_[static_cast<int>(kind)]; }
  std::uint32_t size() const { return size_; }
  // The id of `kind` with `payload`; throws rvformer::Error for a payload outside the family.
  std::uint32_t id(TokenKind kind, std::uint32_t payload = 0) const;
  // Throws rvformer::Error for ids outside the vocabulary.
  TraceToken decode(std::uint32_t id) const;
  // "VAL(0x123)", "OUT('A')", "FAULT(illegal instruction)", ...
  std::string describe(std::uint32_t id) const;

  std::uint32_t val(std::uint32_t x) const { return id(TokenKind::kVal, x & 0xFFF); }
  std::uint32_t hi(std::uint32_t x) const { return id(TokenKind::kHi, x & 0xFFF); }
  std::uint32_t stage(std::uint32_t slot, std::uint32_t bits) const { return id(TokenKind::kStage, slot << kStageBits | bits); }

 private:
  std::vector<TokenFamily> families_;
  std::uint32_t size_ = 0;
};

}  // namespace rvformer::cpu
