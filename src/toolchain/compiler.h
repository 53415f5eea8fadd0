// toolchain/compiler.h — `rvformer cc`: compiles C (or assembly) sources with the RISC-V cross
// compiler and links them with the program runtime (runtime/) and picolibc for one memory map.
// Code is generated for rv32im_zba; linking uses the rv32im multilib of libgcc and picolibc.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "program/machine_spec.h"

namespace rvformer::toolchain {

struct CompileOptions {
  std::vector<std::filesystem::path> sources;
  std::filesystem::path output;
  int optimization_level = 2;  // 0-3
  program::MemoryMap map = program::kRvformerMap;
  bool verbose = false;  // print each command before running it
};

// A file `rvformer cc` compiles: C (.c) or assembly (.s, or .S through the preprocessor).
bool is_source(const std::filesystem::path& path);

// The cross compiler's path, once it and picolibc are found installed; else rvformer::BuildError
// saying how to install them.
std::string checked_cross_compiler();
// Preprocessor definitions (-D...) that tell runtime/console.c where the map's MMIO registers are.
std::vector<std::string> mmio_definitions(const program::MemoryMap& map);
// One -Wl,--defsym=... argument that gives runtime/link.ld the regions of the map.
std::string region_symbols(const program::MemoryMap& map);

// Throws rvformer::BuildError when the toolchain is missing or a step fails (the compiler's own
// diagnostics have gone to stderr by then), rvformer::Error for bad options or sources.
void compile_program(const CompileOptions& options);

}  // namespace rvformer::toolchain
