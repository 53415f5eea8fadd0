// emulator/random_program_test.cpp — the random programs run to completion, print one dump line
// per stream, execute every instruction of the set, and are reproducible from their seed.
#include "emulator/random_program.h"

#include <gtest/gtest.h>

#include <array>
#include <iterator>
#include <sstream>

#include "emulator/differential.h"
#include "emulator/emulator.h"
#include "program/elf_loader.h"

namespace rvformer::emulator {

using namespace isa;  // the instruction set and traps of the machine
namespace {

TEST(RandomProgram, PrintsOneDumpLinePerStreamAndExits) {
  for (const program::MemoryMap& map : program::kMemoryMaps) {
    RandomProgram program = generate_random_program({.seed = 5, .streams = 20, .map = map});
    MachineRun run = run_on_emulator(random_program_image(program, map), 10'000'000);
    EXPECT_EQ(run.failure, "") << map.name;
    EXPECT_EQ(run.exit_status, 0);
    std::istringstream lines(run.console);
    int count = 0;
    for (std::string line; std::getline(lines, line); ++count) {
      std::istringstream words(line);
      std::vector<std::string> dump{std::istream_iterator<std::string>(words), {}};
      ASSERT_EQ(dump.size(), static_cast<std::size_t>(kDumpWords)) << line;
      EXPECT_EQ(dump[0], "00000000") << "x0";
    }
    EXPECT_EQ(count, 20);
  }
}

TEST(RandomProgram, ExecutesEveryInstruction) {
  RandomProgram program = generate_random_program({.seed = 11, .streams = 100});
  Emulator machine(random_program_image(program, program::kQemuVirtMap));
  std::array<int, kInstructionCount> executed{};
  while (!machine.halted()) {
    Op op = decode(machine.read_word(machine.pc()).value()).op;
    ASSERT_NE(op, Op::kIllegal);
    ++executed[static_cast<std::size_t>(op)];
    machine.step();
  }
  EXPECT_EQ(machine.step().event, Event::kExit);
  for (const OpInfo& info : instruction_table()) {
    if (is_bigint(info.op) || is_vector(info.op)) continue;  // QEMU has neither unit
    EXPECT_GT(executed[static_cast<std::size_t>(info.op)], 0) << info.name;
  }
}

TEST(RandomProgram, SameSeedSameProgram) {
  EXPECT_EQ(generate_random_program({.seed = 3, .streams = 5}).elf,
            generate_random_program({.seed = 3, .streams = 5}).elf);
  EXPECT_NE(generate_random_program({.seed = 3, .streams = 5}).elf,
            generate_random_program({.seed = 4, .streams = 5}).elf);
}

TEST(RandomProgram, NamesDumpWords) {
  EXPECT_EQ(dump_word_name(0), "x0");
  EXPECT_EQ(dump_word_name(31), "x31");
  EXPECT_EQ(dump_word_name(33), "scratch+4");
}

}  // namespace
}  // namespace rvformer::emulator
