// cli/command_line_test.cpp — the `rvformer` command line itself, run as a user would: numeric
// options take only whole numbers in range, unknown commands are named, --version and help work,
// and every file argument that is a directory, missing, in a missing directory or not what it should
// be is refused before any long work. Every refusal is one line, `rvformer: error: ...`, status 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "cli/cli_testing.h"
#include "support/file.h"
#include "toolchain/source_tree.h"

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
    {{"calc", "--on", "emulator", "1", "--max-instructions"}, "from 0 to 18446744073709551615"},
    {{"verify", "missing.c", "--check-every"}, "from 1 to 18446744073709551615"},
    {{"verify", "missing.c", "--checkpoint-every"}, "from 1 to 18446744073709551615"},
    {{"cc", "-o", "out.elf", "missing.c", "-O"}, "from 0 to 3"},
    {{"model", "generate", "missing-dir", "--tokens", "1", "--steps"}, "from 0 to 18446744073709551615"},
    {{"model", "generate", "missing-dir", "--tokens", "1", "--threads"}, "from 0 to 1024"},
    {{"model", "synth", "-o", "file/model", "--seed"}, "from 0 to 18446744073709551615"},
    {{"model", "synth", "-o", "file/model", "--hidden"}, "from 0 to 18446744073709551615"},
    {{"model", "synth", "-o", "file/model", "--layers"}, "from 0 to 18446744073709551615"},
    {{"model", "synth", "-o", "file/model", "--vocab"}, "from 0 to 18446744073709551615"},
    {{"model", "synth", "-o", "file/model", "--shard-mb"}, "from 0 to 18446744073709"},
};

TEST(CommandLine, NumericOptionsTakeOnlyWholeNumbersInRange) {
  for (const NumericOption& option : kNumericOptions) {
    const std::string& name = option.command.back();
    std::vector<std::string> bad = {"-1", "-5", "18446744073709551616", "1e23", "", "2.5", "0x10", " 5", "+5", "5x"};
    if (option.range.starts_with("from 1")) bad.push_back("0");
    if (option.range.ends_with("to 3")) bad.push_back("4");
    if (option.range.ends_with("to 1024")) bad.push_back("1025");
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
  const std::string commands = "the commands are run, cc, calc, story, model, compile, verify, tokenize, chat, merge (rvformer --help)";
  expect_refused({"bogus"}, "unknown command 'bogus'; " + commands);
  expect_refused({"model", "bogus"},
                 "unknown command 'model bogus'; the model commands are info, generate, synth (rvformer model --help)");
  expect_refused({}, "no command given; " + commands);
  expect_refused({"model"}, "no command given; the model commands are info, generate, synth (rvformer model --help)");
  expect_refused({"--bogus"}, "unknown option '--bogus' where a command belongs; " + commands);
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

// The options a command's --help lists ("--max-instructions", "-o", ...), --help itself left out.
std::vector<std::string> listed_options(const std::string& help) {
  std::vector<std::string> options;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line[start] != '-') continue;
    std::istringstream names(line.substr(start, line.find(' ', start) - start));
    for (std::string name; std::getline(names, name, ',');)
      if (name != "-h" && name != "--help") options.push_back(name);
  }
  return options;
}

TEST(CommandLine, TheReadmeDocumentsEveryOptionOfEveryCommand) {
  const std::string readme = read_file_text(toolchain::source_tree() / "README.md");
  const std::vector<std::vector<std::string>> commands = {
      {}, {"run"}, {"cc"}, {"calc"}, {"verify"}, {"compile"}, {"model", "info"}, {"model", "generate"}, {"model", "synth"},
      {"tokenize"}, {"chat"}, {"merge"}};
  for (std::vector<std::string> command : commands) {
    command.push_back("--help");
    ProcessResult help = rvformer(command);
    ASSERT_EQ(help.exit_status, 0) << help.standard_error;
    for (const std::string& option : listed_options(help.standard_output))
      EXPECT_TRUE(std::regex_search(readme, std::regex("(^|[^-a-z])" + option + "([^-a-z]|$)")))
          << "README.md does not mention " << option << " of `rvformer " << command[0] << "`";
  }
}

// Every file the command line reads or writes, given something it cannot use. Paths are relative to
// the test's scratch directory (the command runs there): "dir" and "dir.c" are directories, "file"
// a regular file, "fifo" and "fifo.c" named pipes (neither a file nor a directory), "machine" a
// directory with a corrupt rvformer-machine.json, "nowhere" nothing.
struct FileArgumentCase {
  std::vector<std::string> arguments;
  std::string message;                   // after "rvformer: error: "
  std::vector<std::string> environment = {};  // VARIABLE=value
};

const FileArgumentCase kFileArguments[] = {
    // Programs to run or verify, and sources to compile.
    {{"run", "--on", "emulator", "dir.c"}, "dir.c: is a directory"},
    {{"run", "--on", "emulator", "dir"}, "dir: is a directory"},
    {{"run", "--on", "emulator", "nowhere.c"}, "nowhere.c: no such file"},
    {{"run", "--on", "emulator", "nowhere/prog.elf"}, "nowhere/prog.elf: no such file"},
    {{"run", "--on", "emulator", "fifo.c"}, "fifo.c: not a regular file"},
    {{"cc", "-o", "out.elf", "fifo.c"}, "fifo.c: not a regular file"},
    {{"verify", "dir.c"}, "dir.c: is a directory"},
    {{"cc", "-o", "out.elf", "dir.c"}, "dir.c: is a directory"},
    {{"cc", "-o", "out.elf", "nowhere.c"}, "nowhere.c: no such file"},
    {{"cc", "-o", "out.elf", "file.o"}, "file.o: not a C or assembly source (.c, .s or .S)"},
    {{"cc", "-o", "out.elf", "file.elf"}, "file.elf: not a C or assembly source (.c, .s or .S)"},
    // Files written.
    {{"cc", "-o", "dir", "file.c"}, "cannot write dir: it is a directory"},
    {{"cc", "-o", "nowhere/out.elf", "file.c"}, "cannot write nowhere/out.elf: no such directory nowhere"},
    {{"run", "--dump-trace", "dir"}, "cannot write dir: it is a directory"},
    {{"run", "--dump-trace", "nowhere/trace.txt"}, "cannot write nowhere/trace.txt: no such directory nowhere"},
    {{"run", "--dump-trace", "file/trace.txt"}, "cannot write file/trace.txt: file is not a directory"},
    {{"run", "--dump-trace", "fifo"}, "cannot write fifo: not a regular file"},
    {{"calc", "1+1", "--dump-trace", "dir"}, "cannot write dir: it is a directory"},
    {{"compile", "-o", "file/machine"}, "cannot write file/machine: file is not a directory"},
    // Run checkpoints: read if they exist, written as the run goes.
    {{"verify", "--checkpoint", "dir"}, "dir: is a directory"},
    {{"verify", "--checkpoint", "fifo"}, "fifo: not a regular file"},
    {{"verify", "--checkpoint", "nowhere/run.checkpoint"},
     "cannot write nowhere/run.checkpoint: no such directory nowhere"},
    // Compiled machines and checkpoints.
    {{"run", "--model", "nowhere"}, "nowhere: no such directory"},
    {{"run", "--model", "file"}, "file: not a directory"},
    {{"calc", "1+1", "--model", "nowhere"}, "nowhere: no such directory"},
    {{"run", "--model", "dir"}, "dir is not a compiled rvformer machine (no rvformer-machine.json)"},
    {{"run", "--model", "machine"},
     "machine/rvformer-machine.json: not a machine description (not JSON: syntax error at byte 4); compile "
     "the machine again"},
    {{"verify", "--model", "file"}, "file: not a directory"},
    {{"run", "--max-instructions", "1"}, "cannot write file/machine-", {"RVFORMER_CACHE=file"}},
    {{"model", "info", "nowhere"}, "nowhere: no such directory"},
    {{"model", "info", "file"}, "file: not a directory"},
    {{"model", "generate", "file", "--tokens", "1"}, "file: not a directory"},
    {{"model", "synth", "-o", "file/model"}, "cannot write file/model: file is not a directory"},
    {{"model", "synth", "-o", "new", "--tokenizer-dir", "nowhere"}, "nowhere: no such directory"},
    // Tokenizers and chat templates, and the text and messages given to them.
    {{"tokenize", "nowhere", "text"}, "nowhere: no such directory"},
    {{"tokenize", "file", "text"}, "file: not a directory"},
    {{"tokenize", "dir", "--file", "dir.c"}, "dir.c: is a directory"},
    {{"tokenize", "dir", "--file", "nowhere.txt"}, "nowhere.txt: no such file"},
    {{"chat", "nowhere", "--print-prompt", "--prompt", "hi"}, "nowhere: no such directory"},
    {{"chat", "dir", "--print-prompt", "--messages", "dir.c"}, "dir.c: is a directory"},
    {{"chat", "dir", "--print-prompt", "--messages", "fifo"}, "fifo: not a regular file"},
    // State files, checked before the model loads.
    {{"model", "generate", "dir", "--tokens", "1", "--load-state", "dir.c"}, "dir.c: is a directory"},
    {{"model", "generate", "dir", "--tokens", "1", "--load-state", "nowhere.state"}, "nowhere.state: no such file"},
    {{"model", "generate", "dir", "--tokens", "1", "--load-state", "fifo"}, "fifo: not a regular file"},
    {{"model", "generate", "dir", "--tokens", "1", "--save-state", "dir.c"}, "cannot write dir.c: it is a directory"},
    {{"model", "generate", "dir", "--tokens", "1", "--save-state", "nowhere/final.state"},
     "cannot write nowhere/final.state: no such directory nowhere"},
    // --tokens is checked before the model is even looked for.
    {{"model", "generate", "nowhere", "--tokens", "1,x"},
     "--tokens: 'x' is not a token id (expected comma-separated numbers such as 5,17,3)"},
};

TEST(CommandLine, FileArgumentsThatCannotBeUsedAreRefusedUpFront) {
  toolchain::TemporaryDirectory scratch;
  const std::filesystem::path& root = scratch.path();
  std::filesystem::create_directory(root / "dir");
  std::filesystem::create_directory(root / "dir.c");
  std::filesystem::create_directory(root / "machine");
  for (const char* name : {"file", "file.c", "file.o", "file.elf"}) std::ofstream(root / name) << "int x;\n";
  std::ofstream(root / "machine" / "rvformer-machine.json") << "{ not json";
  for (const char* name : {"fifo", "fifo.c"}) ASSERT_EQ(::mkfifo((root / name).c_str(), 0644), 0) << name;
  for (const FileArgumentCase& c : kFileArguments) {
    std::vector<std::string> command = {"env", "-C", root.string()};
    command.insert(command.end(), c.environment.begin(), c.environment.end());
    command.push_back(RVFORMER_BINARY);
    command.insert(command.end(), c.arguments.begin(), c.arguments.end());
    ProcessResult result =
        toolchain::run_process(command, {.capture_output = true, .timeout = std::chrono::seconds(60)});
    std::string shown;
    for (const std::string& argument : c.arguments) shown += " " + argument;
    EXPECT_EQ(result.exit_status, 2) << shown << "\n" << result.standard_error;
    if (c.environment.empty())
      EXPECT_EQ(result.standard_error, "rvformer: error: " + c.message + "\n") << shown;
    else  // the cache's name holds the build's fingerprint
      EXPECT_THAT(result.standard_error, MatchesRegex("rvformer: error: " + c.message + "[0-9a-f]{16}: file is not a directory\n"));
  }
  EXPECT_FALSE(std::filesystem::exists(root / "nowhere"));
}

}  // namespace
}  // namespace rvformer::cli
