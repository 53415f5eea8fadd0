// The machine circuit, run by the exact evaluator, and the compiled machine, run by the engine's
// dense reference path, against the golden emulator.
#include <gtest/gtest.h>

#include "driver/compiled_machine.h"
#include "driver/evaluator_machine.h"
#include "driver/model_machine.h"
#include "driver/trace_protocol.h"
#include "emulator/emulator.h"
#include "isa/trap.h"
#include "support/error.h"
#include "toolchain/program_testing.h"

namespace rvformer::driver {
namespace {

struct Outcome {
  std::string console;
  std::uint32_t exit_code = 0;
  std::uint64_t instructions = 0;
};

Outcome run_on_emulator(const program::ProgramImage& image) {
  emulator::Emulator emu(image);
  Outcome o;
  auto r = emu.run(100'000'000, [&](std::uint8_t b) { o.console.push_back(static_cast<char>(b)); });
  o.exit_code = isa::exit_status(r.exit_code);
  o.instructions = emu.instructions_retired();
  return o;
}

Outcome run_on(TokenMachine& m, const program::ProgramImage& image, const program::MachineSpec& spec) {
  Outcome o;
  RunOptions options;
  options.console = [&](std::uint8_t b) { o.console.push_back(static_cast<char>(b)); };
  RunResult r = run_program(m, image, Protocol(spec), options);
  EXPECT_EQ(r.end, RunEnd::kExited);
  o.exit_code = r.exit_code;
  o.instructions = r.instructions;
  return o;
}

// The program's console, exit status and instruction count on `m` are the golden machine's.
void expect_runs_like_the_emulator(TokenMachine& m, const program::ProgramImage& image,
                                   const program::MachineSpec& spec = program::kDefaultMachine) {
  Outcome expected = run_on_emulator(image);
  Outcome got = run_on(m, image, spec);
  EXPECT_EQ(got.console, expected.console);
  EXPECT_EQ(got.exit_code, expected.exit_code);
  EXPECT_EQ(got.instructions, expected.instructions);
}

// What an image holds beyond code and read-only data is refused with one line, not dropped.
TEST(Machine, TheLoaderRefusesImagePartsTheMachineCannotHold) {
  program::ProgramImage image;
  image.code = {0x13, 0, 0, 0};
  image.entry = image.map.code.base;
  const Protocol protocol(program::kDefaultMachine);
  EXPECT_NO_THROW(program_load_tokens(image, protocol));
  program::ProgramImage with_weights = image;
  with_weights.weights = {1, 2, 3, 4};
  EXPECT_THROW(program_load_tokens(with_weights, protocol), Error);
  program::ProgramImage with_ram = image;
  with_ram.ram = {1};
  EXPECT_THROW(program_load_tokens(with_ram, protocol), Error);
}

// The vector unit's header and hex(x), which prints x in 8 hex digits and a space, for the vector
// programs below.
const std::string kVectorPrelude = R"(#include "rvformer_vector.h"
static void hex(unsigned x) {
  volatile unsigned char* console = (volatile unsigned char*)0xFFFF0000u;
  for (int shift = 28; shift >= 0; shift -= 4) *console = "0123456789abcdef"[(x >> shift) & 15];
  *console = ' ';
}
)";

// The vector unit's weight memory, filled by the loader from a sparse image: rows in the first, the
// second and the last bank, every nibble value at every lane, zero words among them, and the zero
// half-rows the loader skips. vu.wget reads every word of those rows, both halves, the last word of
// WM among them; the program prints a hash of them all and the last word (verify_test's compiled
// machine prints every word it reads).
program::ProgramImage vector_weight_memory_program(const char* body) {
  program::ProgramImage image = toolchain::compile_test_program("wget", kVectorPrelude + "int main(void) {\n" + body + "}\n", program::kVectorMap);
  image.weights.assign(program::kVectorWeightBytes, 0);
  std::uint32_t state = 7;
  auto put_word = [&](std::uint32_t address, std::uint32_t word) {
    for (int i = 0; i < 4; ++i) image.weights[address + i] = static_cast<std::uint8_t>(word >> (8 * i));
  };
  // Lane m of word w holds (m + w) mod 16 in the first row, (15 − m + w) mod 16 in the last: every
  // value at every lane. The others hold random words, or zero in every other word.
  auto rotated = [](std::uint32_t w, bool down) {
    std::uint32_t word = 0;
    for (std::uint32_t m = 0; m < 8; ++m) word |= ((down ? 15 - m + w : m + w) % 16) << (4 * m);
    return word;
  };
  for (std::uint32_t w = 0; w < 16; ++w) {
    state = state * 1103515245u + 12345u;
    put_word(4 * w, rotated(w, false));
    put_word(64 * 6143 + 4 * w, rotated(w, true));
    put_word(64 * 6142 + 4 * w, state);
    put_word(64 * 130 + 4 * w, w % 2 ? state >> 3 : 0);
  }
  return image;
}

TEST(Machine, TheVectorUnitsWeightMemoryLoadsAndVuWgetReadsItLikeTheEmulator) {
  auto machine = cpu::build_machine(program::kVectorMachine);
  program::ProgramImage image = vector_weight_memory_program(R"(
  static const unsigned rows[] = {0, 64 * 130, 64 * 6142, 64 * 6143};
  unsigned h = 2166136261u;
  for (int r = 0; r < 4; r++)
    for (unsigned word = 0; word < 16; word++) h = (h ^ vu_wget(rows[r] + 4 * word)) * 16777619u;
  hex(h);
  hex(vu_wget(64 * 6143 + 60));
  return 0;
)");
  EvaluatorMachine circuit(*machine);
  expect_runs_like_the_emulator(circuit, image, program::kVectorMachine);
}

// A vu.wget that traps (here misaligned, inside WM) leaves the payload to the trap report: the
// evaluator's range checks see every signal of the trapping pass and the report's.
TEST(Machine, AVuWgetThatTrapsIsReportedLikeOnTheEmulator) {
  auto machine = cpu::build_machine(program::kVectorMachine);
  program::ProgramImage image = vector_weight_memory_program(R"(
  hex(vu_wget(64 * 6143 + 60));
  hex(vu_wget(64 * 6143 + 58));
  return 0;
)");
  emulator::Emulator golden(image);
  const emulator::RunResult expected = golden.run(100'000, [](std::uint8_t) {});
  ASSERT_EQ(expected.reason, emulator::StopReason::kTrapped);
  EvaluatorMachine circuit(*machine);
  const RunResult got = run_program(circuit, image, Protocol(program::kVectorMachine), {});
  ASSERT_EQ(got.end, RunEnd::kTrapped);
  EXPECT_EQ(isa::describe_trap(got.trap, image.map), isa::describe_trap(expected.trap, image.map));
  EXPECT_EQ(got.instructions, golden.instructions_retired());
}

// The vector unit's activation memory: vu.put fills lines in the first and last rows, in every bank
// and both halves, with every two-bit pattern at every lane and both ends of the 13-bit range, then
// overwrites one of them; a line whose last element was never put stays as it was; vu.get reads
// every element back, sign-extended (values beyond 12 bits take HI, VAL). vu.kput and vu.vput copy
// rows into a KV slot twice, the evaluator checking that every overwrite of its lanes is exact
// (verify_test reads the cache back from the compiled weights).
TEST(Machine, TheVectorUnitsActivationMemoryAndKvCacheRunLikeTheEmulator) {
  auto machine = cpu::build_machine(program::kVectorMachine);
  program::ProgramImage image = toolchain::compile_test_program("am", kVectorPrelude + R"(
static const unsigned lines[] = {0, 16, 32 * 1 + 16 * 256, 32 * 2 + 16 + 5 * 256, 32 * 3 + 77 * 256, 32 * 4 + 16 + 100 * 256,
                                 32 * 5, 32 * 6 + 16 + 127 * 256, 32768 - 16};
int main(void) {
  const int count = sizeof lines / sizeof lines[0];
  for (int l = 0; l < count; l++)
    for (unsigned k = 0; k < VU_LINE_ELEMENTS; k++) {
      int v = (int)((k * 0x555u + (unsigned)l * 0x3A7u) & 0x1FFFu) - 4096;
      if (l == 1) v = k % 2 ? 4095 : -4096;
      vu_put(lines[l] + k, v);
    }
  for (unsigned k = 0; k < VU_LINE_ELEMENTS; k++) vu_put(lines[2] + k, (int)k - 8);
  for (unsigned k = 0; k + 1 < VU_LINE_ELEMENTS; k++) vu_put(48 + k, 1000);
  unsigned h = 2166136261u;
  for (int l = 0; l < count; l++)
    for (unsigned k = 0; k < VU_LINE_ELEMENTS; k++) h = (h ^ (unsigned)vu_get(lines[l] + k)) * 16777619u;
  vu_kput(0, 33);  // two rows into one slot's keys and its values: the second overwrites downwards too
  vu_vput(lines[4], 33);
  vu_kput(lines[4], 33);
  vu_vput(32768 - 32, 33);
  hex(h);
  hex((unsigned)vu_get(16));
  hex((unsigned)vu_get(lines[2] + 3));
  hex((unsigned)vu_get(48));
  return 0;
}
)", program::kVectorMap);
  EvaluatorMachine circuit(*machine);
  expect_runs_like_the_emulator(circuit, image, program::kVectorMachine);
}

// The operations that go a line at a time in the exact evaluator, with its range, margin and
// overwrite checks: vu.add16 over a line and a partial one against lines 32 elements off (both
// parities of AM's banks, the 13-bit extremes saturating), vu.mul16 of a line with itself, vu.silu
// over part of a line, vu.rmsnorm over 40 elements of two banks' row, every result read back with
// vu.get and hashed, and vu.argmax over two lines.
TEST(Machine, TheVectorUnitsElementwiseOperationsRunLikeTheEmulator) {
  auto machine = cpu::build_machine(program::kVectorMachine);
  program::ProgramImage image = toolchain::compile_test_program("elementwise", kVectorPrelude + R"(
int main(void) {
  for (unsigned e = 0; e < 32; e++) vu_put(e, (int)((e * 0x3A7u) & 0x1FFFu) - 4096);
  for (unsigned e = 0; e < 32; e++) vu_put(96 + e, e % 3 ? 4095 - (int)e : -4096);
  vu_set_vl(20);
  vu_add16(0, 96);
  vu_set_vl(16);
  vu_set_aux(11);
  vu_mul16(96, 96);
  vu_set_vl(5);
  vu_silu(16);
  vu_set_vl(40);
  vu_set_aux(3);
  vu_rmsnorm(128, 0);
  unsigned h = 2166136261u;
  for (unsigned e = 0; e < 176; e++) h = (h ^ (unsigned)vu_get(e)) * 16777619u;
  hex(h);
  hex((unsigned)vu_get(19));
  vu_set_vl(27);
  hex((unsigned)vu_argmax(96));
  return 0;
}
)", program::kVectorMap);
  EvaluatorMachine circuit(*machine);
  expect_runs_like_the_emulator(circuit, image, program::kVectorMachine);
}

TEST(Machine, RunsAProgramWithStdioLikeTheEmulator) {
  auto machine = cpu::build_machine();
  auto image = toolchain::compile_test_program("stdio", R"(
#include <stdio.h>
static const char message[] = "hi!\n";
int main(void) {
  int s = 0;
  for (int i = 0; i < 10; i++) s += i * i;
  for (const char* p = message; *p; p++) putchar(*p);
  putchar('0' + (s & 7));
  return s;
}
)");
  EvaluatorMachine circuit(*machine);
  expect_runs_like_the_emulator(circuit, image);
}

// Division and remainder take one pass, two, or a long division over several (cpu/divide.cpp):
// the edge cases and random operands of every size and sign, on a sample here (every digit and
// remainder pass, margins checked); the compiled weights run the full set in lockstep (verify_test).
TEST(Machine, DividesLikeTheEmulator) {
  auto machine = cpu::build_machine();
  auto image = toolchain::compile_test_program("divide", toolchain::division_test_program(5, 6));
  EvaluatorMachine circuit(*machine);
  expect_runs_like_the_emulator(circuit, image);
}

// The driver follows the PC from the tokens alone (next_instruction_address): after every
// retired instruction it must be the golden machine's, through jumps, resyncs after long straight
// runs, instructions that take two passes (HI) and console output.
TEST(Machine, TheDriverFollowsThePcThroughEveryKindOfToken) {
  auto machine = cpu::build_machine();
  auto image = toolchain::compile_test_program("pc", R"(
int main(void) {
  volatile unsigned char* console = (volatile unsigned char*)0xFFFF0000u;
  volatile unsigned char bytes[4];
  unsigned s = 1;
  for (int i = 0; i < 3; i++) s = s * 123457u + 7;  // results that need HI
  __asm__ volatile(".rept 40\n addi x0, x0, 0\n .endr");  // resyncs
  bytes[1] = (unsigned char)s;                        // sb to RAM: HI, then VAL
  console[0] = 'A';                                   // OUT
  return bytes[1];
}
)");
  const Protocol protocol(program::kDefaultMachine);
  emulator::Emulator golden(image);
  EvaluatorMachine circuit(*machine);
  RunOptions options;
  options.checkpoint_every = 1;
  std::uint64_t compared = 0;
  options.checkpoint = [&](const RunPosition& position) {
    golden.step();
    ASSERT_EQ(position.instructions, golden.instructions_retired());
    ASSERT_EQ(next_instruction_address(position, protocol), golden.pc()) << "after " << position.instructions << " instructions";
    ++compared;
  };
  RunResult result = run_program(circuit, image, protocol, options);
  EXPECT_EQ(result.end, RunEnd::kExited);
  EXPECT_EQ(compared + 1, result.instructions);  // every instruction but the exiting one
  for (std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{1}, compared / 2}) {
    emulator::Emulator stopped(image);
    stopped.run(limit, [](std::uint8_t) {});
    EvaluatorMachine again(*machine);
    RunOptions limited;
    limited.max_instructions = limit;
    RunResult at_limit = run_program(again, image, protocol, limited);
    EXPECT_EQ(at_limit.end, RunEnd::kInstructionLimit);
    EXPECT_EQ(next_instruction_address(at_limit.position, protocol), stopped.pc()) << "stopped after " << limit;
  }
}

// A run whose input has no byte yet stops at the program's read and goes on from there once bytes
// arrive, giving the console and instruction count of a run that had all its input at once: how a
// chat hands the computer one tool call at a time.
TEST(Machine, ARunAwaitingInputGoesOnWhereItStopped) {
  auto machine = cpu::build_machine();
  auto image = toolchain::compile_test_program("await", R"(
#include <stdio.h>
int main(void) {
  int c, sum = 0;
  while ((c = getchar()) != EOF) {
    sum += c;
    if (c == '\n') {
      for (int unit = 100; unit; unit /= 10) putchar('0' + sum / unit % 10);
      putchar('\n');
      sum = 0;
    }
  }
  return 7;
}
)");
  const Protocol protocol(program::kDefaultMachine);
  const std::string input = "ab\nxyz\n";
  auto run_all_at_once = [&] {
    EvaluatorMachine circuit(*machine);
    std::string console;
    std::size_t next = 0;
    RunOptions options;
    options.console = [&](std::uint8_t b) { console.push_back(static_cast<char>(b)); };
    options.input = [&] { return next < input.size() ? static_cast<unsigned char>(input[next++]) : kEndOfInput; };
    RunResult result = run_program(circuit, image, protocol, options);
    EXPECT_EQ(result.end, RunEnd::kExited);
    return std::pair{console, result.instructions};
  };
  const auto [expected_console, expected_instructions] = run_all_at_once();
  ASSERT_EQ(expected_console, "205\n373\n");  // the bytes of each line, its newline included

  EvaluatorMachine circuit(*machine);
  std::string console;
  std::string available;  // bytes handed over, not yet read
  bool ended = false;
  RunOptions options;
  options.console = [&](std::uint8_t b) { console.push_back(static_cast<char>(b)); };
  options.input = [&] {
    if (available.empty()) return ended ? kEndOfInput : kNoInputYet;
    const int byte = static_cast<unsigned char>(available.front());
    available.erase(0, 1);
    return byte;
  };
  RunResult result = run_program(circuit, image, protocol, options);
  ASSERT_EQ(result.end, RunEnd::kAwaitingInput);
  EXPECT_EQ(console, "");
  EXPECT_EQ(protocol.vocabulary.decode(result.position.next_token).kind, cpu::TokenKind::kWant);
  for (const char* line : {"ab\n", "xyz\n"}) {
    available = line;
    options.resume_from = result.position;
    result = run_program(circuit, image, protocol, options);
    ASSERT_EQ(result.end, RunEnd::kAwaitingInput);
  }
  EXPECT_EQ(console, expected_console);
  ended = true;
  options.resume_from = result.position;
  result = run_program(circuit, image, protocol, options);
  EXPECT_EQ(result.end, RunEnd::kExited);
  EXPECT_EQ(result.exit_code, 7u);
  EXPECT_EQ(result.instructions, expected_instructions);
}

// The cached compiled machine on the dense reference path, which is slow (about a second per token
// here), so on a program of a few hundred tokens; the fast path runs every example elsewhere
// (src/verify/examples_test.cpp).
TEST(Machine, CompiledWeightsRunATinyProgramLikeTheEmulator) {
  auto machine = cpu::build_machine();
  auto image = toolchain::compile_test_program("tiny", R"(
int main(void) {
  volatile unsigned char* console = (volatile unsigned char*)0xFFFF0000u;
  int s = 0;
  for (int i = 1; i <= 5; i++) s += i * i;
  console[0] = 'A' + (s & 15);
  return s;
}
)");
  engine::Model model = engine::Model::load(machine_checkpoint(*machine, std::nullopt, [](const std::string&) {}));
  ModelMachine weights(model);
  expect_runs_like_the_emulator(weights, image);
}

}  // namespace
}  // namespace rvformer::driver
