// firmware/calc/tests/calc_firmware_test.cpp — the calculator firmware on the golden emulator:
// 1,000 random expressions (make_corpus.py, checked with Python's fractions.Fraction) and edge cases
// in one run, the error lines, and the console protocol (an answer before any byte of the next line).
// The corpus, the errors and the long numbers run on both builds, for the plain machine (`rvformer`)
// and for the one with the big-integer unit (`rvformer-bigint`, whose products use the unit); random
// products of 1 to 250 limbs check the unit's build against the plain one.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../limbs.h"
#include "emulator/emulator.h"
#include "program/machine_spec.h"
#include "support/file.h"
#include "toolchain/process.h"
#include "toolchain/program_loader.h"

namespace rvformer {
namespace {

constexpr program::MemoryMap kBigintMap = program::kBigintMachine.memory_map();

// The firmware built for the plain machine, or for the one with the big-integer unit.
const program::ProgramImage& firmware(bool bigint = false) {
  static const program::ProgramImage plain = toolchain::load_firmware("calc", program::kRvformerMap);
  static const program::ProgramImage unit = toolchain::load_firmware("calc", kBigintMap);
  return bigint ? unit : plain;
}

struct CalcRun {
  std::string output;
  std::uint32_t exit_code = 0;
  bool exited = false;
  std::uint64_t instructions = 0;
  std::vector<std::size_t> input_read_at_answer;  // input bytes read when each answer's '\n' was printed
};

CalcRun run_calc(const std::string& input, bool bigint = false, std::uint64_t max_instructions = 20'000'000'000) {
  emulator::Emulator machine(firmware(bigint));
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

// Parameter: whether the firmware is built for (and run on) the machine with the big-integer unit.
class CalcFirmwareOnBoth : public testing::TestWithParam<bool> {};

INSTANTIATE_TEST_SUITE_P(Machines, CalcFirmwareOnBoth, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) { return info.param ? "Bigint" : "Plain"; });

TEST_P(CalcFirmwareOnBoth, AgreesWithPythonFractionsOnTheCorpus) {
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

  CalcRun run = run_calc(input, GetParam());
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
  std::printf("corpus (%s): %zu expressions, %llu instructions\n", GetParam() ? "rvformer-bigint" : "rvformer", expected.size(),
              static_cast<unsigned long long>(run.instructions));
}

struct ErrorCase {
  std::string expression;
  std::string answer;
};

TEST_P(CalcFirmwareOnBoth, ErrorsAreOneLineEach) {
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
  CalcRun run = run_calc(input, GetParam());
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

TEST_P(CalcFirmwareOnBoth, TenThousandDigitNumbersGoInAndOut) {
  std::string digits;
  for (int i = 0; i < 10000; ++i) digits.push_back(static_cast<char>('1' + (i * 7 + i / 13) % 9));
  CalcRun run = run_calc(digits + "\n" + digits + "-" + digits + "+1\n" + "10**10000-1\n", GetParam());
  const std::vector<std::string> answers = lines(run.output);
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[0], digits);
  EXPECT_EQ(answers[1], "1");
  EXPECT_EQ(answers[2], std::string(10000, '9'));
}

// Printing's arithmetic (calc.c, write_whole_limbs), over the whole range of each step: a limb
// < 10^9 splits as (limb · ceil(2^50 / 10^6)) >> 50, a rest < 10^6 as (rest · ceil(2^32 / 1000)) >> 32,
// and a group g < 1000 gives its first digit as (g · 41) >> 12.
TEST(CalcFirmware, PrintingReciprocalsAreExactOverTheirRanges) {
  std::uint32_t wrong = 0;
  for (std::uint64_t limb = 0; limb < 1'000'000'000; ++limb)
    wrong += ((limb * 1125899907u) >> 50) != limb / 1'000'000;
  EXPECT_EQ(wrong, 0u);
  for (std::uint64_t rest = 0; rest < 1'000'000; ++rest) EXPECT_EQ((rest * 4294968u) >> 32, rest / 1000) << rest;
  for (std::uint32_t group = 0; group < 1000; ++group) EXPECT_EQ((group * 41) >> 12, group / 100) << group;
}

// The reciprocals that put read limbs in place (LIMB_SPLIT_INVERSE, limbs.h) divide every limb
// exactly by 10^(9 - d): the estimate never falls below the quotient and grows with v, so checking the
// last value below each multiple of the divisor (and the multiple itself) covers all of [0, 10^9).
TEST(CalcFirmware, PlacingReciprocalsAreExactOverTheirRange) {
  for (int d = 0; d < LIMB_DIGITS; ++d) {
    const std::uint64_t divisor = POWERS_OF_TEN[LIMB_DIGITS - d];
    std::uint64_t wrong = 0;
    auto quotient = [&](std::uint64_t v) {
      return ((v * LIMB_SPLIT_INVERSE[d]) >> 32) >> LIMB_SPLIT_SHIFT[d];
    };
    for (std::uint64_t q = 0; q * divisor < 1'000'000'000u; ++q)
      wrong += quotient(q * divisor + divisor - 1) != q || quotient(q * divisor) != q;
    EXPECT_EQ(wrong, 0u) << "d = " << d;
    EXPECT_EQ(POWERS_OF_TEN[d] * divisor, 1'000'000'000u);
  }
}

// split_column (limbs.h), the unit's per-column split, compiled for the host (part of the high word
// given as the low words' carries): C = c2 · 10^18 + c1 ·
// 10^9 + r with r < 10^9, c1 < 1.135 · 10^9 and c2 floor(C / 10^18) or one less, for edge values and
// millions of random columns over all of [0, 2^67), many near multiples of 10^9 and 10^18 and near
// 2^67 and the word boundaries.
TEST(CalcFirmware, ColumnSplitIsExactOverItsRange) {
  using u128 = unsigned __int128;
  const u128 top = static_cast<u128>(1) << 67;
  std::uint64_t wrong = 0, checked = 0;
  auto check = [&](u128 c) {
    if (c >= top) return;
    ++checked;
    std::uint32_t c1 = 0, c2 = 0;
    // Some of the high word as the low words' carries (up to 16, as the firmware counts them).
    const std::uint32_t carries = static_cast<std::uint32_t>(checked % 17);
    const u128 rest = c >= (static_cast<u128>(carries) << 32) ? c - (static_cast<u128>(carries) << 32) : c;
    const std::uint32_t given = rest == c ? 0 : carries;
    const std::uint32_t r = split_column(static_cast<std::uint32_t>(rest >> 64), static_cast<std::uint32_t>(rest >> 32),
                                         given, static_cast<std::uint32_t>(rest), &c1, &c2);
    const u128 e18 = 1'000'000'000'000'000'000ull, whole_c2 = c / e18;
    const bool good = static_cast<u128>(c2) * e18 + static_cast<u128>(c1) * 1'000'000'000u + r == c &&
                      r < 1'000'000'000u && c1 < 1'135'000'000u && c2 <= whole_c2 && c2 + 1 >= whole_c2 + 0;
    if (!good && wrong++ < 10) ADD_FAILURE() << "column " << static_cast<std::uint64_t>(c >> 64) << " * 2^64 + "
                                            << static_cast<std::uint64_t>(c);
  };
  std::vector<u128> anchors = {0, top, static_cast<u128>(1) << 32, static_cast<u128>(1) << 64,
                               static_cast<u128>(1) << 60, static_cast<u128>(1) << 35};
  for (u128 m = 1; m <= 147; ++m) anchors.push_back(m * 1'000'000'000'000'000'000ull);
  for (std::uint64_t m = 1; m < 8; ++m) anchors.push_back(static_cast<u128>(m) << 64);
  for (u128 anchor : anchors)
    for (int d = -3000; d <= 3000; ++d) check(anchor + static_cast<u128>(static_cast<__int128>(d)));
  std::mt19937_64 random(11);
  auto below = [&](u128 bound) {
    u128 v = (static_cast<u128>(random()) << 64) | random();
    return v % bound;
  };
  for (int n = 0; n < 16'000'000; ++n) check(below(top));
  for (int n = 0; n < 4'000'000; ++n) {  // near multiples of 10^9 and of 10^18
    const u128 q9 = below(top / 1'000'000'000u) * 1'000'000'000u;
    const u128 q18 = below(148) * 1'000'000'000'000'000'000ull;
    const u128 near = static_cast<u128>(random() % 2001) - 1000;
    check(q9 + near);
    check(q18 + near + below(1'000'000'000u) * (n & 1));
  }
  for (int n = 0; n < 1'000'000; ++n) check(top - 1 - below(static_cast<u128>(1) << 40));  // near 2^67
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(checked, 25'000'000u);
}

// Numbers of 1 to 60 digits, the point at every place, come back as written: reading's groups of
// three digits and printing's whole limbs, around every limb and group boundary.
TEST_P(CalcFirmwareOnBoth, NumbersComeBackAsWritten) {
  std::mt19937 random(7);
  std::string input, expected;
  for (int n = 1; n <= 60; ++n) {
    std::string digits;
    for (int i = 0; i < n; ++i) digits.push_back(static_cast<char>('0' + random() % 10));
    digits.front() = static_cast<char>('1' + random() % 9);
    input += digits + "\n";
    expected += digits + "\n";
    digits.back() = static_cast<char>('1' + random() % 9);  // no trailing zero after a point
    for (int point = 0; point < n; ++point) {
      std::string number = digits.substr(0, point) + "." + digits.substr(point);
      input += number + "\n";
      expected += (point == 0 ? "0" : "") + number + "\n";
    }
  }
  CalcRun run = run_calc(input, GetParam());
  EXPECT_TRUE(run.exited);
  const std::vector<std::string> answers = lines(run.output), wanted = lines(expected);
  ASSERT_EQ(answers.size(), wanted.size());
  for (std::size_t i = 0; i < wanted.size(); ++i) EXPECT_EQ(answers[i], wanted[i]) << "line " << i + 1;
}

// n limbs' worth of digits (9 n, the first not 0), random or (max) all nines.
std::string limbs_of_digits(std::mt19937& random, int n, bool max = false) {
  std::string digits;
  for (int i = 0; i < 9 * n; ++i)
    digits.push_back(max ? '9' : static_cast<char>('0' + (i == 0 ? 1 + random() % 9 : random() % 10)));
  return digits;
}

// Products of 1 to 250 limbs on the unit's build agree with the plain build's (which the corpus checks
// against Python): lengths around the unit's 121-limb operands, its 8-term windows, Karatsuba's
// threshold just above (122) and twice the limit (the longest Karatsuba whose halves fit, 240),
// numbers of all nines (every column at its largest), squares and unbalanced products (tiles).
TEST(CalcFirmware, UnitProductsAgreeWithPlainProducts) {
  std::mt19937 random(121);
  const int lengths[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 64, 100, 112, 119, 120, 121, 122, 123, 130, 150};
  std::vector<std::pair<int, int>> shapes;
  for (int a : lengths)
    for (int b : lengths)
      if (b <= a) shapes.push_back({a, b});
  for (int i = 0; i < 60; ++i) {
    int a = 1 + static_cast<int>(random() % 150), b = 1 + static_cast<int>(random() % 150);
    shapes.push_back({a, b});
  }
  for (int n : {239, 240, 241, 242, 243, 250}) shapes.push_back({n, n});
  shapes.push_back({250, 121});
  shapes.push_back({250, 122});
  // Near the arena's end: no room for Karatsuba (1,400 limbs: the unit's tiles) or for a tile's
  // temporary either (1,534: schoolbook rows).
  shapes.push_back({1400, 1400});
  shapes.push_back({1534, 1534});
  std::string input;
  for (auto [a, b] : shapes) input += limbs_of_digits(random, a) + "*" + limbs_of_digits(random, b) + "\n";
  for (int n : {1, 8, 9, 120, 121, 122, 150, 240, 241}) {
    input += limbs_of_digits(random, n, true) + "*" + limbs_of_digits(random, n, true) + "\n";
    input += limbs_of_digits(random, n, true) + "*" + limbs_of_digits(random, 121, true) + "\n";
    const std::string x = limbs_of_digits(random, n);
    input += x + "*" + x + "\n";
    input += "(" + x;
    input += ")**3\n";
  }
  input += '-';
  input += limbs_of_digits(random, 121) + "*" + limbs_of_digits(random, 7) + "\n";
  input += limbs_of_digits(random, 50) + ".5*" + limbs_of_digits(random, 60) + ".25\n";
  const std::vector<std::string> expressions = lines(input);

  CalcRun plain = run_calc(input, false);
  CalcRun unit = run_calc(input, true);
  EXPECT_TRUE(plain.exited && unit.exited);
  const std::vector<std::string> expected = lines(plain.output), answers = lines(unit.output);
  ASSERT_EQ(expected.size(), expressions.size());
  ASSERT_EQ(answers.size(), expressions.size());
  int wrong = 0;
  for (std::size_t i = 0; i < expressions.size(); ++i) {
    EXPECT_EQ(expected[i].rfind("error", 0), std::string::npos) << "line " << i + 1;
    if (answers[i] == expected[i]) continue;
    if (++wrong <= 10)
      ADD_FAILURE() << "line " << i + 1 << ": " << expressions[i].substr(0, 120) << "\n  expected "
                    << expected[i].substr(0, 120) << "\n  got      " << answers[i].substr(0, 120);
  }
  EXPECT_EQ(wrong, 0) << "of " << expressions.size();
  std::printf("%zu products: %llu instructions plain, %llu with the unit\n", expressions.size(),
              static_cast<unsigned long long>(plain.instructions), static_cast<unsigned long long>(unit.instructions));
}

}  // namespace
}  // namespace rvformer
