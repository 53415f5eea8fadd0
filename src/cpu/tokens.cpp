// cpu/tokens.cpp — the token embedding (inputs) and the LM head (output code) of the trace
// vocabulary.
//
// The LM head chooses the next token by score: every gate of TokenOutputs adds kGateScore to the
// tokens of its family, and a payload scores one per bit that matches the dual-rail payload (the
// bit's rail when it is 1, its complement's when it is 0; two for VAL, HI and TOP). Within a
// value's first pass those three families also score the bits a payload of theirs would
// sign-extend (four each), plus a bonus, so that the shortest spelling of the value wins
// (docs/trace-protocol.md derives the weights). The evaluator checks the winner's margin in every pass.
#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {

constexpr double kGateScore = 128;
// A value's families score 2 per payload bit and 4 per sign-extended bit; with these bonuses the
// shortest spelling wins by at least 1 (docs/trace-protocol.md derives the window of each).
constexpr double kValuePayloadScore = 2;
constexpr double kSignExtensionScore = 4;
constexpr double kHiBonus = 47;   // HI beats VAL unless the value fits 12 bits,
constexpr double kTopBonus = 86;  // TOP beats HI unless it fits 24.

using Setter = std::function<void(SignalId, double)>;

Bits inputs(circuit::Circuit& c, const std::string& name, int width) {
  Bits bits;
  for (int i = 0; i < width; ++i) bits.push_back(c.add_input(name + "[" + std::to_string(i) + "]"));
  return bits;
}

Bits outputs(Gates& g, const std::string& name, int width) {
  Bits bits;
  for (int i = 0; i < width; ++i) bits.push_back(g.signal(name + "[" + std::to_string(i) + "]"));
  return bits;
}

// Scores `weight` for each bit of `value` (width bits) matching rails [low, low + width).
void score_payload(const Bits& rail, const Bits& complement, int low, int width, std::uint32_t value, double weight,
                   const Setter& set) {
  for (int i = 0; i < width; ++i) set((value >> i) & 1 ? rail[low + i] : complement[low + i], weight);
}

}  // namespace

Form TokenInputs::completes() const {
  return F(is(TokenKind::kVal)) + F(is(TokenKind::kJump)) + F(is(TokenKind::kJlo)) + F(is(TokenKind::kOut)) +
         F(is(TokenKind::kIn)) + F(is(TokenKind::kEof));
}

void MachineBuilder::add_token_inputs() {
  static const char* const kFlagNames[kTokenKindCount] = {"val", "hi",   "jump",  "top",   "far", "jlo",
                                                         "out", "exit", "in",    "eof",   "want", "fault",
                                                         "div", "stage", "start", "pad",  "vec", "line",
                                                         "wline"};
  for (int k = 0; k < kTokenKindCount; ++k) {
    auto kind = static_cast<TokenKind>(k);
    if (kind == TokenKind::kWant || kind == TokenKind::kPad || family(kind).count == 0) continue;
    in_.flags[k] = c_.add_input(std::string("token.is_") + kFlagNames[k]);
  }
  in_.val = inputs(c_, "token.val", kValueBits);
  in_.hi = inputs(c_, "token.hi", kValueBits);
  in_.jump = inputs(c_, "token.jump", kValueBits);
  in_.top = inputs(c_, "token.top", kTopBits);
  in_.far = inputs(c_, "token.far", word_bits_ - kJumpLowBits);
  in_.jlo = inputs(c_, "token.jlo", kJumpLowBits);
  in_.in = inputs(c_, "token.in", 8);
  in_.div_position = inputs(c_, "token.div_position", kDivisionPositions);
  in_.div_digit = inputs(c_, "token.div_digit", kDigitBits);
  in_.div_sign = c_.add_input("token.div_sign");
  in_.div_addend = inputs(c_, "token.div_addend", 32);
  in_.stage_slot = inputs(c_, "token.stage_slot", kStageSlots);
  in_.stage_bits = inputs(c_, "token.stage_bits", kStageBits);
  if (family(TokenKind::kVec).count == 0) return;
  in_.vec = inputs(c_, "token.vec", kVectorResultBits);
  in_.line = inputs(c_, "token.line", kVectorLineIndexBits);
  in_.wline = inputs(c_, "token.wline", kVectorWeightLineBits);
}

void MachineBuilder::add_token_outputs() {
  Gates g = gates("next");
  out_.r = outputs(g, "r", 32);
  out_.not_r = outputs(g, "not_r", 32);
  out_.j = outputs(g, "j", word_bits_);
  out_.not_j = outputs(g, "not_j", word_bits_);
  for (int i = 0; i < kFaultCauseCount; ++i) out_.cause.push_back(g.signal("cause[" + std::to_string(i) + "]"));
  for (auto [gate, name] : {std::pair{&out_.first, "first"}, {&out_.mid, "mid"}, {&out_.last, "last"},
                            {&out_.plain, "plain"}, {&out_.hi, "hi"}, {&out_.jump, "jump"}, {&out_.far, "far"},
                            {&out_.jlo, "jlo"}, {&out_.out, "out"}, {&out_.exit, "exit"}, {&out_.want, "want"},
                            {&out_.fault, "fault"}, {&out_.div, "div"}})
    *gate = g.signal(std::string("gate.") + name);
  // The low 12 value bits are live in every pass; higher ones only where a gate makes them so.
  for (int i = 0; i < 32; ++i) c_.mark_output(out_.r[i]), c_.mark_output(out_.not_r[i], i < kValueBits ? 1 : 0);
  for (int i = 0; i < word_bits_; ++i) c_.mark_output(out_.j[i]), c_.mark_output(out_.not_j[i], 1);
  for (SignalId s : out_.cause) c_.mark_output(s);
  for (SignalId gate : {out_.first, out_.mid, out_.last, out_.plain, out_.hi, out_.jump, out_.far, out_.jlo, out_.out,
                        out_.exit, out_.want, out_.fault, out_.div})
    c_.mark_output(gate);
  if (family(TokenKind::kVec).count == 0) return;
  out_.vec = g.signal("gate.vec");
  out_.line = g.signal("gate.line");
  out_.wline = g.signal("gate.wline");
  c_.mark_output(out_.vec), c_.mark_output(out_.line), c_.mark_output(out_.wline);
}

void MachineBuilder::add_result_bit(Gates& g, int i, const std::vector<Literal>& literals, const Form& condition) {
  double needed = static_cast<double>(literals.size()) + (condition.terms().empty() ? 0 : 1);
  Form gate = condition;
  for (const Literal& l : literals) gate += l.negated ? Form(1.0) - F(l.signal) : F(l.signal);
  c_.add_neuron(circuit::Neuron{(gate - (needed - 1)).terms(), Form(1.0).terms(),
                                {{out_.r[i], 1}, {out_.not_r[i], -1}}, 1, g.unit() + ".result"});
}

void MachineBuilder::add_token_families() {
  auto flag = [&](TokenKind kind) { return in_.is(kind); };
  auto payload = [&](TokenKind kind, const Bits& bits) {
    SignalId f = flag(kind);
    return [f, bits](std::uint32_t x, const Setter& set) {
      set(f, 1);
      for (std::size_t i = 0; i < bits.size(); ++i) set(bits[i], (x >> i) & 1);
    };
  };
  auto flag_only = [&](TokenKind kind) {
    SignalId f = flag(kind);
    return [f](std::uint32_t, const Setter& set) { set(f, 1); };
  };
  const TokenOutputs& o = out_;
  auto value_code = [o](std::uint32_t x, const Setter& set) {
    set(o.first, kGateScore);
    set(o.last, kGateScore);
    if (x == 0) set(o.plain, kGateScore);
    score_payload(o.r, o.not_r, 0, kValueBits, x, kValuePayloadScore, set);
    std::uint32_t sign = (x >> (kValueBits - 1)) & 1;
    for (int i = kValueBits; i < 32; ++i) set(sign ? o.r[i] : o.not_r[i], kSignExtensionScore);
  };
  auto hi_code = [o](std::uint32_t y, const Setter& set) {
    set(o.first, kGateScore + kHiBonus);
    set(o.mid, kGateScore);
    set(o.hi, kGateScore);
    score_payload(o.r, o.not_r, kValueBits, kValueBits, y, kValuePayloadScore, set);
    std::uint32_t sign = (y >> (kValueBits - 1)) & 1;
    for (int i = 2 * kValueBits; i < 32; ++i) set(sign ? o.r[i] : o.not_r[i], kSignExtensionScore);
  };
  auto top_code = [o](std::uint32_t z, const Setter& set) {
    set(o.first, kGateScore + kTopBonus);
    score_payload(o.r, o.not_r, 2 * kValueBits, kTopBits, z, kValuePayloadScore, set);
  };
  auto gated = [](SignalId gate, const Bits& rail, const Bits& complement, int low, int width) {
    return [=](std::uint32_t x, const Setter& set) {
      set(gate, kGateScore);
      score_payload(rail, complement, low, width, x, 1, set);
    };
  };
  int far_width = word_bits_ - kJumpLowBits;
  std::vector<SignalId> cause = out_.cause;
  auto fault_code = [o, cause](std::uint32_t c, const Setter& set) {
    set(o.fault, kGateScore);
    set(cause[c], 8);
  };
  // (The families outlive the builder: they capture signals, never `this`.)
  auto stage_fill = [is_stage = in_.is(TokenKind::kStage), slots = in_.stage_slot, bits = in_.stage_bits](
                        std::uint32_t x, const Setter& set) {
    set(is_stage, 1);
    set(slots[x >> kStageBits], 1);
    for (int i = 0; i < kStageBits; ++i) set(bits[i], (x >> i) & 1);
  };
  auto division_fill = [is_div = in_.is(TokenKind::kDiv), token = in_](std::uint32_t x, const Setter& set) {
    int position = static_cast<int>(x >> 4), sign = (x >> 3) & 1, digit = x & 7;
    set(is_div, 1);
    set(token.div_position[position], 1);
    for (int i = 0; i < kDigitBits; ++i) set(token.div_digit[i], (digit >> i) & 1);
    set(token.div_sign, sign);
    std::uint32_t shifted = static_cast<std::uint32_t>(digit) << (3 * position);
    std::uint32_t addend = sign ? shifted : 0u - shifted;  // −q·8^p with q = (sign ? −digit : digit)
    for (int i = 0; i < 32; ++i) set(token.div_addend[i], (addend >> i) & 1);
  };
  SignalId want = out_.want;
  for (const TokenFamily& f : m_.vocabulary.families()) {
    circuit::TokenFamily family{f.name, f.count, nullptr, nullptr};
    switch (f.kind) {
      case TokenKind::kVal: family.fill = payload(f.kind, in_.val), family.code = value_code; break;
      case TokenKind::kHi: family.fill = payload(f.kind, in_.hi), family.code = hi_code; break;
      case TokenKind::kTop: family.fill = payload(f.kind, in_.top), family.code = top_code; break;
      case TokenKind::kJump:
        family.fill = payload(f.kind, in_.jump), family.code = gated(o.jump, o.j, o.not_j, 0, kValueBits);
        break;
      case TokenKind::kFar:
        family.fill = payload(f.kind, in_.far), family.code = gated(o.far, o.j, o.not_j, kJumpLowBits, far_width);
        break;
      case TokenKind::kJlo:
        family.fill = payload(f.kind, in_.jlo), family.code = gated(o.jlo, o.j, o.not_j, 0, kJumpLowBits);
        break;
      case TokenKind::kOut: family.fill = flag_only(f.kind), family.code = gated(o.out, o.r, o.not_r, 0, 8); break;
      case TokenKind::kExit: family.fill = flag_only(f.kind), family.code = gated(o.exit, o.r, o.not_r, 0, 8); break;
      case TokenKind::kIn: family.fill = payload(f.kind, in_.in); break;
      case TokenKind::kEof: family.fill = flag_only(f.kind); break;
      case TokenKind::kWant: family.code = [want](std::uint32_t, const Setter& set) { set(want, kGateScore); }; break;
      case TokenKind::kFault: family.fill = flag_only(f.kind), family.code = fault_code; break;
      case TokenKind::kDiv:
        family.fill = division_fill, family.code = gated(o.div, o.r, o.not_r, 0, 8);
        break;
      case TokenKind::kStage: family.fill = stage_fill; break;
      case TokenKind::kStart: family.fill = flag_only(f.kind); break;
      case TokenKind::kPad: break;
      case TokenKind::kVec:
        family.fill = payload(f.kind, in_.vec), family.code = gated(o.vec, o.r, o.not_r, 0, kVectorResultBits);
        break;
      case TokenKind::kLine:
        family.fill = payload(f.kind, in_.line), family.code = gated(o.line, o.r, o.not_r, 0, kVectorLineIndexBits);
        break;
      case TokenKind::kWline:
        family.fill = payload(f.kind, in_.wline), family.code = gated(o.wline, o.r, o.not_r, 0, kVectorWeightLineBits);
        break;
    }
    c_.add_token_family(std::move(family));
  }
}

}  // namespace rvformer::cpu
