// cli/program_run.h — running a loaded program on the golden emulator or inside the weights, as
// `run` does: what `run` and `calc` share (options, console, --stats, how a run ends).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/weights.h"
#include "program/program_image.h"

namespace rvformer::cli {

struct ProgramRunOptions {
  std::string on = "weights";  // --on weights|emulator
  bool stats = false;          // --stats
  std::optional<std::uint64_t> max_instructions;
  WeightsOptions weights;                 // --machine, --model, --engine, --progress
  std::optional<std::string> dump_trace;  // --dump-trace FILE (weights only)
};

// The program's console: where input bytes come from (-1 at the end) and where output bytes go.
struct ProgramConsole {
  std::function<int()> input;
  std::function<void(std::uint8_t)> output;
};

// Adds --on, --stats, --max-instructions, the weights options and --dump-trace to a subcommand.
void add_program_run_options(CLI::App& command, ProgramRunOptions& options);

// Checks the options that need no work (weights-only options elsewhere, the --dump-trace file).
void check_program_run_options(const ProgramRunOptions& options);

// Writes a console byte to stdout, flushing at the end of a line.
void write_console_byte(std::uint8_t byte);

// A field of the --stats line: a whole number, or a word (written as a JSON string; no escaping).
using StatsValue = std::variant<std::uint64_t, std::string>;
// Further fields of the --stats line, asked for when the run has ended.
using ExtraStats = std::function<std::vector<std::pair<std::string, StatsValue>>()>;

// Runs `image` where `options.on` says and returns the process status: the program's own exit
// status, or rvformer's for a trap or the instruction limit (after its one-line error on stderr).
// With --stats the run's JSON line, with `extra_stats`' fields after the instructions, ends stderr.
int run_program_image(const program::ProgramImage& image, const ProgramRunOptions& options,
                      const ProgramConsole& console, const ExtraStats& extra_stats = {});

}  // namespace rvformer::cli
