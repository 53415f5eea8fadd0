// machine_bench — the computer in the weights, program by program. Each program (default: every
// example) runs inside the compiled weights on the fast exact executor and on the golden emulator,
// whose console output and exit code it must reproduce. Prints, per program: retired instructions,
// trace tokens per instruction, the loading tokens, trace tokens/s and instructions/s in the weights,
// the non-zero weights multiplied per token against those stored, the dense reference path's
// tokens/s on a prefix of the same token stream (it must emit the same tokens) as a ratio, and the
// golden emulator's instructions/s for scale.
//
//   machine_bench [--machine rvformer|rvformer-large|rvformer-bigint] [--model DIR] [--dense-tokens N] [PROGRAM...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "driver/compiled_machine.h"
#include "driver/model_machine.h"
#include "emulator/emulator.h"
#include "isa/trap.h"
#include "program/machine_spec.h"
#include "support/error.h"
#include "toolchain/program_loader.h"
#include "toolchain/source_tree.h"

namespace {

using namespace rvformer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Ending {
  std::string console;
  std::uint32_t exit_code = 0;
  std::uint64_t instructions = 0;
  bool operator==(const Ending&) const = default;
};

struct EmulatorFigures {
  Ending ending;
  double instructions_per_second = 0;
};

// The golden machine's run; its speed is the best of three, timed without the machine's set-up.
EmulatorFigures run_on_emulator(const program::ProgramImage& image) {
  EmulatorFigures figures;
  for (int run = 0; run < 3; ++run) {
    emulator::Emulator machine(image);
    Ending ending;
    auto start = Clock::now();
    emulator::RunResult result = machine.run(20'000'000'000, [&](std::uint8_t b) { ending.console.push_back(static_cast<char>(b)); });
    double seconds = seconds_since(start);
    if (result.reason != emulator::StopReason::kExited)
      fail("the program does not exit on the golden emulator: {}", isa::describe_trap(result.trap, image.map));
    ending.exit_code = result.exit_code & 0xFF;
    ending.instructions = machine.instructions_retired();
    figures.ending = ending;
    figures.instructions_per_second =
        std::max(figures.instructions_per_second, static_cast<double>(ending.instructions) / seconds);
  }
  return figures;
}

// A token machine that remembers its first passes: the token fed and the token the model chose.
class RecordingMachine : public driver::TokenMachine {
 public:
  RecordingMachine(driver::TokenMachine& inner, std::size_t limit) : inner_(inner), limit_(limit) {}
  std::uint32_t feed(std::uint32_t token) override {
    std::uint32_t next = inner_.feed(token);
    if (passes.size() < limit_) passes.push_back({token, next});
    return next;
  }
  struct Pass {
    std::uint32_t fed, chosen;
  };
  std::vector<Pass> passes;

 private:
  driver::TokenMachine& inner_;
  std::size_t limit_;
};

struct WeightsFigures {
  Ending ending;
  std::uint64_t trace_tokens = 0;
  std::uint64_t load_tokens = 0;
  double seconds = 0;
  double weights_per_token = 0;
  std::vector<RecordingMachine::Pass> passes;
};

WeightsFigures run_in_weights(engine::FastModel& model, const program::ProgramImage& image,
                              const driver::Protocol& protocol, std::size_t recorded_passes) {
  driver::FastModelMachine fast(model);
  RecordingMachine recording(fast, recorded_passes);
  WeightsFigures figures;
  driver::RunOptions options;
  options.console = [&](std::uint8_t b) { figures.ending.console.push_back(static_cast<char>(b)); };
  model.reset_counters();
  auto start = Clock::now();
  driver::RunResult result = driver::run_program(recording, image, protocol, options);
  figures.seconds = seconds_since(start);
  if (result.end != driver::RunEnd::kExited) fail("the program did not exit inside the weights");
  figures.ending.exit_code = result.exit_code;
  figures.ending.instructions = result.instructions;
  figures.trace_tokens = result.trace_tokens;
  figures.load_tokens = result.load_tokens;
  const engine::FastCounters& counters = model.counters();
  figures.weights_per_token = static_cast<double>(counters.weights()) / static_cast<double>(counters.tokens);
  figures.passes = std::move(recording.passes);
  return figures;
}

// Replays the first `count` passes on the dense path; returns its tokens/s.
double dense_tokens_per_second(const engine::Model& dense, const std::vector<RecordingMachine::Pass>& passes,
                               std::size_t count) {
  count = std::min(count, passes.size());
  driver::ModelMachine machine(dense);
  auto start = Clock::now();
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t chosen = machine.feed(passes[i].fed);
    if (chosen != passes[i].chosen)
      fail("pass {}: the dense path chose token {}, the fast path {}", i, chosen, passes[i].chosen);
  }
  return static_cast<double>(count) / seconds_since(start);
}

struct Options {
  std::string machine{program::kDefaultMachine.name};
  std::optional<std::filesystem::path> model;
  std::size_t dense_tokens = 8;
  std::vector<std::filesystem::path> programs;
};

int run(const Options& options) {
  const std::optional<program::MachineSpec> spec = program::find_machine_spec(options.machine);
  if (!spec) fail("no machine called '{}'", options.machine);
  auto machine = cpu::build_machine(*spec);
  const driver::Protocol protocol(*spec);
  auto progress = [](const std::string& message) { fmt::print(stderr, "machine_bench: {}\n", message); };
  std::filesystem::path checkpoint = driver::machine_checkpoint(*machine, options.model, progress);
  progress("loading " + checkpoint.string());
  engine::FastModel fast = engine::FastModel::load(checkpoint);
  std::optional<engine::Model> dense;
  if (options.dense_tokens > 0) dense = engine::Model::load(checkpoint);
  std::vector<std::filesystem::path> programs = options.programs.empty() ? toolchain::example_programs() : options.programs;

  fmt::print("{:<15} {:>9} {:>7} {:>6} {:>9} {:>9} {:>12} {:>9} {:>12} {:>6}\n", "program", "instr", "tok/ins",
             "load", "tok/s", "instr/s", "weights/tok", "dense x", "emu instr/s", "same");
  std::uint64_t instructions = 0, trace_tokens = 0, load_tokens = 0;
  double seconds = 0, tokens_per_instruction_sum = 0;
  int mismatches = 0;
  for (const std::filesystem::path& path : programs) {
    program::ProgramImage image = toolchain::load_program(path, spec->memory_map());
    EmulatorFigures golden = run_on_emulator(image);
    WeightsFigures weights = run_in_weights(fast, image, protocol, options.dense_tokens);
    const bool same = weights.ending == golden.ending;
    mismatches += same ? 0 : 1;
    const double passes = static_cast<double>(weights.trace_tokens + weights.load_tokens);
    const double tokens_per_second = passes / weights.seconds;
    const double per_instruction = static_cast<double>(weights.trace_tokens) / static_cast<double>(weights.ending.instructions);
    std::string dense_ratio = "-";
    if (dense) dense_ratio = fmt::format("{:.0f}", tokens_per_second / dense_tokens_per_second(*dense, weights.passes, options.dense_tokens));
    fmt::print("{:<15} {:>9} {:>7.4f} {:>6} {:>9.0f} {:>9.0f} {:>12.0f} {:>9} {:>12.3g} {:>6}\n", path.stem().string(),
               weights.ending.instructions, per_instruction, weights.load_tokens, tokens_per_second,
               static_cast<double>(weights.ending.instructions) / weights.seconds, weights.weights_per_token,
               dense_ratio, golden.instructions_per_second, same ? "yes" : "NO");
    std::fflush(stdout);
    instructions += weights.ending.instructions;
    trace_tokens += weights.trace_tokens;
    load_tokens += weights.load_tokens;
    seconds += weights.seconds;
    tokens_per_instruction_sum += per_instruction;
  }
  fmt::print("all {} programs: {} instructions, {} trace + {} loading tokens in {:.1f} s = {:.0f} tokens/s, {:.0f} "
             "instructions/s; trace tokens per instruction {:.4f} overall, {:.4f} averaged over programs; "
             "{} stored non-zero weights; {} program(s) differ from the emulator\n",
             programs.size(), instructions, trace_tokens, load_tokens, seconds,
             static_cast<double>(trace_tokens + load_tokens) / seconds, static_cast<double>(instructions) / seconds,
             static_cast<double>(trace_tokens) / static_cast<double>(instructions),
             tokens_per_instruction_sum / static_cast<double>(programs.size()), fast.weight_count(), mismatches);
  return mismatches == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Runs programs inside the compiled weights and prints trace speed and shape figures"};
  Options options;
  app.add_option("--machine", options.machine, "rvformer (default), rvformer-large or rvformer-bigint");
  app.add_option("--model", options.model, "Compiled machine checkpoint (default: the cached one)");
  app.add_option("--dense-tokens", options.dense_tokens,
                 "Passes per program replayed on the dense reference path to measure its speed (0: skip)");
  app.add_option("PROGRAM", options.programs, "C sources or ELF files (default: every program in examples/)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const rvformer::Error& error) {
    fmt::print(stderr, "machine_bench: error: {}\n", error.what());
    return 2;
  }
}
