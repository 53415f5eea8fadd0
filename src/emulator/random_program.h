// emulator/random_program.h — random RV32IM + Zba test programs for differential testing against
// QEMU. A program is a sequence of independent instruction streams. Each stream sets every
// register to an edge-case value (0, ±1, INT_MIN, INT_MAX, powers of two, random) and fills a
// scratch area, runs random instructions of every kind (all RV32IM + Zba arithmetic, loads and
// stores of every width into the scratch area, taken and not-taken forward branches, jal and
// jalr; on a map with the big-integer unit, its puts and dot products too), then prints all 32
// registers and the scratch area as one line of hex words. The program
// ends by exiting with code 0. Machine code is written directly into an ELF, so the very same
// file runs on QEMU and on the emulator (with the qemu-virt memory map).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program/machine_spec.h"
#include "program/program_image.h"

namespace rvformer::emulator {

struct RandomProgramOptions {
  std::uint64_t seed = 1;
  int streams = 100;
  int min_stream_length = 30;   // random instructions (after the set-up) per stream
  int max_stream_length = 120;
  program::MemoryMap map = program::kQemuVirtMap;
};

// On a map with the vector unit, vu.row16 takes its requantisation pair from one of
// kRandomStreamPairCount valid pairs at WM byte kRandomStreamPairs, which RandomProgram::weights holds.
inline constexpr std::uint32_t kRandomStreamPairCount = 64;
inline constexpr std::uint32_t kRandomStreamPairs = program::kVectorWeightBytes - 8 * kRandomStreamPairCount;

struct RandomProgram {
  std::vector<std::uint8_t> elf;
  // The weight memory image its streams need on a map with the vector unit (zeros but the pairs at
  // kRandomStreamPairs); empty on the other maps.
  std::vector<std::uint8_t> weights;
  // [first, last) code address of each stream's random instructions, for reports.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stream_code;
  std::vector<std::uint32_t> code;  // the code ROM words from map.code.base
};

// What a stream prints: registers x0..x31, then the scratch words.
inline constexpr int kDumpRegisterWords = 32;
inline constexpr int kDumpScratchWords = 16;
inline constexpr int kDumpWords = kDumpRegisterWords + kDumpScratchWords;

// "x5" for word 5, "scratch+8" for word 34.
std::string dump_word_name(int index);

RandomProgram generate_random_program(const RandomProgramOptions& options);

// The program as the loader places it on `map` (its ELF, and its weight memory image on a map with
// the vector unit).
program::ProgramImage random_program_image(const RandomProgram& program, const program::MemoryMap& map);

}  // namespace rvformer::emulator
