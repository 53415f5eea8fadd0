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

TraceVocabulary::TraceVocabulary(const program::MachineSpec& spec) {
  std::uint32_t far_count = std::uint32_t{1} << (spec.code_word_bits() - kJumpLowBits);
  const std::array<std::pair<const char*, std::uint32_t>, kTokenKindCount> table{{
      {"VAL", 1u << kValueBits},  {"HI", 1u << kValueBits},  {"JUMP", 1u << kValueBits},
      {"TOP", 1u << kTopBits},    {"FAR", far_count},        {"JLO", 1u << kJumpLowBits},
      {"OUT", 256},               {"EXIT", 256},             {"IN", 256},
      {"EOF", 1},                 {"WANT", 1},               {"FAULT", kFaultCauseCount},
      {"DIV", kDivisionPositions << 4}, {"STAGE", kStageSlots << kStageBits}, {"START", 1},
      {"PAD", 1},                 {"VEC", spec.vector_weight_bytes ? 1u << kVectorResultBits : 0},
      {"LINE", spec.vector_weight_bytes ? 1u << kVectorLineIndexBits : 0},
      {"WLINE", static_cast<std::uint32_t>(spec.vector_weight_bytes / kVectorWeightLineBytes)},
  }};
  for (int k = 0; k < kTokenKindCount; ++k) {
    families_.push_back({static_cast<TokenKind>(k), table[k].first, size_, table[k].second});
    size_ += table[k].second;
  }
}

std::uint32_t TraceVocabulary::id(TokenKind kind, std::uint32_t payload) const {
  const TokenFamily& f = family(kind);
  if (payload >= f.count) fail("cpu: payload {} is outside the {} family ({} tokens)", payload, f.name, f.count);
  return f.first + payload;
}

TraceToken TraceVocabulary::decode(std::uint32_t id) const {
  for (const TokenFamily& f : families_)
    if (id - f.first < f.count) return {f.kind, id - f.first};
  fail("token id {} is outside the trace vocabulary of {} tokens", id, size_);
}

std::string TraceVocabulary::describe(std::uint32_t id) const {
  TraceToken t = decode(id);
  const char* name = family(t.kind).name;
  switch (t.kind) {
    case TokenKind::kOut:
    case TokenKind::kIn:
      return t.payload >= 32 && t.payload < 127 ? fmt::format("{}('{}')", name, static_cast<char>(t.payload))
                                                 : fmt::format("{}(0x{:02x})", name, t.payload);
    case TokenKind::kExit: return fmt::format("{}({})", name, t.payload);
    case TokenKind::kDiv:
      return fmt::format("DIV({}, {}, {})", t.payload >> 4, t.payload & 7, t.payload & 8 ? '-' : '+');
    case TokenKind::kFault: return fmt::format("FAULT({})", cause_name(t.payload));
    case TokenKind::kStage: return fmt::format("STAGE({}, 0x{:02x})", t.payload >> kStageBits, t.payload & 0xFF);
    case TokenKind::kVec: {
      const auto value = static_cast<std::int32_t>(t.payload << (32 - kVectorResultBits)) >> (32 - kVectorResultBits);
      return fmt::format("VEC({})", value);
    }
    case TokenKind::kLine: return fmt::format("LINE({})", t.payload);
    case TokenKind::kWline: return fmt::format("WLINE({})", t.payload);
    case TokenKind::kEof:
    case TokenKind::kWant:
    case TokenKind::kStart:
    case TokenKind::kPad: return name;
    default: return fmt::format("{}(0x{:03x})", name, t.payload);
  }
}

}  // namespace rvformer::cpu
