// emulator_speed — how fast the golden emulator runs: instructions per second on a long mixed
// workload (bench/emulator_workload.c, best of three runs), and the instruction count and speed of
// every program in examples/. Needs the RISC-V cross compiler.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "emulator/emulator.h"
#include "isa/trap.h"
#include "support/error.h"
#include "toolchain/process.h"
#include "toolchain/program_loader.h"
#include "toolchain/source_tree.h"

namespace {

struct Measurement {
  std::uint64_t instructions = 0;
  double seconds = 0;
};

Measurement measure(const rvformer::program::ProgramImage& image) {
  rvformer::emulator::Emulator machine(image);
  auto start = std::chrono::steady_clock::now();
  rvformer::emulator::RunResult result = machine.run(20'000'000'000, [](std::uint8_t) {});
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (result.reason != rvformer::emulator::StopReason::kExited) {
    rvformer::fail("the program did not exit: {}",
                   rvformer::isa::describe_trap(result.trap, image.map));
  }
  return {machine.instructions_retired(), elapsed.count()};
}

Measurement best_of(const rvformer::program::ProgramImage& image, int runs) {
  Measurement best = measure(image);
  for (int run = 1; run < runs; ++run) {
    Measurement next = measure(image);
    if (next.seconds < best.seconds) best = next;
  }
  return best;
}

double rate(const Measurement& measurement) {
  return static_cast<double>(measurement.instructions) / measurement.seconds;
}

}  // namespace

int main() {
  try {
    namespace toolchain = rvformer::toolchain;
    const rvformer::program::MemoryMap& map = rvformer::program::kRvformerMap;
    const std::vector<std::filesystem::path> examples = toolchain::example_programs();
    fmt::print("{:<16} {:>12} {:>16}\n", "example", "instructions", "instructions/s");
    for (const std::filesystem::path& example : examples) {
      Measurement measurement = best_of(toolchain::load_program(example, map), 5);
      fmt::print("{:<16} {:>12} {:>16.0f}\n", example.stem().string(), measurement.instructions,
                 rate(measurement));
    }
    std::filesystem::path workload = toolchain::source_tree() / "bench" / "emulator_workload.c";
    Measurement measurement = best_of(toolchain::load_program(workload, map), 3);
    fmt::print("workload: {} instructions in {:.3f} s = {:.0f} instructions/s\n",
               measurement.instructions, measurement.seconds, rate(measurement));
    return 0;
  } catch (const rvformer::Error& error) {
    fmt::print(stderr, "emulator_speed: {}\n", error.what());
    return 2;
  }
}
