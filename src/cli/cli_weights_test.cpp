// cli/cli_weights_test.cpp — `rvformer run` inside the weights (the default), `verify` and `compile`
// end to end (label weights): the same output, exit status and error lines as the golden machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>

#include "cli/cli_testing.h"
#include "engine/safetensors.h"
#include "toolchain/source_tree.h"

namespace rvformer::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;
using toolchain::ProcessResult;

// The first use compiles the machine into the build tree's cache (tens of seconds).
ProcessResult rvformer(std::vector<std::string> arguments) { return run_rvformer(std::move(arguments), std::chrono::seconds(900)); }

// The lines of standard error that are not progress ("rvformer: compiling...", "rvformer: loading").
std::string errors(const std::string& standard_error) {
  std::istringstream in(standard_error);
  std::string line, kept;
  while (std::getline(in, line))
    if (line.starts_with("rvformer: error:")) kept += line + "\n";
  return kept;
}

// The cached compiled machine, as `run` names it when it loads it ("rvformer: loading DIR (fast path)").
std::filesystem::path cached_machine() {
  ProcessResult result = rvformer({"run", "--max-instructions", "1"});
  std::smatch match;
  if (!std::regex_search(result.standard_error, match, std::regex("rvformer: loading (.*) \\(fast path\\)")))
    ADD_FAILURE() << "no loading line in: " << result.standard_error;
  return match[1].str();
}

// Zeroes `count` float weights of `tensor` in a safetensors file, from its first non-zero one on.
void zero_weights(const std::filesystem::path& file, const std::string& tensor, std::size_t count) {
  std::size_t offset = 0;
  {
    engine::SafetensorsFile weights(file);
    for (const engine::TensorRecord& record : weights.header().tensors) {
      if (record.name != tensor) continue;
      std::span<const std::uint8_t> bytes = weights.tensor_bytes(record);
      std::size_t first = 0;
      while (first < bytes.size() && bytes[first] == 0) ++first;
      ASSERT_LE(first / 4 * 4 + 4 * count, bytes.size()) << tensor << " has too few weights after its first non-zero one";
      offset = weights.header().data_start + record.begin + first / 4 * 4;
    }
  }
  ASSERT_NE(offset, 0u) << "no tensor " << tensor;
  std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
  stream.seekp(static_cast<std::streamoff>(offset));
  std::string zeros(4 * count, '\0');
  stream.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  ASSERT_TRUE(stream.good());
}

class WeightsCommands : public CommandTest {
 protected:
  // Runs the program on both machines and expects the same output, status and error lines; returns
  // the run in the weights.
  ProcessResult expect_same_as_emulator(const std::vector<std::string>& arguments) {
    std::vector<std::string> on_emulator{"run", "--on", "emulator"};
    on_emulator.insert(on_emulator.end(), arguments.begin(), arguments.end());
    std::vector<std::string> in_weights{"run"};
    in_weights.insert(in_weights.end(), arguments.begin(), arguments.end());
    ProcessResult expected = rvformer(on_emulator);
    ProcessResult got = rvformer(in_weights);
    EXPECT_EQ(got.standard_output, expected.standard_output);
    EXPECT_EQ(got.exit_status, expected.exit_status) << got.standard_error;
    EXPECT_EQ(errors(got.standard_error), errors(expected.standard_error));
    return got;
  }
};

TEST_F(WeightsCommands, RunsHelloInsideTheWeightsByDefault) {
  ProcessResult result = rvformer({"run", "--stats"});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_THAT(result.standard_output, StartsWith("Hello from RISC-V!"));
  EXPECT_THAT(last_line(result.standard_error),
              MatchesRegex(R"(\{"on": "weights", "instructions": [0-9]+, .*"trace_tokens": [0-9]+, )"
                           R"("load_tokens": [0-9]+, "trace_tokens_per_instruction": [0-9.]+, .*\})"));
  expect_same_as_emulator({});
}

TEST_F(WeightsCommands, ExitStatusTrapsIllegalInstructionsAndTheLimitMatchTheEmulator) {
  expect_same_as_emulator({write_source("seven.c", "int main(void) { return 7; }\n")});
  expect_same_as_emulator({write_source("null.c",
                                        "#include <stdio.h>\n"
                                        "int main(void) { printf(\"before\"); *(volatile int*)0 = 1; return 0; }\n")});
  expect_same_as_emulator({write_source("ecall.c", "int main(void) { __asm__ volatile(\"ecall\"); }\n")});
  expect_same_as_emulator({write_source("misaligned.c",
                                        "int main(void) { volatile int* p = (int*)0xFFFF8002u; return *p; }\n")});
  expect_same_as_emulator({"--max-instructions", "1000", write_source("loop.c", "int main(void) { for (;;) {} }\n")});
  expect_same_as_emulator({"--max-instructions", "777", toolchain::default_program().string()});
}

// Console input is delivered when the program asks for it, from --input FILE (standard input
// otherwise), the same on both machines; end of input reads as EOF.
TEST_F(WeightsCommands, ConsoleInputReachesTheProgramOnBothMachines) {
  std::string input = path("input.txt");
  std::ofstream(input) << "The quick brown fox\n\x01\xff jumps";
  std::string checksum = write_source("checksum.c",
                                      "#include <stdio.h>\n"
                                      "int main(void) {\n"
                                      "  unsigned h = 5381, n = 0; int c;\n"
                                      "  while ((c = getchar()) != EOF) h = h * 33 + (unsigned)c, n++;\n"
                                      "  printf(\"%u bytes, hash %08x\\n\", n, h);\n"
                                      "  return (int)(h & 0x7F);\n"
                                      "}\n");
  ProcessResult result = rvformer({"run", "--on", "emulator", "--input", input, checksum});
  EXPECT_EQ(result.standard_output, "28 bytes, hash cd021791\n") << result.standard_error;
  expect_same_as_emulator({"--input", input, checksum});
  expect_same_as_emulator({checksum});  // standard input is empty here
}

// A sample of the calculator inside the weights (small numbers: a few seconds of passes): the same
// answers and status as on the emulator, where calc_firmware_test checks 1,000 expressions against
// Python.
TEST_F(WeightsCommands, CalcGivesTheEmulatorsAnswersInsideTheWeights) {
  const std::string expressions = "2**64 - 1\n-7 // 2 + 7 % -3\n1/3 + 1/6 - 0.25\n(123456789 * 987654321) / 10**6\n1/0\n(2";
  ProcessResult emulator = rvformer({"calc", "--on", "emulator", expressions});
  ProcessResult weights = rvformer({"calc", "--stats", expressions});
  EXPECT_EQ(emulator.standard_output,
            "18446744073709551615\n-6\n0.25\n121932631112.635269\nerror: division by zero\n"
            "error: syntax error at column 3\n");
  EXPECT_EQ(weights.standard_output, emulator.standard_output) << weights.standard_error;
  EXPECT_EQ(weights.exit_status, 1);
  EXPECT_EQ(emulator.exit_status, 1);
  EXPECT_THAT(last_line(weights.standard_error), MatchesRegex(R"(\{"on": "weights", .*"trace_tokens": [0-9]+, .*"exit_code": 0\})"));
  ProcessResult one = rvformer({"calc", "6 * 7"});
  EXPECT_EQ(one.standard_output, "42\n");
  EXPECT_EQ(one.exit_status, 0) << one.standard_error;
}

TEST_F(WeightsCommands, StatsGiveTheSameExitCodeOnBothMachines) {
  const std::string source = write_source("three_hundred.c", "int main(void) { return 300; }\n");
  ProcessResult emulator = rvformer({"run", "--on", "emulator", "--stats", source});
  ProcessResult weights = rvformer({"run", "--stats", source});
  EXPECT_EQ(weights.exit_status, 44);
  EXPECT_EQ(emulator.exit_status, 44);
  EXPECT_THAT(last_line(weights.standard_error), HasSubstr("\"exit_code\": 44}"));
  EXPECT_THAT(last_line(emulator.standard_error), HasSubstr("\"exit_code\": 44}"));
}

TEST_F(WeightsCommands, AssertAbortAndTimeBehaveAsOnTheEmulator) {
  ProcessResult asserted = expect_same_as_emulator(
      {write_source("assert.c", "#include <assert.h>\nint main(void) { volatile int two = 2; assert(two == 3); }\n")});
  EXPECT_EQ(asserted.exit_status, 134);
  EXPECT_THAT(asserted.standard_output, HasSubstr("assertion \"two == 3\" failed"));
  ProcessResult clock = expect_same_as_emulator(
      {write_source("clock.c",
                    "#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n"
                    "int main(void) { printf(\"%ld %ld\\n\", (long)time(0), (long)clock()); abort(); }\n")});
  EXPECT_EQ(clock.exit_status, 134);
  EXPECT_EQ(clock.standard_output, "-1 -1\n");
}

TEST_F(WeightsCommands, LongRunsReportProgressOnStandardError) {
  // Several seconds in the fast executor on any host (the dense path takes as long for a few passes).
  const std::string loop = write_source("loop.c", "int main(void) { for (;;) {} }\n");
  ProcessResult run = rvformer({"run", "--progress", "1", "--max-instructions", "150000", loop});
  EXPECT_EQ(run.exit_status, 5) << run.standard_error;
  EXPECT_THAT(run.standard_error, MatchesRegex("(.*\n)?rvformer: [0-9]+ instructions, [0-9]+ passes \\([0-9]+ passes/s\\)\n.*"));
  ProcessResult verify = rvformer({"verify", "--progress", "1", "--max-instructions", "40000", loop});
  EXPECT_EQ(verify.exit_status, 0) << verify.standard_error;
  EXPECT_THAT(verify.standard_error,
              MatchesRegex("(.*\n)?rvformer: [0-9]+ instructions clean, [0-9]+ passes \\([0-9]+ passes/s\\)\n.*"));
}

TEST_F(WeightsCommands, DumpTraceWritesEveryTokenFed) {
  ProcessResult result = rvformer({"run", "--stats", "--dump-trace", path("trace.txt")});
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  std::ifstream trace(path("trace.txt"));
  std::uint64_t lines = 0;
  for (std::string line; std::getline(trace, line); ++lines) ASSERT_THAT(line, MatchesRegex("[0-9]+"));
  auto number = [&](const std::string& key) {
    auto at = result.standard_error.rfind("\"" + key + "\": ");
    return std::stoull(result.standard_error.substr(at + key.size() + 4));
  };
  // Every loading token, then every pass of the run except the last (whose output is not fed).
  EXPECT_EQ(lines, number("load_tokens") + number("trace_tokens"));
}

TEST_F(WeightsCommands, VerifyReportsACleanLockstepRun) {
  ProcessResult result = rvformer({"verify"});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_THAT(result.standard_output, StartsWith("Hello from RISC-V!"));
  EXPECT_THAT(last_line(result.standard_error),
              MatchesRegex(R"(rvformer: lockstep clean: [0-9]+ instructions, [0-9]+ state checks, ended with exit 0 .*)"));
  result = rvformer({"verify", "--free-run", "--max-instructions", "20"});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_THAT(result.standard_error, HasSubstr("free run clean: 20 instructions, 1 state checks, ended with instruction limit"));
}

TEST_F(WeightsCommands, VerifyGoesOnFromACheckpointAndRefusesAnotherProgramsOne) {
  const std::string checkpoint = path("hello.checkpoint");
  ProcessResult result = rvformer({"verify", "--checkpoint", checkpoint, "--checkpoint-every", "1500", "--max-instructions", "3100"});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_THAT(result.standard_error, HasSubstr("checkpoint at 3000 instructions saved to " + checkpoint));
  result = rvformer({"verify", "--checkpoint", checkpoint});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_THAT(result.standard_error, HasSubstr("resuming from " + checkpoint + " at 3000 instructions"));
  EXPECT_THAT(last_line(result.standard_error), HasSubstr("lockstep clean: 3913 instructions"));
  EXPECT_THAT(result.standard_output, HasSubstr("6 * 7 = 42"));
  result = rvformer({"verify", "--checkpoint", checkpoint, write_source("other.c", "int main(void) { return 3; }\n")});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(result.standard_error, HasSubstr("the checkpoint belongs to another program"));
}

TEST_F(WeightsCommands, ADamagedCheckpointIsReportedAsDamagedNotAsAProgramFault) {
  const std::string copy = path("damaged");
  ProcessResult copied = toolchain::run_process({"cp", "-r", "--sparse=always", cached_machine().string(), copy},
                                                {.capture_output = true, .timeout = std::chrono::seconds(300)});
  ASSERT_EQ(copied.exit_status, 0) << copied.standard_error;
  zero_weights(std::filesystem::path(copy) / "model.safetensors", "model.layers.0.mlp.up_proj.weight", 4095);
  ProcessResult result = rvformer({"run", "--model", copy, toolchain::default_program().string()});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(errors(result.standard_error),
              MatchesRegex("rvformer: error: the checkpoint is damaged: .*tensor 'layers.0.mlp.up_proj.weight'.*\n"));
  EXPECT_THAT(result.standard_error, Not(HasSubstr("trapped")));
}

TEST_F(WeightsCommands, CompileRefusesToReplaceADirectoryThatIsNotAMachine) {
  std::filesystem::create_directories(path("precious"));
  std::ofstream(path("precious/notes.txt")) << "keep me\n";
  ProcessResult result = rvformer({"compile", "-o", path("precious")});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(result.standard_error, HasSubstr("is not a compiled rvformer machine; refusing to replace it"));
  EXPECT_TRUE(std::filesystem::exists(path("precious/notes.txt")));
}

// The dtype of each tensor of a checkpoint, by name.
std::map<std::string, engine::DType> tensor_dtypes(const std::filesystem::path& directory) {
  std::map<std::string, engine::DType> dtypes;
  engine::SafetensorsFile weights(directory / "model.safetensors");
  for (const engine::TensorRecord& record : weights.header().tensors) dtypes[record.name] = record.dtype;
  return dtypes;
}

TEST_F(WeightsCommands, TheMachineIsStoredInBf16ByDefaultAndRunsTheSameTokensAsInF32) {
  ProcessResult compiled = rvformer({"compile", "--dtype", "f32", "-o", path("f32")});
  ASSERT_EQ(compiled.exit_status, 0) << compiled.standard_error;
  const std::map<std::string, engine::DType> f32 = tensor_dtypes(path("f32")), bf16 = tensor_dtypes(cached_machine());
  ASSERT_EQ(f32.size(), bf16.size());
  for (const auto& [name, dtype] : bf16) {
    EXPECT_EQ(f32.at(name), engine::DType::F32) << name;
    // Only A_log stays F32, as in Qwen3.5's published checkpoints.
    EXPECT_EQ(dtype, name.ends_with(".A_log") ? engine::DType::F32 : engine::DType::BF16) << name;
  }
  ProcessResult in_f32 = rvformer({"run", "--model", path("f32"), "--dump-trace", path("f32.trace")});
  ProcessResult in_bf16 = rvformer({"run", "--dump-trace", path("bf16.trace")});
  ASSERT_EQ(in_f32.exit_status, 0) << in_f32.standard_error;
  EXPECT_EQ(in_f32.standard_output, in_bf16.standard_output);
  std::ifstream f32_trace(path("f32.trace")), bf16_trace(path("bf16.trace"));
  std::string f32_tokens{std::istreambuf_iterator<char>(f32_trace), {}};
  std::string bf16_tokens{std::istreambuf_iterator<char>(bf16_trace), {}};
  EXPECT_GT(f32_tokens.size(), 10'000u);
  EXPECT_TRUE(f32_tokens == bf16_tokens) << "the F32 and BF16 checkpoints emitted different tokens";
}

// The large machine (512 KB code, 128 KB RAM) runs what needs its memory: a program whose heap
// holds 36 KB, which the default machine's 32 KB RAM cannot; and a checkpoint of one machine is
// refused for the other with the option that fixes it.
TEST_F(WeightsCommands, TheLargeMachineRunsProgramsThatNeedItsMemory) {
  ProcessResult compiled = rvformer({"compile", "--machine", "rvformer-large", "-o", path("large")});
  ASSERT_EQ(compiled.exit_status, 0) << compiled.standard_error;
  EXPECT_THAT(compiled.standard_output, HasSubstr("the rvformer-large machine"));
  const std::string program = write_source("big_heap.c",
                                           "#include <stdio.h>\n#include <stdlib.h>\n"
                                           "int main(void) {\n"
                                           "  unsigned n = 9 * 1024, *a = malloc(n * sizeof *a), h = 0;\n"
                                           "  if (!a) { puts(\"no memory\"); return 1; }\n"
                                           "  for (unsigned i = 0; i < n; i++) a[i] = i * 2654435761u;\n"
                                           "  for (unsigned i = 0; i < n; i += 97) h = h * 31 + a[i];\n"
                                           "  printf(\"%08x\\n\", h);\n"
                                           "  return 0;\n"
                                           "}\n");
  ProcessResult small = rvformer({"run", "--on", "emulator", program});
  EXPECT_EQ(small.standard_output, "no memory\n");
  ProcessResult golden = rvformer({"run", "--on", "emulator", "--machine", "rvformer-large", program});
  ASSERT_EQ(golden.exit_status, 0) << golden.standard_error;
  ProcessResult verified = rvformer({"verify", "--machine", "rvformer-large", "--check-every", "64", "--model", path("large"), program});
  EXPECT_EQ(verified.exit_status, 0) << verified.standard_error;
  EXPECT_EQ(verified.standard_output, golden.standard_output);
  EXPECT_THAT(last_line(verified.standard_error), HasSubstr("lockstep clean"));
  ProcessResult mismatched = rvformer({"run", "--model", path("large"), program});
  EXPECT_EQ(mismatched.exit_status, 2);
  EXPECT_THAT(errors(mismatched.standard_error), HasSubstr("holds the rvformer-large machine, not rvformer; pass --machine rvformer-large"));
}

// verify gives both machines the same console input, from --input FILE or standard input.
TEST_F(WeightsCommands, VerifyFeedsTheSameInputToBothMachines) {
  std::string input = path("input.txt");
  std::ofstream(input) << "12 30\n";
  const std::string program = write_source("sum.c",
                                           "#include <stdio.h>\n"
                                           "int main(void) { int a, b; if (scanf(\"%d %d\", &a, &b) != 2) return 9;\n"
                                           "  printf(\"%d\\n\", a + b); return a; }\n");
  ProcessResult verified = rvformer({"verify", "--input", input, program});
  EXPECT_EQ(verified.exit_status, 0) << verified.standard_error;
  EXPECT_EQ(verified.standard_output, "42\n");
  EXPECT_THAT(last_line(verified.standard_error), HasSubstr("ended with exit 12"));
}

}  // namespace
}  // namespace rvformer::cli
