// cli/weights.cpp — see weights.h.
#include "cli/weights.h"

#include <fmt/format.h>

#include "cli/whole_number_option.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::cli {

void print_progress(const std::string& message) { fmt::print(stderr, "rvformer: {}\n", message); }

void add_machine_option(CLI::App& command, std::string& name) {
  std::vector<std::string> names;
  for (const program::MachineSpec& spec : program::kMachineSpecs) names.emplace_back(spec.name);
  command
      .add_option("--machine", name,
                  "Which machine: rvformer (default; 256 KB code, 128 KB read-only data, 32 KB RAM), "
                  "rvformer-large (512 KB code, 128 KB RAM), rvformer-bigint (the default memories and the "
                  "big-integer unit, docs/bigint-unit.md) or rvformer-vector (the default memories and the vector "
                  "unit, docs/vector-unit.md)")
      ->check(CLI::IsMember(names));
}

program::MachineSpec machine_spec(const std::string& name) {
  std::optional<program::MachineSpec> spec = program::find_machine_spec(name);
  if (!spec) fail("no machine called '{}'", name);
  return *spec;
}

ConsoleInput::ConsoleInput(const std::optional<std::string>& path) : file_(stdin, [](std::FILE*) { return 0; }) {
  if (!path) return;
  check_input_file(*path);
  file_ = {std::fopen(path->c_str(), "rb"), std::fclose};
  if (!file_) fail("cannot read the console input {}", *path);
}

int ConsoleInput::next() {
  int c = std::fgetc(file_.get());
  return c == EOF ? -1 : c;
}

void add_input_option(CLI::App& command, std::optional<std::string>& path) {
  command.add_option("--input", path, "Console input (getchar, read(0)) from FILE instead of standard input");
}

void add_weight_memory_option(CLI::App& command, std::optional<std::string>& path) {
  command
      .add_option("--weight-memory", path,
                  "On the rvformer-vector machine: FILE's bytes as the vector unit's weight memory from byte 0, "
                  "as the image loader places them (e.g. a blob from `rvformer story --write-blob`)")
      ->option_text("FILE");
}

void add_weight_memory(program::ProgramImage& image, const std::optional<std::string>& path) {
  if (!path) return;
  if (!image.map.vector_unit)
    fail("--weight-memory fills the vector unit's weight memory, which only the rvformer-vector machine has "
         "(--machine rvformer-vector)");
  image.weights = read_file_bytes(*path);
}

void add_weights_options(CLI::App& command, WeightsOptions& options) {
  add_machine_option(command, options.machine);
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
  loaded.machine = cpu::build_machine(machine_spec(options.machine));
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
