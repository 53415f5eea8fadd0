// cpu/tokens.cpp — the token embedding (inputs) and LM head (output code) of the trace vocabulary.
#include "cpu/machine_builder.h"
#include "cpu/trace_tokens.h"
#include "support/error.h"

namespace rvformer::cpu {
namespace {

Bits payload_inputs(circuit::Circuit& c, const std::string& name, int width) {
  Bits bits;
  for (int i = 0; i < width; ++i) bits.push_back(c.add_input(name + "[" + std::to_string(i) + "]"));
  return bits;
}

std::vector<SignalId> output_group(circuit::Gates& g, const std::string& name, int size) {
  std::vector<SignalId> group;
  for (int i = 0; i < size; ++i) group.push_back(g.signal(name + "[" + std::to_string(i) + "]"));
  return group;
}

}  // namespace

void MachineBuilder::add_token_inputs() {
  in_.is_val = c_.add_input("token.is_val");
  in_.is_hi = c_.add_input("token.is_hi");
  in_.is_jump = c_.add_input("token.is_jump");
  in_.is_out = c_.add_input("token.is_out");
  in_.is_exit = c_.add_input("token.is_exit");
  in_.is_fault = c_.add_input("token.is_fault");
  in_.is_start = c_.add_input("token.is_start");
  in_.val = payload_inputs(c_, "token.val", 16);
  in_.hi = payload_inputs(c_, "token.hi", 16);
  in_.jump = payload_inputs(c_, "token.jump", 16);
}

void MachineBuilder::add_token_outputs() {
  circuit::Gates g = gates("next");
  for (auto [family, name] : {std::pair{&out_.val, "val"}, {&out_.hi, "hi"}, {&out_.jump, "jump"}}) {
    family->high6 = output_group(g, std::string(name) + ".high6", 64);
    family->mid5 = output_group(g, std::string(name) + ".mid5", 32);
    family->low5 = output_group(g, std::string(name) + ".low5", 32);
  }
  for (auto [family, name] : {std::pair{&out_.out, "out"}, {&out_.exit, "exit"}}) {
    family->high3 = output_group(g, std::string(name) + ".high3", 8);
    family->low5 = output_group(g, std::string(name) + ".low5", 32);
  }
  out_.fault = output_group(g, "fault", kFaultCauseCount);
  for (const auto* group : {&out_.val.high6, &out_.val.mid5, &out_.val.low5, &out_.hi.high6, &out_.hi.mid5,
                            &out_.hi.low5, &out_.jump.high6, &out_.jump.mid5, &out_.jump.low5, &out_.out.high3,
                            &out_.out.low5, &out_.exit.high3, &out_.exit.low5, &out_.fault})
    for (SignalId s : *group) c_.mark_output(s);
}

void MachineBuilder::add_token_families() {
  using Setter = std::function<void(SignalId, double)>;
  auto payload16 = [](SignalId flag, const Bits& bits) {
    return [flag, bits](std::uint32_t x, const Setter& set) {
      set(flag, 1);
      for (int i = 0; i < 16; ++i) set(bits[i], (x >> i) & 1);
    };
  };
  auto code16 = [](const TokenOutputs::Payload16& p) {
    return [p](std::uint32_t x, const Setter& set) {
      set(p.high6[x >> 10], 1);
      set(p.mid5[(x >> 5) & 31], 1);
      set(p.low5[x & 31], 1);
    };
  };
  auto flag_only = [](SignalId flag) { return [flag](std::uint32_t, const Setter& set) { set(flag, 1); }; };
  auto code8 = [](const TokenOutputs::Payload8& p) {
    return [p](std::uint32_t b, const Setter& set) {
      set(p.high3[b >> 5], 1);
      set(p.low5[b & 31], 1);
    };
  };
  std::vector<SignalId> fault = out_.fault;
  c_.add_token_family({"VAL", kPayloadCount, payload16(in_.is_val, in_.val), code16(out_.val)});
  c_.add_token_family({"HI", kPayloadCount, payload16(in_.is_hi, in_.hi), code16(out_.hi)});
  c_.add_token_family({"JUMP", kPayloadCount, payload16(in_.is_jump, in_.jump), code16(out_.jump)});
  c_.add_token_family({"OUT", 256, flag_only(in_.is_out), code8(out_.out)});
  c_.add_token_family({"EXIT", 256, flag_only(in_.is_exit), code8(out_.exit)});
  c_.add_token_family({"FAULT", kFaultCauseCount, flag_only(in_.is_fault),
                       [fault](std::uint32_t cause, const Setter& set) { set(fault[cause], 1); }});
  c_.add_token_family({"START", 1, flag_only(in_.is_start), nullptr});
  c_.add_token_family({"PAD", 1, nullptr, nullptr});
  if (c_.vocab_size() != kTraceVocabularySize || c_.token_id("START") != kStartToken)
    fail("cpu: the circuit's token families disagree with trace_tokens.h");
}

// The LM head scores a token by how many of its one-hot chunks are set: the intended token scores
// 3 (2 for byte payloads, 1 for faults) and every other token at most one less.
void MachineBuilder::add_output_code() {
  circuit::Gates g = gates("next.code");
  auto encode = [&](const std::vector<SignalId>& group, SignalId emit, const std::vector<Form>& bits, int low) {
    int width = 0;
    while ((1u << width) < group.size()) ++width;
    for (std::size_t value = 0; value < group.size(); ++value) {
      Form literals = F(emit);
      for (int i = 0; i < width; ++i)
        literals += (value >> i) & 1 ? bits[low + i] : Form(1.0) - bits[low + i];
      g.add_relu(group[value], literals - width);
    }
  };
  auto encode16 = [&](const TokenOutputs::Payload16& p, SignalId emit, const std::vector<Form>& bits) {
    encode(p.high6, emit, bits, 10);
    encode(p.mid5, emit, bits, 5);
    encode(p.low5, emit, bits, 0);
  };
  auto encode8 = [&](const TokenOutputs::Payload8& p, SignalId emit) {
    encode(p.high3, emit, next_.byte, 5);
    encode(p.low5, emit, next_.byte, 0);
  };
  encode16(out_.val, next_.emit_val, next_.val);
  encode16(out_.hi, next_.emit_hi, next_.hi);
  encode16(out_.jump, next_.emit_jump, next_.jump);
  encode8(out_.out, next_.emit_out);
  encode8(out_.exit, next_.emit_exit);
  for (int cause = 0; cause < kFaultCauseCount; ++cause)
    g.add_relu(out_.fault[cause], F(next_.emit_fault) + next_.cause[cause] - 1);
}

}  // namespace rvformer::cpu
