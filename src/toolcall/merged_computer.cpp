// toolcall/merged_computer.cpp — see merged_computer.h.
#include "toolcall/merged_computer.h"

#include <string>

#include "program/machine_spec.h"
#include "support/error.h"

namespace rvformer::toolcall {
namespace {

program::MachineSpec merged_machine_spec(const std::filesystem::path& directory, const merge::MergeInfo& info) {
  const std::string name = info.machine.value("machine", "");
  const std::optional<program::MachineSpec> spec = program::find_machine_spec(name);
  if (!spec) fail("{}: the merged machine '{}' is not one this rvformer knows", directory.string(), name);
  return *spec;
}

std::uint64_t merged_machine_fingerprint(const std::filesystem::path& directory, const merge::MergeInfo& info) {
  try {
    return std::stoull(info.machine.at("fingerprint").get<std::string>(), nullptr, 16);
  } catch (const std::exception&) {
    fail("{}: the merge description names no machine fingerprint", directory.string());
  }
}

}  // namespace

MergedComputer::MergedComputer(const std::filesystem::path& directory)
    : MergedComputer(directory, merge::read_merge_info(directory)) {}

MergedComputer::MergedComputer(const std::filesystem::path& directory, merge::MergeInfo info)
    : info_(std::move(info)),
      protocol_(merged_machine_spec(directory, info_)),
      machine_fingerprint_(merged_machine_fingerprint(directory, info_)),
      model_(engine::FastModel::load(directory, {.layers = info_.machine_layers,
                                                 .first_fed_token = static_cast<engine::TokenId>(info_.base_vocab),
                                                 .fed_token_count = info_.trace_tokens})),
      state_(model_.new_state()) {
  if (protocol_.vocabulary.size() != info_.trace_tokens) {
    fail("{}: the merged machine has {} trace tokens, this rvformer's '{}' machine {}", directory.string(),
         info_.trace_tokens, protocol_.spec.name, protocol_.vocabulary.size());
  }
}

std::uint32_t MergedComputer::feed(std::uint32_t token) {
  const auto id = static_cast<engine::TokenId>(info_.base_vocab + token);
  const engine::TokenId next = model_.decode_argmax(state_, id, info_.machine_layers);
  if (next < info_.base_vocab || next >= info_.base_vocab + info_.trace_tokens) {
    fail("the merged model's computer chose token id {}, which is not a trace token", next);
  }
  return static_cast<std::uint32_t>(next - info_.base_vocab);
}

}  // namespace rvformer::toolcall
