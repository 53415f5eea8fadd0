// bench/tool_call_bench.cpp — the calculator answered by a merged checkpoint's computer, as
// `rvformer chat` runs it (docs/tool-calls.md): the time and memory to load the compiled layers,
// the firmware's loading in trace tokens and seconds, then each expression's call: trace tokens,
// instructions, seconds and the answer. Memory: peak resident (VmHWM), of which the process's own
// (RssAnon) and pages of the mapped checkpoint (RssFile, reclaimable).
//
//   tool_call_bench MERGED [EXPRESSION ...]     (default: a few sizes of product and quotient)
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "toolcall/console_program.h"
#include "toolcall/merged_computer.h"
#include "toolchain/program_loader.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string resident_memory() {
  std::ifstream status("/proc/self/status");
  std::string line, found;
  while (std::getline(status, line))
    if (line.starts_with("VmHWM:") || line.starts_with("RssAnon:") || line.starts_with("RssFile:")) found += line + "  ";
  return found;
}

// A number of `digits` decimal digits, the same every run.
std::string digits_of(std::size_t digits, unsigned seed) {
  std::string text;
  for (std::size_t i = 0; i < digits; ++i) {
    seed = seed * 1103515245u + 12345u;
    text.push_back(static_cast<char>('0' + (i == 0 ? 1 + (seed >> 16) % 9 : (seed >> 16) % 10)));
  }
  return text;
}

std::vector<std::string> default_expressions() {
  std::vector<std::string> expressions;
  for (std::size_t digits : {10, 100, 1000}) {
    expressions.push_back(digits_of(digits, 1) + "*" + digits_of(digits, 2));
    expressions.push_back(digits_of(2 * digits, 3) + "//" + digits_of(digits, 4));
  }
  expressions.push_back("(2**64 - 1) * 3 / 7 + 1.25 - (10 % 4)");
  return expressions;
}

std::string shortened(const std::string& text) {
  return text.size() <= 60 ? text : fmt::format("{}…{} ({} chars)", text.substr(0, 28), text.substr(text.size() - 28), text.size());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("the calculator answered by a merged checkpoint's computer");
  std::string merged;
  std::vector<std::string> expressions;
  app.add_option("MERGED", merged, "a merged checkpoint (rvformer merge)")->required()->check(CLI::ExistingDirectory);
  app.add_option("EXPRESSION", expressions, "expressions to evaluate (default: products and quotients of 10 to 1000 digits)");
  CLI11_PARSE(app, argc, argv);
  if (expressions.empty()) expressions = default_expressions();

  Clock::time_point start = Clock::now();
  rvformer::toolcall::MergedComputer computer(merged);
  fmt::print("loaded the compiled layers in {:.1f} s; {}\n", seconds_since(start), resident_memory());
  rvformer::toolcall::ConsoleProgram calculator(
      computer, rvformer::toolchain::load_firmware("calc", computer.protocol().spec.memory_map()));
  start = Clock::now();
  const rvformer::toolcall::ConsoleAnswer started = calculator.start();
  const double start_seconds = seconds_since(start);
  fmt::print("firmware loaded and waiting: {} trace tokens, {} instructions, {:.1f} s ({:.0f} tokens/s)\n",
             started.trace_tokens, started.instructions, start_seconds, started.trace_tokens / start_seconds);
  fmt::print("{:>9} {:>12} {:>9} {:>10}  expression = answer\n", "tokens", "instructions", "seconds", "tokens/s");
  for (const std::string& expression : expressions) {
    start = Clock::now();
    const rvformer::toolcall::ConsoleAnswer answer = calculator.request(expression + "\n");
    const double s = seconds_since(start);
    std::string output = answer.output;
    if (output.ends_with('\n')) output.pop_back();
    fmt::print("{:>9} {:>12} {:>9.2f} {:>10.0f}  {} = {}{}\n", answer.trace_tokens, answer.instructions, s,
               answer.trace_tokens / s, shortened(expression), shortened(output),
               answer.failure ? " [" + *answer.failure + "]" : "");
  }
  fmt::print("{}\n", resident_memory());
  return 0;
}
