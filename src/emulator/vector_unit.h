// emulator/vector_unit.h — the golden semantics of the vector unit (runtime/rvformer_vector.h,
// docs/vector-unit.md): its memories, its configuration registers and what each vu.* instruction
// does to them. Each operation computes the function of firmware/story/story_ops.h named beside it in
// the runtime header, written here again so that the reference and the oracle check each other.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "isa/instruction_set.h"
#include "program/memory_map.h"

namespace rvformer::emulator {

class VectorUnit {
 public:
  static constexpr std::uint32_t kWeightBytes = program::kVectorWeightBytes;                // WM
  static constexpr std::uint32_t kActivationElements = program::kVectorActivationElements;  // AM
  static constexpr std::uint32_t kLineElements = program::kVectorLineElements;               // vu.put's line buffer
  static constexpr std::uint32_t kKvSlots = program::kVectorKvSlots;                        // KV
  static constexpr std::uint32_t kKvElements = program::kVectorKvElements;
  // The configuration registers, numbered as the funct7 of the vu.set* that writes them.
  enum Register : int { kVl, kCols, kSrc, kAux, kHs };
  static constexpr int kRegisterCount = 5;
  // The tables vu.rmsnorm, vu.silu and vu.attend read (STORY_RSQRT, STORY_SILU, STORY_EXP2 and
  // STORY_RECIP), computed from their definitions in story_ops.h.
  static constexpr std::size_t kInverseRootEntries = 192, kSiluPoints = 65, kExp2Entries = 8, kReciprocalEntries = 256;
  static std::span<const std::uint16_t, kInverseRootEntries> inverse_root_table();
  static std::span<const std::int16_t, kSiluPoints> silu_table();
  static std::span<const std::uint16_t, kExp2Entries> exp2_table();
  static std::span<const std::uint16_t, kReciprocalEntries> reciprocal_table();

  // Without the unit (`present` false) the memories are empty and every vu.* is illegal. WM starts
  // with `weights` (the program image's), then zeros; AM and the registers with zeros.
  VectorUnit(bool present, std::span<const std::uint8_t> weights);

  // Executes the vu.* instruction `op` whose rs1 and rs2 hold `rs1` and `rs2`; vu.get, vu.wget and
  // vu.argmax set `rd`. False when an operand is out of range: the instruction is illegal and changed nothing.
  bool execute(isa::Op op, std::uint32_t rs1, std::uint32_t rs2, std::uint32_t& rd);

  std::span<const std::uint8_t> weights() const { return weights_; }
  std::span<const std::int16_t> activations() const { return activations_; }
  // vu.put's line buffer: element k is the value last put at an AM element ≡ k (mod kLineElements).
  const std::array<std::int16_t, kLineElements>& line_buffer() const { return line_; }
  // The KV cache: slot s's key vector at [s · kKvElements, (s + 1) · kKvElements), and its value vector.
  std::span<const std::int16_t> keys() const { return keys_; }
  std::span<const std::int16_t> values() const { return values_; }
  const std::array<std::uint32_t, kRegisterCount>& registers() const { return registers_; }

 private:
  struct Matrix;

  bool matvec(std::uint32_t out, std::uint32_t matrix);
  bool row16(std::uint32_t out, std::uint32_t row);
  bool add16(std::uint32_t x, std::uint32_t y);
  bool mul16(std::uint32_t a, std::uint32_t b);
  bool rmsnorm(std::uint32_t out, std::uint32_t x);
  bool silu(std::uint32_t x);
  bool rope(std::uint32_t x, std::uint32_t cos_address);
  bool attend(std::uint32_t out, std::uint32_t q);
  void put(std::uint32_t element, std::int16_t value);
  bool put_kv(std::vector<std::int16_t>& cache, std::uint32_t x, std::uint32_t slot);
  bool argmax(std::uint32_t x, std::uint32_t& index) const;

  // Whether [first, first + count) lies inside the activation (weight) memory; 64-bit, no wrap.
  static bool in_activations(std::uint64_t first, std::uint64_t count);
  static bool in_weights(std::uint64_t first, std::uint64_t count);
  std::uint32_t count() const { return registers_[kVl]; }
  // The matrix at WM byte address `address` with VL rows and COLS columns, if those are in range.
  bool matrix_at(std::uint32_t address, Matrix& matrix) const;
  // Whether the requantisation pair at WM byte `address` (inside WM) has a multiplier in [0, 255]
  // and a shift in [1, 62].
  bool valid_pair(std::uint64_t address) const;
  std::int32_t weight_word(std::uint32_t address) const;
  std::int16_t weight_half(std::uint32_t address) const;
  // Copies result_ to AM from `first`: outputs are written only once every input has been read.
  void write_result(std::uint32_t first);
  // Whether `count` elements from `first` are a vector the weights read in one pass: from a bank
  // row's first element (a multiple of 32), within one row of all the banks (256 elements), inside AM.
  static bool in_one_row(std::uint32_t first, std::uint32_t count);
  // An elementwise operation's lines: `count` elements from `first`, a line's first element, inside AM
  // as whole lines.
  static bool whole_lines(std::uint32_t first, std::uint32_t count);
  // Whether a binary elementwise operation can read line l of both operands in one pass.
  static bool paired_lines(std::uint32_t x, std::uint32_t y);
  // Writes `count` outputs from AM element `out` a line at a time, as the weights do: each line's
  // elements computed from AM as it stands (element(i), i below count; 0 past it) into the line
  // buffer, which is then written whole. So the buffer ends holding the last line, and an output
  // line changes the inputs of later lines it overlaps.
  void write_lines(std::uint32_t out, std::uint32_t count, const std::function<std::int16_t(std::uint32_t)>& element);

  std::vector<std::uint8_t> weights_;
  std::vector<std::int16_t> activations_;
  std::array<std::int16_t, kLineElements> line_{};
  std::vector<std::int16_t> keys_, values_;
  std::array<std::uint32_t, kRegisterCount> registers_{};
  std::vector<std::int16_t> result_;  // the current operation's outputs
};

}  // namespace rvformer::emulator
