// program/elf_writer.h — writes a minimal ELF32 RISC-V executable (header, program headers and
// segment bytes; no sections). Used to build programs from machine code directly, for example the
// random instruction streams of the differential tests and hand-made loader test inputs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace rvformer::program {

struct ElfSegment {
  std::uint32_t address = 0;        // both virtual and physical
  std::vector<std::uint8_t> bytes;  // the file bytes
  std::uint32_t memory_size = 0;    // at least bytes.size(); the rest is zero-filled
  std::uint32_t flags = 0;          // p_flags (elf::kSegmentRead | ...)
};

std::vector<std::uint8_t> write_elf(std::uint32_t entry, std::span<const ElfSegment> segments,
                                    std::uint32_t elf_flags = 0);

}  // namespace rvformer::program
