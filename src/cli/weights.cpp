// cli/weights.cpp — see weights.h.
#include "cli/weights.h"

#include <fmt/format.h>

#include "cli/whole_number_option.h"

namespace rvformer::cli {

void print_progress(const std::string& message) { fmt::print(stderr, "rvformer: {}\n", message); }

void add_weights_options(CLI::App& command, WeightsOptions& options) {
  command.add_option("--model", options.model,
                     "Compiled machine checkpoint (default: the cached one, compiled on first use)");
  command.add_option("--engine", options.engine,
                     "Forward pass: fast (default; exact sparse executor) or dense (the reference path, slow)")
      ->check(CLI::IsMember({"fast", "dense"}));
  add_whole_number_option(command, "--progress", options.progress_seconds,
                          "Report progress on stderr every N seconds of a run (default 10; 0: never)");
}

ProgressReport::ProgressReport(std::uint64_t interval_seconds, std::function<std::string(std::uint64_t)> what)
    : interval_(static_cast<std::chrono::seconds::rep>(interval_seconds)), what_(std::move(what)),
      next_(start_ + interval_) {}

void ProgressReport::tick() {
  ++passes_;
  if (interval_.count() == 0) return;
  const Clock::time_point now = Clock::now();
  if (now < next_) return;
  next_ = now + interval_;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  print_progress(fmt::format("{} ({:.0f} passes/s)", what_(passes_), static_cast<double>(passes_) / seconds));
}

LoadedMachine load_machine(const WeightsOptions& options) {
  LoadedMachine loaded;
  loaded.machine = cpu::build_machine();
  std::optional<std::filesystem::path> model_dir;
  if (options.model) model_dir = *options.model;
  loaded.checkpoint = driver::machine_checkpoint(*loaded.machine, model_dir, print_progress);
  loaded.info = driver::read_machine_info(loaded.checkpoint);
  print_progress(fmt::format("loading {} ({} path)", loaded.checkpoint.string(), options.engine));
  const engine::Checkpoint checkpoint = driver::open_compiled_machine(loaded.checkpoint, loaded.info);
  if (options.engine == "dense") {
    loaded.dense = std::make_unique<engine::Model>(checkpoint);
    loaded.token_machine = std::make_unique<driver::ModelMachine>(*loaded.dense);
  } else {
    loaded.fast = std::make_unique<engine::FastModel>(checkpoint);
    loaded.token_machine = std::make_unique<driver::FastModelMachine>(*loaded.fast);
  }
  return loaded;
}

void LoadedMachine::adopt_state(engine::State state) {
  if (dense)
    token_machine = std::make_unique<driver::ModelMachine>(*dense, std::move(state));
  else
    token_machine = std::make_unique<driver::FastModelMachine>(*fast, std::move(state));
}

}  // namespace rvformer::cli
