// cli/program_commands.cpp — `rvformer run` (run a C or assembly program, or an ELF) and
// `rvformer cc` (compile programs for the machine).
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/program_run.h"
#include "cli/weights.h"
#include "cli/whole_number_option.h"
#include "driver/trace_protocol.h"
#include "emulator/emulator.h"
#include "isa/trap.h"
#include "program/machine_spec.h"
#include "support/error.h"
#include "support/file.h"
#include "toolchain/compiler.h"
#include "toolchain/micropython.h"
#include "toolchain/program_loader.h"
#include "toolchain/source_tree.h"

namespace rvformer::cli {
namespace {

struct RunOptions {
  std::string program;
  std::optional<std::string> code;  // -c CODE: a Python one-liner instead of a program
  bool machine_given = false;       // --machine was on the command line
  ProgramRunOptions run;
  std::optional<std::string> input;  // --input FILE: console input instead of standard input
  std::optional<std::string> target;  // --target NAME: a memory map for the emulator instead of the machine's
  std::optional<std::string> weight_memory;  // --weight-memory FILE: the vector unit's weight memory
};

struct CompileCommandOptions {
  std::vector<std::string> sources;
  std::string output;
  int optimization_level = 2;
  std::string target = std::string(program::kRvformerMap.name);
  bool verbose = false;
};

struct RunStats {
  std::string on;
  std::uint64_t instructions;
  double seconds;
  std::optional<std::uint32_t> exit_code;
  std::optional<driver::RunResult> trace;  // when run in the weights
  ExtraStats extra;
};

void print_stats(const RunStats& stats) {
  double rate = stats.seconds > 0 ? static_cast<double>(stats.instructions) / stats.seconds : 0;
  std::string exit_code = stats.exit_code ? fmt::format("{}", *stats.exit_code) : "null";
  std::string trace;
  if (stats.trace) {
    double per_instruction = stats.instructions ? static_cast<double>(stats.trace->trace_tokens) / stats.instructions : 0;
    // Every forward pass counts towards the speed: loading tokens too, as they are timed with the run.
    std::uint64_t passes = stats.trace->trace_tokens + stats.trace->load_tokens;
    trace = fmt::format(", \"trace_tokens\": {}, \"load_tokens\": {}, \"trace_tokens_per_instruction\": {:.4f}, "
                        "\"tokens_per_second\": {:.1f}",
                        stats.trace->trace_tokens, stats.trace->load_tokens, per_instruction,
                        stats.seconds > 0 ? static_cast<double>(passes) / stats.seconds : 0);
  }
  std::string extra;
  if (stats.extra)
    for (const auto& [name, value] : stats.extra()) {
      const auto* word = std::get_if<std::string>(&value);
      extra += word ? fmt::format(", \"{}\": \"{}\"", name, *word)
                    : fmt::format(", \"{}\": {}", name, std::get<std::uint64_t>(value));
    }
  fmt::print(stderr,
             "{{\"on\": \"{}\", \"instructions\": {}{}, \"seconds\": {:.6f}, "
             "\"instructions_per_second\": {:.0f}{}, \"exit_code\": {}}}\n",
             stats.on, stats.instructions, extra, stats.seconds, rate, trace, exit_code);
}

// Why a run did not end with the program's own exit, and the status that says so.
struct Failure {
  int status;
  std::string message;
};

std::optional<Failure> run_failure(const emulator::RunResult& result, const emulator::Emulator& machine) {
  switch (result.reason) {
    case emulator::StopReason::kExited: return std::nullopt;
    case emulator::StopReason::kTrapped:
      return Failure{exit_status::kTrapped, isa::trapped_message(result.trap, machine.map())};
    case emulator::StopReason::kInstructionLimit:
      return Failure{exit_status::kInstructionLimit,
                     isa::instruction_limit_message(machine.instructions_retired(), machine.pc())};
  }
  return std::nullopt;
}

std::optional<Failure> run_failure(const driver::RunResult& result, const program::ProgramImage& image,
                                   const driver::Protocol& protocol) {
  switch (result.end) {
    case driver::RunEnd::kExited: return std::nullopt;
    case driver::RunEnd::kTrapped:
      return Failure{exit_status::kTrapped, driver::trapped_message(result.trap, image.map, protocol)};
    case driver::RunEnd::kInstructionLimit:
      return Failure{exit_status::kInstructionLimit, isa::instruction_limit_message(result.instructions,
                                                 driver::next_instruction_address(result.position, protocol))};
    case driver::RunEnd::kStopped:
    case driver::RunEnd::kAwaitingInput: break;  // neither happens: nothing stops the run, input never waits
  }
  fail("the run in the weights stopped without a reason");
}

// Reports how the run ended (the failure printed here rather than thrown, so that --stats stays the
// last line of stderr) and returns the process status: the failure's, or the program's own exit
// status (isa::exit_status, as POSIX exit() keeps it).
int end_run(const std::optional<Failure>& failure, std::uint32_t exit_code, RunStats stats, bool print) {
  std::fflush(stdout);
  if (failure) fmt::print(stderr, "rvformer: error: {}\n", failure->message);
  if (!failure) stats.exit_code = isa::exit_status(exit_code);
  if (print) print_stats(stats);
  return failure ? failure->status : isa::exit_status(exit_code);
}

int run_on_emulator(const program::ProgramImage& image, const ProgramRunOptions& options,
                    const ProgramConsole& console, const ExtraStats& extra_stats) {
  emulator::Emulator machine(image);
  machine.set_input(console.input);
  auto start = std::chrono::steady_clock::now();
  emulator::RunResult result =
      machine.run(options.max_instructions.value_or(std::numeric_limits<std::uint64_t>::max()), console.output);
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return end_run(run_failure(result, machine), result.exit_code,
                 {.on = "emulator", .instructions = machine.instructions_retired(), .seconds = elapsed.count(),
                  .exit_code = std::nullopt, .trace = std::nullopt, .extra = extra_stats},
                 options.stats);
}

int run_in_weights(const program::ProgramImage& image, const ProgramRunOptions& options,
                   const ProgramConsole& console, const ExtraStats& extra_stats) {
  // Check the image before the long model work: a bad image fails in a second.
  driver::Protocol protocol(machine_spec(options.weights.machine));
  driver::program_load_tokens(image, protocol);
  LoadedMachine loaded = load_machine(options.weights);

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> dump(nullptr, std::fclose);
  if (options.dump_trace) {
    dump.reset(std::fopen(options.dump_trace->c_str(), "w"));
    if (!dump) fail("cannot write {}: {}", *options.dump_trace, std::strerror(errno));
  }
  driver::RunOptions run;
  run.max_instructions = options.max_instructions.value_or(std::numeric_limits<std::uint64_t>::max());
  run.console = console.output;
  run.input = console.input;
  std::uint64_t retired = 0;
  ProgressReport progress(options.weights.progress_seconds,
                          [&](std::uint64_t passes) { return fmt::format("{} instructions, {} passes", retired, passes); });
  run.on_token = [&](std::uint32_t token) {
    if (dump) fmt::print(dump.get(), "{}\n", token);
    progress.tick();
  };
  run.on_retired = [&](std::uint64_t instructions) {
    retired = instructions;
    return true;
  };
  auto start = std::chrono::steady_clock::now();
  driver::RunResult result = driver::run_program(*loaded.token_machine, image, protocol, run);
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return end_run(run_failure(result, image, protocol), result.exit_code,
                 {.on = "weights", .instructions = result.instructions, .seconds = elapsed.count(),
                  .exit_code = std::nullopt, .trace = result, .extra = extra_stats},
                 options.stats);
}

// Python runs on the large machine (the interpreter needs its 128 KB of RAM): chosen unless
// --machine names it already, refused when --machine names another.
RunOptions with_python_machine(RunOptions options) {
  const std::string_view large = program::kLargeMachine.name;
  if (options.machine_given && options.run.weights.machine != large) {
    fail("Python scripts run on the {} machine (MicroPython needs its 128 KB of RAM), not on {}; "
         "leave out --machine or give --machine {}", large, options.run.weights.machine, large);
  }
  options.run.weights.machine = std::string(large);
  return options;
}

int run_python(const toolchain::PythonScript& script, const RunOptions& given, const ProgramConsole& console) {
  RunOptions options = with_python_machine(given);
  program::ProgramImage image =
      toolchain::load_python_program(script, machine_spec(options.run.weights.machine).memory_map());
  return run_program_image(image, options.run, console);
}

// The map a C program or ELF runs on: the machine's, or the --target map on the emulator.
program::MemoryMap program_map(const RunOptions& options) {
  if (!options.target) return machine_spec(options.run.weights.machine).memory_map();
  if (options.run.on != "emulator" || options.machine_given)
    fail("--target runs a program on the golden emulator (--on emulator), without --machine");
  return program::find_memory_map(*options.target).value();
}

int run_command(const RunOptions& options) {
  check_program_run_options(options.run);
  if (options.code && !options.program.empty()) fail("give a program or -c CODE, not both");
  if (options.target && (options.code || toolchain::is_python_script(options.program)))
    fail("--target applies to C programs and ELF files, not to Python scripts");
  ConsoleInput input(options.input);
  const ProgramConsole console{[&input] { return input.next(); }, write_console_byte};
  if (options.code) return run_python({.name = "<string>", .text = *options.code}, options, console);
  std::filesystem::path program =
      options.program.empty() ? toolchain::default_program() : std::filesystem::path(options.program);
  if (toolchain::is_python_script(program)) return run_python(toolchain::read_python_script(program), options, console);
  program::ProgramImage image = toolchain::load_program(program, program_map(options));
  add_weight_memory(image, options.weight_memory);
  return run_program_image(image, options.run, console);
}

int compile_command(const CompileCommandOptions& options) {
  std::optional<program::MemoryMap> map = program::find_memory_map(options.target);
  toolchain::compile_program({.sources = {options.sources.begin(), options.sources.end()},
                              .output = options.output,
                              .optimization_level = options.optimization_level,
                              .map = map.value(),
                              .verbose = options.verbose});
  return 0;
}

// The names `--target` accepts.
std::vector<std::string> memory_map_names() {
  std::vector<std::string> names;
  for (const program::MemoryMap& map : program::kMemoryMaps) names.emplace_back(map.name);
  return names;
}

void add_run_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "Run a RISC-V program (a .c file or an ELF) or a Python script");
  run->add_option("PROGRAM", options->program,
                  "C source (compiled with -O2), ELF executable or Python script (.py, run by MicroPython "
                  "on the rvformer-large machine); default examples/hello.c");
  run->add_option("-c", options->code, "Run the Python code CODE (like python3 -c)")->option_text("CODE");
  add_program_run_options(*run, options->run);
  add_input_option(*run, options->input);
  run->add_option("--target", options->target,
                  "On the emulator: the memory map `rvformer cc --target` linked the program for "
                  "(e.g. emulator-1m), instead of the machine's")
      ->check(CLI::IsMember(memory_map_names()));
  add_weight_memory_option(*run, options->weight_memory);
  run->callback([options, run, &action] {
    options->machine_given = run->get_option("--machine")->count() > 0;
    action = [options] { return run_command(*options); };
  });
}

void add_compile_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<CompileCommandOptions>();
  CLI::App* cc = app.add_subcommand("cc", "Compile and link C programs for the rvformer machine");
  cc->add_option("FILE", options->sources, "C or assembly sources")->required();
  cc->add_option("-o", options->output, "Output ELF file")->required();
  add_whole_number_option(*cc, "-O", options->optimization_level, "Optimisation level 0-3 (default 2)", 0, 3);
  cc->add_option("--target", options->target,
                 "Memory map: rvformer (default), rvformer-large, rvformer-bigint, rvformer-vector (the vector unit: "
                 "vu.wget in the weights, every vu.* instruction on the golden emulator), qemu-virt (QEMU's virt "
                 "machine) or emulator-1m (1 MB of RAM, the golden emulator only)")
      ->check(CLI::IsMember(memory_map_names()));
  cc->add_flag("-v,--verbose", options->verbose, "Print the compiler commands");
  cc->callback([options, &action] { action = [options] { return compile_command(*options); }; });
}

}  // namespace

void write_console_byte(std::uint8_t byte) {
  std::fputc(byte, stdout);
  if (byte == '\n') std::fflush(stdout);
}

void add_program_run_options(CLI::App& command, ProgramRunOptions& options) {
  command.add_option("--on", options.on, "Where to run it: weights (default; inside the compiled model) or emulator")
      ->check(CLI::IsMember({"emulator", "weights"}));
  command.add_flag("--stats", options.stats, "Print instructions and seconds as one JSON line, the last line of stderr");
  add_whole_number_option(command, "--max-instructions", options.max_instructions,
                          "Stop with an error after N instructions");
  add_weights_options(command, options.weights);
  command.add_option("--dump-trace", options.dump_trace,
                     "Write every token fed to the model (loading included), one id per line, to FILE");
}

void check_program_run_options(const ProgramRunOptions& options) {
  if (options.on != "weights" && (options.weights.model || options.dump_trace || options.weights.engine != "fast"))
    fail("--model, --engine and --dump-trace apply to runs in the weights (--on weights)");
  if (options.dump_trace) check_output_file(*options.dump_trace);
}

int run_program_image(const program::ProgramImage& image, const ProgramRunOptions& options,
                      const ProgramConsole& console, const ExtraStats& extra_stats) {
  return options.on == "weights" ? run_in_weights(image, options, console, extra_stats)
                                 : run_on_emulator(image, options, console, extra_stats);
}

void add_program_commands(CLI::App& app, Action& action) {
  add_run_command(app, action);
  add_compile_command(app, action);
}

}  // namespace rvformer::cli
