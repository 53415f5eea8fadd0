// driver/run_checkpoint.h — a run saved between two passes so that a later process can go on with
// it: the model's state (an engine state image) and where the run stood, tied to the compiled
// machine and the program it belongs to. One file, written atomically, so an interrupted save
// leaves the previous checkpoint intact.
#pragma once

#include <cstdint>
#include <filesystem>

#include "driver/trace_protocol.h"
#include "engine/state.h"
#include "program/program_image.h"

namespace rvformer::driver {

struct RunCheckpoint {
  RunPosition position;
  std::uint64_t machine_fingerprint = 0;  // CompiledMachineInfo::fingerprint
  std::uint64_t program_digest = 0;       // program_digest() of the image
};

// A digest of everything the image loads (its load tokens).
std::uint64_t program_digest(const program::ProgramImage& image, const Protocol& protocol);

void save_run_checkpoint(const std::filesystem::path& path, const RunCheckpoint& checkpoint, const engine::State& state);

// Reads a checkpoint for a model of `config`. Throws rvformer::Error naming the file if it is
// malformed, truncated or corrupted, or if its state does not sit at the position it records.
std::pair<RunCheckpoint, engine::State> read_run_checkpoint(const std::filesystem::path& path, const engine::Config& config);

}  // namespace rvformer::driver
