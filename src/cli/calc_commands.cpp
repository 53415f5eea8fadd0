// cli/calc_commands.cpp — `rvformer calc`: the calculator firmware (firmware/calc/) run inside the
// weights or on the golden emulator, fed an expression (or standard input) as console input.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/program_run.h"
#include "emulator/emulator.h"
#include "toolchain/program_loader.h"

namespace rvformer::cli {
namespace {

struct CalcOptions {
  std::optional<std::string> expression;  // absent or "-": standard input, one expression a line
  ProgramRunOptions run;
};

// Console input: the expression and its newline, or standard input.
std::function<int()> calc_input(const CalcOptions& options) {
  if (!options.expression || *options.expression == "-") {
    return [] {
      int c = std::fgetc(stdin);
      return c == EOF ? -1 : c;
    };
  }
  return emulator::text_input(*options.expression + "\n");
}

// Watches the answers go by: did any line start with "error: "?
class AnswerWatch {
 public:
  void byte(std::uint8_t c) {
    if (column_ < kErrorPrefix.size()) matching_ = matching_ && c == kErrorPrefix[column_];
    if (++column_ == kErrorPrefix.size() && matching_) error_ = true;
    if (c == '\n') {
      column_ = 0;
      matching_ = true;
    }
  }
  bool saw_error() const { return error_; }

 private:
  static constexpr std::string_view kErrorPrefix = "error: ";
  std::size_t column_ = 0;
  bool matching_ = true;
  bool error_ = false;
};

int calc_command(const CalcOptions& options) {
  check_program_run_options(options.run);
  program::ProgramImage image =
      toolchain::load_firmware("calc", machine_spec(options.run.weights.machine).memory_map());
  AnswerWatch watch;
  int status = run_program_image(image, options.run, {calc_input(options), [&watch](std::uint8_t c) {
                                                        write_console_byte(c);
                                                        watch.byte(c);
                                                      }});
  return status == 0 && watch.saw_error() ? exit_status::kCalcError : status;
}

}  // namespace

void add_calc_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<CalcOptions>();
  CLI::App* calc = app.add_subcommand(
      "calc", "Evaluate an exact arithmetic expression with the calculator firmware (inside the weights by default)");
  calc->add_option("EXPR", options->expression,
                   "Expression, e.g. \"(2**100 + 1) / 3\"; - or none: one expression a line from standard input");
  add_program_run_options(*calc, options->run);
  calc->callback([options, &action] { action = [options] { return calc_command(*options); }; });
}

}  // namespace rvformer::cli
