// emulator/qemu_examples_test.cpp — every program in examples/ prints the same and exits the same
// on QEMU, on the emulator with the qemu-virt map (the same ELF) and on the emulator with the
// rvformer map.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "emulator/differential.h"
#include "program/elf_loader.h"
#include "toolchain/compiler.h"
#include "toolchain/process.h"
#include "toolchain/source_tree.h"

namespace rvformer::emulator {
namespace {

constexpr std::uint64_t kMaxInstructions = 100'000'000;

std::filesystem::path compile(const std::filesystem::path& source, const program::MemoryMap& map,
                              const toolchain::TemporaryDirectory& directory) {
  std::filesystem::path elf =
      directory.path() / fmt::format("{}-{}.elf", source.stem().string(), map.name);
  toolchain::compile_program({.sources = {source}, .output = elf, .optimization_level = 2,
                              .map = map, .verbose = false});
  return elf;
}

TEST(QemuExamples, AtLeastTenExamples) { EXPECT_GE(toolchain::example_programs().size(), 10u); }

class QemuExample : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(QemuExample, SameOutputEverywhere) {
  toolchain::TemporaryDirectory directory;
  std::filesystem::path virt_elf = compile(GetParam(), program::kQemuVirtMap, directory);
  std::filesystem::path rvformer_elf = compile(GetParam(), program::kRvformerMap, directory);

  MachineRun qemu = run_on_qemu(virt_elf, std::chrono::seconds(60));
  MachineRun virt = run_on_emulator(program::load_elf_file(virt_elf, program::kQemuVirtMap),
                                    kMaxInstructions);
  MachineRun ours = run_on_emulator(program::load_elf_file(rvformer_elf, program::kRvformerMap),
                                    kMaxInstructions);
  for (const MachineRun* run : {&qemu, &virt, &ours}) EXPECT_EQ(run->failure, "");
  EXPECT_FALSE(qemu.console.empty());
  EXPECT_EQ(virt.console, qemu.console);
  EXPECT_EQ(ours.console, qemu.console);
  EXPECT_EQ(virt.exit_status, qemu.exit_status);
  EXPECT_EQ(ours.exit_status, qemu.exit_status);
}

INSTANTIATE_TEST_SUITE_P(Examples, QemuExample, ::testing::ValuesIn(toolchain::example_programs()),
                         [](const ::testing::TestParamInfo<std::filesystem::path>& info) {
                           return info.param.stem().string();
                         });

}  // namespace
}  // namespace rvformer::emulator
