// cli/weights.cpp — see weights.h.
#include "cli/weights.h"

#include <fmt/format.h>


namespace rvformer::cli {

void print_progress(const std::string& message) { fmt::print(stderr, "rvformer: {}\n", message); }

void add_weights_options(CLI::App& command, WeightsOptions& options) {
  command.add_option("--model", options.model,
                     "Compiled machine checkpoint (default: the cached one, compiled on first use)");
  command.add_option("--engine", options.engine,
                     "Forward pass: fast (default; exact sparse executor) or dense (the reference path, slow)")
      ->check(CLI::IsMember({"fast", "dense"}));
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
