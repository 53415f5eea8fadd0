// cli/calc_commands_test.cpp — `rvformer calc` end to end on the golden emulator (label toolchain):
// the value on stdout and status 0, an error line and status 1, several expressions from standard
// input, --stats, and bad command lines refused with one line. (The weights: cli_weights_test.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli_testing.h"

namespace rvformer::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using toolchain::ProcessResult;

ProcessResult calc(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), {"calc", "--on", "emulator"});
  return run_rvformer(std::move(arguments), std::chrono::seconds(120));
}

// `rvformer calc ARGUMENTS` with `input` on its standard input (through the shell).
ProcessResult calc_with_input(const std::string& input, const std::string& arguments) {
  return toolchain::run_process(
      {"/bin/sh", "-c", "printf '%s' \"$1\" | \"$2\" calc --on emulator " + arguments, "sh", input, RVFORMER_BINARY},
      {.capture_output = true, .timeout = std::chrono::seconds(120)});
}

TEST(CalcCommand, PrintsTheValueWithStatusZero) {
  ProcessResult result = calc({"(2**100 + 2) / 3"});
  EXPECT_EQ(result.standard_output, "422550200076076467165567735126\n");
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_EQ(result.standard_error, "");
  EXPECT_EQ(calc({"-2**2"}).standard_output, "-4\n");  // an expression may start with '-'
  EXPECT_EQ(calc({"10/4"}).standard_output, "2.5\n");
  EXPECT_EQ(calc({"10/6"}).standard_output, "5/3\n");
}

TEST(CalcCommand, AnErrorAnswerIsALineOnStdoutAndStatusOne) {
  for (const auto& [expression, answer] : std::vector<std::pair<std::string, std::string>>{
           {"1/0", "error: division by zero"},
           {"2 +", "error: syntax error at column 4"},
           {"", "error: empty expression"},
           {"2**(1/2)", "error: non-integer exponent"},
           {"7**123456789", "error: result too large"}}) {
    ProcessResult result = calc({expression});
    EXPECT_EQ(result.standard_output, answer + "\n") << expression;
    EXPECT_EQ(result.exit_status, 1) << expression;
    EXPECT_EQ(result.standard_error, "") << expression;
  }
}

TEST(CalcCommand, ReadsOneExpressionALineFromStandardInput) {
  ProcessResult result = calc_with_input("1+1\n2*3\n", "-");
  EXPECT_EQ(result.standard_output, "2\n6\n");
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  ProcessResult with_error = calc_with_input("1/4\n1/0\n5", "");
  EXPECT_EQ(with_error.standard_output, "0.25\nerror: division by zero\n5\n");
  EXPECT_EQ(with_error.exit_status, 1);
}

TEST(CalcCommand, StatsEndStandardError) {
  ProcessResult result = calc({"--stats", "3**100"});
  EXPECT_EQ(result.standard_output, "515377520732011331036461129765621272702107522001\n");
  EXPECT_THAT(last_line(result.standard_error),
              MatchesRegex(R"(\{"on": "emulator", "instructions": [0-9]+, .*"exit_code": 0\})"));
}

TEST(CalcCommand, BadCommandLinesAreRefusedWithOneLine) {
  ProcessResult where = run_rvformer({"calc", "--on", "moon", "1"}, std::chrono::seconds(60));
  EXPECT_EQ(where.exit_status, 2);
  EXPECT_THAT(where.standard_error, HasSubstr("rvformer: error: --on: moon not in {emulator,weights}"));
  ProcessResult engine = calc({"--engine", "dense", "1"});
  EXPECT_EQ(engine.exit_status, 2);
  EXPECT_EQ(engine.standard_error,
            "rvformer: error: --model, --engine and --dump-trace apply to runs in the weights (--on weights)\n");
  ProcessResult extra = calc({"1", "2"});
  EXPECT_EQ(extra.exit_status, 2);
  EXPECT_THAT(extra.standard_error, HasSubstr("rvformer: error: "));
}

TEST(CalcCommand, AMissingFirmwareIsABuildFailure) {
  toolchain::TemporaryDirectory empty;
  ProcessResult result = toolchain::run_process(
      {"env", "RVFORMER_SOURCE_DIR=" + empty.path().string(), RVFORMER_BINARY, "calc", "--on", "emulator", "1"},
      {.capture_output = true, .timeout = std::chrono::seconds(60)});
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_THAT(result.standard_error, HasSubstr("rvformer: error: the calc firmware is missing"));
}

}  // namespace
}  // namespace rvformer::cli
