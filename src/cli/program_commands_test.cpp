// cli/program_commands_test.cpp — the `rvformer run` (on the emulator) and `rvformer cc`
// commands end to end: output, exit status, --stats, --max-instructions, and one-line errors for bad
// programs. Runs in the weights: src/cli/cli_weights_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli_testing.h"
#include "support/file.h"
#include "toolchain/source_tree.h"

namespace rvformer::cli {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;
using toolchain::default_program;
using toolchain::ProcessResult;

ProcessResult rvformer(std::vector<std::string> arguments) { return run_rvformer(std::move(arguments), std::chrono::seconds(60)); }

using ProgramCommands = CommandTest;

TEST_F(ProgramCommands, RunsHelloByDefaultOnTheEmulator) {
  ProcessResult result = rvformer({"run", "--on", "emulator"});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_THAT(result.standard_output, StartsWith("Hello from RISC-V!"));
}

TEST_F(ProgramCommands, StatsAreTheLastLineOfStandardError) {
  ProcessResult result = rvformer({"run", "--on", "emulator", "--stats", default_program().string()});
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_THAT(last_line(result.standard_error),
              MatchesRegex(R"(\{"on": "emulator", "instructions": [0-9]+, "seconds": [0-9.]+, )"
                           R"("instructions_per_second": [0-9]+, "exit_code": 0\})"));
}

TEST_F(ProgramCommands, ExitCodeBecomesTheExitStatus) {
  std::string source = write_source("seven.c", "int main(void) { return 7; }\n");
  EXPECT_EQ(rvformer({"run", "--on", "emulator", source}).exit_status, 7);
}

TEST_F(ProgramCommands, StatsReportTheExitStatusTheProcessGets) {
  // 300 does not fit the 8-bit status: both are 300 & 0xFF, as on the in-weights machine.
  std::string source = write_source("three_hundred.c", "int main(void) { return 300; }\n");
  ProcessResult result = rvformer({"run", "--on", "emulator", "--stats", source});
  EXPECT_EQ(result.exit_status, 44);
  EXPECT_THAT(last_line(result.standard_error), HasSubstr("\"exit_code\": 44}"));
}

// runtime/: what picolibc's assert, abort and time need (README "Programs").
const char* const kAssertProgram =
    "#include <assert.h>\n"
    "#include <stdio.h>\n"
    "int main(void) { int two = 2; printf(\"checking\\n\"); assert(two == 3); printf(\"not reached\\n\"); }\n";
const char* const kClockProgram =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <time.h>\n"
    "int main(void) {\n"
    "  time_t now = 0;\n"
    "  printf(\"time %ld %ld clock %ld\\n\", (long)time(&now), (long)now, (long)clock());\n"
    "  abort();\n"
    "}\n";

TEST_F(ProgramCommands, AssertAbortAndTimeLinkAndBehaveAsDocumented) {
  ProcessResult asserted = rvformer({"run", "--on", "emulator", write_source("assert.c", kAssertProgram)});
  EXPECT_EQ(asserted.exit_status, 134) << asserted.standard_error;  // 128 + SIGABRT, as a shell reports abort()
  EXPECT_THAT(asserted.standard_output, MatchesRegex("checking\nassertion \"two == 3\" failed: file \".*assert.c\", "
                                                     "line 3, function: main\n"));
  ProcessResult clock = rvformer({"run", "--on", "emulator", write_source("clock.c", kClockProgram)});
  EXPECT_EQ(clock.exit_status, 134) << clock.standard_error;
  EXPECT_EQ(clock.standard_output, "time -1 -1 clock -1\n");  // the machine has no clock
}

TEST_F(ProgramCommands, CcRefusesToWriteItsOutputOverAnInput) {
  const std::string text = "int main(void) { return 0; }\n";
  const std::string source = write_source("x.c", text);
  const std::string other = write_source("y.c", "int helper(void) { return 1; }\n");
  std::filesystem::create_symlink(source, path("link.elf"));
  std::filesystem::create_hard_link(source, path("hard.elf"));
  for (const std::string& output : {source, path("link.elf"), path("hard.elf")}) {
    ProcessResult result = rvformer({"cc", "-o", output, other, source});
    EXPECT_EQ(result.exit_status, 2) << output;
    EXPECT_EQ(result.standard_error,
              "rvformer: error: the output " + output + " is the source " + source + "; refusing to overwrite it\n");
    std::ifstream in(source);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), text) << output;
  }
}

TEST_F(ProgramCommands, RunsAssemblySourcesAsCcCompilesThem) {
  std::string source = write_source("nine.S", ".globl main\nmain:\n  li a0, 9\n  ret\n");
  ProcessResult result = rvformer({"run", "--on", "emulator", source});
  EXPECT_EQ(result.exit_status, 9) << result.standard_error;
}

TEST_F(ProgramCommands, LinkErrorsNameTheSourcesNotATemporaryFile) {
  std::string source = write_source("undefined.c", "int missing(void);\nint main(void) { return missing(); }\n");
  ProcessResult result = rvformer({"run", "--on", "emulator", source});
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_THAT(result.standard_error, HasSubstr("undefined reference to `missing'"));
  EXPECT_THAT(result.standard_error, EndsWith("rvformer: error: linking " + source +
                                              " failed (riscv64-unknown-elf-gcc exited with status 1)\n"));
}

TEST_F(ProgramCommands, StdinIsAtEndOfFileAndStderrGoesToStdout) {
  std::string source = write_source("console.c",
      "#include <stdio.h>\n"
      "int main(void) {\n"
      "  char line[8];\n"
      "  int c = getchar();\n"
      "  fprintf(stderr, \"to stderr\\n\");\n"
      "  printf(\"getchar %d, fgets %s\\n\", c, fgets(line, sizeof line, stdin) ? \"a line\" : \"NULL\");\n"
      "}\n");
  ProcessResult result = rvformer({"run", "--on", "emulator", source});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_EQ(result.standard_output, "to stderr\ngetchar -1, fgets NULL\n");
  EXPECT_EQ(result.standard_error, "");
}

TEST_F(ProgramCommands, CompilesThenRunsTheElf) {
  ProcessResult compiled = rvformer({"cc", "-O3", "-o", path("hello.elf"),
                                     default_program().string()});
  ASSERT_EQ(compiled.exit_status, 0) << compiled.standard_error;
  ProcessResult result = rvformer({"run", "--on", "emulator", path("hello.elf")});
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_THAT(result.standard_output, StartsWith("Hello from RISC-V!"));
}

TEST_F(ProgramCommands, AnElfForAnotherMapIsRejected) {
  ASSERT_EQ(rvformer({"cc", "--target", "qemu-virt", "-o", path("virt.elf"),
                      default_program().string()}).exit_status, 0);
  ProcessResult result = rvformer({"run", path("virt.elf")});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(result.standard_error, HasSubstr("lies outside the code ROM, read-only data and RAM"));
}

TEST_F(ProgramCommands, RunsAnElfForTheEmulatorOnlyMapWithTarget) {
  std::string source = write_source("big.c",
                                    "#include <stdio.h>\n#include <stdlib.h>\n"
                                    "int main(void) { char *p = malloc(800000); if (!p) return 1; p[799999] = 7;\n"
                                    "  printf(\"%d\\n\", p[799999]); return 0; }\n");
  ASSERT_EQ(rvformer({"cc", "--target", "emulator-1m", "-o", path("big.elf"), source}).exit_status, 0);
  ProcessResult result = rvformer({"run", "--on", "emulator", "--target", "emulator-1m", path("big.elf")});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_EQ(result.standard_output, "7\n");
  EXPECT_EQ(rvformer({"run", "--on", "emulator", path("big.elf")}).exit_status, 2);
  ProcessResult weights = rvformer({"run", "--target", "emulator-1m", path("big.elf")});
  EXPECT_EQ(weights.exit_status, 2);
  EXPECT_THAT(weights.standard_error, HasSubstr("--target runs a program on the golden emulator"));
}

// A file as the vector unit's weight memory: the program reads it back with vu.wget (zeros after it).
TEST_F(ProgramCommands, WeightMemoryFillsTheVectorUnitsWeightMemory) {
  std::string source = write_source("wm.c",
                                    "#include <stdio.h>\n#include <rvformer_vector.h>\n"
                                    "int main(void) { printf(\"%08x %08x\\n\", (unsigned)vu_wget(4), (unsigned)vu_wget(8)); return 0; }\n");
  ASSERT_EQ(rvformer({"cc", "--target", "rvformer-vector", "-o", path("wm.elf"), source}).exit_status, 0);
  const std::string image = path("wm.bin");
  write_file_atomic(image, std::vector<std::uint8_t>{0, 0, 0, 0, 0x78, 0x56, 0x34, 0x12});
  ProcessResult result =
      rvformer({"run", "--on", "emulator", "--target", "rvformer-vector", "--weight-memory", image, path("wm.elf")});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_EQ(result.standard_output, "12345678 00000000\n");
  ProcessResult no_unit = rvformer({"run", "--on", "emulator", "--target", "emulator-1m", "--weight-memory", image,
                                    path("wm.elf")});
  EXPECT_EQ(no_unit.exit_status, 2);
  EXPECT_THAT(no_unit.standard_error, HasSubstr("--weight-memory fills the vector unit's weight memory"));
  write_file_atomic(image, std::vector<std::uint8_t>(384 * 1024 + 4, 1));
  ProcessResult too_big =
      rvformer({"run", "--on", "emulator", "--target", "rvformer-vector", "--weight-memory", image, path("wm.elf")});
  EXPECT_EQ(too_big.exit_status, 2);
  EXPECT_EQ(too_big.standard_error, "rvformer: error: the program's vector weight memory (393220 bytes) does not fit its "
                                    "393216-byte memory\n");
}

// Inside the weights of the rvformer-vector machine the loader fills the weight memory and vu.wget
// reads it, in `run` and in `verify`; the unit's instructions the weights lack yet stop the run with
// a line that says so.
TEST_F(ProgramCommands, WeightMemoryRunsInsideTheVectorMachinesWeights) {
  std::string source = write_source("wm.c",
                                    "#include <stdio.h>\n#include <rvformer_vector.h>\n"
                                    "int main(void) { printf(\"%08x %08x\\n\", (unsigned)vu_wget(4), (unsigned)vu_wget(8)); return 0; }\n");
  const std::string image = path("wm.bin");
  write_file_atomic(image, std::vector<std::uint8_t>{0, 0, 0, 0, 0x78, 0x56, 0x34, 0x12});
  ProcessResult result = rvformer({"run", "--machine", "rvformer-vector", "--weight-memory", image, source});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_EQ(result.standard_output, "12345678 00000000\n");
  ProcessResult verified = rvformer({"verify", "--machine", "rvformer-vector", "--weight-memory", image, source});
  EXPECT_EQ(verified.exit_status, 0) << verified.standard_error;
  EXPECT_THAT(verified.standard_error, HasSubstr("lockstep clean"));
  EXPECT_EQ(verified.standard_output, "12345678 00000000\n");
  write_file_atomic(image, std::vector<std::uint8_t>(384 * 1024 + 4, 1));
  ProcessResult too_big = rvformer({"run", "--machine", "rvformer-vector", "--weight-memory", image, source});
  EXPECT_EQ(too_big.exit_status, 2);
  EXPECT_THAT(too_big.standard_error, HasSubstr("the program's vector weight memory (393220 bytes) does not fit the "
                                                "in-weights machine rvformer-vector's (393216 bytes)"));
  std::string later = write_source(
      "attend.c",
      "#include <rvformer_vector.h>\nint main(void) { vu_set_vl(1); vu_set_hs(1); vu_attend(32, 0); return 0; }\n");
  ProcessResult not_yet = rvformer({"run", "--machine", "rvformer-vector", later});
  EXPECT_EQ(not_yet.exit_status, 4);
  EXPECT_THAT(not_yet.standard_error, HasSubstr("(vu.attend "));
  EXPECT_THAT(not_yet.standard_error,
              HasSubstr("): the rvformer-vector machine's weights do not have this vector unit instruction yet"));
  EXPECT_EQ(rvformer({"run", "--on", "emulator", "--machine", "rvformer-vector", later}).exit_status, 0);
}

TEST_F(ProgramCommands, TrapEndsTheRunAfterTheOutputSoFar) {
  std::string source = write_source("null.c",
      "#include <stdio.h>\n"
      "int main(void) { printf(\"before the trap\"); *(volatile int*)0 = 1; return 0; }\n");
  ProcessResult result = rvformer({"run", "--on", "emulator", "--stats", source});
  EXPECT_EQ(result.exit_status, 4);
  EXPECT_EQ(result.standard_output, "before the trap");
  EXPECT_THAT(result.standard_error,
              MatchesRegex("rvformer: error: the program trapped: store access fault at pc "
                           "0x001[0-9a-f]{5} \\(instruction 0x[0-9a-f]{8}: sw [a-z0-9]+, "
                           "0\\(zero\\)\\): address 0x00000000 is not mapped\n.*"));
  EXPECT_THAT(last_line(result.standard_error), HasSubstr("\"exit_code\": null"));
}

TEST_F(ProgramCommands, IllegalInstruction) {
  std::string source = write_source("ecall.c", "int main(void) { __asm__ volatile(\"ecall\"); }\n");
  ProcessResult result = rvformer({"run", "--on", "emulator", source});
  EXPECT_EQ(result.exit_status, 4);
  EXPECT_THAT(result.standard_error, MatchesRegex("rvformer: error: the program trapped: illegal "
                                                  "instruction at pc 0x001[0-9a-f]{5} "
                                                  "\\(instruction 0x00000073\\)\n"));
}

TEST_F(ProgramCommands, MaxInstructionsBoundsAnEndlessLoop) {
  std::string source = write_source("loop.c", "int main(void) { for (;;) {} }\n");
  ProcessResult result = rvformer({"run", "--on", "emulator", "--max-instructions", "1000", "--stats", source});
  EXPECT_EQ(result.exit_status, 5);
  EXPECT_THAT(result.standard_error,
              StartsWith("rvformer: error: the program did not finish within 1000 instructions"));
  EXPECT_THAT(last_line(result.standard_error), HasSubstr("\"instructions\": 1000,"));
}

TEST_F(ProgramCommands, MalformedElf) {
  std::string elf = write_source("garbage.elf", "\x7f" "ELF\x02\x01\x01 and then nothing useful");
  ProcessResult result = rvformer({"run", elf});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_EQ(result.standard_error, "rvformer: error: " + elf + ": not a 32-bit ELF (class 2)\n");
}

TEST_F(ProgramCommands, WeightsOptionsAreChecked) {
  // --model must name a compiled machine; trace dumps and models need the weights.
  std::filesystem::create_directory(path("empty"));
  ProcessResult result = rvformer({"run", "--on", "weights", "--model", path("empty")});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(result.standard_error, HasSubstr("is not a compiled rvformer machine"));
  result = rvformer({"run", "--on", "emulator", "--dump-trace", path("trace.txt")});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(result.standard_error, HasSubstr("apply to runs in the weights"));
  EXPECT_NE(rvformer({"run", "--on", "fpga"}).exit_status, 0);
}

TEST_F(ProgramCommands, CompileErrorsAndMissingFiles) {
  std::string broken = write_source("broken.c", "int main(void) { return }\n");
  ProcessResult result = rvformer({"cc", "-o", path("broken.elf"), broken});
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_THAT(result.standard_error, HasSubstr("error: expected expression"));
  EXPECT_THAT(result.standard_error, EndsWith("rvformer: error: compiling " + broken +
                                              " failed (riscv64-unknown-elf-gcc exited with "
                                              "status 1)\n"));
  EXPECT_EQ(rvformer({"run", path("missing.elf")}).exit_status, 2);
  EXPECT_NE(rvformer({"cc", "-O9", "-o", path("x.elf"), broken}).exit_status, 0);
}

// README "Exit status": each way a command can fail has its own status, apart from the 0 of success.
TEST_F(ProgramCommands, EachKindOfFailureHasItsOwnStatus) {
  const std::string broken = write_source("broken.c", "int main(void) { return }\n");
  const std::string trap = write_source("trap.c", "int main(void) { *(volatile int*)0 = 1; return 0; }\n");
  const std::string loop = write_source("loop.c", "int main(void) { for (;;) {} }\n");
  const std::string garbage = write_source("garbage.elf", "not an ELF at all");
  struct Case {
    std::vector<std::string> arguments;
    int status;
  };
  const Case cases[] = {
      {{"run", "--on", "emulator", "--bogus"}, 2},                   // usage
      {{"run", "--on", "emulator", path("missing.c")}, 2},           // a file that is not there
      {{"run", "--on", "emulator", garbage}, 2},                     // a file that is not a program
      {{"cc", "-o", path("broken.elf"), broken}, 3},                 // the build failed
      {{"run", "--on", "emulator", broken}, 3},
      {{"run", "--on", "emulator", trap}, 4},                        // the program trapped
      {{"run", "--on", "emulator", "--max-instructions", "100", loop}, 5},  // it did not finish
  };
  for (const Case& c : cases) {
    ProcessResult result = rvformer(c.arguments);
    EXPECT_EQ(result.exit_status, c.status) << c.arguments.back() << "\n" << result.standard_error;
    EXPECT_THAT(result.standard_error, HasSubstr("rvformer: error: ")) << c.arguments.back();
  }
}

TEST_F(ProgramCommands, MissingCrossCompiler) {
  ProcessResult result = toolchain::run_process(
      {"env", "PATH=/nonexistent", RVFORMER_BINARY, "run", default_program().string()},
      {.capture_output = true, .timeout = std::chrono::seconds(60)});
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_THAT(result.standard_error, HasSubstr("riscv64-unknown-elf-gcc is not installed; "
                                               "install it with: sudo apt-get install"));
}

}  // namespace
}  // namespace rvformer::cli
