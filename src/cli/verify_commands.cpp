// cli/verify_commands.cpp — `rvformer verify`: a program run inside the weights in lockstep with the
// golden emulator, comparing PC, registers and stored memory words decoded from the GDN state.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/weights.h"
#include "cli/whole_number_option.h"
#include "driver/run_checkpoint.h"
#include "driver/trace_protocol.h"
#include "support/error.h"
#include "program/machine_spec.h"
#include "support/file.h"
#include "toolchain/program_loader.h"
#include "toolchain/source_tree.h"
#include "verify/lockstep.h"

namespace rvformer::cli {
namespace {

struct VerifyOptions {
  std::string program;
  bool free_run = false;
  std::uint64_t check_every = 1;
  std::uint64_t max_instructions = ~std::uint64_t{0};
  std::optional<std::filesystem::path> checkpoint;
  std::uint64_t checkpoint_every = 1'000'000;
  WeightsOptions weights;
  std::optional<std::string> input;
  std::optional<std::string> weight_memory;
};

// With --checkpoint FILE: an existing FILE is where the run goes on from (it must belong to this
// machine and this program); the run then saves FILE every --checkpoint-every instructions.
void set_up_checkpoints(const VerifyOptions& options, const program::ProgramImage& image, LoadedMachine& loaded,
                        verify::LockstepOptions& lockstep) {
  if (!options.checkpoint) return;
  const std::filesystem::path& file = *options.checkpoint;
  const std::uint64_t digest = driver::program_digest(image, driver::Protocol(loaded.machine->spec));
  if (std::filesystem::exists(file)) {
    auto [checkpoint, state] = driver::read_run_checkpoint(file, loaded.config());
    if (checkpoint.machine_fingerprint != loaded.info.fingerprint)
      fail("{}: the checkpoint belongs to another compiled machine (fingerprint {:016x}, this one {:016x})",
           file.string(), checkpoint.machine_fingerprint, loaded.info.fingerprint);
    if (checkpoint.program_digest != digest) fail("{}: the checkpoint belongs to another program", file.string());
    print_progress(fmt::format("resuming from {} at {} instructions", file.string(), checkpoint.position.instructions));
    lockstep.resume_from = checkpoint.position;
    loaded.adopt_state(std::move(state));
  }
  lockstep.checkpoint_every = options.checkpoint_every;
  lockstep.checkpoint = [&loaded, file, digest](const driver::RunPosition& position) {
    driver::save_run_checkpoint(file, {position, loaded.info.fingerprint, digest}, loaded.token_machine->state());
    print_progress(fmt::format("checkpoint at {} instructions saved to {}", position.instructions, file.string()));
  };
}

// A checkpoint that exists is read (after the model loads), one that does not will be written: either
// way a path that cannot serve is refused before the long work.
void check_checkpoint_path(const std::filesystem::path& file) {
  std::error_code error;
  if (std::filesystem::symlink_status(file, error).type() == std::filesystem::file_type::not_found)
    check_output_file(file);
  else
    check_input_file(file);
}

int verify_command(const VerifyOptions& options) {
  if (options.checkpoint) check_checkpoint_path(*options.checkpoint);
  std::filesystem::path program =
      options.program.empty() ? toolchain::default_program() : std::filesystem::path(options.program);
  const program::MachineSpec spec = machine_spec(options.weights.machine);
  program::ProgramImage image = toolchain::load_program(program, spec.memory_map());
  add_weight_memory(image, options.weight_memory);
  driver::program_load_tokens(image, driver::Protocol(spec));  // a bad image fails before the long model work
  ConsoleInput input(options.input);
  LoadedMachine loaded = load_machine(options.weights);

  auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  verify::LockstepOptions lockstep;
  lockstep.free_run = options.free_run;
  lockstep.check_every = options.check_every;
  lockstep.max_instructions = options.max_instructions;
  lockstep.input = [&input] { return input.next(); };
  lockstep.console = [](std::uint8_t byte) {
    std::fputc(byte, stdout);
    if (byte == '\n') std::fflush(stdout);
  };
  std::uint64_t clean = 0;
  ProgressReport progress(options.weights.progress_seconds,
                          [&](std::uint64_t passes) { return fmt::format("{} instructions clean, {} passes", clean, passes); });
  lockstep.progress = [&](std::uint64_t instructions) {
    clean = instructions;
    progress.tick();
  };
  set_up_checkpoints(options, image, loaded, lockstep);
  verify::LockstepReport report = verify::run_lockstep(*loaded.machine, loaded.info.bank_heads, *loaded.token_machine, image, lockstep);
  std::fflush(stdout);
  std::string mode = options.free_run ? "free run" : "lockstep";
  if (report.difference) {
    fmt::print(stderr, "rvformer: {} difference {}\n", mode, *report.difference);
    return exit_status::kDifference;
  }
  fmt::print(stderr, "rvformer: {} clean: {} instructions, {} state checks, ended with {} ({:.1f} s)\n", mode,
             report.instructions, report.checks, report.ending, seconds());
  return 0;
}

}  // namespace

void add_verify_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<VerifyOptions>();
  CLI::App* verify = app.add_subcommand(
      "verify", "Run a program inside the weights in lockstep with the golden emulator, comparing machine state");
  verify->add_option("PROGRAM", options->program, "C source (compiled with -O2) or ELF executable; default examples/hello.c");
  verify->add_flag("--free-run", options->free_run,
                   "Compare only console output, exit status or trap, and the final registers");
  add_whole_number_option(*verify, "--check-every", options->check_every,
                          "Compare PC and registers after every N retired instructions (default 1)", 1);
  add_whole_number_option(*verify, "--max-instructions", options->max_instructions, "Stop (cleanly) after N instructions");
  verify->add_option("--checkpoint", options->checkpoint,
                     "Save the run to FILE as it goes (atomically), and go on from FILE if it exists");
  add_whole_number_option(*verify, "--checkpoint-every", options->checkpoint_every,
                          "Instructions between checkpoints (default 1000000)", 1);
  add_weights_options(*verify, options->weights);
  add_input_option(*verify, options->input);
  add_weight_memory_option(*verify, options->weight_memory);
  verify->callback([options, &action] { action = [options] { return verify_command(*options); }; });
}

}  // namespace rvformer::cli
