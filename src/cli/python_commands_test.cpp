// cli/python_commands_test.cpp — `rvformer run script.py` and `run -c CODE` on the golden emulator:
// every script of the corpus (firmware/micropython/tests, examples/python) prints what CPython
// (/usr/bin/python3, run here and now) prints; tracebacks, sys.exit, console input and the one-line
// errors. Runs in the weights: src/cli/python_weights_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/cli_testing.h"
#include "toolchain/source_tree.h"

namespace rvformer::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using toolchain::ProcessResult;

// The first run builds the interpreter into the build tree's cache (a minute or two).
ProcessResult rvformer(std::vector<std::string> arguments) { return run_rvformer(std::move(arguments), std::chrono::seconds(600)); }

ProcessResult emulator(const std::vector<std::string>& arguments) {
  std::vector<std::string> command = {"run", "--on", "emulator"};
  command.insert(command.end(), arguments.begin(), arguments.end());
  return rvformer(command);
}

std::vector<std::filesystem::path> python_files(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    if (entry.path().extension() == ".py") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::filesystem::path> corpus() {
  std::vector<std::filesystem::path> scripts = python_files(toolchain::source_tree() / "firmware" / "micropython" / "tests");
  std::vector<std::filesystem::path> examples = python_files(toolchain::examples_directory() / "python");
  scripts.insert(scripts.end(), examples.begin(), examples.end());
  return scripts;
}

std::string test_name(const ::testing::TestParamInfo<std::filesystem::path>& info) {
  std::string name = info.param.parent_path().filename().string() + "_" + info.param.stem().string();
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
}

class PythonCorpus : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(PythonCorpus, PrintsWhatCPythonPrints) {
  const std::string script = GetParam().string();
  ProcessResult cpython = toolchain::run_process({"/usr/bin/python3", script},
                                                 {.capture_output = true, .timeout = std::chrono::seconds(60)});
  ASSERT_EQ(cpython.exit_status, 0) << "CPython: " << cpython.standard_error;
  ProcessResult micropython = emulator({script});
  EXPECT_EQ(micropython.exit_status, 0) << micropython.standard_error;
  EXPECT_EQ(micropython.standard_output, cpython.standard_output);
}

INSTANTIATE_TEST_SUITE_P(Scripts, PythonCorpus, ::testing::ValuesIn(corpus()), test_name);

using PythonCommands = CommandTest;

TEST_F(PythonCommands, RunsAOneLiner) {
  ProcessResult result = emulator({"-c", "print(2**100)"});
  EXPECT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_EQ(result.standard_output, "1267650600228229401496703205376\n");
}

TEST_F(PythonCommands, UncaughtExceptionPrintsItsTracebackAndEndsWithStatusOne) {
  std::string script = write_source("fails.py", "def f(x):\n    raise ValueError('bad %d' % x)\nprint('before')\nf(3)\n");
  ProcessResult result = emulator({script});
  EXPECT_EQ(result.exit_status, 1);
  EXPECT_THAT(result.standard_output, StartsWith("before\nTraceback (most recent call last):\n"));
  EXPECT_THAT(result.standard_output, HasSubstr("File \"fails.py\", line 4"));
  EXPECT_THAT(result.standard_output, HasSubstr("File \"fails.py\", line 2, in f"));
  EXPECT_THAT(result.standard_output, HasSubstr("ValueError: bad 3\n"));
}

TEST_F(PythonCommands, SyntaxErrorEndsWithStatusOne) {
  ProcessResult result = emulator({"-c", "print('unclosed'"});
  EXPECT_EQ(result.exit_status, 1);
  EXPECT_THAT(result.standard_output, HasSubstr("SyntaxError"));
}

TEST_F(PythonCommands, SysExitGivesItsCode) {
  EXPECT_EQ(emulator({"-c", "import sys\nsys.exit(7)"}).exit_status, 7);
  EXPECT_EQ(emulator({"-c", "import sys\nsys.exit()"}).exit_status, 0);
}

TEST_F(PythonCommands, InputReadsConsoleInputLineByLine) {
  std::string input = write_source("input.txt", "Ada\n41\n");
  ProcessResult result =
      emulator({"--input", input, "-c", "name = input('name? ')\nage = int(input())\nprint(name, age + 1)\ninput()"});
  EXPECT_EQ(result.exit_status, 1);
  EXPECT_THAT(result.standard_output, StartsWith("name? Ada 42\nTraceback"));
  EXPECT_THAT(result.standard_output, HasSubstr("EOFError"));
}

TEST_F(PythonCommands, MissingScriptIsOneLine) {
  ProcessResult result = emulator({path("missing.py")});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_EQ(result.standard_error, "rvformer: error: " + path("missing.py") + ": no such file\n");
}

TEST_F(PythonCommands, ScriptLargerThanReadOnlyDataIsRefused) {
  std::string script = write_source("huge.py", std::string(200 * 1024, '#') + "\n");
  ProcessResult result = emulator({script});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(result.standard_error, HasSubstr("huge.py: 204801 bytes, larger than the "));
}

TEST_F(PythonCommands, OtherMachinesAreRefused) {
  ProcessResult result = emulator({"--machine", "rvformer", "-c", "print(1)"});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(result.standard_error, HasSubstr("Python scripts run on the rvformer-large machine"));
  EXPECT_EQ(emulator({"--machine", "rvformer-large", "-c", "print(1)"}).standard_output, "1\n");
}

TEST_F(PythonCommands, MissingMicroPythonSourceSaysHowToFetchIt) {
  ProcessResult result = toolchain::run_process(
      {"env", "RVFORMER_MICROPYTHON_SOURCE=" + path("nowhere"), RVFORMER_BINARY, "run", "--on", "emulator", "-c", "1"},
      {.capture_output = true, .timeout = std::chrono::seconds(60)});
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_EQ(result.standard_error, "rvformer: error: MicroPython's source is not in " + path("nowhere") +
                                       "; fetch it with firmware/micropython/fetch-source.sh " + path("nowhere") +
                                       " (scripts/setup.sh does), or set RVFORMER_MICROPYTHON_SOURCE to a copy\n");
}

TEST_F(PythonCommands, ProgramAndCodeTogetherAreRefused) {
  ProcessResult result = emulator({"-c", "print(1)", toolchain::default_program().string()});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_THAT(result.standard_error, HasSubstr("give a program or -c CODE, not both"));
}

}  // namespace
}  // namespace rvformer::cli
