// toolcall/merged_computer.h — the computer inside a merged checkpoint (`rvformer merge`), run on
// its own: trace tokens through the compiled layers only, then the final norm and the tied head
// (computer mode, docs/merge.md), on the fast exact executor loaded with those layers alone.
//
// It keeps a state of its own, apart from the conversation's: the chat's text never passes through
// it and its trace tokens never reach the base's layers, so each stream is exactly what the model
// computes on that stream alone (docs/tool-calls.md).
#pragma once

#include <filesystem>
#include <memory>

#include "driver/trace_protocol.h"
#include "engine/fast_model.h"
#include "merge/merge.h"

namespace rvformer::toolcall {

class MergedComputer : public driver::TokenMachine {
 public:
  // Reads rvformer-merge.json and loads the compiled layers of the checkpoint in `directory`.
  // Throws rvformer::Error for a checkpoint that is not a merge or names a machine this build does
  // not know.
  explicit MergedComputer(const std::filesystem::path& directory);

  // One pass: trace token `token` (its index in the machine's vocabulary) in, the greedy trace
  // token out. Throws rvformer::Error if the model's greedy token is not a trace token.
  std::uint32_t feed(std::uint32_t token) override;

  const driver::Protocol& protocol() const { return protocol_; }
  std::uint64_t machine_fingerprint() const { return machine_fingerprint_; }
  const engine::Config& config() const { return model_.config(); }

  // The computer's state, as the engine's State (for saving), and taking one over (after loading).
  const engine::State& state() const { return state_.state(); }
  void adopt(engine::State state) { state_ = model_.adopt(std::move(state)); }
  // Back to the state before any token: memory, registers and PC cleared.
  void reset() { state_ = model_.new_state(); }

 private:
  MergedComputer(const std::filesystem::path& directory, merge::MergeInfo info);

  merge::MergeInfo info_;
  driver::Protocol protocol_;
  std::uint64_t machine_fingerprint_;
  engine::FastModel model_;
  engine::FastState state_;
};

}  // namespace rvformer::toolcall
