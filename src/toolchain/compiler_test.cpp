// toolchain/compiler_test.cpp — `rvformer cc` builds working programs for both memory maps, with
// Zba instructions, and fails clearly when the toolchain or the program is at fault.
#include "toolchain/compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "emulator/emulator.h"
#include "isa/instruction_set.h"
#include "program/elf_loader.h"
#include "support/error.h"
#include "toolchain/process.h"
#include "toolchain/program_loader.h"
#include "toolchain/source_tree.h"

namespace rvformer::toolchain {
namespace {

using program::kQemuVirtMap;
using program::kRvformerMap;
using ::testing::HasSubstr;

const std::filesystem::path kTestdata = std::filesystem::path(__FILE__).parent_path() / "testdata";

struct Outcome {
  std::string console;
  emulator::RunResult result;
};

Outcome run(const program::ProgramImage& image) {
  emulator::Emulator machine(image);
  Outcome outcome;
  outcome.result = machine.run(10'000'000, [&](std::uint8_t byte) { outcome.console += char(byte); });
  return outcome;
}

std::filesystem::path write_source(const TemporaryDirectory& directory, const std::string& name,
                                   const std::string& text) {
  std::filesystem::path path = directory.path() / name;
  std::ofstream(path) << text;
  return path;
}

std::string compile_error(const CompileOptions& options) {
  try {
    compile_program(options);
  } catch (const Error& error) {
    return error.what();
  }
  return "(compiled)";
}

TEST(Compiler, RuntimeSetsUpTheMachineOnEveryMap) {
  for (const program::MemoryMap& map : program::kMemoryMaps) {
    // The heap is what RAM leaves beside the data and the stack: 48,000 bytes fit only in 128 KB.
    const std::string expected = fmt::format(
        "initialised: 1234 \"data copied from read-only data\"\n"
        "zeroed: 0 non-zero of 1000\n"
        "thread-local: 77 0\n"
        "errno after overflow: ERANGE\n"
        "constructor ran: 1\n"
        "stack 16-byte aligned: 1\n"
        "malloc 16000: ok, malloc 32000: {}\n"
        "atexit handler ran\n",
        map.ram.size >= 128 * 1024 ? "ok" : "NULL");
    Outcome outcome = run(load_program(kTestdata / "runtime_features.c", map));
    EXPECT_EQ(outcome.console, expected) << map.name;
    EXPECT_EQ(outcome.result.reason, emulator::StopReason::kExited) << map.name;
    EXPECT_EQ(outcome.result.exit_code, 42u) << map.name;
  }
}

TEST(Compiler, EveryOptimisationLevelGivesTheSameOutput) {
  TemporaryDirectory directory;
  for (int level = 0; level <= 3; ++level) {
    std::filesystem::path elf = directory.path() / fmt::format("hello-O{}.elf", level);
    compile_program({.sources = {default_program()}, .output = elf, .optimization_level = level,
                     .map = kRvformerMap, .verbose = false});
    Outcome outcome = run(program::load_elf_file(elf, kRvformerMap));
    EXPECT_THAT(outcome.console, HasSubstr("Hello from RISC-V!")) << level;
    EXPECT_EQ(outcome.result.exit_code, 0u);
  }
}

TEST(Compiler, LinksSeveralSourcesAndUsesZba) {
  TemporaryDirectory directory;
  std::filesystem::path main = write_source(directory, "main.c",
      "#include <stdio.h>\n"
      "int element(const int* array, int index);\n"
      "int main(void) { static int a[4] = {5, 6, 7, 8}; printf(\"%d\\n\", element(a, 2)); "
      "return element(a, 3); }\n");
  std::filesystem::path element = write_source(directory, "element.c",
      "int element(const int* array, int index) { return array[index]; }\n");
  std::filesystem::path elf = directory.path() / "program.elf";
  compile_program({.sources = {main, element}, .output = elf, .optimization_level = 2,
                   .map = kQemuVirtMap, .verbose = false});
  program::ProgramImage image = program::load_elf_file(elf, kQemuVirtMap);
  Outcome outcome = run(image);
  EXPECT_EQ(outcome.console, "7\n");
  EXPECT_EQ(outcome.result.exit_code, 8u);
  int zba = 0;
  for (std::size_t at = 0; at + 4 <= image.code.size(); at += 4) {
    std::uint32_t word = image.code[at] | image.code[at + 1] << 8 | image.code[at + 2] << 16 |
                         static_cast<std::uint32_t>(image.code[at + 3]) << 24;
    zba += isa::decode(word).op == isa::Op::kSh2add;
  }
  EXPECT_GT(zba, 0) << "array indexing compiled for rv32im_zba uses sh2add";
}

// A program built for the map with the vector unit sees RVFORMER_VECTOR_UNIT and the unit's
// instructions through runtime/rvformer_vector.h; the emulator decodes the words its inline
// assembly makes. Built for a map without the unit, the same source sees no RVFORMER_VECTOR_UNIT.
TEST(Compiler, TheVectorUnitsMapDefinesTheUnitForItsHeader) {
  TemporaryDirectory directory;
  std::filesystem::path source = write_source(directory, "vector.c",
      "#include <stdio.h>\n"
      "#include <rvformer_vector.h>\n"
      "#ifndef RVFORMER_VECTOR_UNIT\n"
      "#error no vector unit on this map\n"
      "#endif\n"
      "static void put_line(uint32_t first, const int32_t *values) {\n"  // vu.put commits whole lines
      "  for (uint32_t i = 0; i < VU_LINE_ELEMENTS; i++) vu_put(first + i, values[i]);\n"
      "}\n"
      "int main(void) {\n"
      "  static const int32_t a[VU_LINE_ELEMENTS] = {4000, -5}, b[VU_LINE_ELEMENTS] = {5, 7, 7};\n"
      "  static const int32_t c[VU_LINE_ELEMENTS] = {1024, -2048}, d[VU_LINE_ELEMENTS] = {1000, 7};\n"
      "  put_line(0, a); put_line(16, b); put_line(32, d); put_line(64, c);\n"
      "  vu_set_vl(2); vu_add16(0, 32);\n"  // saturates to 4095 (13 bits); -5 + 7 = 2
      "  vu_set_vl(3);\n"
      "  printf(\"%d %d %d\\n\", (int)vu_get(0), (int)vu_get(1), (int)vu_argmax(16));\n"  // 5, 7, 7: the first 7
      "  vu_silu(64);\n"  // rs2 must be x0, not a register holding 0
      "  printf(\"%d %d\\n\", (int)vu_get(64), (int)vu_get(65));\n"
      "  return 0;\n"
      "}\n");
  std::filesystem::path elf = directory.path() / "vector.elf";
  compile_program({.sources = {source}, .output = elf, .optimization_level = 2, .map = program::kVectorMap,
                   .verbose = false});
  Outcome outcome = run(program::load_elf_file(elf, program::kVectorMap));
  EXPECT_EQ(outcome.console, "4095 2 1\n902 -37\n");  // SiLU of 2 and −4 in Q9: story_silu's
  EXPECT_EQ(outcome.result.reason, emulator::StopReason::kExited);
  EXPECT_THAT(compile_error({.sources = {source}, .output = elf, .optimization_level = 2, .map = kRvformerMap,
                             .verbose = false}),
              HasSubstr("failed"));
}

TEST(Compiler, ProgramsTooLargeForTheirRegionFailToLink) {
  TemporaryDirectory directory;
  struct Case {
    const char* name;
    const char* source;
  };
  const Case cases[] = {
      {"ram.c", "static char big[40000]; int main(void) { big[7] = 1; return big[9]; }\n"},
      {"stack.c", "static char big[30000]; int main(void) { big[7] = 1; return big[9]; }\n"},
      {"rodata.c", "static const char table[140000] = {1}; int main(int c, char** v) { "
                   "return table[c]; }\n"},
  };
  for (const Case& c : cases) {
    std::filesystem::path source = write_source(directory, c.name, c.source);
    EXPECT_THAT(compile_error({.sources = {source}, .output = directory.path() / "x.elf",
                               .optimization_level = 2, .map = kRvformerMap, .verbose = false}),
                HasSubstr("linking")) << c.name;
  }
}

TEST(Compiler, ReportsBadSourcesAndOptions) {
  TemporaryDirectory directory;
  std::filesystem::path broken = write_source(directory, "broken.c", "int main(void) { return }\n");
  CompileOptions options{.sources = {broken}, .output = directory.path() / "x.elf",
                         .optimization_level = 2, .map = kRvformerMap, .verbose = false};
  EXPECT_THAT(compile_error(options), HasSubstr("compiling " + broken.string() + " failed"));
  options.sources = {directory.path() / "missing.c"};
  EXPECT_THAT(compile_error(options), HasSubstr("missing.c: no such file"));
  options.sources = {};
  EXPECT_EQ(compile_error(options), "no source files to compile");
  options.sources = {default_program()};
  options.optimization_level = 4;
  EXPECT_EQ(compile_error(options), "optimisation level 4 is not 0-3");
}

TEST(Compiler, SaysHowToInstallAMissingCompiler) {
  std::string saved_path = std::getenv("PATH");
  setenv("PATH", "/nonexistent", 1);
  std::string error = compile_error({.sources = {default_program()}, .output = "/tmp/x.elf",
                                     .optimization_level = 2, .map = kRvformerMap,
                                     .verbose = false});
  setenv("PATH", saved_path.c_str(), 1);
  EXPECT_THAT(error, HasSubstr("riscv64-unknown-elf-gcc is not installed"));
  EXPECT_THAT(error, HasSubstr("apt-get install gcc-riscv64-unknown-elf"));
}

}  // namespace
}  // namespace rvformer::toolchain
