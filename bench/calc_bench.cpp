// calc_bench — the calculator firmware (firmware/calc/) per call: one expression fed as console
// input, the whole run timed (start-up, reading, evaluating, printing). For 10-, 100- and 1000-digit
// operands (--digits): a product, an exact quotient a / b (reduced with a gcd), a floor quotient of a
// 2n-digit by an n-digit number, and a mixed expression (a + b) * c - d / e. Prints the golden
// emulator's instructions and microseconds, and inside the compiled weights (fast exact executor) the
// instructions, trace tokens (the run proper), loading tokens and seconds; the answers must match.
//
//   calc_bench [--machine NAME] [--model DIR] [--digits 10,100,1000] [--cases mul,div,floordiv,mixed]
//              [--weights-limit INSTRUCTIONS]
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
#include "program/machine_spec.h"
#include "support/error.h"
#include "toolchain/program_loader.h"

namespace {

using namespace rvformer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Deterministic n-digit numbers (no leading zero).
class Digits {
 public:
  std::string number(int digits) {
    std::string text;
    for (int i = 0; i < digits; ++i) text.push_back(static_cast<char>('0' + (i == 0 ? 1 + next() % 9 : next() % 10)));
    return text;
  }

 private:
  std::uint32_t next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state_ >> 33);
  }
  std::uint64_t state_ = 2024;
};

struct Case {
  std::string name;
  std::string expression;
};

std::vector<Case> cases(int digits, Digits& random) {
  auto n = [&] { return random.number(digits); };
  return {
      {fmt::format("mul {}", digits), n() + "*" + n()},
      {fmt::format("div {}", digits), n() + "/" + n()},
      {fmt::format("floordiv {}", digits), n() + n() + "//" + n()},
      {fmt::format("mixed {}", digits), "(" + n() + "+" + n() + ")*" + n() + "-" + n() + "/" + n()},
  };
}

struct Run {
  std::string answer;
  std::uint64_t instructions = 0;
  std::uint64_t trace_tokens = 0;
  std::uint64_t load_tokens = 0;
  double seconds = 0;
};

Run on_emulator(const program::ProgramImage& image, const std::string& expression) {
  emulator::Emulator machine(image);
  machine.set_input(emulator::text_input(expression + "\n"));
  Run run;
  auto start = Clock::now();
  emulator::RunResult result = machine.run(20'000'000'000, [&](std::uint8_t b) { run.answer.push_back(static_cast<char>(b)); });
  run.seconds = seconds_since(start);
  if (result.reason != emulator::StopReason::kExited) fail("the calculator did not exit on the emulator");
  run.instructions = machine.instructions_retired();
  return run;
}

Run in_weights(engine::FastModel& model, const program::ProgramImage& image, const driver::Protocol& protocol,
               const std::string& expression) {
  driver::FastModelMachine machine(model);
  Run run;
  driver::RunOptions options;
  options.console = [&](std::uint8_t b) { run.answer.push_back(static_cast<char>(b)); };
  options.input = emulator::text_input(expression + "\n");
  auto start = Clock::now();
  driver::RunResult result = driver::run_program(machine, image, protocol, options);
  run.seconds = seconds_since(start);
  if (result.end != driver::RunEnd::kExited) fail("the calculator did not exit inside the weights");
  run.instructions = result.instructions;
  run.trace_tokens = result.trace_tokens;
  run.load_tokens = result.load_tokens;
  return run;
}

struct Options {
  std::string machine{program::kDefaultMachine.name};
  std::optional<std::filesystem::path> model;
  std::vector<int> digits = {10, 100, 1000};
  std::uint64_t weights_limit = 1'000'000;
  std::vector<std::string> kinds = {"mul", "div", "floordiv", "mixed"};
};

int run(const Options& options) {
  const std::optional<program::MachineSpec> spec = program::find_machine_spec(options.machine);
  if (!spec) fail("no machine called '{}'", options.machine);
  const program::ProgramImage image = toolchain::load_firmware("calc", spec->memory_map());
  auto machine = cpu::build_machine(*spec);
  const driver::Protocol protocol(*spec);
  auto progress = [](const std::string& message) { fmt::print(stderr, "calc_bench: {}\n", message); };
  std::filesystem::path checkpoint = driver::machine_checkpoint(*machine, options.model, progress);
  progress("loading " + checkpoint.string());
  engine::FastModel fast = engine::FastModel::load(checkpoint);

  fmt::print("{:<14} {:>10} {:>9} | {:>10} {:>11} {:>7} {:>8} {:>9} {:>6}\n", "case", "emu instr", "emu us",
             "instr", "trace tok", "tok/ins", "load tok", "seconds", "same");
  Digits random;
  int mismatches = 0;
  for (int digits : options.digits) {
    for (const Case& c : cases(digits, random)) {
      if (std::find(options.kinds.begin(), options.kinds.end(), c.name.substr(0, c.name.find(' '))) ==
          options.kinds.end())
        continue;
      Run golden = on_emulator(image, c.expression);
      if (golden.answer.starts_with("error")) fail("{}: {}", c.name, golden.answer);
      if (golden.instructions > options.weights_limit) {
        fmt::print("{:<14} {:>10} {:>9.0f} | {:>10} (over --weights-limit: not run in the weights)\n", c.name,
                   golden.instructions, golden.seconds * 1e6, "-");
        continue;
      }
      Run weights = in_weights(fast, image, protocol, c.expression);
      const bool same = weights.answer == golden.answer && weights.instructions == golden.instructions;
      mismatches += same ? 0 : 1;
      fmt::print("{:<14} {:>10} {:>9.0f} | {:>10} {:>11} {:>7.3f} {:>8} {:>9.1f} {:>6}\n", c.name, golden.instructions,
                 golden.seconds * 1e6, weights.instructions, weights.trace_tokens,
                 static_cast<double>(weights.trace_tokens) / static_cast<double>(weights.instructions),
                 weights.load_tokens, weights.seconds, same ? "yes" : "NO");
      std::fflush(stdout);
    }
  }
  return mismatches == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The calculator firmware per call: instructions, trace tokens and seconds in the weights and on the emulator"};
  Options options;
  app.add_option("--machine", options.machine, "rvformer (default), rvformer-large or rvformer-bigint");
  app.add_option("--model", options.model, "Compiled machine checkpoint (default: the cached one)");
  app.add_option("--digits", options.digits, "Operand lengths (default 10,100,1000)")->delimiter(',');
  app.add_option("--weights-limit", options.weights_limit,
                 "Run in the weights only the cases of at most this many instructions (default 1000000)");
  app.add_option("--cases", options.kinds, "Which of mul, div, floordiv, mixed (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"mul", "div", "floordiv", "mixed"}));
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const rvformer::Error& error) {
    fmt::print(stderr, "calc_bench: error: {}\n", error.what());
    return 2;
  }
}
