// emulator/qemu_random_test.cpp — a sample of the randomized differential run: 200 random
// instruction streams give the same registers and memory on QEMU and on the emulator. (The full
// run of 10,000 or more is bench/emulator_differential.)
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "emulator/differential.h"
#include "toolchain/process.h"

namespace rvformer::emulator {
namespace {

TEST(QemuRandom, TwoHundredStreamsMatch) {
  toolchain::TemporaryDirectory directory;
  for (std::uint64_t seed : {1u, 2u}) {
    RandomProgram program = generate_random_program({.seed = seed, .streams = 100});
    RandomProgramComparison comparison =
        compare_with_qemu(program, directory.path() / fmt::format("random-{}.elf", seed));
    EXPECT_EQ(comparison.streams, 100);
    EXPECT_EQ(comparison.mismatched_streams, 0) << "seed " << seed << ": "
                                                << comparison.first_mismatch;
  }
}

}  // namespace
}  // namespace rvformer::emulator
