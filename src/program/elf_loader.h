// program/elf_loader.h — turns an ELF executable into a ProgramImage for one memory map, checking
// every field it reads. Each problem is reported as one sentence (an rvformer::Error) that starts
// with the program's name; no input makes it crash or hang.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "program/memory_map.h"
#include "program/program_image.h"

namespace rvformer::program {

// Loaded segments are placed at their physical (load) address, as QEMU does: a section that runs
// from RAM (.data) is loaded where the linker put its initial bytes and crt0 copies it.
ProgramImage load_elf(std::span<const std::uint8_t> bytes, const MemoryMap& map,
                      std::string_view name);

ProgramImage load_elf_file(const std::filesystem::path& path, const MemoryMap& map);

}  // namespace rvformer::program
