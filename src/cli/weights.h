// cli/weights.h — what `run --on weights` and `verify` share: the machine description, its compiled
// checkpoint (given or cached), and the model loaded on the chosen execution path.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
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
  std::uint64_t progress_seconds = 10;  // --progress N
};

// Adds --model, --engine and --progress to a subcommand.
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

// Progress of a run in the weights, which the dense path makes take minutes even for a few
// instructions: tick() after every pass; every `interval` (never, if zero) it prints
// "rvformer: <what(passes)> (P passes/s)".
class ProgressReport {
 public:
  ProgressReport(std::uint64_t interval_seconds, std::function<std::string(std::uint64_t passes)> what);
  void tick();

 private:
  using Clock = std::chrono::steady_clock;
  std::chrono::seconds interval_;
  std::function<std::string(std::uint64_t)> what_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point next_;
  std::uint64_t passes_ = 0;
};

}  // namespace rvformer::cli
