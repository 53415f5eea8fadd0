// emulator/vector_unit_test.cpp — the vector unit's instructions (runtime/rvformer_vector.h) run by
// small RV32 programs on the golden emulator's rvformer-vector map. Every operation is compared,
// on seeded random operands and their extremes, with the story program's reference functions
// (firmware/story/story_ops.c, which the emulator does not use); every out-of-range operand traps.
//
// A test keeps a model of the unit's memories beside the program it writes: what the program puts
// there, then each operation's outputs as the reference computes them from the model. The
// emulator's memories must equal the model at the end.
#include "emulator/vector_unit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/emulator.h"
#include "isa/instruction_set.h"
#include "isa/trap.h"
#include "program/machine_spec.h"
#include "support/error.h"

extern "C" {
#include "story_ops.h"
}

namespace rvformer::emulator {
namespace {

using isa::Op;
using program::MemoryMap;
using program::kVectorMap;

constexpr std::uint32_t kWeightBytes = VectorUnit::kWeightBytes;
constexpr std::uint32_t kElements = VectorUnit::kActivationElements;
constexpr std::uint32_t kKvSlots = VectorUnit::kKvSlots, kKvElements = VectorUnit::kKvElements;
constexpr std::uint32_t kLineElements = VectorUnit::kLineElements;
constexpr std::uint32_t kWeightLine = 64;  // a WM line: a matrix's rows start at one and take whole lines

std::uint32_t whole_weight_lines(std::uint32_t bytes) { return (bytes + kWeightLine - 1) / kWeightLine * kWeightLine; }
// Where a matrix's row 0 starts, and how far apart its rows lie.
std::uint32_t matrix_rows_at(std::uint32_t matrix, std::uint32_t rows) { return whole_weight_lines(matrix + 8 * rows); }
int row_stride(std::uint32_t cols) { return static_cast<int>(whole_weight_lines(cols)); }
constexpr std::uint8_t kZero = 0, kT0 = 5, kT1 = 6, kS0 = 8, kS1 = 9, kA0 = 10, kA1 = 11, kA2 = 12, kS2 = 18;

std::uint32_t word_of(Op op, std::uint8_t rd, std::uint8_t rs1, std::uint8_t rs2, std::int32_t imm = 0) {
  return isa::encode({.op = op, .rd = rd, .rs1 = rs1, .rs2 = rs2, .imm = imm});
}

std::uint32_t xorshift32(std::uint32_t x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}

template <typename T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& values) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

void ignore_console(std::uint8_t) {}

// A program for the unit under construction, and the model of the memories it writes.
class VectorProgram {
 public:
  VectorProgram()
      : weights_(kWeightBytes), activations_(kElements), keys_(kKvSlots * kKvElements), values_(kKvSlots * kKvElements) {}

  VectorProgram& add(std::uint32_t word) {
    code_.push_back(word);
    return *this;
  }
  VectorProgram& li(std::uint8_t rd, std::uint32_t value) {
    for (std::uint32_t word : isa::load_immediate(rd, value)) code_.push_back(word);
    return *this;
  }

  // KV slot `slot`'s key vector (`put` vu.kput) or value vector (vu.vput): `vector` (at most
  // kKvElements; the rest zero) put into AM at `scratch` and copied from there.
  VectorProgram& put_kv(Op put, std::uint32_t slot, std::uint32_t scratch, const std::vector<std::int16_t>& vector) {
    put_activations(scratch, vector);
    return copy_to_kv(put, slot, scratch);
  }
  // The same with a whole vector of random values made by the program (random_activations).
  VectorProgram& random_kv(Op put, std::uint32_t slot, std::uint32_t scratch, std::uint32_t seed, int bits) {
    random_activations(scratch, kKvElements, seed, bits);
    return copy_to_kv(put, slot, scratch);
  }
  // KV slot `slot`'s key (or value) vector, as the model holds it.
  const std::int16_t* kv_vector(Op put, std::uint32_t slot) const {
    return (put == Op::kVuKput ? keys_ : values_).data() + std::size_t{slot} * kKvElements;
  }

  // WM's image: `bytes` from `address` when the program starts (zeros where nothing is put).
  VectorProgram& put_weights(std::uint32_t address, const std::vector<std::uint8_t>& bytes) {
    std::ranges::copy(bytes, weights_.begin() + address);
    image_bytes_ = std::max(image_bytes_, address + bytes.size());
    return *this;
  }
  VectorProgram& put_table(std::uint32_t address, const std::vector<std::int16_t>& table) {
    std::vector<std::int16_t> padded = table;
    if (padded.size() % 2 != 0) padded.push_back(0);
    return put_weights(address, bytes_of(padded));
  }

  // `words` xorshift32 words from `seed` on, from WM byte `address` of the image.
  VectorProgram& random_weights(std::uint32_t address, std::uint32_t words, std::uint32_t seed) {
    std::vector<std::uint8_t> bytes(4 * words);
    for (std::uint32_t i = 0; i < words; ++i) {
      seed = xorshift32(seed);
      std::memcpy(bytes.data() + 4 * i, &seed, 4);
    }
    return put_weights(address, bytes);
  }

  // AM elements from `element`, copied from read-only data by vu.put. vu.put commits whole lines,
  // so the rest of the first and last lines is read back and put again.
  VectorProgram& put_activations(std::uint32_t element, const std::vector<std::int16_t>& values) {
    if (values.empty()) throw std::invalid_argument("no values");
    const auto count = static_cast<std::uint32_t>(values.size());
    keep_activations(line_start(element), element);
    li(kS0, place_in_rodata(bytes_of(values))).li(kS1, element).li(kS2, element + count);
    add(word_of(Op::kLh, kT0, kS0, 0)).add(word_of(Op::kVuPut, 0, kS1, kT0));
    add(word_of(Op::kAddi, kS0, kS0, 0, 2)).add(word_of(Op::kAddi, kS1, kS1, 0, 1));
    add(word_of(Op::kBne, 0, kS1, kS2, -16));
    keep_activations(element + count, line_start(element + count + kLineElements - 1));
    std::ranges::copy(values, activations_.begin() + element);
    return *this;
  }
  // `count` AM elements from `element`, each the top `bits` + 1 bits of a xorshift32 word from
  // `seed` on (values in [−2^bits, 2^bits), bits <= 12: 13-bit values), made by the program itself.
  VectorProgram& random_activations(std::uint32_t element, std::uint32_t count, std::uint32_t seed, int bits) {
    keep_activations(line_start(element), element);
    li(kT0, seed).li(kS1, element).li(kS2, element + count);
    next_random_in_t0();
    add(word_of(Op::kSrai, kT1, kT0, 0, 31 - bits)).add(word_of(Op::kVuPut, 0, kS1, kT1));
    add(word_of(Op::kAddi, kS1, kS1, 0, 1)).add(word_of(Op::kBne, 0, kS1, kS2, -36));
    keep_activations(element + count, line_start(element + count + kLineElements - 1));
    for (std::uint32_t i = 0; i < count; ++i) {
      seed = xorshift32(seed);
      activations_[element + i] = static_cast<std::int16_t>(static_cast<std::int32_t>(seed) >> (31 - bits));
    }
    return *this;
  }

  // One WM word of the image.
  VectorProgram& put_weight_word(std::uint32_t address, std::uint32_t word) {
    std::vector<std::uint8_t> bytes(4);
    std::memcpy(bytes.data(), &word, 4);
    return put_weights(address, bytes);
  }
  // vu.setvl etc.: `setter` is the vu.set* instruction.
  VectorProgram& set(Op setter, std::uint32_t value) { return li(kT0, value).add(word_of(setter, 0, kT0, 0)); }
  // The vu.* instruction `op` with rs1 = a0 = `rs1`, rs2 = a1 = `rs2` and rd as given.
  VectorProgram& op(Op op, std::uint32_t rs1, std::uint32_t rs2 = 0, std::uint8_t rd = kZero) {
    li(kA0, rs1).li(kA1, rs2);
    last_op_pc_ = kVectorMap.code.base + 4 * static_cast<std::uint32_t>(code_.size());
    return add(word_of(op, rd, kA0, kA1));
  }
  std::uint32_t last_op_pc() const { return last_op_pc_; }

  program::ProgramImage image(const MemoryMap& map = kVectorMap) const {
    program::ProgramImage image;
    image.map = map;
    std::vector<std::uint32_t> words = code_;
    for (std::uint32_t word : isa::load_immediate(kT0, map.exit_address)) words.push_back(word);
    words.push_back(word_of(Op::kSw, 0, kT0, kZero));
    image.code = bytes_of(words);
    image.rodata = rodata_;
    image.weights.assign(weights_.begin(), weights_.begin() + static_cast<std::ptrdiff_t>(image_bytes_));
    image.entry = map.code.base;
    return image;
  }

  // Runs the program to its exit.
  Emulator run() const {
    Emulator emulator(image());
    RunResult result = emulator.run(200'000'000, ignore_console);
    EXPECT_EQ(result.reason, StopReason::kExited) << isa::describe_trap(result.trap, kVectorMap);
    return emulator;
  }

  // The model: what the unit's memories must hold.
  const std::vector<std::uint8_t>& weights() const { return weights_; }
  std::vector<std::int16_t>& activations() { return activations_; }
  const std::vector<std::int16_t>& keys() const { return keys_; }
  const std::vector<std::int16_t>& values() const { return values_; }
  const std::int8_t* matrix_weights(std::uint32_t matrix, std::uint32_t rows) const {
    return reinterpret_cast<const std::int8_t*>(weights_.data() + matrix_rows_at(matrix, rows));
  }
  std::vector<StoryRequant> matrix_pairs(std::uint32_t matrix, std::uint32_t rows) const {
    std::vector<StoryRequant> pairs(rows);
    std::memcpy(pairs.data(), weights_.data() + matrix, 8 * rows);
    return pairs;
  }
  std::vector<std::int16_t> activations_at(std::uint32_t element, std::uint32_t count) const {
    return {activations_.begin() + element, activations_.begin() + element + count};
  }
  std::vector<std::int16_t> table_at(std::uint32_t address, std::uint32_t entries) const {
    std::vector<std::int16_t> table(entries);
    std::memcpy(table.data(), weights_.data() + address, 2 * entries);
    return table;
  }
  void write_activations(std::uint32_t element, const std::vector<std::int16_t>& values) {
    std::ranges::copy(values, activations_.begin() + element);
  }
  // An elementwise operation's output: `values` from a line's first element, then zeros to the end
  // of the last line.
  void write_lines(std::uint32_t element, const std::vector<std::int16_t>& values) {
    write_activations(element, values);
    const auto end = line_start(element + static_cast<std::uint32_t>(values.size()) + kLineElements - 1);
    std::fill(activations_.begin() + element + static_cast<std::ptrdiff_t>(values.size()), activations_.begin() + end, 0);
  }

 private:
  static std::uint32_t line_start(std::uint32_t element) { return element - element % kLineElements; }
  // Puts AM elements [first, last) back as they are (vu.get, then vu.put), when any.
  void keep_activations(std::uint32_t first, std::uint32_t last) {
    if (first == last) return;
    li(kS1, first).li(kS2, last);
    add(word_of(Op::kVuGet, kT0, kS1, 0)).add(word_of(Op::kVuPut, 0, kS1, kT0));
    add(word_of(Op::kAddi, kS1, kS1, 0, 1)).add(word_of(Op::kBne, 0, kS1, kS2, -12));
  }
  // t0 = xorshift32(t0), through t1: six instructions.
  void next_random_in_t0() {
    add(word_of(Op::kSlli, kT1, kT0, 0, 13)).add(word_of(Op::kXor, kT0, kT0, kT1));
    add(word_of(Op::kSrli, kT1, kT0, 0, 17)).add(word_of(Op::kXor, kT0, kT0, kT1));
    add(word_of(Op::kSlli, kT1, kT0, 0, 5)).add(word_of(Op::kXor, kT0, kT0, kT1));
  }

  VectorProgram& copy_to_kv(Op put, std::uint32_t slot, std::uint32_t scratch) {
    op(put, scratch, slot);
    std::copy_n(activations_.data() + scratch, kKvElements,
                (put == Op::kVuKput ? keys_ : values_).data() + std::size_t{slot} * kKvElements);
    return *this;
  }

  std::uint32_t place_in_rodata(const std::vector<std::uint8_t>& bytes) {
    const auto address = kVectorMap.rodata.base + static_cast<std::uint32_t>(rodata_.size());
    rodata_.insert(rodata_.end(), bytes.begin(), bytes.end());
    while (rodata_.size() % 4 != 0) rodata_.push_back(0);
    return address;
  }

  std::vector<std::uint32_t> code_;
  std::vector<std::uint8_t> rodata_;
  std::size_t image_bytes_ = 0;  // WM bytes the image brings
  std::vector<std::uint8_t> weights_;
  std::vector<std::int16_t> activations_;
  std::vector<std::int16_t> keys_, values_;
  std::uint32_t last_op_pc_ = 0;
};

// The unit's memories against the model, naming the first few differences.
::testing::AssertionResult same_memories(const Emulator& emulator, VectorProgram& program) {
  std::span<const std::int16_t> activations = emulator.vector_activations();
  std::span<const std::uint8_t> weights = emulator.vector_weights();
  if (activations.size() != kElements || weights.size() != kWeightBytes)
    return ::testing::AssertionFailure() << "the unit's memories have the wrong sizes";
  int differences = 0;
  std::string first;
  for (std::uint32_t i = 0; i < kElements; ++i) {
    if (activations[i] == program.activations()[i]) continue;
    if (differences++ < 6)
      first += " AM[" + std::to_string(i) + "] = " + std::to_string(activations[i]) + " (expected " +
               std::to_string(program.activations()[i]) + ")";
  }
  for (std::uint32_t i = 0; i < kWeightBytes; ++i) {
    if (weights[i] == program.weights()[i]) continue;
    if (differences++ < 6) first += " WM[" + std::to_string(i) + "] differs";
  }
  for (std::uint32_t i = 0; i < kKvSlots * kKvElements; ++i) {
    if (emulator.vector_keys()[i] != program.keys()[i] && differences++ < 6) first += " K[" + std::to_string(i) + "] differs";
    if (emulator.vector_values()[i] != program.values()[i] && differences++ < 6)
      first += " V[" + std::to_string(i) + "] differs";
  }
  if (differences == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << differences << " differences:" << first;
}

// The 13-bit values an AM element holds.
constexpr std::int16_t kElementMin = -4096, kElementMax = 4095;

std::int16_t random_element(std::mt19937& random) {
  static constexpr std::int16_t kEdges[] = {kElementMin, kElementMin + 1, kElementMax, 0, 1, -1};
  if (random() % 8 == 0) return kEdges[random() % std::size(kEdges)];
  return static_cast<std::int16_t>(static_cast<std::int32_t>(random() % 8192) + kElementMin);
}

// Values in [-limit, limit], or any 13-bit values with their edges among them when limit is 4096
// or more.
std::vector<std::int16_t> random_vector(std::uint32_t n, std::mt19937& random, std::int32_t limit = 4096) {
  std::vector<std::int16_t> values(n);
  for (std::int16_t& value : values) {
    if (limit >= 4096) {
      value = random_element(random);
    } else {
      value = static_cast<std::int16_t>(static_cast<std::int32_t>(random() % (2 * limit + 1)) - limit);
    }
  }
  return values;
}

// Requantisation pairs: multipliers in [0, 255] and shifts in [1, 62], their extremes included;
// most multipliers in the quantiser's [128, 255] and most shifts in [8, 32], where 13-bit outputs
// of random rows neither all saturate nor vanish.
std::vector<StoryRequant> random_pairs(std::uint32_t rows, std::mt19937& random) {
  std::vector<StoryRequant> pairs(rows);
  for (StoryRequant& pair : pairs) {
    switch (random() % 8) {
      case 0: pair.multiplier = 0; break;
      case 1: pair.multiplier = 255; break;
      case 2: pair.multiplier = static_cast<std::int32_t>(random() % 256); break;
      default: pair.multiplier = static_cast<std::int32_t>(128 + random() % 128); break;
    }
    switch (random() % 8) {
      case 0: pair.shift = 1; break;
      case 1: pair.shift = 62; break;
      case 2: pair.shift = static_cast<std::int32_t>(1 + random() % 62); break;
      default: pair.shift = static_cast<std::int32_t>(8 + random() % 25); break;
    }
  }
  return pairs;
}

// A random rows × cols matrix at WM byte `matrix`: pairs from read-only data, weights made by the
// program.
void put_random_matrix(VectorProgram& program, std::uint32_t matrix, std::uint32_t rows, std::uint32_t cols,
                       std::mt19937& random, std::vector<StoryRequant> pairs = {}) {
  if (pairs.empty()) pairs = random_pairs(rows, random);
  program.random_weights(matrix_rows_at(matrix, rows), rows * whole_weight_lines(cols) / 4,
                         static_cast<std::uint32_t>(random()) | 1);
  program.put_weights(matrix, bytes_of(pairs));
}

// vu.matvec16 in the model (the matrix's pairs valid): a line of 16 rows at a time, each from the
// input as AM holds it then (story_matvec16 over the line's rows), written with zeros past the last
// row. Returns the outputs.
std::vector<std::int16_t> model_matvec(VectorProgram& program, std::uint32_t out, std::uint32_t matrix,
                                       std::uint32_t rows, std::uint32_t cols, std::uint32_t x) {
  const std::vector<StoryRequant> pairs = program.matrix_pairs(matrix, rows);
  const std::int8_t* w = program.matrix_weights(matrix, rows);
  std::vector<std::int16_t> outputs;
  for (std::uint32_t first = 0; first < rows; first += kLineElements) {
    const std::uint32_t count = std::min(kLineElements, rows - first);
    const std::vector<std::int16_t> input = program.activations_at(x, cols);
    std::vector<std::int16_t> line(count);
    story_matvec16(line.data(), w + std::size_t{first} * whole_weight_lines(cols), row_stride(cols),
                   pairs.data() + first, input.data(), static_cast<int>(count), static_cast<int>(cols));
    program.write_lines(out + first, line);
    outputs.insert(outputs.end(), line.begin(), line.end());
  }
  return outputs;
}

struct Shape {
  std::uint32_t rows, cols;
};

// out = W x through vu.matvec16, against story_matvec16: the matrix at WM `matrix` (a multiple of
// 64), x at a random multiple of 64 whose columns stay within its AM row of 256, out at a random line.
void check_matvec(Shape shape, std::uint32_t matrix, std::uint32_t seed, std::vector<StoryRequant> pairs = {}) {
  SCOPED_TRACE(std::to_string(shape.rows) + " x " + std::to_string(shape.cols));
  std::mt19937 random(seed);
  VectorProgram program;
  put_random_matrix(program, matrix, shape.rows, shape.cols, random, std::move(pairs));
  const std::uint32_t x_places_in_row = (256 - shape.cols) / 64 + 1;
  const std::uint32_t x = 256 * (random() % 4) + 64 * (random() % x_places_in_row);
  const std::uint32_t out = 2048 + kLineElements * (random() % 64);
  program.put_activations(x, random_vector(shape.cols, random));
  program.set(Op::kVuSetvl, shape.rows).set(Op::kVuSetcols, shape.cols).set(Op::kVuSetsrc, x);
  program.op(Op::kVuMatvec16, out, matrix);
  model_matvec(program, out, matrix, shape.rows, shape.cols, x);
  EXPECT_TRUE(same_memories(program.run(), program));
}

constexpr Shape kShapes[] = {{1, 1},    {1, 256},   {3, 7},     {64, 64},  {172, 64}, {64, 172},  {33, 225},
                             {32, 256}, {512, 64},  {512, 256}, {4096, 1}, {4096, 64}, {700, 256}};

TEST(VectorUnit, Matvec16MatchesTheReference) {
  for (std::uint32_t seed = 100; Shape shape : kShapes) check_matvec(shape, 64 * (seed % 7), seed), ++seed;
}

// Every multiplier in [0, 255], not only the quantiser's [128, 255], each with a random shift, and
// every shift with the extreme multipliers.
TEST(VectorUnit, RequantisationMatchesForEveryMultiplierAndShift) {
  std::mt19937 random(300);
  std::vector<StoryRequant> pairs;
  for (std::int32_t multiplier = 0; multiplier <= 255; ++multiplier)
    pairs.push_back({multiplier, static_cast<std::int32_t>(1 + random() % 62)});
  for (std::int32_t shift = 1; shift <= 62; ++shift)
    for (std::int32_t multiplier : {0, 1, 128, 255}) pairs.push_back({multiplier, shift});
  const auto rows = static_cast<std::uint32_t>(pairs.size());
  check_matvec({rows, 96}, 0, 301, pairs);
}

// The largest sums a row can make: 256 weights of ±127 or −128 times inputs of 4095 or −4096.
TEST(VectorUnit, MatvecSumsOfTheLargestMagnitude) {
  VectorProgram program;
  constexpr std::uint32_t kCols = 256;
  const std::vector<StoryRequant> pairs = {{255, 1}, {255, 62}, {255, 27}, {128, 16}};
  std::vector<std::int8_t> weights;
  for (std::int8_t value : {std::int8_t{127}, std::int8_t{-128}, std::int8_t{127}, std::int8_t{-128}})
    weights.insert(weights.end(), kCols, value);
  program.put_weights(0, bytes_of(pairs));
  program.put_weights(matrix_rows_at(0, 4), bytes_of(weights));
  std::vector<std::int16_t> x(kCols, kElementMax);
  x[0] = kElementMin;  // −128 · −4096 once
  program.put_activations(0, x);
  program.set(Op::kVuSetvl, 4).set(Op::kVuSetcols, kCols).set(Op::kVuSetsrc, 0);
  program.op(Op::kVuMatvec16, 1024, 0);
  model_matvec(program, 1024, 0, 4, kCols, 0);
  EXPECT_TRUE(same_memories(program.run(), program));
}

// vu.matvec16 reads a row's pair as the multiplier word's low byte and the shift word's low six bits,
// a shift of 0 standing for 64, and refuses none: a shift that reads as 63 or 64 gives 0.
TEST(VectorUnit, Matvec16ReadsThePairsLowBits) {
  std::mt19937 random(350);
  VectorProgram program;
  constexpr std::uint32_t kCols = 256, kMatrix = 128, kX = 256, kOut = 1024;
  // Shifts around 18 keep most outputs of full-range inputs unsaturated, where a wrong multiplier shows.
  const std::vector<StoryRequant> words = {
      {0x1234, 17},                                // multiplier 0x34
      {static_cast<std::int32_t>(0xFFFFFF80), 19}, // a negative word: 128
      {-1, 20},                                    // 255
      {INT32_MIN, 5},                              // 0
      {256 + 77, 17},                              // 77
      {200, 0},                                    // shift 64: 0
      {255, 63},                                   // 0
      {INT32_MAX, INT32_MAX},                      // 255, shift 63: 0
      {128, 64},                                   // shift 0, standing for 64: 0
      {200, 64 + 5},                               // shift 5
      {200, -44},                                  // 0xFF…D4: shift 20
      {255, 1},
      {255, 62},
      {1, INT32_MIN + 1},                          // shift 1
      {130, 128 + 19},                             // shift 19
      {129, 18},
      {140, 7}};
  const auto rows = static_cast<std::uint32_t>(words.size());
  put_random_matrix(program, kMatrix, rows, kCols, random, words);
  const std::vector<std::int16_t> x = random_vector(kCols, random);
  program.put_activations(kX, x);
  program.set(Op::kVuSetvl, rows).set(Op::kVuSetcols, kCols).set(Op::kVuSetsrc, kX).op(Op::kVuMatvec16, kOut, kMatrix);
  std::vector<std::int16_t> expected(rows);
  for (std::uint32_t row = 0; row < rows; ++row) {
    const auto multiplier = static_cast<std::int32_t>(static_cast<std::uint32_t>(words[row].multiplier) & 255);
    const auto low_shift = static_cast<std::int32_t>(static_cast<std::uint32_t>(words[row].shift) & 63);
    const StoryRequant pair = {multiplier, low_shift == 0 ? 64 : low_shift};
    if (pair.shift >= 63) continue;  // 0
    story_matvec16(&expected[row], program.matrix_weights(kMatrix, rows) + row * row_stride(kCols), row_stride(kCols),
                   &pair, x.data(), 1, kCols);
  }
  program.write_lines(kOut, expected);
  EXPECT_TRUE(same_memories(program.run(), program));
  const auto unsaturated = [](std::int16_t v) { return v != 0 && v > kElementMin && v < kElementMax; };
  EXPECT_GE(std::ranges::count_if(expected, unsaturated), 5);
}

// vu.matvec16 goes a line of 16 rows at a time: each line is written before the next is computed,
// from the input as it stands, so an output line over the input changes later rows; the rest of the
// last line is zero and the line buffer ends holding it.
TEST(VectorUnit, Matvec16GoesALineAtATime) {
  std::mt19937 random(360);
  VectorProgram program;
  constexpr std::uint32_t kRows = 40, kCols = 64, kX = 1024, kOut = kX - 16;  // line 1 lands on x's first
  put_random_matrix(program, 0, kRows, kCols, random);
  program.put_activations(kX, random_vector(kCols, random));
  std::vector<std::int16_t> at_once(kRows);
  const std::vector<std::int16_t> input = program.activations_at(kX, kCols);
  story_matvec16(at_once.data(), program.matrix_weights(0, kRows), row_stride(kCols),
                 program.matrix_pairs(0, kRows).data(), input.data(), kRows, kCols);
  program.set(Op::kVuSetvl, kRows).set(Op::kVuSetcols, kCols).set(Op::kVuSetsrc, kX).op(Op::kVuMatvec16, kOut, 0);
  const std::vector<std::int16_t> by_lines = model_matvec(program, kOut, 0, kRows, kCols, kX);
  EXPECT_NE(by_lines, at_once);  // the case tells the two apart
  Emulator emulator = program.run();
  EXPECT_TRUE(same_memories(emulator, program));
  EXPECT_TRUE(std::ranges::equal(emulator.vector_line_buffer(), program.activations_at(kOut + 32, kLineElements)));
}

// Rows of 1 to 64 weights looked up as embeddings, from WM lines anywhere (the first and the last
// among them), each by a pair anywhere in WM, against story_requant13 of its weights, a line at a
// time with zeros past VL.
TEST(VectorUnit, Row16MatchesTheReference) {
  std::mt19937 random(400);
  VectorProgram program;
  constexpr std::uint32_t kPairs = kWeightBytes / 2, kPairCount = 64;
  program.random_weights(0, kWeightBytes / 4, 401);
  program.put_weights(kPairs, bytes_of(random_pairs(kPairCount, random)));
  const std::vector<StoryRequant> pairs = program.matrix_pairs(kPairs, kPairCount);
  const std::uint32_t lengths[] = {64, 64, 1, 2, 15, 16, 17, 33, 63, 64};
  for (std::size_t i = 0; i < std::size(lengths); ++i) {
    const std::uint32_t n = lengths[i];
    const std::uint32_t row = i == 0 ? 0 : i == 1 ? kWeightBytes - kWeightLine : kWeightLine * (random() % (kPairs / kWeightLine));
    const std::uint32_t pair = random() % kPairCount, out = kLineElements * (random() % (kElements / kLineElements - 4));
    program.set(Op::kVuSetvl, n).set(Op::kVuSetaux, kPairs + 8 * pair).op(Op::kVuRow16, out, row);
    std::vector<std::int16_t> expected(n);
    const auto* w = reinterpret_cast<const std::int8_t*>(program.weights().data() + row);
    for (std::uint32_t j = 0; j < n; ++j) expected[j] = story_requant13(w[j], pairs[pair]);
    program.write_lines(out, expected);
  }
  EXPECT_TRUE(same_memories(program.run(), program));
}

TEST(VectorUnit, Add16SaturatesLikeTheReference) {
  std::mt19937 random(500);
  for (std::uint32_t n : {1u, 2u, 100u, 4096u}) {
    VectorProgram program;
    std::vector<std::int16_t> x = random_vector(n, random), y = random_vector(n, random);
    x[0] = kElementMax, y[0] = 1;  // both saturations and an exact sum
    if (n > 2) x[1] = kElementMin, y[1] = -1, x[2] = kElementMin, y[2] = kElementMax;
    program.put_activations(64, x).put_activations(20000, y);  // 20000 ≡ 32 (mod 64): paired lines
    program.set(Op::kVuSetvl, n).op(Op::kVuAdd16, 64, 20000);
    story_add16(x.data(), y.data(), static_cast<int>(n));
    program.write_lines(64, x);
    EXPECT_TRUE(same_memories(program.run(), program)) << n;
  }
}

TEST(VectorUnit, Mul16MatchesTheReferenceAtEveryShift) {
  std::mt19937 random(600);
  VectorProgram program;
  constexpr std::uint32_t kN = 64;
  for (std::uint32_t shift = 1; shift <= 30; ++shift) {
    const std::uint32_t a = 128 * shift, b = 8192 + 128 * shift + 32;
    std::vector<std::int16_t> x = random_vector(kN, random), y = random_vector(kN, random);
    x[0] = kElementMin, y[0] = kElementMin;  // the largest product, 2^24
    x[1] = kElementMin, y[1] = kElementMax;
    program.put_activations(a, x).put_activations(b, y);
    program.set(Op::kVuSetvl, kN).set(Op::kVuSetaux, shift).op(Op::kVuMul16, a, b);
    std::vector<std::int16_t> out(kN);
    story_mul16(out.data(), x.data(), y.data(), static_cast<int>(shift), kN);
    program.write_lines(a, out);
  }
  EXPECT_TRUE(same_memories(program.run(), program));
}

// Where the next norm of at most 64 elements goes after one at `at` (its input at a multiple of 128,
// within one AM row, then its output): on through AM, and round to its start again.
std::uint32_t next_place(std::uint32_t at) { return (at + 128) % kElements; }

TEST(VectorUnit, RmsnormMatchesTheReference) {
  std::mt19937 random(700);
  VectorProgram program;
  std::uint32_t at = 0;
  for (std::uint32_t n : {1u, 2u, 3u, 7u, 16u, 31u, 32u, 33u, 48u, 63u, 64u}) {
    for (std::uint32_t eps : {0u, 1u, 1000u, 1u << 30, 0xFFFFFFFFu}) {
      for (std::int32_t limit : {0, 3, 1024, 4096}) {
        const std::vector<std::int16_t> x = random_vector(n, random, limit);
        const std::uint32_t out = at + 64;
        program.put_activations(at, x).set(Op::kVuSetvl, n).set(Op::kVuSetaux, eps).op(Op::kVuRmsnorm, out, at);
        std::vector<std::int16_t> expected(n);
        story_rmsnorm(expected.data(), x.data(), static_cast<int>(n), eps);
        program.write_lines(out, expected);
        at = next_place(at);
      }
    }
  }
  EXPECT_TRUE(same_memories(program.run(), program));
}

// Σ ⌊x[i]^2 / 2^s⌋ with 2^s the smallest power of two >= n: the part of the norm's mean square that
// the inputs make, so that the epsilon term can bring it to a chosen value.
std::uint64_t scaled_square_sum(const std::vector<std::int16_t>& x) {
  int s = 0;
  while ((std::size_t{1} << s) < x.size()) ++s;
  std::uint64_t sum = 0;
  for (std::int16_t value : x) sum += static_cast<std::uint64_t>(std::int64_t{value} * value) >> s;
  return sum;
}

// Mean squares in every bucket of the inverse-root table, reached from several normalising shifts
// e (the mean square in [b·2^(22−e), (b+1)·2^(22−e)) for bucket b), and those at, below and past
// the 2^30 ceiling and at 0.
TEST(VectorUnit, RmsnormReachesEveryBucketAndTheCeiling) {
  std::mt19937 random(710);
  VectorProgram program;
  std::uint32_t at = 0;
  auto norm = [&](const std::vector<std::int16_t>& x, std::uint32_t eps) {
    const auto n = static_cast<std::uint32_t>(x.size());
    program.put_activations(at, x).set(Op::kVuSetvl, n).set(Op::kVuSetaux, eps).op(Op::kVuRmsnorm, at + 64, at);
    std::vector<std::int16_t> expected(n);
    story_rmsnorm(expected.data(), x.data(), static_cast<int>(n), eps);
    program.write_lines(at + 64, expected);
    at = next_place(at);
  };
  for (std::uint32_t bucket = 64; bucket <= 255; ++bucket) {
    for (int e : {0, 2, 12, 22}) {
      const std::uint64_t width = std::uint64_t{1} << (22 - e);
      const std::uint64_t mean_square = bucket * width + random() % width;
      const std::uint32_t n = std::array{1u, 2u, 5u, 64u}[random() % 4];
      // Inputs whose part of the mean square is at most mean_square, the first the largest.
      const auto limit = static_cast<std::int32_t>(std::sqrt(static_cast<double>(mean_square / n)));
      std::vector<std::int16_t> x = random_vector(n, random, std::min<std::int32_t>(limit, kElementMax));
      const std::int32_t largest = std::min<std::int32_t>(limit, kElementMax);
      x[0] = static_cast<std::int16_t>(random() % 2 == 0 ? largest : -largest);
      norm(x, static_cast<std::uint32_t>(mean_square - scaled_square_sum(x)));
    }
  }
  constexpr std::uint32_t kCeiling = 1u << 30;
  for (std::int16_t value : {std::int16_t{1000}, std::int16_t{-4096}, std::int16_t{4095}}) {
    const auto square = static_cast<std::uint32_t>(value * value);
    for (std::uint32_t mean_square : {kCeiling - 1, kCeiling, kCeiling + 1, (1u << 28) - 1, 1u << 28})
      norm({value}, mean_square - square);
  }
  norm({kElementMin}, 0);  // the largest square, 2^24
  norm({kElementMin}, 1);
  norm(std::vector<std::int16_t>(64, kElementMax), kCeiling);
  norm(std::vector<std::int16_t>(64, kElementMin), 0);  // the largest sum of squares, 2^30
  norm({kElementMax, kElementMin}, 0xFFFFFFFF);
  std::vector<std::int16_t> small(64);
  small[5] = 7;
  norm(small, 0);  // 49 / 2^6: the sum 0, taken as 1
  norm({1}, 0);
  norm({-1, 1, 2}, 0);  // small sums saturate the output
  EXPECT_TRUE(same_memories(program.run(), program));
}

// The tables the unit computes from their definitions equal the reference's constants entry by entry.
TEST(VectorUnit, TablesEqualTheReferenceConstants) {
  static_assert(VectorUnit::kInverseRootEntries == STORY_RSQRT_ENTRIES);
  static_assert(VectorUnit::kSiluPoints == STORY_SILU_POINTS);
  for (std::size_t i = 0; i < STORY_RSQRT_ENTRIES; ++i)
    EXPECT_EQ(VectorUnit::inverse_root_table()[i], STORY_RSQRT[i]) << "inverse root of bucket " << i + 64;
  for (std::size_t j = 0; j < STORY_SILU_POINTS; ++j)
    EXPECT_EQ(VectorUnit::silu_table()[j], STORY_SILU[j]) << "SiLU point " << j;
  static_assert(VectorUnit::kExp2Entries == STORY_EXP2_ENTRIES);
  for (std::size_t k = 0; k < STORY_EXP2_ENTRIES; ++k)
    EXPECT_EQ(VectorUnit::exp2_table()[k], STORY_EXP2[k]) << "2^(-" << k << "/32)";
  static_assert(VectorUnit::kReciprocalEntries == STORY_RECIP_ENTRIES);
  for (std::size_t j = 0; j < STORY_RECIP_ENTRIES; ++j)
    EXPECT_EQ(VectorUnit::reciprocal_table()[j], STORY_RECIP[j]) << "reciprocal of bucket " << j;
}

// Every element value: the program puts −4096..4095 into AM and applies vu.silu 4096 at a time.
TEST(VectorUnit, SiluMatchesTheReferenceOnEveryElementValue) {
  VectorProgram program;
  program.li(kS1, 0).li(kT0, static_cast<std::uint32_t>(std::int32_t{kElementMin})).li(kS2, 8192);
  program.add(word_of(Op::kVuPut, 0, kS1, kT0)).add(word_of(Op::kAddi, kS1, kS1, 0, 1));
  program.add(word_of(Op::kAddi, kT0, kT0, 0, 1)).add(word_of(Op::kBne, 0, kS1, kS2, -12));
  std::vector<std::int16_t> every(8192);
  for (std::int32_t i = 0; i < 8192; ++i) every[i] = static_cast<std::int16_t>(i + kElementMin);
  program.set(Op::kVuSetvl, 4096);
  for (std::uint32_t first = 0; first < 8192; first += 4096) program.op(Op::kVuSilu, first);
  std::vector<std::int16_t> expected(8192);
  story_silu(expected.data(), every.data(), 8192);
  program.write_activations(0, expected);
  EXPECT_TRUE(same_memories(program.run(), program));
}

// vu.rope's table is a line's: pair p of every line takes entries p, so it rotates as story_rope
// with a head of 16 elements does.
void rope_reference(std::vector<std::int16_t>& x, const std::vector<std::int16_t>& table) {
  story_rope(x.data(), table.data(), table.data() + 8, static_cast<int>(x.size()), 16);
}

TEST(VectorUnit, RopeMatchesTheReference) {
  std::mt19937 random(800);
  for (std::uint32_t n : {2u, 8u, 16u, 30u, 64u, 100u, 512u, 4096u}) {
    VectorProgram program;
    const std::uint32_t table = 32 * (random() % 1000);
    // Q14 angles: values in [−2^14, 2^14], as cos and sin are.
    const std::vector<std::int16_t> entries = random_vector(16, random, 16384);
    program.put_table(table, entries);
    std::vector<std::int16_t> x = random_vector(n, random);
    program.put_activations(48, x);
    program.set(Op::kVuSetvl, n).op(Op::kVuRope, 48, table);
    rope_reference(x, entries);
    program.write_lines(48, x);
    EXPECT_TRUE(same_memories(program.run(), program)) << n << " elements";
  }
}

// Every pair of extreme elements rotated by table entries at the int16 extremes.
TEST(VectorUnit, RopeOfTheExtremesMatchesTheReference) {
  const std::vector<std::int16_t> table_extremes = {-32768, -32767, -1, 0, 1, 32767};
  const std::vector<std::int16_t> element_extremes = {kElementMin, kElementMin + 1, -1, 0, 1, kElementMax};
  for (std::int16_t cos : table_extremes)
    for (std::int16_t sin : table_extremes) {
      std::vector<std::int16_t> x;
      for (std::int16_t a : element_extremes)
        for (std::int16_t b : element_extremes) x.insert(x.end(), {a, b});
      VectorProgram program;
      std::vector<std::int16_t> table(8, cos);
      table.resize(16, sin);
      program.put_table(0, table).put_activations(0, x);
      program.set(Op::kVuSetvl, static_cast<std::uint32_t>(x.size())).op(Op::kVuRope, 0, 0);
      rope_reference(x, table);
      program.write_lines(0, x);
      EXPECT_TRUE(same_memories(program.run(), program)) << "cos " << cos << ", sin " << sin;
    }
}

// One attention head over up to 512 KV slots from a random first one, the head at element `offset`
// of each slot's vectors; the query and the outputs in AM.
struct AttentionCase {
  std::uint32_t head_size, offset;
  int bits;  // queries and keys in [−2^bits, 2^bits]: small ones spread the weights, large ones saturate
  std::vector<std::uint32_t> lengths;
};

// The slots' vectors are made by the program (random_kv); the query comes with its edges.
void check_attention(const AttentionCase& c, std::uint32_t seed) {
  SCOPED_TRACE("head size " + std::to_string(c.head_size) + ", offset " + std::to_string(c.offset) + ", bits " +
               std::to_string(c.bits));
  std::mt19937 random(seed);
  VectorProgram program;
  const std::uint32_t positions = std::ranges::max(c.lengths);
  const std::uint32_t first_slot = static_cast<std::uint32_t>(random() % (kKvSlots - positions + 1));
  const std::uint32_t scratch = 0, q = kKvElements, first_out = q + c.head_size;
  for (std::uint32_t t = 0; t < positions; ++t) {
    program.random_kv(Op::kVuKput, first_slot + t, scratch, static_cast<std::uint32_t>(random()) | 1, c.bits);
    program.random_kv(Op::kVuVput, first_slot + t, scratch, static_cast<std::uint32_t>(random()) | 1, 12);
  }
  program.put_activations(q, random_vector(c.head_size, random, std::int32_t{1} << c.bits));
  program.set(Op::kVuSeths, c.head_size).set(Op::kVuSetsrc, first_slot).set(Op::kVuSetaux, c.offset);
  const std::int16_t* keys = program.kv_vector(Op::kVuKput, first_slot) + c.offset;
  const std::int16_t* values = program.kv_vector(Op::kVuVput, first_slot) + c.offset;
  const std::vector<std::int16_t> query = program.activations_at(q, c.head_size);
  std::uint32_t out = first_out;
  for (std::uint32_t length : c.lengths) {
    program.set(Op::kVuSetvl, length).op(Op::kVuAttend, out, q);
    std::vector<std::int16_t> expected(c.head_size);
    story_attention_head(expected.data(), query.data(), keys, values, static_cast<int>(length), kKvElements,
                         static_cast<int>(c.head_size));
    program.write_activations(out, expected);
    out += c.head_size;
  }
  EXPECT_TRUE(same_memories(program.run(), program));
}

TEST(VectorUnit, AttendMatchesTheReferenceAtEveryLength) {
  std::vector<std::uint32_t> every(512);
  for (std::uint32_t length = 1; length <= 512; ++length) every[length - 1] = length;
  check_attention({8, 24, 11, every}, 900);
  check_attention({8, 0, 8, every}, 901);
}

TEST(VectorUnit, AttendMatchesTheReferenceForEveryHeadShape) {
  const std::vector<std::uint32_t> some = {1, 2, 3, 17, 64, 255, 256, 511, 512};
  std::uint32_t seed = 910;
  for (std::uint32_t head_size : {1u, 2u, 3u, 5u, 8u})
    for (int bits : {4, 9, 11, 12}) check_attention({head_size, head_size + 3, bits, some}, seed++);
  check_attention({8, 16, 6, {1, 2, 5, 64}}, seed++);
}

// Scores whose high part (from the keys' bits 6 and up) lies beyond ±2^14 take it at the bound: all
// far below or all far above it are equal, and the output is the values' average.
TEST(VectorUnit, AttendScoresBeyondTheAnchorsRange) {
  constexpr std::uint32_t kHead = 8, kLength = 100;
  for (std::int16_t key : {std::int16_t{-4096}, std::int16_t{4095}}) {
    VectorProgram program;
    std::mt19937 random(1200 + static_cast<std::uint32_t>(key));
    const std::uint32_t scratch = 0, q = kHead, out = 2 * kHead;
    const std::vector<std::int16_t> key_vector(kHead, key), query(kHead, 4095);
    const std::vector<std::int16_t> value_cache = random_vector(kHead * kLength, random, 4096);
    for (std::uint32_t t = 0; t < kLength; ++t) {
      program.put_kv(Op::kVuKput, t, scratch, key_vector);
      program.put_kv(Op::kVuVput, t, scratch, {value_cache.begin() + t * kHead, value_cache.begin() + (t + 1) * kHead});
    }
    program.put_activations(q, query);
    program.set(Op::kVuSetvl, kLength).set(Op::kVuSeths, kHead);
    program.set(Op::kVuSetsrc, 0).set(Op::kVuSetaux, 0).op(Op::kVuAttend, out, q);
    std::vector<std::int16_t> expected(kHead);
    story_attention_head(expected.data(), query.data(), program.kv_vector(Op::kVuKput, 0),
                         program.kv_vector(Op::kVuVput, 0), kLength, kKvElements, kHead);
    program.write_activations(out, expected);
    EXPECT_TRUE(same_memories(program.run(), program));
    for (std::uint32_t i = 0; i < kHead; ++i) {
      double mean = 0;
      for (std::uint32_t t = 0; t < kLength; ++t) mean += value_cache[t * kHead + i] / double{kLength};
      EXPECT_NEAR(expected[i], mean, 8.0) << "element " << i;
    }
  }
}

// Outputs at and around the ends of the 13-bit range, [−4096, 4095], from every operation that
// saturates: requantisation (a one-column matrix times ±1 gives each row's weight requantised),
// sums, products, rotations and attention (one position: the output is its value).
TEST(VectorUnit, OutputsSaturateAtThirteenBits) {
  VectorProgram program;
  std::vector<std::int16_t> outputs;  // everything the reference computes, to see the ends reached
  auto expect = [&](std::uint32_t element, const std::vector<std::int16_t>& values) {
    program.write_activations(element, values);
    outputs.insert(outputs.end(), values.begin(), values.end());
  };
  auto expect_lines = [&](std::uint32_t element, const std::vector<std::int16_t>& values) {
    program.write_lines(element, values);
    outputs.insert(outputs.end(), values.begin(), values.end());
  };
  // Rows {weight, {multiplier, shift}} whose w · m / 2^shift lies around the ends: 4095, 4095.75, 4096,
  // −4096, −4128, −4095, −4095.75 …, and the same negated by the input −1.
  struct Row {
    std::int8_t weight;
    StoryRequant pair;
  };
  const std::vector<Row> rows = {{63, {130, 1}},   {127, {129, 2}}, {64, {128, 1}},   {-128, {128, 2}},
                                 {-128, {129, 2}}, {-64, {128, 1}}, {-65, {126, 1}},  {127, {255, 3}},
                                 {-128, {255, 3}}, {-127, {129, 2}}, {1, {255, 1}},   {-1, {255, 1}}};
  const auto count = static_cast<std::uint32_t>(rows.size());
  std::vector<StoryRequant> pairs;
  std::vector<std::int8_t> weights(count * kWeightLine);  // a line a row
  for (std::uint32_t i = 0; i < count; ++i) pairs.push_back(rows[i].pair), weights[kWeightLine * i] = rows[i].weight;
  program.put_weights(0, bytes_of(pairs)).put_weights(matrix_rows_at(0, count), bytes_of(weights));
  program.put_activations(0, {1}).put_activations(64, {-1});
  program.set(Op::kVuSetvl, count).set(Op::kVuSetcols, 1);
  for (std::uint32_t x : {0u, 64u}) {
    program.set(Op::kVuSetsrc, x).op(Op::kVuMatvec16, 128 + 2 * x, 0);
    const std::vector<std::int16_t> out = model_matvec(program, 128 + 2 * x, 0, count, 1, x);
    outputs.insert(outputs.end(), out.begin(), out.end());
  }
  program.set(Op::kVuSetvl, 1);
  for (std::uint32_t row = 0; row < count; ++row) {
    program.set(Op::kVuSetaux, 8 * row).op(Op::kVuRow16, 320 + 16 * row, matrix_rows_at(0, count) + kWeightLine * row);
    expect_lines(320 + 16 * row, {story_requant13(rows[row].weight, rows[row].pair)});
  }

  // Sums and products that land on each side of both ends.
  const std::vector<std::int16_t> a = {4094, 4095, 4095, 2048, -4095, -4096, -4096, -2048, 4095, -4096, 1,    -1};
  const std::vector<std::int16_t> b = {1,    1,    0,    2048, -1,    0,     -1,    -2049, 4095, -4096, 4095, -4096};
  const auto n = static_cast<std::uint32_t>(a.size());
  program.put_activations(1024, a).put_activations(2080, b).set(Op::kVuSetvl, n).op(Op::kVuAdd16, 1024, 2080);
  std::vector<std::int16_t> sum = a;
  story_add16(sum.data(), b.data(), static_cast<int>(n));
  expect_lines(1024, sum);
  for (std::uint32_t shift : {1u, 2u, 12u}) {
    program.put_activations(3072, a).set(Op::kVuSetaux, shift).op(Op::kVuMul16, 3072, 2080);
    std::vector<std::int16_t> product(n);
    story_mul16(product.data(), a.data(), b.data(), static_cast<int>(shift), static_cast<int>(n));
    expect_lines(3072, product);
  }
  // Rotations by cos 1, sin 0 (the pair itself) and cos = sin = 1 (a − b, a + b).
  const std::vector<std::int16_t> table = {16384, 16384, 16384, 16384, 16384, 16384, 16384, 16384,
                                           0,     16384, 0,     16384, 0,     16384, 0,     16384};
  program.put_table(4096, table).put_activations(5008, a).set(Op::kVuSetvl, n).op(Op::kVuRope, 5008, 4096);
  std::vector<std::int16_t> rotated = a;
  rope_reference(rotated, table);
  expect_lines(5008, rotated);
  // Attention over one position: the output is the value, saturated; heads of 8 from element 0 and 4.
  program.put_activations(6000, a).put_kv(Op::kVuKput, 0, 7008, b).put_kv(Op::kVuVput, 0, 8000, a);
  program.set(Op::kVuSetvl, 1).set(Op::kVuSeths, 8).set(Op::kVuSetsrc, 0);
  for (std::uint32_t first : {0u, 4u}) {
    program.set(Op::kVuSetaux, first).op(Op::kVuAttend, 9000 + 10 * first, 6000 + first);
    std::vector<std::int16_t> attended(8);
    story_attention_head(attended.data(), a.data() + first, b.data() + first, a.data() + first, 1, static_cast<int>(n), 8);
    expect(9000 + 10 * first, attended);
  }

  EXPECT_TRUE(same_memories(program.run(), program));
  EXPECT_TRUE(std::ranges::all_of(outputs, [](std::int16_t v) { return v >= -4096 && v <= 4095; }));
  EXPECT_GE(std::ranges::count(outputs, std::int16_t{4095}), 5);
  EXPECT_GE(std::ranges::count(outputs, std::int16_t{-4096}), 5);
}

// The elementwise operations go a line at a time: each output line is written before the next line
// is read, so an output line that is a later line's input changes it (x's line l is y's line l + 2
// here), the rest of the last line is zero, and the line buffer ends holding the last line.
TEST(VectorUnit, ElementwiseOperationsGoALineAtATime) {
  std::mt19937 random(1150);
  constexpr std::uint32_t kN = 100, kY = 1024, kX = kY + 32, kLines = (kN + 15) / 16;
  for (Op op : {Op::kVuAdd16, Op::kVuMul16}) {
    VectorProgram program;
    program.put_activations(kY, random_vector(32 + kN, random)).set(Op::kVuSetvl, kN).set(Op::kVuSetaux, 3);
    program.op(op, kX, kY);
    std::vector<std::int16_t> am = program.activations_at(kY, 32 + 16 * kLines);
    for (std::uint32_t i = 0; i < 16 * kLines; ++i) {
      std::int16_t& out = am[32 + i];
      if (i >= kN) out = 0;
      else if (op == Op::kVuAdd16) story_add16(&out, &am[i], 1);
      else story_mul16(&out, &out, &am[i], 3, 1);
    }
    program.write_activations(kY, am);
    Emulator emulator = program.run();
    EXPECT_TRUE(same_memories(emulator, program)) << isa::op_info(op).name;
    EXPECT_TRUE(std::ranges::equal(emulator.vector_line_buffer(), std::span(am).subspan(32 + 16 * (kLines - 1), 16)));
  }
}

TEST(VectorUnit, ArgmaxFindsTheFirstLargest) {
  std::mt19937 random(1000);
  std::vector<std::vector<std::int16_t>> cases = {
      {5},
      {kElementMin},
      {kElementMin, kElementMin},
      {1, 3, 3, 2},
      {-5, -3, -3, -7},
      {kElementMin, kElementMax, kElementMax},
      {-1, 0x0F00, 0x00FF},
  };
  for (std::uint32_t n : {100u, 4096u}) {
    std::vector<std::int16_t> values(n);
    for (std::int16_t& value : values) value = static_cast<std::int16_t>(random() % 7 - 3);  // many ties
    cases.push_back(values);
    cases.push_back(random_vector(n, random));
  }
  for (const std::vector<std::int16_t>& values : cases) {
    VectorProgram program;
    const auto n = static_cast<std::uint32_t>(values.size());
    program.put_activations(304, values).set(Op::kVuSetvl, n).op(Op::kVuArgmax, 304, 0, kA2);
    Emulator emulator = program.run();
    EXPECT_EQ(emulator.reg(kA2), static_cast<std::uint32_t>(story_argmax16(values.data(), static_cast<int>(n))))
        << n << " values";
    EXPECT_TRUE(same_memories(emulator, program));
  }
}

// Outputs over their own inputs, shifted either way: vu.matvec16 and vu.rmsnorm write a line at a
// time, each from the input as it stands; vu.attend reads all of its inputs first.
TEST(VectorUnit, OutputsMayOverlapTheirInputs) {
  std::mt19937 random(1100);
  VectorProgram program;
  constexpr std::uint32_t kN = 48, kMatrix = 0;
  put_random_matrix(program, kMatrix, kN, kN, random);
  program.set(Op::kVuSetvl, kN).set(Op::kVuSetcols, kN);
  std::uint32_t at = 1024 + 64;  // x 64 elements into an AM row
  for (std::int32_t offset : {0, 16, -16, 32, -48}) {
    const std::uint32_t x = at, out = at + static_cast<std::uint32_t>(offset);
    program.put_activations(x, random_vector(kN, random)).set(Op::kVuSetsrc, x).op(Op::kVuMatvec16, out, kMatrix);
    model_matvec(program, out, kMatrix, kN, kN, x);
    at += 512;
  }
  // Norms whose output lines land on their input: the scale comes from the whole input, then each
  // output line from the input as it stands.
  program.set(Op::kVuSetaux, 77);
  at = 4096;
  for (std::int32_t offset : {0, 16, -16, 48, -64}) {
    const std::uint32_t x = at, out = at + static_cast<std::uint32_t>(offset);
    const std::vector<std::int16_t> input = random_vector(kN, random);
    program.put_activations(x, input).op(Op::kVuRmsnorm, out, x);
    const StoryNormScale scale = story_rmsnorm_scale(input.data(), kN, 77);
    std::vector<std::int16_t> am = program.activations_at(at - 64, 3 * 64);
    for (std::uint32_t i = 0; i < kN; ++i) am[64 + offset + i] = story_rmsnorm_element(am[64 + i], scale);
    program.write_activations(at - 64, am);
    at += 256;
  }
  // Attention whose output lands on its query, and on it shifted by one.
  constexpr std::uint32_t kHead = 8, kLength = 20, kSlot = 300;
  const std::uint32_t q = 22000;
  for (std::uint32_t t = 0; t < kLength; ++t) {
    program.put_kv(Op::kVuKput, kSlot + t, 20000, random_vector(kHead, random, 512));
    program.put_kv(Op::kVuVput, kSlot + t, 20000, random_vector(kHead, random));
  }
  program.set(Op::kVuSetvl, kLength).set(Op::kVuSeths, kHead).set(Op::kVuSetsrc, kSlot).set(Op::kVuSetaux, 0);
  for (std::uint32_t out : {q, q + 1}) {
    program.put_activations(q, random_vector(kHead, random, 512)).op(Op::kVuAttend, out, q);
    const std::vector<std::int16_t> query = program.activations_at(q, kHead);
    std::vector<std::int16_t> expected(kHead);
    story_attention_head(expected.data(), query.data(), program.kv_vector(Op::kVuKput, kSlot),
                         program.kv_vector(Op::kVuVput, kSlot), kLength, kKvElements, kHead);
    program.write_activations(out, expected);
  }
  EXPECT_TRUE(same_memories(program.run(), program));
}

TEST(VectorUnit, StartsZeroAndTheRegistersHoldWhatIsSet) {
  VectorProgram program;
  {
    Emulator fresh(program.image());
    EXPECT_EQ(fresh.vector_weights().size(), kWeightBytes);
    EXPECT_EQ(fresh.vector_activations().size(), kElements);
    EXPECT_TRUE(std::ranges::all_of(fresh.vector_weights(), [](std::uint8_t b) { return b == 0; }));
    EXPECT_TRUE(std::ranges::all_of(fresh.vector_activations(), [](std::int16_t v) { return v == 0; }));
    for (std::span<const std::int16_t> cache : {fresh.vector_keys(), fresh.vector_values()}) {
      EXPECT_EQ(cache.size(), kKvSlots * kKvElements);
      EXPECT_TRUE(std::ranges::all_of(cache, [](std::int16_t v) { return v == 0; }));
    }
    EXPECT_EQ(fresh.vector_registers(), (std::array<std::uint32_t, 5>{}));
  }
  program.set(Op::kVuSetvl, 0xFFFFFFFF).set(Op::kVuSetcols, 0x80000000).set(Op::kVuSetsrc, 12345);
  program.set(Op::kVuSetaux, 0xDEADBEEF).set(Op::kVuSeths, 1).set(Op::kVuSetsrc, 777);  // the last write counts
  EXPECT_EQ(program.run().vector_registers(),
            (std::array<std::uint32_t, 5>{0xFFFFFFFF, 0x80000000, 777, 0xDEADBEEF, 1}));
  // Without the unit there is nothing to read.
  Emulator without(program.image(program::kRvformerMap));
  EXPECT_TRUE(without.vector_weights().empty());
  EXPECT_TRUE(without.vector_activations().empty());
}

// The image's words at both ends of WM, and elements put into AM (13-bit values) and read back
// sign-extended through vu.get at both ends of AM; a vu.get into x0 leaves it zero.
TEST(VectorUnit, WordsAndElementsRoundTrip) {
  std::mt19937 random(1200);
  VectorProgram program;
  for (std::uint32_t address : {0u, 4u, kWeightBytes - 4, 4 * (static_cast<std::uint32_t>(random()) % (kWeightBytes / 4))}) {
    program.put_weight_word(address, static_cast<std::uint32_t>(random()));
  }
  const std::uint32_t ram = kVectorMap.ram.base;
  const std::uint32_t elements[] = {0, 1, kElements - 1, 100 + static_cast<std::uint32_t>(random()) % (kElements - 100)};
  const std::int16_t written[] = {-4096, 4095, -1, 1};
  for (std::size_t i = 0; i < std::size(elements); ++i) {
    program.put_activations(elements[i], {written[i]}).li(kA0, elements[i]);
    program.add(word_of(Op::kVuGet, kT1, kA0, 0)).li(kS0, ram + 4 * static_cast<std::uint32_t>(i));
    program.add(word_of(Op::kSw, 0, kS0, kT1));
  }
  program.add(word_of(Op::kVuGet, kZero, kA0, 0));
  Emulator emulator = program.run();
  EXPECT_TRUE(same_memories(emulator, program));
  for (std::size_t i = 0; i < std::size(elements); ++i)
    EXPECT_EQ(emulator.read_word(ram + 4 * static_cast<std::uint32_t>(i)), static_cast<std::uint32_t>(std::int32_t{written[i]}))
        << elements[i];
  EXPECT_EQ(emulator.reg(kZero), 0u);
}

// vu.put writes its line buffer, and the put at a line's last element commits the buffer to that
// line: before it vu.get reads the line as it was, after it the whole line is the buffer's, slots
// put for an earlier line included.
TEST(VectorUnit, VuPutCommitsItsLineBufferAtTheLinesLastElement) {
  VectorProgram program;
  const std::uint32_t ram = kVectorMap.ram.base;
  program.put_activations(32, std::vector<std::int16_t>(kLineElements, 9));  // line 2 all 9s
  program.op(Op::kVuPut, 16 + 3, 33);                                        // slot 3 of line 1
  for (std::uint32_t k = 0; k < kLineElements; ++k) {
    if (k == 5) continue;  // slot 5 keeps the 9 the first line left there
    program.op(Op::kVuPut, 32 + k, static_cast<std::uint32_t>(-static_cast<std::int32_t>(k)));
    if (k == kLineElements - 2) program.op(Op::kVuGet, 32, 0, kT1).li(kS0, ram).add(word_of(Op::kSw, 0, kS0, kT1));
  }
  program.op(Op::kVuGet, 32, 0, kT1).li(kS0, ram + 4).add(word_of(Op::kSw, 0, kS0, kT1));
  Emulator emulator = program.run();
  EXPECT_EQ(emulator.read_word(ram), 9u) << "an uncommitted line";
  EXPECT_EQ(emulator.read_word(ram + 4), 0u);
  for (std::uint32_t k = 0; k < kLineElements; ++k) {
    const std::int16_t expected = k == 5 ? 9 : static_cast<std::int16_t>(-static_cast<std::int32_t>(k));
    EXPECT_EQ(emulator.vector_activations()[32 + k], expected) << "element " << k;
    EXPECT_EQ(emulator.vector_line_buffer()[k], expected) << "slot " << k;
    EXPECT_EQ(emulator.vector_activations()[16 + k], 0) << "line 1 was never committed";
  }
}

// WM starts with the image's bytes (any length; zeros after them), which the operations read and
// vu.wget returns word by word.
TEST(VectorUnit, TheImageFillsTheWeightMemoryAndVuWgetReadsIt) {
  std::mt19937 random(1250);
  VectorProgram program;
  constexpr std::uint32_t kRows = 8, kCols = 12;
  std::vector<std::uint8_t> image = bytes_of(random_pairs(kRows, random));
  for (std::uint32_t i = 0; i < kRows * kWeightLine + 3; ++i) image.push_back(static_cast<std::uint8_t>(random()));
  program.put_weights(0, image);
  const std::vector<std::int16_t> x = random_vector(kCols, random);
  program.put_activations(0, x);
  program.set(Op::kVuSetvl, kRows).set(Op::kVuSetcols, kCols).set(Op::kVuSetsrc, 0).op(Op::kVuMatvec16, 96, 0);
  model_matvec(program, 96, 0, kRows, kCols, 0);
  const auto last = static_cast<std::uint32_t>(image.size() / 4 * 4);  // the image's last, partial word
  const std::uint32_t addresses[] = {0, 4, 8 * kRows, last, last + 4, kWeightBytes - 8, kWeightBytes - 4};
  const std::uint32_t ram = kVectorMap.ram.base;
  for (std::size_t i = 0; i < std::size(addresses); ++i) {
    program.li(kA0, addresses[i]).add(word_of(Op::kVuWget, kT1, kA0, 0));
    program.li(kS0, ram + 4 * static_cast<std::uint32_t>(i)).add(word_of(Op::kSw, 0, kS0, kT1));
  }
  Emulator emulator = program.run();
  EXPECT_TRUE(same_memories(emulator, program));
  for (std::size_t i = 0; i < std::size(addresses); ++i) {
    std::uint32_t word;
    std::memcpy(&word, program.weights().data() + addresses[i], 4);
    EXPECT_EQ(emulator.read_word(ram + 4 * static_cast<std::uint32_t>(i)), word) << addresses[i];
  }
}

// An image whose weight memory does not fit, or on a map without the unit, is refused with one line.
TEST(VectorUnit, AnImageTooLargeForTheWeightMemoryIsRefused) {
  VectorProgram program;
  program.put_weights(0, std::vector<std::uint8_t>(kWeightBytes, 1));
  EXPECT_NO_THROW(Emulator{program.image()});
  program::ProgramImage image = program.image();
  image.weights.push_back(0);
  EXPECT_THROW(Emulator{image}, Error);
  EXPECT_THROW(Emulator{program.image(program::kRvformerMap)}, Error);
}

// Operands that reach the last byte of WM or the last element of AM, and the largest counts.
TEST(VectorUnit, OperandsReachingTheEndsOfTheMemoriesAreLegal) {
  std::mt19937 random(1300);
  VectorProgram program;
  constexpr std::uint32_t kRows = 4096, kCols = 64;
  constexpr std::uint32_t kMatrix = kWeightBytes - kRows * (8 + kCols);  // ends with WM
  put_random_matrix(program, kMatrix, kRows, kCols, random);
  const std::uint32_t x = kElements - kCols, out = kElements - kCols - kRows;  // out ends where x starts
  std::vector<std::int16_t> input = random_vector(kCols, random);
  program.put_activations(x, input);
  program.set(Op::kVuSetvl, kRows).set(Op::kVuSetcols, kCols).set(Op::kVuSetsrc, x).op(Op::kVuMatvec16, out, kMatrix);
  model_matvec(program, out, kMatrix, kRows, kCols, x);
  // argmax over the last 4096 elements of AM.
  program.op(Op::kVuArgmax, kElements - kRows, 0, kA2);
  const std::vector<std::int16_t> tail = program.activations_at(kElements - kRows, kRows);
  const auto best = static_cast<std::uint32_t>(story_argmax16(tail.data(), kRows));
  // The last row looked up, its weights the last bytes of WM.
  static_assert(kCols == kWeightLine);
  program.set(Op::kVuSetvl, kCols).set(Op::kVuSetaux, kMatrix + 8 * (kRows - 1)).op(Op::kVuRow16, 0, kWeightBytes - kWeightLine);
  std::vector<std::int16_t> row(kCols);
  const StoryRequant last_pair = program.matrix_pairs(kMatrix, kRows)[kRows - 1];
  for (std::uint32_t j = 0; j < kCols; ++j)
    row[j] = story_requant13(program.matrix_weights(kMatrix, kRows)[(kRows - 1) * kCols + j], last_pair);
  program.write_activations(0, row);
  // The rotations' table in the last bytes of WM (the matrix's last weights read as int16), on AM's end.
  program.set(Op::kVuSetvl, 512).op(Op::kVuRope, kElements - 512, kWeightBytes - 32);
  std::vector<std::int16_t> rotated = program.activations_at(kElements - 512, 512);
  rope_reference(rotated, program.table_at(kWeightBytes - 32, 16));
  program.write_activations(kElements - 512, rotated);
  // Attention with the largest head at the end of the KV cache's last three slots, their vectors put
  // from AM's end.
  for (std::uint32_t slot = kKvSlots - 3; slot < kKvSlots; ++slot) {
    program.put_kv(Op::kVuKput, slot, kElements - kKvElements, random_vector(kKvElements, random, 64));
    program.put_kv(Op::kVuVput, slot, kElements - kKvElements, random_vector(kKvElements, random));
  }
  program.put_activations(100, random_vector(8, random, 64));
  program.set(Op::kVuSetvl, 3).set(Op::kVuSeths, 8).set(Op::kVuSetsrc, kKvSlots - 3).set(Op::kVuSetaux, kKvElements - 8);
  program.op(Op::kVuAttend, 100, 100);
  const std::vector<std::int16_t> query = program.activations_at(100, 8);
  std::vector<std::int16_t> attended(8);
  story_attention_head(attended.data(), query.data(), program.kv_vector(Op::kVuKput, kKvSlots - 3) + kKvElements - 8,
                       program.kv_vector(Op::kVuVput, kKvSlots - 3) + kKvElements - 8, 3, kKvElements, 8);
  program.write_activations(100, attended);
  // The longest norm and every element of AM's end through silu.
  program.set(Op::kVuSetvl, 64).set(Op::kVuSetaux, 5).op(Op::kVuRmsnorm, kElements - 64, kElements - 64);
  std::vector<std::int16_t> norm(64);
  const std::vector<std::int16_t> normed = program.activations_at(kElements - 64, 64);
  story_rmsnorm(norm.data(), normed.data(), 64, 5);
  program.write_activations(kElements - 64, norm);
  program.set(Op::kVuSetvl, 4096).op(Op::kVuSilu, kElements - 4096);
  std::vector<std::int16_t> silu(4096);
  const std::vector<std::int16_t> pre = program.activations_at(kElements - 4096, 4096);
  story_silu(silu.data(), pre.data(), 4096);
  program.write_activations(kElements - 4096, silu);

  Emulator emulator = program.run();
  EXPECT_EQ(emulator.reg(kA2), best);
  EXPECT_TRUE(same_memories(emulator, program));
}

// One program per out-of-range operand: a valid setup (a 4 × 4 matrix at WM 0, valid registers),
// then the offending instruction. It traps as an illegal instruction there and changes nothing.
struct IllegalCase {
  const char* what;
  std::function<void(VectorProgram&)> offend;
};

constexpr std::uint32_t kEnd = kElements;  // the first element past AM

const IllegalCase kIllegalCases[] = {
    {"vu.put past AM", [](VectorProgram& p) { p.op(Op::kVuPut, kEnd, 7); }},
    {"vu.put of 4096", [](VectorProgram& p) { p.op(Op::kVuPut, 0, 4096); }},
    {"vu.put of -4097", [](VectorProgram& p) { p.op(Op::kVuPut, 0, static_cast<std::uint32_t>(-4097)); }},
    {"vu.put of a value whose low 13 bits are in range", [](VectorProgram& p) { p.op(Op::kVuPut, 0, 0x10000005); }},
    {"vu.wget at an address that is not a multiple of 4", [](VectorProgram& p) { p.op(Op::kVuWget, 6, 0, kT1); }},
    {"vu.wget past WM", [](VectorProgram& p) { p.op(Op::kVuWget, kWeightBytes, 0, kT1); }},
    {"vu.wget at the last address", [](VectorProgram& p) { p.op(Op::kVuWget, 0xFFFFFFFC, 0, kT1); }},
    {"vu.get past AM", [](VectorProgram& p) { p.op(Op::kVuGet, kEnd, 0, kT1); }},
    {"vu.kput from an element not a multiple of 32", [](VectorProgram& p) { p.op(Op::kVuKput, 16, 0); }},
    {"vu.kput past the KV cache", [](VectorProgram& p) { p.op(Op::kVuKput, 0, kKvSlots); }},
    {"vu.kput from past AM", [](VectorProgram& p) { p.op(Op::kVuKput, kEnd, 0); }},
    {"vu.vput from an element not a multiple of 32", [](VectorProgram& p) { p.op(Op::kVuVput, 1, 0); }},
    {"vu.vput past the KV cache", [](VectorProgram& p) { p.op(Op::kVuVput, 0, 0xFFFFFFFF); }},
    {"vu.vput from past AM", [](VectorProgram& p) { p.op(Op::kVuVput, kEnd - 3, 0); }},
    {"vu.matvec16 with VL 0", [](VectorProgram& p) { p.set(Op::kVuSetvl, 0).op(Op::kVuMatvec16, 128, 0); }},
    {"vu.matvec16 with VL 4097", [](VectorProgram& p) { p.set(Op::kVuSetvl, 4097).op(Op::kVuMatvec16, 128, 0); }},
    {"vu.matvec16 with COLS 0", [](VectorProgram& p) { p.set(Op::kVuSetcols, 0).op(Op::kVuMatvec16, 128, 0); }},
    {"vu.matvec16 with COLS 257", [](VectorProgram& p) { p.set(Op::kVuSetcols, 257).op(Op::kVuMatvec16, 128, 0); }},
    {"vu.matvec16 with a matrix not a multiple of 64", [](VectorProgram& p) { p.op(Op::kVuMatvec16, 128, 32); }},
    {"vu.matvec16 with a matrix past WM's end",  // its pairs' line, then 4 rows of a line: 64 bytes past
     [](VectorProgram& p) { p.op(Op::kVuMatvec16, 128, kWeightBytes - 4 * 64); }},
    {"vu.matvec16 with x not a multiple of 64",
     [](VectorProgram& p) { p.set(Op::kVuSetsrc, 32).op(Op::kVuMatvec16, 128, 0); }},
    {"vu.matvec16 with x across two AM rows",
     [](VectorProgram& p) { p.set(Op::kVuSetcols, 65).set(Op::kVuSetsrc, 192).op(Op::kVuMatvec16, 128, 0); }},
    {"vu.matvec16 with x past AM", [](VectorProgram& p) { p.set(Op::kVuSetsrc, kEnd).op(Op::kVuMatvec16, 128, 0); }},
    {"vu.matvec16 with out not a line's first element", [](VectorProgram& p) { p.op(Op::kVuMatvec16, 100, 0); }},
    {"vu.matvec16 with out's last line past AM",
     [](VectorProgram& p) { p.set(Op::kVuSetvl, 17).op(Op::kVuMatvec16, kEnd - 16, 0); }},
    {"vu.row16 with VL 0", [](VectorProgram& p) { p.set(Op::kVuSetvl, 0).set(Op::kVuSetaux, 8).op(Op::kVuRow16, 96, 64); }},
    {"vu.row16 with VL 65", [](VectorProgram& p) { p.set(Op::kVuSetvl, 65).set(Op::kVuSetaux, 8).op(Op::kVuRow16, 96, 64); }},
    {"vu.row16 with a row not a multiple of 64", [](VectorProgram& p) { p.set(Op::kVuSetaux, 8).op(Op::kVuRow16, 96, 96); }},
    {"vu.row16 with a row past WM", [](VectorProgram& p) { p.set(Op::kVuSetaux, 8).op(Op::kVuRow16, 96, kWeightBytes); }},
    {"vu.row16 with a pair not a multiple of 8", [](VectorProgram& p) { p.set(Op::kVuSetaux, 12).op(Op::kVuRow16, 96, 64); }},
    {"vu.row16 with a pair past WM", [](VectorProgram& p) { p.set(Op::kVuSetaux, kWeightBytes).op(Op::kVuRow16, 96, 64); }},
    {"vu.row16 with a shift of 0",
     [](VectorProgram& p) { p.put_weight_word(2 * 8 + 4, 0).set(Op::kVuSetaux, 16).op(Op::kVuRow16, 96, 64); }},
    {"vu.row16 with a shift of 63",
     [](VectorProgram& p) { p.put_weight_word(2 * 8 + 4, 63).set(Op::kVuSetaux, 16).op(Op::kVuRow16, 96, 64); }},
    {"vu.row16 with a shift of 2^31 + 1",
     [](VectorProgram& p) { p.put_weight_word(2 * 8 + 4, 0x80000001).set(Op::kVuSetaux, 16).op(Op::kVuRow16, 96, 64); }},
    {"vu.row16 with a multiplier of 256",
     [](VectorProgram& p) { p.put_weight_word(2 * 8, 256).set(Op::kVuSetaux, 16).op(Op::kVuRow16, 96, 64); }},
    {"vu.row16 with a multiplier negative",
     [](VectorProgram& p) { p.put_weight_word(0, 0xFFFFFF00).set(Op::kVuSetaux, 0).op(Op::kVuRow16, 96, 64); }},
    {"vu.row16 with out past AM", [](VectorProgram& p) { p.set(Op::kVuSetaux, 8).op(Op::kVuRow16, kEnd, 64); }},
    {"vu.row16 with out not a line's first element", [](VectorProgram& p) { p.set(Op::kVuSetaux, 8).op(Op::kVuRow16, 100, 64); }},
    {"vu.add16 with VL 0", [](VectorProgram& p) { p.set(Op::kVuSetvl, 0).op(Op::kVuAdd16, 0, 32); }},
    {"vu.add16 with VL 4097", [](VectorProgram& p) { p.set(Op::kVuSetvl, 4097).op(Op::kVuAdd16, 0, 10016); }},
    {"vu.add16 with x's last line past AM", [](VectorProgram& p) { p.set(Op::kVuSetvl, 17).op(Op::kVuAdd16, kEnd - 16, 32); }},
    {"vu.add16 with y's last line past AM", [](VectorProgram& p) { p.set(Op::kVuSetvl, 17).op(Op::kVuAdd16, 16, kEnd - 16); }},
    {"vu.add16 with x not a line's first element", [](VectorProgram& p) { p.op(Op::kVuAdd16, 8, 40); }},
    {"vu.add16 with lines in the same bank", [](VectorProgram& p) { p.op(Op::kVuAdd16, 0, 64); }},
    {"vu.add16 with lines in adjacent banks", [](VectorProgram& p) { p.op(Op::kVuAdd16, 0, 16); }},
    {"vu.mul16 with shift 0", [](VectorProgram& p) { p.set(Op::kVuSetaux, 0).op(Op::kVuMul16, 0, 32); }},
    {"vu.mul16 with shift 31", [](VectorProgram& p) { p.set(Op::kVuSetaux, 31).op(Op::kVuMul16, 0, 32); }},
    {"vu.mul16 with VL 4097", [](VectorProgram& p) { p.set(Op::kVuSetvl, 4097).op(Op::kVuMul16, 0, 10016); }},
    {"vu.mul16 with a's last line past AM", [](VectorProgram& p) { p.set(Op::kVuSetvl, 17).op(Op::kVuMul16, kEnd - 16, 32); }},
    {"vu.mul16 with b's last line past AM", [](VectorProgram& p) { p.set(Op::kVuSetvl, 17).op(Op::kVuMul16, 16, kEnd - 16); }},
    {"vu.mul16 with a not a line's first element", [](VectorProgram& p) { p.op(Op::kVuMul16, 1, 33); }},
    {"vu.mul16 with lines in the same bank", [](VectorProgram& p) { p.op(Op::kVuMul16, 128, 0); }},
    {"vu.rmsnorm with VL 0", [](VectorProgram& p) { p.set(Op::kVuSetvl, 0).op(Op::kVuRmsnorm, 1024, 0); }},
    {"vu.rmsnorm with VL 65", [](VectorProgram& p) { p.set(Op::kVuSetvl, 65).op(Op::kVuRmsnorm, 1024, 0); }},
    {"vu.rmsnorm with out past AM", [](VectorProgram& p) { p.op(Op::kVuRmsnorm, kEnd, 0); }},
    {"vu.rmsnorm with out not at a line's first element", [](VectorProgram& p) { p.op(Op::kVuRmsnorm, 1000, 0); }},
    {"vu.rmsnorm with x past AM", [](VectorProgram& p) { p.op(Op::kVuRmsnorm, 1024, kEnd); }},
    {"vu.rmsnorm with x not a multiple of 32", [](VectorProgram& p) { p.op(Op::kVuRmsnorm, 1024, 16); }},
    {"vu.rmsnorm with x across two AM rows",
     [](VectorProgram& p) { p.set(Op::kVuSetvl, 33).op(Op::kVuRmsnorm, 1024, 224); }},
    {"vu.silu with VL 0", [](VectorProgram& p) { p.set(Op::kVuSetvl, 0).op(Op::kVuSilu, 0); }},
    {"vu.silu with VL 4097", [](VectorProgram& p) { p.set(Op::kVuSetvl, 4097).op(Op::kVuSilu, 0); }},
    {"vu.silu with x's last line past AM", [](VectorProgram& p) { p.set(Op::kVuSetvl, 17).op(Op::kVuSilu, kEnd - 16); }},
    {"vu.silu with x not a line's first element", [](VectorProgram& p) { p.op(Op::kVuSilu, 4); }},
    {"vu.rope with VL 0", [](VectorProgram& p) { p.set(Op::kVuSetvl, 0).op(Op::kVuRope, 0, 992); }},
    {"vu.rope with an odd VL", [](VectorProgram& p) { p.set(Op::kVuSetvl, 3).op(Op::kVuRope, 0, 992); }},
    {"vu.rope with VL 4098", [](VectorProgram& p) { p.set(Op::kVuSetvl, 4098).op(Op::kVuRope, 0, 992); }},
    {"vu.rope with its table not a multiple of 32", [](VectorProgram& p) { p.op(Op::kVuRope, 0, 1008); }},
    {"vu.rope with its table past WM", [](VectorProgram& p) { p.op(Op::kVuRope, 0, kWeightBytes); }},
    {"vu.rope with x not a line's first element", [](VectorProgram& p) { p.op(Op::kVuRope, 8, 992); }},
    {"vu.rope with x's last line past AM", [](VectorProgram& p) { p.set(Op::kVuSetvl, 18).op(Op::kVuRope, kEnd - 16, 992); }},
    {"vu.attend with VL 0", [](VectorProgram& p) { p.set(Op::kVuSetvl, 0).op(Op::kVuAttend, 1000, 0); }},
    {"vu.attend with VL 513", [](VectorProgram& p) { p.set(Op::kVuSetvl, 513).op(Op::kVuAttend, 1000, 0); }},
    {"vu.attend with HS 0", [](VectorProgram& p) { p.set(Op::kVuSeths, 0).op(Op::kVuAttend, 1000, 0); }},
    {"vu.attend with HS 9", [](VectorProgram& p) { p.set(Op::kVuSeths, 9).op(Op::kVuAttend, 1000, 0); }},
    {"vu.attend with positions past the KV cache",
     [](VectorProgram& p) { p.set(Op::kVuSetsrc, kKvSlots - 3).op(Op::kVuAttend, 1000, 0); }},
    {"vu.attend with a head past a KV vector's end",
     [](VectorProgram& p) { p.set(Op::kVuSetaux, kKvElements - 1).op(Op::kVuAttend, 1000, 0); }},
    {"vu.attend with a first slot whose sum with VL wraps",
     [](VectorProgram& p) { p.set(Op::kVuSetsrc, 0xFFFFFFFE).op(Op::kVuAttend, 1000, 0); }},
    {"vu.attend with q past AM", [](VectorProgram& p) { p.op(Op::kVuAttend, 1000, kEnd - 1); }},
    {"vu.attend with out past AM", [](VectorProgram& p) { p.op(Op::kVuAttend, kEnd - 1, 0); }},
    {"vu.argmax with VL 0", [](VectorProgram& p) { p.set(Op::kVuSetvl, 0).op(Op::kVuArgmax, 0, 0, kT1); }},
    {"vu.argmax with VL 4097", [](VectorProgram& p) { p.set(Op::kVuSetvl, 4097).op(Op::kVuArgmax, 0, 0, kT1); }},
    {"vu.argmax with x's last line past AM", [](VectorProgram& p) { p.set(Op::kVuSetvl, 17).op(Op::kVuArgmax, kEnd - 16, 0, kT1); }},
    {"vu.argmax with x not a line's first element", [](VectorProgram& p) { p.op(Op::kVuArgmax, 8, 0, kT1); }},
};

TEST(VectorUnitTraps, EveryOutOfRangeOperandIsAnIllegalInstruction) {
  std::mt19937 random(1400);
  std::set<Op> trapped;
  for (const IllegalCase& c : kIllegalCases) {
    SCOPED_TRACE(c.what);
    VectorProgram program;
    put_random_matrix(program, 0, 4, 4, random);
    program.put_activations(0, random_vector(4096, random));
    program.put_activations(kEnd - 4096, random_vector(4096, random));
    // Valid for every operation: 4 rows, columns, positions; HS 2 (even); AUX a shift, an even
    // address and the values' cache; the keys at AM 0 with a stride of 4.
    program.set(Op::kVuSetvl, 4).set(Op::kVuSetcols, 4).set(Op::kVuSetsrc, 0).set(Op::kVuSetaux, 2).set(Op::kVuSeths, 2);
    c.offend(program);
    Emulator emulator(program.image());
    RunResult result = emulator.run(10'000'000, ignore_console);
    if (result.reason != StopReason::kTrapped) {
      ADD_FAILURE() << "no trap";
      continue;
    }
    EXPECT_EQ(result.trap.cause, isa::TrapCause::kIllegalInstruction);
    EXPECT_EQ(result.trap.pc, program.last_op_pc());
    EXPECT_NE(isa::describe_trap(result.trap, kVectorMap).find("its operands are out of range"),
              std::string::npos)
        << isa::describe_trap(result.trap, kVectorMap);
    EXPECT_TRUE(same_memories(emulator, program));
    trapped.insert(isa::decode(result.trap.instruction).op);
  }
  // Every instruction with an operand to check has a case (the vu.set* take any value).
  for (const isa::OpInfo& info : isa::instruction_table())
    if (isa::is_vector(info.op) && info.format != isa::Format::kSource) {
      EXPECT_TRUE(trapped.contains(info.op)) << info.name;
    }
  EXPECT_TRUE(trapped.contains(Op::kVuSilu));
}

// The same setup with each case's operand made legal shows that the cases above trap for their own
// operand: the valid setup itself runs every operation.
TEST(VectorUnitTraps, TheTrapCasesSetupIsLegal) {
  std::mt19937 random(1400);
  VectorProgram program;
  put_random_matrix(program, 0, 4, 4, random);
  program.put_activations(0, random_vector(4096, random));
  program.set(Op::kVuSetvl, 4).set(Op::kVuSetcols, 4).set(Op::kVuSetsrc, 0).set(Op::kVuSetaux, 2).set(Op::kVuSeths, 2);
  program.op(Op::kVuPut, kEnd - 1, 7).op(Op::kVuGet, kEnd - 1, 0, kT1);
  program.op(Op::kVuKput, kEnd - kKvElements, kKvSlots - 1).op(Op::kVuVput, kEnd - kKvElements, kKvSlots - 1);
  program.op(Op::kVuMatvec16, 128, 0).op(Op::kVuMatvec16, kEnd - 16, kWeightBytes - 5 * 64);
  program.set(Op::kVuSetcols, 64).set(Op::kVuSetsrc, 192).op(Op::kVuMatvec16, 128, 0);
  program.set(Op::kVuSetcols, 4).set(Op::kVuSetsrc, kEnd - 64).op(Op::kVuMatvec16, 128, 0).set(Op::kVuSetsrc, 0);
  program.set(Op::kVuSetaux, 8).op(Op::kVuRow16, 96, 64).set(Op::kVuSetaux, 2);
  for (Op op : {Op::kVuAdd16, Op::kVuMul16}) program.op(op, 1024, 32).op(op, 1024, 1024).op(op, 32, 1024);
  program.op(Op::kVuRmsnorm, 1008, 0).op(Op::kVuAttend, 1000, 0);
  program.op(Op::kVuSilu, kEnd - 16).op(Op::kVuRope, 0, 992).op(Op::kVuRope, kEnd - 16, kWeightBytes - 32);
  program.op(Op::kVuArgmax, 0, 0, kT1);
  Emulator emulator(program.image());
  EXPECT_EQ(emulator.run(10'000'000, ignore_console).reason, StopReason::kExited);
  // vu.row16 reads only its own pair.
  VectorProgram own_row;
  put_random_matrix(own_row, 0, 4, 4, random);
  own_row.put_weight_word(3 * 8, 256).set(Op::kVuSetvl, 4).set(Op::kVuSetaux, 16);
  own_row.op(Op::kVuRow16, 96, 64 * 3);
  Emulator run(own_row.image());
  EXPECT_EQ(run.run(10'000'000, ignore_console).reason, StopReason::kExited);
}

// On every map without the unit each vu.* is illegal, and the message names the map that has it.
TEST(VectorUnitTraps, InstructionsAreIllegalWithoutTheUnit) {
  for (const MemoryMap& map : program::kMemoryMaps) {
    if (map.vector_unit) continue;
    for (const isa::OpInfo& info : isa::instruction_table()) {
      if (!isa::is_vector(info.op)) continue;
      VectorProgram program;
      program.op(info.op, 0, 0, info.format == isa::Format::kUnary ? kT1 : kZero);
      Emulator emulator(program.image(map));
      RunResult result = emulator.run(1000, ignore_console);
      ASSERT_EQ(result.reason, StopReason::kTrapped) << map.name << ": " << info.name;
      EXPECT_EQ(result.trap.cause, isa::TrapCause::kIllegalInstruction);
      EXPECT_EQ(result.trap.pc, map.code.base + program.last_op_pc() - kVectorMap.code.base);
      EXPECT_NE(isa::describe_trap(result.trap, map).find("has no vector unit (rvformer-vector has)"), std::string::npos)
          << isa::describe_trap(result.trap, map);
    }
  }
}

}  // namespace
}  // namespace rvformer::emulator
