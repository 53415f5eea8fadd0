// Lockstep verification and ablation against the compiled machines (label weights): a clean run is
// reported clean, a corrupted state is caught and named, and zeroing one compiled block of weights
// makes programs fail, so the computation really flows through the weights. The big-integer unit
// gets the same on the machine that has it.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>
#include <span>
#include <tuple>

#include "circuit/graph.h"
#include "compiler/emit.h"
#include "compiler/physical.h"
#include "driver/compiled_machine.h"
#include "driver/model_machine.h"
#include "driver/run_checkpoint.h"
#include "emulator/differential.h"
#include "emulator/emulator.h"
#include "isa/instruction_set.h"
#include "emulator/random_program.h"
#include "program/elf_loader.h"
#include "engine/checkpoint.h"
#include "support/error.h"
#include "toolchain/program_testing.h"
#include "verify/assembler_testing.h"
#include "verify/lockstep.h"
#include "verify/machine_state.h"

namespace rvformer::verify {
namespace {

// Every functional unit: arithmetic, shifts, compares, mul/div/rem, byte and halfword memory, Zba,
// console output and the exit code.
const char* const kEveryUnit = R"(
#include <stdio.h>
static unsigned short halves[8];
static signed char bytes[8];
int main(void) {
  unsigned h = 2166136261u;
  int acc = -7;
  for (int i = 0; i < 8; i++) {
    h = (h ^ (unsigned)i) * 16777619u;
    acc = acc * 3 - (int)(h >> (i + 3)) / (i + 1) + (int)(h % 7u);
    halves[i] = (unsigned short)(h >> 5);
    bytes[i] = (signed char)(acc ^ i);
    if ((int)h < acc) acc ^= (int)(h << (i & 7));
  }
  long long wide = (long long)acc * (long long)(int)h;
  int s = 0;
  for (int i = 0; i < 8; i++) s += halves[i] + bytes[i];
  printf("%x %d %d\n", h, acc, (int)(wide >> 20) + s);
  return s & 63;
}
)";

// The golden machine's instruction count for a program that exits.
std::uint64_t emulator_instructions(const program::ProgramImage& image) {
  emulator::MachineRun golden = emulator::run_on_emulator(image, 100'000'000);
  EXPECT_EQ(golden.failure, "");
  return golden.instructions;
}

// A machine compiled to weights (cached), loaded once for a test suite.
template <const program::MachineSpec& kSpec>
class CompiledMachineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    machine_ = cpu::build_machine(kSpec).release();
    auto checkpoint = driver::machine_checkpoint(*machine_, std::nullopt, [](const std::string&) {});
    bank_heads_ = new std::vector<compiler::HeadSlot>(driver::read_machine_info(checkpoint).bank_heads);
    model_ = new engine::FastModel(engine::FastModel::load(checkpoint));
  }
  static void TearDownTestSuite() {
    delete model_;
    delete bank_heads_;
    delete machine_;
  }

  // Runs `image` in lockstep on `weights`, this machine's, expecting no difference and an exit 0
  // after the golden machine's count of instructions.
  static void expect_clean_exit(driver::FastModelMachine& weights, const program::ProgramImage& image,
                                const std::string& context = "") {
    LockstepReport report = run_lockstep(*machine_, *bank_heads_, weights, image, {});
    EXPECT_FALSE(report.difference) << context << *report.difference;
    EXPECT_EQ(report.ending, "exit 0") << context;
    EXPECT_EQ(report.instructions, emulator_instructions(image)) << context;
  }

  static inline cpu::Machine* machine_ = nullptr;
  static inline std::vector<compiler::HeadSlot>* bank_heads_ = nullptr;
  static inline engine::FastModel* model_ = nullptr;
};

using Verify = CompiledMachineTest<program::kDefaultMachine>;


TEST_F(Verify, LockstepIsCleanOnAProgramUsingEveryUnit) {
  auto image = toolchain::compile_test_program("every_unit", kEveryUnit);
  driver::FastModelMachine weights(*model_);
  std::string console;
  LockstepOptions options;
  options.console = [&](std::uint8_t b) { console.push_back(static_cast<char>(b)); };
  LockstepReport report = run_lockstep(*machine_, *bank_heads_, weights, image, options);
  EXPECT_FALSE(report.difference) << *report.difference;
  EXPECT_EQ(report.instructions, emulator_instructions(image));
  EXPECT_GT(report.checks, report.instructions);  // every pass, resyncs and HI passes included
  EXPECT_TRUE(report.ending.starts_with("exit ")) << report.ending;
  EXPECT_FALSE(console.empty());
}

TEST_F(Verify, FreeRunComparesTheEndingAndTheFinalRegisters) {
  auto image = toolchain::compile_test_program("every_unit", kEveryUnit);
  driver::FastModelMachine weights(*model_);
  LockstepOptions options;
  options.free_run = true;
  LockstepReport report = run_lockstep(*machine_, *bank_heads_, weights, image, options);
  EXPECT_FALSE(report.difference) << *report.difference;
  EXPECT_EQ(report.checks, 1u);
  EXPECT_EQ(report.instructions, emulator_instructions(image));
}

// Every long-division path (fast cases, each quotient digit and remainder piece, signs, INT_MIN/−1,
// division by zero) on edge and random operands, with registers and PC checked after every pass.
TEST_F(Verify, DivisionsOfEdgeAndRandomOperandsRunInLockstep) {
  auto image = toolchain::compile_test_program("divide", toolchain::division_test_program(11, 60));
  driver::FastModelMachine weights(*model_);
  LockstepReport report = run_lockstep(*machine_, *bank_heads_, weights, image, {});
  EXPECT_FALSE(report.difference) << *report.difference;
  EXPECT_EQ(report.instructions, emulator_instructions(image));
}

// A program of random instruction streams (`seed`) linked for `map`; the ops of its streams are added
// to `covered`.
program::ProgramImage random_streams_program(std::uint64_t seed, const program::MemoryMap& map, std::set<isa::Op>& covered) {
  emulator::RandomProgram random = emulator::generate_random_program(
      {.seed = seed, .streams = 6, .min_stream_length = 60, .max_stream_length = 120, .map = map});
  for (auto [first, last] : random.stream_code)
    for (std::uint32_t pc = first; pc < last; pc += 4) covered.insert(isa::decode(random.code[(pc - map.code.base) / 4]).op);
  return emulator::random_program_image(random, map);
}

// Random instruction streams (the generator of the QEMU differential tests, linked for this
// machine's map) in lockstep: every RV32IM + Zba instruction, edge-case operands, every store width.
TEST_F(Verify, RandomInstructionStreamsRunInLockstep) {
  std::set<isa::Op> covered;
  for (std::uint64_t seed : {1u, 2u}) {
    program::ProgramImage image = random_streams_program(seed, program::kRvformerMap, covered);
    driver::FastModelMachine weights(*model_);
    expect_clean_exit(weights, image, "seed " + std::to_string(seed) + ": ");
  }
  for (const isa::OpInfo& info : isa::instruction_table())
    if (info.op != isa::Op::kFence && !isa::is_bigint(info.op) && !isa::is_vector(info.op)) {  // units: elsewhere
      EXPECT_TRUE(covered.contains(info.op)) << info.name << " never ran";
    }
}

// No compiled machine has the vector unit: each vu.* instruction traps inside the weights as an
// illegal instruction, where and as the golden machine (on a map without the unit) traps.
TEST_F(Verify, VectorUnitInstructionsAreIllegalInsideTheWeights) {
  constexpr std::uint8_t kT0 = 5, kT1 = 6, kT2 = 7;
  for (const isa::OpInfo& info : isa::instruction_table()) {
    if (!isa::is_vector(info.op)) continue;
    SCOPED_TRACE(std::string(info.name));
    testing::Assembler code;
    code.li(kT0, 1).li(kT1, 2).add(info.op, info.format == isa::Format::kUnary ? kT2 : 0, kT0, kT1, 0);
    program::ProgramImage image = code.exit_and_link();
    driver::FastModelMachine weights(*model_);
    LockstepReport report = run_lockstep(*machine_, *bank_heads_, weights, image, {});
    EXPECT_FALSE(report.difference) << *report.difference;
    EXPECT_TRUE(report.ending.starts_with("trap: illegal instruction")) << report.ending;
    EXPECT_NE(report.ending.find("has no vector unit"), std::string::npos) << report.ending;
    EXPECT_EQ(report.instructions, 4u);
  }
}

// A run saved at a checkpoint and resumed in a fresh model machine ends exactly like the run that
// went through in one go: the same ending, instruction count and final state, bit for bit.
TEST_F(Verify, AResumedRunEndsInTheSameStateAsAnUninterruptedOne) {
  auto image = toolchain::compile_test_program("every_unit", kEveryUnit);
  driver::FastModelMachine straight(*model_);
  LockstepReport expected = run_lockstep(*machine_, *bank_heads_, straight, image, {});
  ASSERT_FALSE(expected.difference) << *expected.difference;

  auto file = std::filesystem::path(::testing::TempDir()) / "every_unit.checkpoint";
  const std::uint64_t digest = driver::program_digest(image, driver::Protocol(machine_->spec));
  driver::FastModelMachine first(*model_);
  LockstepOptions saving;
  saving.max_instructions = 250;
  saving.checkpoint_every = 100;
  saving.checkpoint = [&](const driver::RunPosition& p) { driver::save_run_checkpoint(file, {p, 7, digest}, first.state()); };
  ASSERT_FALSE(run_lockstep(*machine_, *bank_heads_, first, image, saving).difference);

  auto [checkpoint, state] = driver::read_run_checkpoint(file, model_->config());
  EXPECT_EQ(checkpoint.position.instructions, 200u);
  EXPECT_EQ(checkpoint.program_digest, digest);
  driver::FastModelMachine resumed(*model_, std::move(state));
  LockstepOptions resuming;
  resuming.resume_from = checkpoint.position;
  LockstepReport report = run_lockstep(*machine_, *bank_heads_, resumed, image, resuming);
  EXPECT_FALSE(report.difference) << *report.difference;
  EXPECT_EQ(report.ending, expected.ending);
  EXPECT_EQ(report.instructions, expected.instructions);
  EXPECT_TRUE(resumed.state() == straight.state());
  std::filesystem::remove(file);
}

// Runs the fast model and flips one bit of register x10's stored value after a given pass, as a
// fault in the state would.
class CorruptingMachine : public driver::StatefulTokenMachine {
 public:
  CorruptingMachine(engine::FastModel& model, compiler::HeadSlot registers, std::uint64_t corrupt_after)
      : model_(model), state_(model.new_state()), registers_(registers), corrupt_after_(corrupt_after) {}
  std::uint32_t feed(std::uint32_t token) override {
    std::uint32_t next = model_.decode_argmax(state_, token);
    if (++passes_ == corrupt_after_) {
      engine::State state = state_.state();
      auto& recurrent = state.gated_delta_net(registers_.layer).recurrent;
      float& lane = recurrent[(2 * registers_.head * compiler::kKeyDim + 10) * compiler::kKeyDim + 3];
      lane = lane == 0 ? static_cast<float>(compiler::kBitValue) : 0.0f;
      state_ = model_.adopt(std::move(state));
    }
    return next;
  }
  const engine::State& state() const override { return state_.state(); }
  const engine::RecurrentStateView& recurrent_state() const override { return state_; }

 private:
  engine::FastModel& model_;
  engine::FastState state_;
  compiler::HeadSlot registers_;
  std::uint64_t corrupt_after_;
  std::uint64_t passes_ = 0;
};

TEST_F(Verify, ACorruptedRegisterIsReportedAtOnce) {
  auto image = toolchain::compile_test_program("every_unit", kEveryUnit);
  auto load_tokens = driver::program_load_tokens(image, driver::Protocol(machine_->spec)).size();
  CorruptingMachine weights(*model_, (*bank_heads_)[machine_->layout.register_bank], load_tokens + 40);
  LockstepReport report = run_lockstep(*machine_, *bank_heads_, weights, image, {});
  ASSERT_TRUE(report.difference);
  EXPECT_NE(report.difference->find("x10 is"), std::string::npos) << *report.difference;
  EXPECT_LT(report.instructions, 40u);
}

TEST_F(Verify, AValueThatIsNeitherBitIsCorruption) {
  engine::State state(model_->config());
  compiler::HeadSlot registers = (*bank_heads_)[machine_->layout.register_bank];
  state.gated_delta_net(registers.layer).recurrent[(2 * registers.head * compiler::kKeyDim + 5) * compiler::kKeyDim] = 90.5f;
  MachineStateReader reader(*machine_, *bank_heads_);
  try {
    reader.registers(state);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("machine state corrupt: bank registers.rs1_port row 5"), std::string::npos)
        << e.what();
  }
}

// Zeroes the MLP neurons of one functional unit in the emitted tensors (gate, up and down).
void ablate(compiler::EmittedModel& model, const compiler::Placement& placement, const circuit::Circuit& circuit,
            const std::string& unit) {
  auto tensor = [&](const std::string& name) -> compiler::EmittedTensor& {
    for (auto& t : model.tensors)
      if (t.name == name) return t;
    throw std::runtime_error("no tensor " + name);
  };
  int ablated = 0;
  for (int layer = 0; layer < placement.num_layers; ++layer) {
    const auto& neurons = placement.layer_neurons[layer];
    std::string prefix = "layers." + std::to_string(layer) + ".mlp.";
    auto& gate = tensor(prefix + "gate_proj.weight");
    auto& up = tensor(prefix + "up_proj.weight");
    auto& down = tensor(prefix + "down_proj.weight");
    std::size_t hidden = gate.shape[1], width = gate.shape[0];
    for (std::size_t n = 0; n < neurons.size(); ++n) {
      if (circuit.neurons()[neurons[n]].unit != unit) continue;
      std::fill_n(gate.values.begin() + n * hidden, hidden, 0.0f);
      std::fill_n(up.values.begin() + n * hidden, hidden, 0.0f);
      for (std::size_t d = 0; d < hidden; ++d) down.values[d * width + n] = 0.0f;
      ++ablated;
    }
  }
  ASSERT_GT(ablated, 0) << "no neurons of unit " << unit;
}

// Runs `image` in lockstep (at most 100,000 instructions) on `machine` compiled with `unit`'s MLP
// neurons zeroed. A broken machine may also break the trace protocol or its state code, which
// counts as a difference too; errors before the run (loading) are not the ablation's doing.
// `inspect`, when given, sees the ablated machine's final state.
LockstepReport run_ablated(const cpu::Machine& machine, const program::ProgramImage& image, const std::string& unit,
                           const std::function<void(const MachineStateReader&, const engine::RecurrentStateView&)>& inspect = {}) {
  driver::program_load_tokens(image, driver::Protocol(machine.spec));
  circuit::CircuitGraph graph = circuit::analyze(machine.circuit);
  compiler::Placement placement = compiler::place(machine.circuit, graph);
  compiler::EmittedModel emitted = compiler::emit(machine.circuit, graph, placement);
  ablate(emitted, placement, machine.circuit, unit);
  auto dir = std::filesystem::path(::testing::TempDir()) / ("ablated_" + unit);
  engine::write_checkpoint(dir, emitted.config, emitted.tensors_to_write(engine::DType::BF16));
  LockstepOptions options;
  options.max_instructions = 100'000;
  LockstepReport report;
  {
    engine::FastModel ablated = engine::FastModel::load(dir);
    driver::FastModelMachine weights(ablated);
    try {
      report = run_lockstep(machine, placement.bank_head, weights, image, options);
    } catch (const Error& e) {
      report.difference = e.what();
    }
    if (inspect) inspect(MachineStateReader(machine, placement.bank_head), weights.recurrent_state());
  }
  std::filesystem::remove_all(dir);
  return report;
}

TEST_F(Verify, ZeroingTheAddersWeightsBreaksThePrograms) {
  LockstepReport report = run_ablated(*machine_, toolchain::compile_test_program("every_unit", kEveryUnit), "alu.add");
  ASSERT_TRUE(report.difference) << "the program ran correctly without the adder";
  EXPECT_LT(report.instructions, 1000u) << *report.difference;  // crt0 and the first loop
}

constexpr program::MemoryMap kBigintMap = program::kBigintMachine.memory_map();

// The machine with the big-integer unit (rvformer-bigint), compiled to weights.
class BigintUnit : public CompiledMachineTest<program::kBigintMachine> {
 protected:
  // Both of the unit's memories, read out of the weights' state, equal the golden machine's.
  static void expect_same_memories(const driver::FastModelMachine& weights, const program::ProgramImage& image) {
    emulator::Emulator golden(image);
    golden.run(100'000'000, [](std::uint8_t) {});
    MachineStateReader reader(*machine_, *bank_heads_);
    for (int index = 0; index < 128; ++index) {
      EXPECT_EQ(reader.bigint_entry(weights.recurrent_state(), 0, index), golden.bigint_a()[index]) << "A" << index;
      EXPECT_EQ(reader.bigint_entry(weights.recurrent_state(), 1, index), golden.bigint_b()[index]) << "B" << index;
    }
  }
};

// Every entry of A and B written with random 32-bit values (of which the unit keeps 30), then dot
// products over windows at every offset, wrapping around both memories: the largest sums reach
// 2^63 and every partial-product column is exercised.
program::ProgramImage every_entry_program(std::uint64_t seed) {
  std::mt19937 random(static_cast<std::uint32_t>(seed));
  testing::Assembler a;
  constexpr std::uint8_t kIndex = 5, kValue = 6, kOther = 7;
  for (std::uint32_t index = 0; index < 128; ++index) {
    bool largest = index % 16 == 0;  // all ones: the largest products
    a.li(kIndex, index + 128 * (index % 3));
    a.li(kValue, largest ? 0xFFFFFFFFu : random()).add(isa::Op::kBzPuta, 0, kIndex, kValue, 0);
    a.li(kValue, largest ? 0x3FFFFFFFu : random()).add(isa::Op::kBzPutb, 0, kIndex, kValue, 0);
  }
  for (int window = 0; window < 40; ++window) {
    a.li(kIndex, window < 16 ? static_cast<std::uint32_t>(window * 8) : random());
    a.li(kOther, window < 16 ? static_cast<std::uint32_t>(window * 8 + 7) : random());
    a.add(window % 2 ? isa::Op::kBzDothi : isa::Op::kBzDotlo, static_cast<std::uint8_t>(10 + window % 8), kIndex, kOther, 0);
  }
  return a.exit_and_link(kBigintMap);
}

TEST_F(BigintUnit, EveryEntryAndWindowRunsInLockstep) {
  program::ProgramImage image = every_entry_program(5);
  driver::FastModelMachine weights(*model_);
  expect_clean_exit(weights, image);
  expect_same_memories(weights, image);
}

// Random instruction streams with the unit's instructions among the rest, in lockstep.
TEST_F(BigintUnit, RandomInstructionStreamsRunInLockstep) {
  std::set<isa::Op> covered;
  for (std::uint64_t seed : {1u, 2u}) {
    program::ProgramImage image = random_streams_program(seed, kBigintMap, covered);
    driver::FastModelMachine weights(*model_);
    expect_clean_exit(weights, image, "seed " + std::to_string(seed) + ": ");
    expect_same_memories(weights, image);
  }
  for (const isa::OpInfo& info : isa::instruction_table())
    if (isa::is_bigint(info.op)) {
      EXPECT_TRUE(covered.contains(info.op)) << info.name << " never ran";
    }
}

TEST_F(BigintUnit, ZeroingTheRowAddersWeightsBreaksTheUnit) {
  LockstepReport report = run_ablated(*machine_, every_entry_program(6), "bigint");
  ASSERT_TRUE(report.difference) << "the unit worked without its row adders";
  EXPECT_LT(report.instructions, 10u) << *report.difference;  // the first put
}

using program::kVectorMap;

// The machine with the vector unit (rvformer-vector), compiled to weights: its weight memory and
// vu.wget, its activation memory with vu.put and vu.get, and the configuration registers.
class VectorUnit : public CompiledMachineTest<program::kVectorMachine> {
 protected:
  // Every word of WM, read out of the weights' state, is the image's (zero past its end), and every
  // configuration register, line buffer slot, KV vector and AM element the golden machine's at the
  // end of the run.
  static void expect_same_unit_state(const driver::FastModelMachine& weights, const program::ProgramImage& image) {
    MachineStateReader reader(*machine_, *bank_heads_);
    emulator::Emulator golden(image);
    golden.run(100'000'000, [](std::uint8_t) {});
    for (int r = 0; r < emulator::VectorUnit::kRegisterCount; ++r)
      EXPECT_EQ(reader.vector_register(weights.recurrent_state(), r), golden.vector_registers()[r]) << "register " << r;
    for (int k = 0; k < cpu::kVectorLineElements; ++k)
      EXPECT_EQ(reader.vector_line_slot(weights.recurrent_state(), k), golden.vector_line_buffer()[k]) << "line slot " << k;
    int differences = 0;
    for (std::uint32_t slot = 0; slot < program::kVectorKvSlots && differences < 10; ++slot)
      for (int half = 0; half < 2; ++half) {
        const std::span<const std::int16_t> cache = half ? golden.vector_values() : golden.vector_keys();
        const auto got = reader.vector_kv_vector(weights.recurrent_state(), slot, half);
        const bool same = std::ranges::equal(got, cache.subspan(slot * program::kVectorKvElements, got.size()));
        if (!same) ++differences;
        EXPECT_TRUE(same) << "KV slot " << slot << (half ? " values" : " keys");
      }
    for (std::uint32_t e = 0; e < program::kVectorActivationElements && differences < 10; ++e) {
      const std::int16_t got = reader.vector_activation(weights.recurrent_state(), e);
      if (got != golden.vector_activations()[e]) ++differences;
      EXPECT_EQ(got, golden.vector_activations()[e]) << "AM element " << e;
    }
    for (std::uint32_t address = 0; address < program::kVectorWeightBytes && differences < 10; address += 4) {
      std::uint32_t expected = 0;
      for (std::uint32_t i = 0; i < 4 && address + i < image.weights.size(); ++i)
        expected |= std::uint32_t{image.weights[address + i]} << (8 * i);
      std::uint32_t got = reader.vector_weight_word(weights.recurrent_state(), address);
      if (got != expected) ++differences;
      EXPECT_EQ(got, expected) << "WM word 0x" << std::hex << address;
    }
  }

  // A run of `image` in the weights ends cleanly, in lockstep, with the unit's state the golden
  // machine's.
  static void expect_clean_exit_and_same_unit_state(const program::ProgramImage& image) {
    driver::FastModelMachine weights(*model_);
    expect_clean_exit(weights, image);
    expect_same_unit_state(weights, image);
  }
};

// Reads `addresses` from WM with vu.wget into registers x6..x31 in turn (the lockstep compares them
// after every instruction), sets configuration register r to configuration[r], then exits.
program::ProgramImage weight_reading_program(const std::vector<std::uint32_t>& addresses, std::vector<std::uint8_t> weights,
                                             const std::vector<std::uint32_t>& configuration = {}) {
  testing::Assembler a;
  constexpr std::uint8_t kAddress = 5;
  for (std::size_t i = 0; i < addresses.size(); ++i)
    a.li(kAddress, addresses[i]).add(isa::Op::kVuWget, static_cast<std::uint8_t>(6 + i % 26), kAddress, 0, 0);
  for (std::size_t r = 0; r < configuration.size(); ++r)
    a.li(kAddress, configuration[r]).add(static_cast<isa::Op>(static_cast<int>(isa::Op::kVuSetvl) + r), 0, kAddress, 0, 0);
  program::ProgramImage image = a.exit_and_link(kVectorMap);
  image.weights = std::move(weights);
  return image;
}

// A whole WM of random bytes goes through the loader into the weights' state word for word, and
// vu.wget reads every word of the first and last rows and random words in between, in lockstep; the
// configuration registers take all ones, the top and bottom bits, a random word and zero.
TEST_F(VectorUnit, ARandomWeightMemoryLoadsWordForWordAndVuWgetReadsItInLockstep) {
  std::mt19937 random(11);
  std::vector<std::uint8_t> weights(program::kVectorWeightBytes);
  for (std::uint8_t& byte : weights) byte = static_cast<std::uint8_t>(random());
  std::vector<std::uint32_t> addresses;
  for (std::uint32_t word = 0; word < 16; ++word) {
    addresses.push_back(4 * word);
    addresses.push_back(program::kVectorWeightBytes - 64 + 4 * word);
  }
  for (int i = 0; i < 200; ++i) addresses.push_back(4 * (random() % (program::kVectorWeightBytes / 4)));
  const std::vector<std::uint32_t> configuration{0xFFFFFFFFu, 0x80000001u, static_cast<std::uint32_t>(random()), 0,
                                                 0x12345678u};
  program::ProgramImage image = weight_reading_program(addresses, std::move(weights), configuration);
  driver::FastModelMachine weights_machine(*model_);
  expect_clean_exit(weights_machine, image);
  expect_same_unit_state(weights_machine, image);
}

// vu.wget at an address past WM or not a multiple of 4 is an illegal instruction, reported as the
// golden machine reports it; the last word is not.
TEST_F(VectorUnit, VuWgetOutsideTheWeightMemoryTrapsAsOnTheGoldenMachine) {
  const std::uint32_t end = program::kVectorWeightBytes;
  std::vector<std::uint8_t> last_row(end, 0);
  std::fill(last_row.end() - 64, last_row.end(), 0x5A);
  for (std::uint32_t address : {end, end - 2, end - 3, 2u, 1u << 19, 0x80000000u, 0xFFFFFFFCu, 7u * 8192 * 8}) {
    program::ProgramImage image = weight_reading_program({end - 4, address}, last_row);
    driver::FastModelMachine weights(*model_);
    LockstepReport report = run_lockstep(*machine_, *bank_heads_, weights, image, {});
    EXPECT_FALSE(report.difference) << std::hex << address << ": " << *report.difference;
    EXPECT_EQ(report.ending.find("trap: illegal instruction"), 0u) << std::hex << address << ": " << report.ending;
  }
}

// Random instruction streams with vu.put, vu.get, vu.kput, vu.vput, vu.wget, the vu.set* and the operations that go a line
// at a time among the rest, over a weight memory whose first quarter is random, in lockstep; the configuration
// registers, the line buffer, the KV cache and AM end as on the golden machine.
TEST_F(VectorUnit, RandomInstructionStreamsRunInLockstep) {
  std::set<isa::Op> covered;
  for (std::uint64_t seed : {1u, 2u}) {
    program::ProgramImage image = random_streams_program(seed, kVectorMap, covered);
    std::mt19937 bytes(static_cast<std::uint32_t>(seed));
    // A quarter of the reads find data, the rest zeros but vu.row16's pairs at the end.
    std::generate_n(image.weights.begin(), program::kVectorWeightBytes / 4, [&] { return static_cast<std::uint8_t>(bytes()); });
    driver::FastModelMachine weights(*model_);
    expect_clean_exit(weights, image, "seed " + std::to_string(seed) + ": ");
    expect_same_unit_state(weights, image);
  }
  for (isa::Op op : {isa::Op::kVuPut, isa::Op::kVuGet, isa::Op::kVuKput, isa::Op::kVuVput, isa::Op::kVuWget, isa::Op::kVuSetvl, isa::Op::kVuSetcols, isa::Op::kVuSetsrc, isa::Op::kVuSetaux,
                     isa::Op::kVuSeths, isa::Op::kVuAdd16, isa::Op::kVuMul16, isa::Op::kVuSilu, isa::Op::kVuArgmax,
                     isa::Op::kVuRmsnorm, isa::Op::kVuRope, isa::Op::kVuRow16, isa::Op::kVuMatvec16})
    EXPECT_TRUE(covered.contains(op)) << isa::op_info(op).name << " never ran";
}

// An operation that reads its vectors a line at a time, with its VL and AUX: `op` x, y (vu.silu: x;
// vu.argmax: rd, x with rd = x7..x31 in turn, which the lockstep compares; vu.rmsnorm: x the output,
// y the vector; vu.rope: y the table; vu.row16: x the output, y the row, AUX the pair).
struct LineOperation {
  isa::Op op;
  std::uint32_t vl, x, y = 0, aux = 1, cols = 0, src = 0;  // COLS and SRC set for vu.matvec16
};

// What a program does with AM and the KV cache: puts (a first element and values, put element by
// element with vu.put), then elementwise operations, then copies (vu.kput or vu.vput of an element
// into a slot), then reads (vu.get into registers x6..x31 in turn, which the lockstep compares after
// every instruction).
struct UnitAccesses {
  std::vector<std::pair<std::uint32_t, std::vector<std::int32_t>>> puts = {};
  std::vector<LineOperation> operations = {};
  std::vector<std::tuple<isa::Op, std::uint32_t, std::uint32_t>> copies = {};
  std::vector<std::uint32_t> reads = {};
};

program::ProgramImage activation_program(const UnitAccesses& accesses) {
  testing::Assembler a;
  constexpr std::uint8_t kElement = 5, kValue = 6;
  for (const auto& [first, values] : accesses.puts)
    for (std::size_t k = 0; k < values.size(); ++k)
      a.li(kElement, first + static_cast<std::uint32_t>(k))
          .li(kValue, static_cast<std::uint32_t>(values[k]))
          .add(isa::Op::kVuPut, 0, kElement, kValue, 0);
  std::uint8_t result = 0;
  for (const LineOperation& e : accesses.operations) {
    a.li(kElement, e.vl).add(isa::Op::kVuSetvl, 0, kElement, 0, 0).li(kElement, e.aux).add(isa::Op::kVuSetaux, 0, kElement, 0, 0);
    if (e.op == isa::Op::kVuMatvec16)
      a.li(kElement, e.cols).add(isa::Op::kVuSetcols, 0, kElement, 0, 0).li(kElement, e.src).add(isa::Op::kVuSetsrc, 0, kElement, 0, 0);
    const bool two_operands = e.op == isa::Op::kVuAdd16 || e.op == isa::Op::kVuMul16 || e.op == isa::Op::kVuRmsnorm ||
                              e.op == isa::Op::kVuRope || e.op == isa::Op::kVuRow16 || e.op == isa::Op::kVuMatvec16;
    const auto rd = static_cast<std::uint8_t>(e.op == isa::Op::kVuArgmax ? 7 + result++ % 25 : 0);
    a.li(kElement, e.x).li(kValue, e.y).add(e.op, rd, kElement, two_operands ? kValue : 0, 0);
  }
  for (const auto& [op, element, slot] : accesses.copies) a.li(kElement, element).li(kValue, slot).add(op, 0, kElement, kValue, 0);
  for (std::size_t i = 0; i < accesses.reads.size(); ++i)
    a.li(kElement, accesses.reads[i]).add(isa::Op::kVuGet, static_cast<std::uint8_t>(6 + i % 26), kElement, 0, 0);
  return a.exit_and_link(kVectorMap);
}

std::vector<std::int32_t> random_elements(std::mt19937& random, std::size_t count) {
  std::vector<std::int32_t> values(count);
  for (std::int32_t& v : values) v = static_cast<std::int32_t>(random() % 8192) - 4096;
  return values;
}

// Random 13-bit lines into the first and last rows and a random row of every bank and half, one
// line overwritten, one left without its last element and one put out of order, in lockstep with
// vu.get reading random elements of them; every AM element and line buffer slot ends as on the
// golden machine.
TEST_F(VectorUnit, ActivationLinesPutAndGetInLockstep) {
  std::mt19937 random(21);
  const std::uint32_t line = cpu::kVectorLineElements, last = program::kVectorActivationElements - line;
  UnitAccesses accesses{.puts = {{0, random_elements(random, line)}, {last, random_elements(random, line)}}};
  for (std::uint32_t half_line = 0; half_line < 16; ++half_line)
    accesses.puts.push_back({256 * (random() % 128) + line * half_line, random_elements(random, line)});
  accesses.puts.push_back({0, random_elements(random, line)});
  accesses.puts.push_back({line * 40, random_elements(random, line - 1)});
  for (const auto& [first, values] : accesses.puts)
    for (int i = 0; i < 3; ++i) accesses.reads.push_back(first + static_cast<std::uint32_t>(random() % values.size()));
  accesses.reads.push_back(last + line - 1);
  program::ProgramImage image = activation_program(accesses);
  expect_clean_exit_and_same_unit_state(image);
}

// vu.kput and vu.vput copy AM rows of 32 random elements (every bank's, the first and the last)
// into the first and last slots and a slot in every KV bank, and then overwrite some of them with
// smaller values and zeros; every KV vector ends as on the golden machine.
TEST_F(VectorUnit, KvVectorsCopyFromActivationRowsInLockstep) {
  std::mt19937 random(22);
  const std::uint32_t row = program::kVectorKvElements, last_row = program::kVectorActivationElements - row;
  UnitAccesses accesses;
  std::vector<std::uint32_t> rows{0, last_row};
  for (std::uint32_t bank = 0; bank < 8; ++bank) rows.push_back(256 * (random() % 128) + row * bank);
  for (std::uint32_t first : rows) accesses.puts.push_back({first, random_elements(random, row)});
  accesses.puts.push_back({row * 300, std::vector<std::int32_t>(row, -4096)});
  accesses.puts.push_back({row * 301, std::vector<std::int32_t>(row, 0)});
  const std::uint32_t last_slot = program::kVectorKvSlots - 1;
  auto copy = [&](std::uint32_t slot, std::uint32_t from) {
    accesses.copies.push_back({random() % 2 ? isa::Op::kVuKput : isa::Op::kVuVput, from, slot});
  };
  for (std::uint32_t slot : {0u, last_slot}) {
    accesses.copies.push_back({isa::Op::kVuKput, rows[random() % rows.size()], slot});
    accesses.copies.push_back({isa::Op::kVuVput, rows[random() % rows.size()], slot});
  }
  for (std::uint32_t bank = 0; bank < 32; ++bank) copy(32 * (random() % 128) + bank, rows[random() % rows.size()]);
  for (isa::Op op : {isa::Op::kVuKput, isa::Op::kVuVput}) {  // downwards: the smallest values, then zeros
    accesses.copies.push_back({op, row * 300, 0});
    accesses.copies.push_back({op, row * 301, last_slot});
  }
  accesses.reads = {0, last_row + row - 1};
  program::ProgramImage image = activation_program(accesses);
  expect_clean_exit_and_same_unit_state(image);
}

// vu.put at an element past AM or of a value outside −4096..4095, and vu.get past AM, are illegal
// instructions, reported as the golden machine reports them.
TEST_F(VectorUnit, ActivationAccessesOutOfRangeTrapAsOnTheGoldenMachine) {
  const std::uint32_t end = program::kVectorActivationElements, slots = program::kVectorKvSlots;
  using isa::Op;
  const UnitAccesses cases[] = {
      {.puts = {{end, {7}}}},
      {.puts = {{0x80000000u, {7}}}},
      {.puts = {{15, {4096}}}},
      {.puts = {{15, {-4097}}}},
      {.puts = {{15, {0x10000005}}}},
      {.reads = {end}},
      {.reads = {0xFFFFFFFFu}},
      {.copies = {{Op::kVuKput, 16, 0}}},
      {.copies = {{Op::kVuKput, 1, 0}}},
      {.copies = {{Op::kVuVput, end, 0}}},
      {.copies = {{Op::kVuKput, 0, slots}}},
      {.copies = {{Op::kVuVput, 0, 0xFFFFFFFFu}}},
  };
  for (const UnitAccesses& c : cases) {
    program::ProgramImage image = activation_program(c);
    driver::FastModelMachine weights(*model_);
    LockstepReport report = run_lockstep(*machine_, *bank_heads_, weights, image, {});
    EXPECT_FALSE(report.difference) << *report.difference;
    EXPECT_EQ(report.ending.find("trap: illegal instruction"), 0u) << report.ending;
  }
}

// vu.add16, vu.mul16 at every shift and vu.silu over random lines with the 13-bit extremes, in
// lockstep, each reading its line from AM's banks of both parities and the same line twice: whole
// and partial last lines (zeros past VL), up to 8 lines, outputs that become later lines' inputs
// (y = x − 32), and the first and last lines of AM. vu.get reads elements back into registers, and
// every AM element and line buffer slot ends as on the golden machine.
TEST_F(VectorUnit, ElementwiseOperationsRunLineByLineInLockstep) {
  std::mt19937 random(23);
  using isa::Op;
  const std::uint32_t end = program::kVectorActivationElements;
  UnitAccesses accesses;
  auto put = [&](std::uint32_t first, std::uint32_t lines) {
    std::vector<std::int32_t> values = random_elements(random, 16 * lines);
    for (std::size_t i = 0; i < values.size(); i += 7) values[i] = i % 2 ? 4095 : -4096;
    accesses.puts.push_back({first, values});
  };
  for (std::uint32_t first : {0u, 1024u, 2048u, 4096u, end - 128}) put(first, 8);
  accesses.operations = {{Op::kVuAdd16, 128, 0, 32},      {Op::kVuAdd16, 37, 1056, 1024},  {Op::kVuAdd16, 16, 2048, 2048},
                         {Op::kVuAdd16, 100, 1056, 1024}, {Op::kVuSilu, 128, 2048},        {Op::kVuSilu, 5, end - 16},
                         {Op::kVuAdd16, 33, end - 64, end - 96}};
  for (std::uint32_t shift = 1; shift <= 30; ++shift)
    accesses.operations.push_back({Op::kVuMul16, 16 - shift % 3, 4096 + 32 * (shift % 4), 4096 + 32 * ((shift + 1) % 4), shift});
  accesses.operations.push_back({Op::kVuMul16, 128, 4096, 4096, 12});
  for (std::uint32_t first : {0u, 1024u, 2048u, 4096u, end - 128})
    for (int i = 0; i < 4; ++i) accesses.reads.push_back(first + static_cast<std::uint32_t>(random() % 128));
  program::ProgramImage image = activation_program(accesses);
  expect_clean_exit_and_same_unit_state(image);
}

// vu.argmax over random logits as the story's (512 at its AM place), vectors of every length
// around a group of 16 lines (1, 15, 16, 17, 255, 256, 257) and of the longest, 4,096, whose
// index needs HI; a constant −4096 vector, the maximum in a partial last line's last element and
// larger values just past VL, ties across lines and groups, the maximum in both halves of AM's
// banks. Each index lands in a register, which the lockstep compares.
TEST_F(VectorUnit, ArgmaxRunsInLockstep) {
  std::mt19937 random(24);
  using isa::Op;
  UnitAccesses accesses;
  accesses.puts.push_back({752, random_elements(random, 512)});
  std::vector<std::int32_t> wide = random_elements(random, 4096);
  for (std::int32_t& value : wide) value = std::min(value, 4000);
  wide[3000] = wide[3333] = 4095;  // the first index needs HI
  accesses.puts.push_back({4096, wide});
  accesses.puts.push_back({8192, std::vector<std::int32_t>(32, -4096)});
  std::vector<std::int32_t> padded(48, -7);
  padded[36] = 5, padded[37] = 4095, padded[40] = 4095;  // VL 37: the last valid element wins
  accesses.puts.push_back({9216, padded});
  std::vector<std::int32_t> ties(272);
  for (std::size_t i = 0; i < ties.size(); ++i) ties[i] = static_cast<std::int32_t>(random() % 5) - 2;
  ties[17] = ties[200] = ties[260] = 3;
  accesses.puts.push_back({10240, ties});
  accesses.operations = {{Op::kVuArgmax, 512, 752}, {Op::kVuArgmax, 4096, 4096}, {Op::kVuArgmax, 17, 8192},
                         {Op::kVuArgmax, 37, 9216}, {Op::kVuArgmax, 36, 9216}};
  for (std::uint32_t vl : {1u, 15u, 16u, 17u, 255u, 256u, 257u, 272u}) accesses.operations.push_back({Op::kVuArgmax, vl, 10240});
  for (std::uint32_t vl : {1u, 200u, 2047u}) accesses.operations.push_back({Op::kVuArgmax, vl, 4096 + 1008});
  program::ProgramImage image = activation_program(accesses);
  expect_clean_exit_and_same_unit_state(image);
}

// vu.rmsnorm over random vectors with the 13-bit extremes, at every length around its two banks'
// rows (1, 2, 3, 17, 31, 32, 33, 48, 63, 64), from x in each of the 8 banks (in the last with at
// most 32 elements) and AM's last row, with epsilon terms from 0 to 2^32 − 1 (the sum capped at
// 2^30, and 0 read as 1), constant vectors of both extremes and zeros, written elsewhere, in place
// and over its own later lines (out = x + 16), in lockstep; vu.get reads outputs back, and every AM
// element and line buffer slot ends as on the golden machine.
TEST_F(VectorUnit, NormRunsInLockstep) {
  std::mt19937 random(25);
  using isa::Op;
  const std::uint32_t end = program::kVectorActivationElements;
  UnitAccesses accesses;
  auto put = [&](std::uint32_t first, std::vector<std::int32_t> values) {
    for (std::size_t i = 0; i < values.size(); i += 5) values[i] = i % 2 ? 4095 : -4096;
    accesses.puts.push_back({first, std::move(values)});
  };
  for (std::uint32_t bank = 0; bank < 8; ++bank) put(256 * 20 + 32 * bank, random_elements(random, 32));
  put(end - 256, random_elements(random, 256));
  accesses.puts.push_back({8192, std::vector<std::int32_t>(64, 4095)});
  accesses.puts.push_back({8192 + 64, std::vector<std::int32_t>(64, -4096)});
  accesses.puts.push_back({8192 + 128, std::vector<std::int32_t>(64, 0)});
  const std::uint32_t epsilons[] = {0, 1, 1000, 1u << 30, 0xFFFFFFFFu};
  std::size_t next = 0;
  for (std::uint32_t vl : {1u, 2u, 3u, 17u, 31u, 32u, 33u, 48u, 63u, 64u})
    for (std::uint32_t bank = 0; bank < 8; bank += 3)
      accesses.operations.push_back(
          {Op::kVuRmsnorm, vl, 12288 + 64 * static_cast<std::uint32_t>(next), 256 * 20 + 32 * bank, epsilons[next++ % 5]});
  accesses.operations.push_back({Op::kVuRmsnorm, 32, 16384, 256 * 20 + 32 * 7, 7});
  for (std::uint32_t first : {8192u, 8192u + 64, 8192u + 128})
    accesses.operations.push_back({Op::kVuRmsnorm, 64, 16384 + first, first, 0});
  accesses.operations.push_back({Op::kVuRmsnorm, 64, end - 64, end - 64, 11});
  accesses.operations.push_back({Op::kVuRmsnorm, 48, end - 256 + 16, end - 256, 5});
  accesses.reads = {12288, 12288 + 64 * 20 + 5, 16384, 16384 + 8192 + 63, end - 1, end - 256 + 40};
  program::ProgramImage image = activation_program(accesses);
  expect_clean_exit_and_same_unit_state(image);
}

// vu.rope over random lines with the 13-bit extremes, in place and into AM's last lines, at lengths
// around a line, with tables of random Q14 entries in each half of a WM line, in the first and last
// lines of WM and of its second region of banks, and one of int16's extremes.
TEST_F(VectorUnit, RopeRunsInLockstep) {
  std::mt19937 random(27);
  using isa::Op;
  const std::uint32_t end = program::kVectorActivationElements, wm_end = program::kVectorWeightBytes;
  UnitAccesses accesses;
  auto put = [&](std::uint32_t first, std::vector<std::int32_t> values) {
    for (std::size_t i = 0; i < values.size(); i += 5) values[i] = i % 2 ? 4095 : -4096;
    accesses.puts.push_back({first, std::move(values)});
  };
  put(4096, random_elements(random, 256));
  put(end - 64, random_elements(random, 64));
  std::vector<std::uint8_t> weights(wm_end);
  auto table = [&](std::uint32_t address, bool extremes) {
    for (std::uint32_t i = 0; i < 16; ++i) {
      const std::int32_t q14 = static_cast<std::int32_t>(random() % 32769) - 16384;
      const auto entry = static_cast<std::uint16_t>(extremes ? (i % 3 == 0 ? -32768 : i % 3 == 1 ? 32767 : -1) : q14);
      weights[address + 2 * i] = static_cast<std::uint8_t>(entry), weights[address + 2 * i + 1] = static_cast<std::uint8_t>(entry >> 8);
    }
    return address;
  };
  const std::uint32_t tables[] = {table(0, false), table(32, false), table(64 * 777 + 32, false),
                                  table(wm_end - 32, false), table(256 * 1024, false), table(64 * 100, true)};
  std::size_t next = 0;
  for (std::uint32_t vl : {2u, 4u, 14u, 16u, 18u, 30u, 32u, 34u, 64u, 256u})
    accesses.operations.push_back({Op::kVuRope, vl, 4096, tables[next++ % std::size(tables)]});
  accesses.operations.push_back({Op::kVuRope, 64, end - 64, tables[5]});
  accesses.operations.push_back({Op::kVuRope, 50, end - 64, tables[3]});
  accesses.reads = {4096, 4096 + 1, 4096 + 33, 4096 + 255, end - 64, end - 15, end - 1};
  program::ProgramImage image = activation_program(accesses);
  image.weights = std::move(weights);
  expect_clean_exit_and_same_unit_state(image);
}

// vu.row16 over rows of random bytes with int8's extremes, of lengths around a line up to a WM line,
// from WM's first and last lines, the first of its second region of banks and random ones, by pairs
// at every place of a WM line with multipliers 0..255 and every shift 1..62 (those from 16 on give
// zeros), into AM lines of both parities and its last line; vu.get reads outputs back, and every AM
// element and line buffer slot ends as on the golden machine.
TEST_F(VectorUnit, EmbeddingLookupsRunInLockstep) {
  std::mt19937 random(28);
  using isa::Op;
  const std::uint32_t end = program::kVectorActivationElements, wm_end = program::kVectorWeightBytes, line = 64;
  std::vector<std::uint8_t> weights(wm_end);
  std::vector<std::uint32_t> rows{0, wm_end - line, 256 * 1024};
  for (int i = 0; i < 5; ++i) rows.push_back(line * (random() % (wm_end / line)));
  for (std::uint32_t row : rows)
    for (std::uint32_t i = 0; i < line; ++i) weights[row + i] = static_cast<std::uint8_t>(i % 9 == 0 ? 0x80 : i % 9 == 1 ? 0x7F : random());
  const std::uint32_t pairs = 64 * 1000;  // 64 pairs over 8 lines: every place in a line
  std::vector<std::uint32_t> shifts;
  for (std::uint32_t shift = 1; shift <= 62; ++shift) shifts.push_back(shift);
  shifts.push_back(16), shifts.push_back(17);
  for (std::uint32_t i = 0; i < 64; ++i) {
    const std::uint32_t multiplier = i == 0 ? 255 : i == 1 ? 0 : random() % 256, shift = shifts[i];
    for (int b = 0; b < 4; ++b) {
      weights[pairs + 8 * i + b] = static_cast<std::uint8_t>(multiplier >> (8 * b));
      weights[pairs + 8 * i + 4 + b] = static_cast<std::uint8_t>(shift >> (8 * b));
    }
  }
  UnitAccesses accesses;
  const std::uint32_t lengths[] = {1, 2, 15, 16, 17, 31, 33, 48, 63, 64};
  for (std::uint32_t i = 0; i < 64; ++i) {
    const std::uint32_t out = i % 8 == 7 ? end - 64 : 16 * (64 + 5 * i);
    // The small shifts with the larger multipliers, so that outputs also saturate.
    const std::uint32_t pair = i < 20 ? pairs + 8 * (i % 8) : pairs + 8 * i;
    accesses.operations.push_back({Op::kVuRow16, lengths[i % std::size(lengths)], out, rows[i % rows.size()], pair});
  }
  accesses.reads = {16 * 64, 16 * 64 + 15, 16 * 69 + 3, end - 64, end - 1};
  program::ProgramImage image = activation_program(accesses);
  image.weights = std::move(weights);
  expect_clean_exit_and_same_unit_state(image);
}

// A matrix for vu.matvec16 at WM byte `matrix` (a multiple of 64) in `weights`: rows of random bytes
// with int8's extremes, their padding past COLS random too, and pairs mostly of the quantiser's
// kind (multipliers 0..255, shifts that keep random rows' outputs mostly within 13 bits), some with
// words the instruction reads only part of: high bits set, shifts 0, 63 and 64 + 5.
void put_random_matrix(std::vector<std::uint8_t>& weights, std::uint32_t matrix, std::uint32_t rows, std::mt19937& random) {
  auto put_word = [&](std::uint32_t at, std::uint32_t word) {
    for (int b = 0; b < 4; ++b) weights[at + b] = static_cast<std::uint8_t>(word >> (8 * b));
  };
  for (std::uint32_t r = 0; r < rows; ++r) {
    const std::uint32_t multiplier = r % 11 == 3 ? 0xABCD0000u | random() % 256 : r % 7 == 1 ? 255 : random() % 256;
    const std::uint32_t shift = r % 13 == 5 ? 0 : r % 13 == 6 ? 63 : r % 13 == 7 ? 64 + 5 : r % 13 == 8 ? 1 : 12 + random() % 12;
    put_word(matrix + 8 * r, multiplier);
    put_word(matrix + 8 * r + 4, shift);
  }
  const std::uint32_t first_row = (matrix + 8 * rows + 63) / 64 * 64;
  for (std::uint32_t i = 0; i < 64 * rows; ++i)
    weights[first_row + i] = static_cast<std::uint8_t>(i % 17 == 0 ? 0x80 : i % 17 == 1 ? 0x7F : random());
}

// vu.matvec16 over matrices of 1 to 172 rows and 1 to 64 columns, in WM's first lines, its second
// region of banks and at its end, by inputs at every place in an AM row, into output lines
// anywhere and, once, over its own input (later rows then read the lines already written); vu.get reads outputs back, and every AM element
// and line buffer slot ends as on the golden machine.
TEST_F(VectorUnit, MatrixProductsRunInLockstep) {
  std::mt19937 random(29);
  const std::uint32_t end = program::kVectorActivationElements, wm_end = program::kVectorWeightBytes;
  std::vector<std::uint8_t> weights(wm_end);
  struct Product {
    std::uint32_t matrix, rows, cols, src, out;
  };
  const Product products[] = {{0, 16, 64, 64, 1024},           {2048, 1, 1, 0, 2048},
                              {4096, 17, 33, 128, 4096},       {8192, 40, 64, 256 + 192, 48},
                              {256 * 1024, 64, 64, 512, 8192}, {200 * 1024, 172, 64, 1024, 9216},
                              {wm_end - 64 * 9, 8, 20, 192, end - 16}, {16384, 32, 64, 2048, 2048}};
  UnitAccesses accesses;
  for (const Product& p : products) {
    put_random_matrix(weights, p.matrix, p.rows, random);
    std::vector<std::int32_t> x = random_elements(random, 64);
    x[0] = -4096, x[1] = 4095;
    accesses.puts.push_back({p.src, x});
    accesses.operations.push_back({isa::Op::kVuMatvec16, p.rows, p.out, p.matrix, 1, p.cols, p.src});
  }
  accesses.reads = {1024, 1039, 2048, 4100, 8192 + 63, 9216 + 171, end - 9};
  program::ProgramImage image = activation_program(accesses);
  image.weights = std::move(weights);
  expect_clean_exit_and_same_unit_state(image);
}

// vu.row16 by a pair the golden machine refuses traps as it does there, in the pass that reads the
// pair: a shift of 0, 63, 64, 2^8 or negative, a multiplier of 256, 2^16 or negative.
TEST_F(VectorUnit, EmbeddingLookupsByABadPairTrapAsOnTheGoldenMachine) {
  const std::pair<std::uint32_t, std::uint32_t> bad_pairs[] = {{128, 0},      {128, 63},         {128, 64},
                                                               {128, 256},    {128, 0x80000001u}, {256, 1},
                                                               {1u << 16, 1}, {0xFFFFFF80u, 3}};
  for (const auto& [multiplier, shift] : bad_pairs) {
    const std::uint32_t pair = 64 * 9 + 8 * (shift % 8);
    std::vector<std::uint8_t> weights(program::kVectorWeightBytes);
    for (int b = 0; b < 4; ++b) {
      weights[pair + b] = static_cast<std::uint8_t>(multiplier >> (8 * b));
      weights[pair + 4 + b] = static_cast<std::uint8_t>(shift >> (8 * b));
    }
    program::ProgramImage image = activation_program({.operations = {{isa::Op::kVuRow16, 16, 0, 64, pair}}});
    image.weights = std::move(weights);
    driver::FastModelMachine machine(*model_);
    LockstepReport report = run_lockstep(*machine_, *bank_heads_, machine, image, {});
    EXPECT_FALSE(report.difference) << *report.difference;
    EXPECT_EQ(report.ending.find("trap: illegal instruction"), 0u) << multiplier << ", " << shift << ": " << report.ending;
  }
}

// Operands the unit cannot take are illegal instructions, reported as the golden machine reports
// them: VL 0 or past 4,096, x or y not a line's first element or its lines past AM, y's lines in
// x's banks, vu.mul16's shift 0 or 31; for vu.rmsnorm VL past 64, its vector not a multiple of 32,
// across two AM rows or past AM; for vu.rope an odd VL, its table not a multiple of 32 or past WM;
// for vu.row16 VL past 64, its row not a multiple of 64 or past WM, its pair not a multiple of 8 or
// past WM; for vu.matvec16 COLS 0 or past 256 (and 65 with its input across two AM rows, since the
// weights refuse every COLS past 64 for now), its matrix not a multiple of 64 or its rows past WM by
// a line, its input not a multiple of 64 or past AM.
TEST_F(VectorUnit, LineOperandsOutOfRangeTrapAsOnTheGoldenMachine) {
  using isa::Op;
  const std::uint32_t end = program::kVectorActivationElements;
  const LineOperation cases[] = {
      {Op::kVuAdd16, 0, 0, 32},        {Op::kVuAdd16, 4097, 0, 32},      {Op::kVuSilu, 0x80000010u, 0},
      {Op::kVuAdd16, 16, 8, 40},       {Op::kVuAdd16, 16, 32, 8},        {Op::kVuSilu, 17, end - 16},
      {Op::kVuAdd16, 17, 16, end - 16}, {Op::kVuAdd16, 16, 0, 64},       {Op::kVuAdd16, 16, 0, 16},
      {Op::kVuMul16, 16, 0, 32, 0},    {Op::kVuMul16, 16, 0, 32, 31},    {Op::kVuMul16, 16, 0, 32, 0x10001u},
      {Op::kVuSilu, 16, 0x80000000u},  {Op::kVuAdd16, 16, 0, 0x80000020u},
      {Op::kVuArgmax, 0, 0},           {Op::kVuArgmax, 4097, 0},         {Op::kVuArgmax, 16, 8},
      {Op::kVuArgmax, 17, end - 16},
      {Op::kVuRmsnorm, 0, 1024, 0},    {Op::kVuRmsnorm, 65, 1024, 0},    {Op::kVuRmsnorm, 16, 8, 0},
      {Op::kVuRmsnorm, 16, 1024, 16},  {Op::kVuRmsnorm, 33, 1024, 224},  {Op::kVuRmsnorm, 16, 1024, end},
      {Op::kVuRmsnorm, 17, end - 16, 0},
      {Op::kVuRope, 0, 0, 0},          {Op::kVuRope, 3, 0, 0},           {Op::kVuRope, 4098, 0, 0},
      {Op::kVuRope, 16, 8, 0},         {Op::kVuRope, 18, end - 16, 0},   {Op::kVuRope, 16, 0, 16},
      {Op::kVuRope, 16, 0, program::kVectorWeightBytes}, {Op::kVuRope, 16, 0, 0x80000000u},
      {Op::kVuRow16, 0, 0, 64, 8},     {Op::kVuRow16, 65, 0, 64, 8},     {Op::kVuRow16, 16, 8, 64, 8},
      {Op::kVuRow16, 17, end - 16, 64, 8}, {Op::kVuRow16, 16, 0, 32, 8}, {Op::kVuRow16, 16, 0, program::kVectorWeightBytes, 8},
      {Op::kVuRow16, 16, 0, 0x80000000u, 8}, {Op::kVuRow16, 16, 0, 64, 4}, {Op::kVuRow16, 16, 0, 64, program::kVectorWeightBytes},
      {Op::kVuRow16, 16, 0, 64, 0xFFFFFFF8u},
      {Op::kVuMatvec16, 0, 0, 0, 1, 16, 0},    {Op::kVuMatvec16, 4097, 0, 0, 1, 16, 0}, {Op::kVuMatvec16, 16, 0, 0, 1, 0, 0},
      {Op::kVuMatvec16, 16, 0, 0, 1, 257, 0},  {Op::kVuMatvec16, 16, 8, 0, 1, 16, 0},   {Op::kVuMatvec16, 17, end - 16, 0, 1, 16, 0},
      {Op::kVuMatvec16, 16, 0, 32, 1, 16, 0},  {Op::kVuMatvec16, 16, 0, program::kVectorWeightBytes - 64 * 17, 1, 16, 0},
      {Op::kVuMatvec16, 16, 0, 0x80000000u, 1, 16, 0},  {Op::kVuMatvec16, 16, 0, 0, 1, 16, 32},
      {Op::kVuMatvec16, 16, 0, 0, 1, 16, 16},  {Op::kVuMatvec16, 16, 0, 0, 1, 16, end}, {Op::kVuMatvec16, 16, 0, 0, 1, 16, 0x80000000u},
      {Op::kVuMatvec16, 16, 0, 0, 1, 65, 192},
  };
  for (const LineOperation& c : cases) {
    program::ProgramImage image = activation_program({.operations = {c}});
    driver::FastModelMachine weights(*model_);
    LockstepReport report = run_lockstep(*machine_, *bank_heads_, weights, image, {});
    EXPECT_FALSE(report.difference) << *report.difference;
    EXPECT_EQ(report.ending.find("trap: illegal instruction"), 0u) << isa::op_info(c.op).name << " " << c.vl << " " << c.x << " " << c.y << ": " << report.ending;
  }
}

// Without the neurons that compute the elements, an operation's results are lost.
TEST_F(VectorUnit, ZeroingTheElementwiseUnitBreaksTheOperations) {
  LockstepReport report = run_ablated(
      *machine_,
      activation_program({.puts = {{0, std::vector<std::int32_t>(16, 100)}, {32, std::vector<std::int32_t>(16, 23)}},
                          .operations = {{isa::Op::kVuAdd16, 16, 0, 32}},
                          .reads = {3}}),
      "vector.elementwise");
  ASSERT_TRUE(report.difference) << "vu.add16 worked without its neurons";
}

TEST_F(VectorUnit, ZeroingTheRotationsUnitBreaksIt) {
  program::ProgramImage image = activation_program(
      {.puts = {{0, std::vector<std::int32_t>(16, 100)}}, .operations = {{isa::Op::kVuRope, 16, 0, 0}}, .reads = {0}});
  image.weights.assign(32, 0);
  image.weights[17] = 0x40;  // the first sine, 2^14 (1 in Q14): the first pair becomes (−100, 100)
  LockstepReport report = run_ablated(*machine_, image, "vector.rope");
  ASSERT_TRUE(report.difference) << "vu.rope worked without its neurons";
}

TEST_F(VectorUnit, ZeroingTheEmbeddingLookupBreaksIt) {
  program::ProgramImage image =
      activation_program({.operations = {{isa::Op::kVuRow16, 16, 0, 64, 8}}, .reads = {0}});
  image.weights.assign(128, 0);
  image.weights[8] = 128, image.weights[12] = 7, image.weights[64] = 100;  // the pair {128, 7}: 100 → 100
  LockstepReport report = run_ablated(*machine_, image, "vector.row16");
  ASSERT_TRUE(report.difference) << "vu.row16 worked without its neurons";
}

TEST_F(VectorUnit, ZeroingTheMatrixProductBreaksIt) {
  program::ProgramImage image = activation_program(
      {.puts = {{0, std::vector<std::int32_t>(16, 3)}}, .operations = {{isa::Op::kVuMatvec16, 1, 64, 0, 1, 16, 0}}, .reads = {64}});
  image.weights.assign(128, 0);
  image.weights[0] = 128, image.weights[4] = 7, image.weights[64] = 100;  // 100·3 with the pair {128, 7} → 300
  LockstepReport report = run_ablated(*machine_, image, "vector.matvec");
  ASSERT_TRUE(report.difference) << "vu.matvec16 worked without its neurons";
}

TEST_F(VectorUnit, ZeroingTheArgmaxUnitBreaksIt) {
  std::vector<std::int32_t> values(32, -3);
  values[21] = 9;
  LockstepReport report = run_ablated(
      *machine_, activation_program({.puts = {{0, values}}, .operations = {{isa::Op::kVuArgmax, 32, 0}}}), "vector.argmax");
  ASSERT_TRUE(report.difference) << "vu.argmax worked without its neurons";
}

TEST_F(VectorUnit, ZeroingTheNormsScaleBreaksIt) {
  std::mt19937 random(26);
  LockstepReport report = run_ablated(
      *machine_, activation_program({.puts = {{0, random_elements(random, 64)}},
                                     .operations = {{isa::Op::kVuRmsnorm, 64, 64, 0}},
                                     .reads = {70}}),
      "vector.rmsnorm");
  ASSERT_TRUE(report.difference) << "vu.rmsnorm worked without its scale's neurons";
}

TEST_F(VectorUnit, ZeroingVuGetsElementDecoderBreaksTheUnit) {
  LockstepReport report =
      run_ablated(*machine_, activation_program({.puts = {{0, std::vector<std::int32_t>(16, -5)}}, .reads = {3}}), "vector.am.get");
  ASSERT_TRUE(report.difference) << "vu.get worked without its decoder";
}

// Without the neurons that turn an AM row into the KV cache's lanes, a copied vector is lost (the
// run itself, which never reads the cache, goes on).
TEST_F(VectorUnit, ZeroingTheKvCachesLaneLevelsLosesTheCopy) {
  const std::vector<std::int32_t> values(program::kVectorKvElements, 1000);
  bool lost = false;
  run_ablated(*machine_, activation_program({.puts = {{0, values}}, .copies = {{isa::Op::kVuKput, 0, 5}}}), "vector.kv",
              [&](const MachineStateReader& reader, const engine::RecurrentStateView& state) {
                lost = reader.vector_kv_vector(state, 5, 0)[0] != 1000;
              });
  EXPECT_TRUE(lost) << "the key vector was copied without the unit's neurons";
}

TEST_F(VectorUnit, ZeroingVuWgetsWordDecoderBreaksTheUnit) {
  LockstepReport report = run_ablated(*machine_, weight_reading_program({0, 60}, std::vector<std::uint8_t>(64, 0xC3)), "vector.wget");
  ASSERT_TRUE(report.difference) << "vu.wget worked without its decoder";
  EXPECT_LT(report.instructions, 10u) << *report.difference;  // the first read
}

}  // namespace
}  // namespace rvformer::verify
