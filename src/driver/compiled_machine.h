// driver/compiled_machine.h — the computer as a checkpoint on disk: compiling the machine circuit
// into a Qwen3.5 checkpoint, finding or building the cached one, checking that a checkpoint matches
// the machine description this binary carries, and checking its weights for damage before a run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "circuit/circuit.h"
#include "compiler/placement.h"
#include "cpu/machine.h"
#include "engine/checkpoint.h"

namespace rvformer::driver {

// What rvformer-machine.json (written beside config.json) records about a compiled machine.
struct CompiledMachineInfo {
  // Of the circuit it was compiled from and of the sources that decide the weights (a hash the build
  // makes of circuit/, cpu/, compiler/, the memory map, the checkpoint writer and this file's
  // module); it names the cached machine, so a machine from other sources is never reused.
  std::uint64_t fingerprint = 0;
  std::string machine;  // the MachineSpec's name ("rvformer", "rvformer-large"); empty for a test circuit
  int layers = 0;
  int hidden_size = 0;  // the dimensions the checkpoint holds (the machine's own when base_hidden > 0)
  // 0: a checkpoint that runs on its own. Otherwise the machine was compiled to sit after a base
  // model's `base_hidden` residual dimensions (its RMSNorm scales are those of base_hidden +
  // hidden_size), and the checkpoint holds only its own dimensions: it runs once merged.
  int base_hidden = 0;
  int intermediate_size = 0;
  std::uint64_t parameters = 0;
  std::uint64_t zero_parameters = 0;
  // Where each memory bank of the circuit lives (its GDN layer and key head), so that the machine's
  // state can be read back from a model's state (verify/machine_state.h).
  std::vector<compiler::HeadSlot> bank_heads;
  // XXH3-64 of each tensor's stored bytes, by canonical name, taken from the written file.
  std::map<std::string, std::uint64_t> tensor_digests;
};

using Progress = std::function<void(const std::string& message)>;

struct CompileOptions {
  // 0: a checkpoint that runs on its own; otherwise one to sit after a base model's dimensions.
  int base_hidden = 0;
  // How the weights are stored: every weight is a bf16 number (the compiler checks it), so BF16
  // halves the file and computes exactly what F32 does.
  engine::DType dtype = engine::DType::BF16;
};

// Places, emits and writes the machine as a checkpoint into `directory` (created atomically:
// built beside it, then renamed into place). An existing `directory` is replaced only if it is
// empty or a compiled machine.
CompiledMachineInfo compile_machine(const cpu::Machine& machine, const std::filesystem::path& directory,
                                    const Progress& progress, const CompileOptions& options = {});
// The same for any circuit (tests compile small ones).
CompiledMachineInfo compile_circuit(const circuit::Circuit& circuit, const std::filesystem::path& directory,
                                    const Progress& progress, const CompileOptions& options = {});

// Reads rvformer-machine.json; throws rvformer::Error if it is missing or malformed.
CompiledMachineInfo read_machine_info(const std::filesystem::path& directory);

// Opens the compiled machine in `directory` (described by `info`) for running, after checking every
// tensor against its recorded digest. Throws rvformer::Error "the checkpoint is damaged: ..." naming
// the tensor if one differs, or if the weights file cannot be read as a checkpoint at all.
engine::Checkpoint open_compiled_machine(const std::filesystem::path& directory, const CompiledMachineInfo& info);

// The checkpoint to run (base_hidden 0) or to merge after a base model's `base_hidden` dimensions:
// `model` if given (it must have been compiled from this machine for that target), else the cached
// one for this machine and target, compiled first if the cache lacks it. The cache lives in
// $RVFORMER_CACHE, else $XDG_CACHE_HOME/rvformer, else ~/.cache/rvformer.
std::filesystem::path machine_checkpoint(const cpu::Machine& machine, const std::optional<std::filesystem::path>& model,
                                         const Progress& progress, int base_hidden = 0);

}  // namespace rvformer::driver
