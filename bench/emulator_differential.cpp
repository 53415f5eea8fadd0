// emulator_differential — the randomized differential run: generates random RV32IM + Zba programs
// (independent instruction streams, many per ELF so that QEMU's start-up does not dominate), runs
// each ELF on QEMU and on the golden emulator, and prints how many programs differ.
//
//   emulator_differential [--programs 10000] [--streams-per-elf 100] [--seed 1] [--jobs N]
//   emulator_differential --seed S --streams-per-elf K --write-elf FILE   (reproduce one ELF)
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "emulator/differential.h"
#include "support/error.h"
#include "support/file.h"
#include "toolchain/process.h"

namespace {

struct Options {
  int programs = 10000;
  int streams_per_elf = 100;
  std::uint64_t seed = 1;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string write_elf;
};

struct Totals {
  std::mutex mutex;
  int programs = 0;
  int mismatches = 0;
  std::uint64_t instructions = 0;
  std::string first_mismatch;
};

void run_elf(const Options& options, int index, const std::filesystem::path& directory,
             Totals& totals) {
  std::uint64_t seed = options.seed + static_cast<std::uint64_t>(index);
  int streams = std::min(options.streams_per_elf, options.programs - index * options.streams_per_elf);
  rvformer::emulator::RandomProgram program =
      rvformer::emulator::generate_random_program({.seed = seed, .streams = streams});
  rvformer::emulator::RandomProgramComparison comparison = rvformer::emulator::compare_with_qemu(
      program, directory / fmt::format("random-{}.elf", seed));
  std::lock_guard lock(totals.mutex);
  totals.programs += comparison.streams;
  totals.mismatches += comparison.mismatched_streams;
  totals.instructions += comparison.instructions;
  if (comparison.mismatched_streams > 0 && totals.first_mismatch.empty()) {
    totals.first_mismatch = fmt::format("ELF seed {} ({} streams): {}", seed, streams,
                                        comparison.first_mismatch);
  }
}

int run(const Options& options) {
  if (!options.write_elf.empty()) {
    rvformer::write_file_atomic(options.write_elf,
                                rvformer::emulator::generate_random_program(
                                    {.seed = options.seed, .streams = options.streams_per_elf})
                                    .elf);
    return 0;
  }
  int elves = (options.programs + options.streams_per_elf - 1) / options.streams_per_elf;
  rvformer::toolchain::TemporaryDirectory directory;
  Totals totals;
  std::atomic<int> next{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int job = 0; job < options.jobs; ++job) {
    workers.emplace_back([&] {
      for (int index; (index = next++) < elves;) run_elf(options, index, directory.path(), totals);
    });
  }
  for (std::thread& worker : workers) worker.join();
  std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;

  if (!totals.first_mismatch.empty()) fmt::print("first mismatch: {}\n", totals.first_mismatch);
  fmt::print("random programs: {} ({} ELFs of up to {} streams, seeds {}..{}, {} QEMU runs)\n",
             totals.programs, elves, options.streams_per_elf, options.seed,
             options.seed + static_cast<std::uint64_t>(elves) - 1, elves);
  fmt::print("emulator instructions: {}\n", totals.instructions);
  fmt::print("mismatches: {}\n", totals.mismatches);
  fmt::print("seconds: {:.1f}\n", seconds.count());
  return totals.mismatches == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Randomized differential run of the golden emulator against QEMU"};
  Options options;
  app.add_option("--programs", options.programs, "Random programs (instruction streams) to run");
  app.add_option("--streams-per-elf", options.streams_per_elf, "Streams batched into one ELF")
      ->check(CLI::Range(1, 400));
  app.add_option("--seed", options.seed, "Seed of the first ELF; ELF i uses seed + i");
  app.add_option("--jobs", options.jobs, "Parallel QEMU runs")->check(CLI::Range(1, 64));
  app.add_option("--write-elf", options.write_elf, "Only write the ELF of --seed to this file");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const rvformer::Error& error) {
    fmt::print(stderr, "emulator_differential: {}\n", error.what());
    return 2;
  }
}
