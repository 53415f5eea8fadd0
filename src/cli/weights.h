// cli/weights.h — what `run` and `verify` share: the machine description, its compiled checkpoint
// (given or cached), the model loaded on the chosen execution path, the program's console input and
// the vector unit's weight memory.
#pragma once

#include <chrono>
#include <cstdio>
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
#include "program/machine_spec.h"
#include "program/program_image.h"

namespace rvformer::cli {

struct WeightsOptions {
  std::string machine{program::kDefaultMachine.name};  // --machine NAME: which MachineSpec
  std::optional<std::string> model;  // --model DIR
  std::string engine = "fast";       // --engine fast|dense
  std::uint64_t progress_seconds = 10;  // --progress N
};

// Adds --machine NAME (one of program::kMachineSpecs) to a subcommand.
void add_machine_option(CLI::App& command, std::string& name);
// The spec `add_machine_option` accepted.
program::MachineSpec machine_spec(const std::string& name);

// The program's console input: bytes of --input FILE or of standard input, read only when the
// program asks for one.
class ConsoleInput {
 public:
  // Throws rvformer::Error if `path` cannot be opened.
  explicit ConsoleInput(const std::optional<std::string>& path);
  int next();  // the next byte, or -1 at the end

 private:
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
};

// Adds --input FILE: console input from FILE instead of standard input.
void add_input_option(CLI::App& command, std::optional<std::string>& path);

// Adds --weight-memory FILE: the image's vector unit weight memory from FILE.
void add_weight_memory_option(CLI::App& command, std::optional<std::string>& path);
// Puts FILE's bytes into `image` as its weight memory; fails with one line when the image's map has
// no vector unit.
void add_weight_memory(program::ProgramImage& image, const std::optional<std::string>& path);

// Adds --machine, --model, --engine and --progress to a subcommand.
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
