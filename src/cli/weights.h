// cli/weights.h — what `run --on weights` and `verify` share: the machine description, its compiled
// checkpoint (given or cached), and the model loaded on the chosen execution path.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cpu/machine.h"
#include "driver/compiled_machine.h"
#include "driver/model_machine.h"

namespace rvformer::cli {

struct WeightsOptions {
  std::optional<std::string> model;  // --model DIR
  std::string engine = "fast";       // --engine fast|dense
};

// Adds --model and --engine to a subcommand.
void add_weights_options(CLI::App& command, WeightsOptions& options);

struct LoadedMachine {
  std::unique_ptr<cpu::Machine> machine;
  std::filesystem::path checkpoint;
  driver::CompiledMachineInfo info;
  std::unique_ptr<engine::Model> dense;
  std::unique_ptr<engine::FastModel> fast;
  std::unique_ptr<driver::StatefulTokenMachine> token_machine;  // fresh state, ready for a program

  const engine::Config& config() const { return dense ? dense->config() : fast->config(); }
  // Replaces the token machine with one that goes on from `state` (a resumed run).
  void adopt_state(engine::State state);
};

// Finds (compiling on first use) and loads the compiled machine, printing progress on stderr.
LoadedMachine load_machine(const WeightsOptions& options);

void print_progress(const std::string& message);  // "rvformer: <message>" on stderr

}  // namespace rvformer::cli
