// firmware/calc/tests/calc_firmware_test.cpp — the calculator firmware on the golden emulator:
// 1,000 random expressions (make_corpus.py, checked with Python's fractions.Fraction) and edge cases
// in one run, the error lines, and the console protocol (an answer before any byte of the next line).
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "emulator/emulator.h"
#include "program/machine_spec.h"
#include "support/file.h"
#include "toolchain/process.h"
#include "toolchain/program_loader.h"

namespace rvformer {
namespace {

const program::ProgramImage& firmware() {
  static const program::ProgramImage image = toolchain::load_firmware("calc", program::kRvformerMap);
  return image;
}

struct CalcRun {
  std::string output;
  std::uint32_t exit_code = 0;
  bool exited = false;
  std::uint64_t instructions = 0;
  std::vector<std::size_t> input_read_at_answer;  // input bytes read when each answer's '\n' was printed
};

CalcRun run_calc(const std::string& input, std::uint64_t max_instructions = 20'000'000'000) {
  emulator::Emulator machine(firmware());
  CalcRun run;
  std::size_t next = 0;  // bytes read so far
  emulator::InputSource text = emulator::text_input(input);
  machine.set_input([&] {
    int c = text();
    next += c >= 0;
    return c;
  });
  emulator::RunResult result = machine.run(max_instructions, [&](std::uint8_t c) {
    run.output.push_back(static_cast<char>(c));
    if (c == '\n') run.input_read_at_answer.push_back(next);
  });
  run.exited = result.reason == emulator::StopReason::kExited;
  run.exit_code = result.exit_code;
  run.instructions = machine.instructions_retired();
  return run;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) result.push_back(line);
  return result;
}

TEST(CalcFirmware, AgreesWithPythonFractionsOnTheCorpus) {
  toolchain::TemporaryDirectory directory;
  const std::string prefix = (directory.path() / "corpus").string();
  toolchain::ProcessResult generated =
      toolchain::run_process({"/usr/bin/python3", CALC_CORPUS_SCRIPT, prefix, "--seed", "2024", "--count", "1000"},
                             {.capture_output = true, .timeout = std::chrono::seconds(120)});
  ASSERT_EQ(generated.exit_status, 0) << generated.standard_error;
  const std::string input = read_file_text(prefix + ".in");
  const std::vector<std::string> expressions = lines(input);
  const std::vector<std::string> expected = lines(read_file_text(prefix + ".expected"));
  ASSERT_GE(expressions.size(), 1000u);
  ASSERT_EQ(expressions.size(), expected.size());

  CalcRun run = run_calc(input);
  EXPECT_TRUE(run.exited);
  EXPECT_EQ(run.exit_code, 0u);
  const std::vector<std::string> answers = lines(run.output);
  ASSERT_EQ(answers.size(), expected.size()) << "one answer line per expression";
  int wrong = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (answers[i] == expected[i]) continue;
    if (++wrong <= 10)
      ADD_FAILURE() << "line " << i + 1 << ": " << expressions[i].substr(0, 200) << "\n  expected "
                    << expected[i].substr(0, 200) << "\n  got      " << answers[i].substr(0, 200);
  }
  EXPECT_EQ(wrong, 0) << "of " << expected.size();
  std::printf("corpus: %zu expressions, %llu instructions\n", expected.size(),
              static_cast<unsigned long long>(run.instructions));
}

struct ErrorCase {
  std::string expression;
  std::string answer;
};

TEST(CalcFirmware, ErrorsAreOneLineEach) {
  const std::string huge(12000, '9'), huger(30000, '7');
  const std::vector<ErrorCase> cases = {
      {"", "error: empty expression"},
      {"   \t", "error: empty expression"},
      {"1/0", "error: division by zero"},
      {"5 // (2 - 2)", "error: division by zero"},
      {"7 % 0.0", "error: division by zero"},
      {"0 ** -2", "error: division by zero"},
      {"(1/3) / (3 * 0)", "error: division by zero"},
      {"2 ** 0.5", "error: non-integer exponent"},
      {"4 ** (1/2)", "error: non-integer exponent"},
      {"1 +", "error: syntax error at column 4"},
      {"1 + * 2", "error: syntax error at column 5"},
      {"(1 + 2", "error: syntax error at column 7"},
      {"1 + 2)", "error: syntax error at column 6"},
      {"2 3", "error: syntax error at column 3"},
      {"1.2.3", "error: syntax error at column 4"},
      {".", "error: syntax error at column 1"},
      {"1 +* 2", "error: syntax error at column 4"},
      {"1e5", "error: syntax error at column 2"},
      {"abc", "error: syntax error at column 1"},
      {"()", "error: syntax error at column 2"},
      {"1/0 +", "error: syntax error at column 6"},  // a syntax error wins, as in Python
      {"2 *** 3", "error: syntax error at column 5"},
      {"1 / 0 + 2 ** 0.5", "error: division by zero"},  // the first error in evaluation order
      {"2 ** 1000000000", "error: result too large"},
      {"10 ** 100000", "error: result too large"},
      {"(1/3) ** 100000", "error: result too large"},
      {huger + " * " + huger, "error: result too large"},  // two such operands alone fill the RAM
      {"10 ** 50000", "error: result too large"},
      {"(1/2) ** 100000", "error: result too large"},  // 1/2^100000 fits, its 100,000 decimals do not
      {"(" + huge + ")**3", "error: result too large"},
      {std::string(450, '(') + "1" + std::string(450, ')'), "error: expression nested too deeply"},
      {"1 + 1", "2"},  // and the next line is fine again
  };
  std::string input;
  for (const ErrorCase& c : cases) input += c.expression + "\n";
  CalcRun run = run_calc(input);
  EXPECT_TRUE(run.exited);
  EXPECT_EQ(run.exit_code, 0u);
  const std::vector<std::string> answers = lines(run.output);
  ASSERT_EQ(answers.size(), cases.size()) << run.output;
  for (std::size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(answers[i], cases[i].answer) << "for " << cases[i].expression.substr(0, 80);
}

TEST(CalcFirmware, AnswersEachLineBeforeReadingTheNext) {
  const std::string input = "1+1\n\n2 +\n(3\n7/2\n";
  CalcRun run = run_calc(input);
  EXPECT_EQ(run.output, "2\nerror: empty expression\nerror: syntax error at column 4\nerror: syntax error at column 3\n3.5\n");
  std::vector<std::size_t> line_ends;
  for (std::size_t i = 0; i < input.size(); ++i)
    if (input[i] == '\n') line_ends.push_back(i + 1);
  EXPECT_EQ(run.input_read_at_answer, line_ends) << "each answer comes right after its line's newline is read";
  EXPECT_TRUE(run.exited);
  EXPECT_EQ(run.exit_code, 0u);
}

TEST(CalcFirmware, ALastLineWithoutNewlineIsAnsweredAndNoInputEndsAtOnce) {
  CalcRun last = run_calc("6*7");
  EXPECT_EQ(last.output, "42\n");
  EXPECT_TRUE(last.exited);
  EXPECT_EQ(last.exit_code, 0u);
  CalcRun none = run_calc("");
  EXPECT_EQ(none.output, "");
  EXPECT_TRUE(none.exited);
  EXPECT_EQ(none.exit_code, 0u);
}

TEST(CalcFirmware, TenThousandDigitNumbersGoInAndOut) {
  std::string digits;
  for (int i = 0; i < 10000; ++i) digits.push_back(static_cast<char>('1' + (i * 7 + i / 13) % 9));
  CalcRun run = run_calc(digits + "\n" + digits + "-" + digits + "+1\n" + "10**10000-1\n");
  const std::vector<std::string> answers = lines(run.output);
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[0], digits);
  EXPECT_EQ(answers[1], "1");
  EXPECT_EQ(answers[2], std::string(10000, '9'));
}

}  // namespace
}  // namespace rvformer
