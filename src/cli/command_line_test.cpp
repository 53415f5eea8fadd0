// cli/command_line_test.cpp — the `rvformer` command line itself, run as a user would: numeric
// options take only whole numbers in range, unknown commands are named, --version and help work.
// Every refusal is one line, `rvformer: error: ...`, with status 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "cli/cli_testing.h"

namespace rvformer::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;
using toolchain::ProcessResult;

ProcessResult rvformer(std::vector<std::string> arguments) { return run_rvformer(std::move(arguments), std::chrono::seconds(60)); }

// Runs `arguments` and expects a refusal: status 2 and exactly one line on stderr.
void expect_refused(const std::vector<std::string>& arguments, const std::string& message) {
  std::string command;
  for (const std::string& argument : arguments) command += " '" + argument + "'";
  ProcessResult result = rvformer(arguments);
  EXPECT_EQ(result.exit_status, 2) << command << "\n" << result.standard_error;
  EXPECT_EQ(result.standard_error, "rvformer: error: " + message + "\n") << command;
  EXPECT_EQ(result.standard_output, "") << command;
}

// Each command names files that do not exist, so that a value wrongly accepted fails at once (with
// another message) instead of starting a long run.
struct NumericOption {
  std::vector<std::string> command;  // the command and option, the value follows
  std::string range;                 // as the error states it
};

const NumericOption kNumericOptions[] = {
    {{"run", "--on", "emulator", "missing.c", "--max-instructions"}, "from 0 to 18446744073709551615"},
    {{"verify", "missing.c", "--max-instructions"}, "from 0 to 18446744073709551615"},
    {{"verify", "missing.c", "--check-every"}, "from 1 to 18446744073709551615"},
    {{"verify", "missing.c", "--checkpoint-every"}, "from 1 to 18446744073709551615"},
    {{"cc", "-o", "out.elf", "missing.c", "-O"}, "from 0 to 3"},
    {{"model", "generate", "missing-dir", "--tokens", "1", "--steps"}, "from 0 to 18446744073709551615"},
};

TEST(CommandLine, NumericOptionsTakeOnlyWholeNumbersInRange) {
  for (const NumericOption& option : kNumericOptions) {
    const std::string& name = option.command.back();
    std::vector<std::string> bad = {"-1", "-5", "18446744073709551616", "1e23", "", "2.5", "0x10", " 5", "+5", "5x"};
    if (option.range.starts_with("from 1")) bad.push_back("0");
    if (option.range.ends_with("to 3")) bad.push_back("4");
    for (const std::string& value : bad) {
      std::vector<std::string> arguments = option.command;
      arguments.push_back(value);
      expect_refused(arguments, fmt::format("{}: '{}' is not a whole number {}", name, value, option.range));
    }
  }
}

TEST(CommandLine, TheLargestCountIsAccepted) {
  ProcessResult result = rvformer({"run", "--on", "emulator", "--max-instructions", "18446744073709551615",
                                   "--model", "x", "missing.c"});
  // Parsed: the run goes on to the next check, which refuses --model off the weights.
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(result.standard_error, HasSubstr("apply to runs in the weights"));
}

TEST(CommandLine, UnknownCommandsAreNamed) {
  expect_refused({"bogus"}, "unknown command 'bogus'; the commands are run, cc, model, compile, verify (rvformer --help)");
  expect_refused({"model", "bogus"},
                 "unknown command 'model bogus'; the model commands are info, generate (rvformer model --help)");
  expect_refused({}, "no command given; the commands are run, cc, model, compile, verify (rvformer --help)");
  expect_refused({"model"}, "no command given; the model commands are info, generate (rvformer model --help)");
  expect_refused({"--bogus"}, "unknown option '--bogus' where a command belongs; the commands are run, cc, model, "
                              "compile, verify (rvformer --help)");
}

TEST(CommandLine, VersionAndHelp) {
  ProcessResult version = rvformer({"--version"});
  EXPECT_EQ(version.exit_status, 0) << version.standard_error;
  EXPECT_EQ(version.standard_output, "rvformer " RVFORMER_VERSION "\n");
  for (const std::vector<std::string>& help : {std::vector<std::string>{"help"}, {"--help"}}) {
    ProcessResult result = rvformer(help);
    EXPECT_EQ(result.exit_status, 0) << result.standard_error;
    EXPECT_THAT(result.standard_output, HasSubstr("Run a RISC-V program"));
  }
  ProcessResult run_help = rvformer({"help", "run"});
  EXPECT_EQ(run_help.exit_status, 0) << run_help.standard_error;
  EXPECT_THAT(run_help.standard_output, HasSubstr("--max-instructions"));
}

}  // namespace
}  // namespace rvformer::cli
