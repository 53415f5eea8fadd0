// program/program_image.h — a program ready to run: the initial contents of each memory region and
// the entry point, checked against one memory map.
#pragma once

#include <cstdint>
#include <vector>

#include "program/machine_spec.h"

namespace rvformer::program {

// Each byte vector holds a region's contents from the region's base address; it is only as long as
// the program needs (the rest of the region starts zeroed) and never longer than the region.
struct ProgramImage {
  MemoryMap map = kRvformerMap;
  std::vector<std::uint8_t> code;    // code ROM; a multiple of 4 bytes
  std::vector<std::uint8_t> rodata;  // read-only data
  std::vector<std::uint8_t> ram;     // RAM (usually empty: crt0 initialises RAM itself)
  // The vector unit's weight memory WM from byte 0 (docs/vector-unit.md): data the program reads
  // with vu.* instructions, such as a model's weights; only for a map with the unit.
  std::vector<std::uint8_t> weights;
  std::uint32_t entry = 0;           // inside `code`, 4-byte aligned
};

}  // namespace rvformer::program
