// driver/compiled_machine.h — the computer as a checkpoint on disk: compiling the machine circuit
// into a Qwen3.5 checkpoint, finding or building the cached one, and checking that a checkpoint
// matches the machine description this binary carries.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/placement.h"
#include "cpu/machine.h"

namespace rvformer::driver {

// What rvformer-machine.json (written beside config.json) records about a compiled machine.
struct CompiledMachineInfo {
  std::uint64_t fingerprint = 0;  // of the circuit it was compiled from and the compiler revision
  int layers = 0;
  int hidden_size = 0;
  int intermediate_size = 0;
  std::uint64_t parameters = 0;
  std::uint64_t zero_parameters = 0;
  // Where each memory bank of the circuit lives (its GDN layer and key head), so that the machine's
  // state can be read back from a model's state (verify/machine_state.h).
  std::vector<compiler::HeadSlot> bank_heads;
};

using Progress = std::function<void(const std::string& message)>;

// Places, emits and writes the machine as a checkpoint into `directory` (created atomically:
// built beside it, then renamed into place). An existing `directory` is replaced only if it is
// empty or a compiled machine.
CompiledMachineInfo compile_machine(const cpu::Machine& machine, const std::filesystem::path& directory,
                                    const Progress& progress);

// Reads rvformer-machine.json; throws rvformer::Error if it is missing or malformed.
CompiledMachineInfo read_machine_info(const std::filesystem::path& directory);

// The checkpoint to run: `model` if given (it must have been compiled from this machine), else the
// cached one for this machine, compiled first if the cache lacks it. The cache lives in
// $RVFORMER_CACHE, else $XDG_CACHE_HOME/rvformer, else ~/.cache/rvformer.
std::filesystem::path machine_checkpoint(const cpu::Machine& machine, const std::optional<std::filesystem::path>& model,
                                         const Progress& progress);

}  // namespace rvformer::driver
