// machine_load_bench — what loading the compiled machine for a run costs, part by part: opening the
// checkpoint (mapping and validating it), checking every tensor against the digest recorded when the
// machine was compiled (driver::open_compiled_machine), and building the fast exact executor from it;
// and, for comparison, the unchecked load (engine::FastModel::load) that runs did before the check.
// The first round may read the file from disk; later ones find it in the page cache.
//
//   machine_load_bench [--model DIR] [--rounds N]
#include <chrono>
#include <cstdio>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "driver/compiled_machine.h"
#include "engine/fast_model.h"
#include "support/error.h"

namespace {

using namespace rvformer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int run(const std::optional<std::filesystem::path>& model, int rounds) {
  auto machine = cpu::build_machine();
  auto progress = [](const std::string& message) { fmt::print(stderr, "machine_load_bench: {}\n", message); };
  const std::filesystem::path directory = driver::machine_checkpoint(*machine, model, progress);
  const driver::CompiledMachineInfo info = driver::read_machine_info(directory);
  fmt::print("{}: {} tensors\n", directory.string(), info.tensor_digests.size());
  fmt::print("{:>5} {:>10} {:>10} {:>10} {:>12}\n", "round", "open s", "check s", "fast s", "unchecked s");
  for (int round = 1; round <= rounds; ++round) {
    auto start = Clock::now();
    const engine::Checkpoint opened = engine::Checkpoint::open(directory);
    const double open_seconds = seconds_since(start);
    start = Clock::now();
    const engine::Checkpoint checked = driver::open_compiled_machine(directory, info);
    const double check_seconds = seconds_since(start);
    start = Clock::now();
    const engine::FastModel fast(checked);
    const double fast_seconds = seconds_since(start);
    start = Clock::now();
    const engine::FastModel unchecked = engine::FastModel::load(directory);
    const double unchecked_seconds = seconds_since(start);
    // The check maps the file afresh, so its time includes reading every page of it once; open only
    // reads the header.
    fmt::print("{:>5} {:>10.3f} {:>10.3f} {:>10.3f} {:>12.3f}\n", round, open_seconds, check_seconds - open_seconds,
               fast_seconds, unchecked_seconds);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"machine_load_bench: the cost of loading the compiled machine, part by part"};
  std::optional<std::filesystem::path> model;
  int rounds = 3;
  app.add_option("--model", model, "Compiled machine (default: the cached one, compiled on first use)");
  app.add_option("--rounds", rounds, "How many times to load it (default 3)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(model, rounds);
  } catch (const Error& e) {
    fmt::print(stderr, "machine_load_bench: error: {}\n", e.what());
    return 2;
  }
}
