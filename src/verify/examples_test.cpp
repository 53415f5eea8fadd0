// Every example program inside the compiled weights (fast path, free run), for its first
// kInstructions instructions (the five shortest run to their exit): its console output, its exit
// status or the registers where it stopped must be the golden emulator's. One test walks all
// examples so that the model loads once (label weights). bench/machine_bench runs every example to
// its end against the emulator.
#include <gtest/gtest.h>

#include "driver/compiled_machine.h"
#include "driver/model_machine.h"
#include "emulator/differential.h"
#include "program/machine_spec.h"
#include "toolchain/program_loader.h"
#include "toolchain/source_tree.h"
#include "verify/lockstep.h"

namespace rvformer::verify {
namespace {

constexpr std::uint64_t kInstructions = 60'000;

TEST(Examples, EveryExampleRunsInsideTheWeightsLikeOnTheEmulator) {
  auto machine = cpu::build_machine();
  auto checkpoint = driver::machine_checkpoint(*machine, std::nullopt, [](const std::string&) {});
  auto bank_heads = driver::read_machine_info(checkpoint).bank_heads;
  engine::FastModel model = engine::FastModel::load(checkpoint);
  std::vector<std::filesystem::path> programs = toolchain::example_programs();
  ASSERT_GE(programs.size(), 10u);
  for (const std::filesystem::path& path : programs) {
    SCOPED_TRACE(path.filename().string());
    program::ProgramImage image = toolchain::load_program(path, program::kRvformerMap);
    emulator::MachineRun golden = emulator::run_on_emulator(image, kInstructions);
    const bool exits = golden.failure.empty();
    driver::FastModelMachine weights(model);
    std::string console;
    LockstepOptions options;
    options.free_run = true;
    options.max_instructions = kInstructions;
    options.console = [&](std::uint8_t b) { console.push_back(static_cast<char>(b)); };
    LockstepReport report = run_lockstep(*machine, bank_heads, weights, image, options);
    EXPECT_FALSE(report.difference) << *report.difference;
    EXPECT_EQ(report.ending.starts_with("exit "), exits) << report.ending;
    EXPECT_EQ(report.instructions, golden.instructions);
    EXPECT_EQ(console, golden.console);
  }
}

}  // namespace
}  // namespace rvformer::verify
