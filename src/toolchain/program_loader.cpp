// toolchain/program_loader.cpp — see program_loader.h.
#include "toolchain/program_loader.h"

#include "program/elf_loader.h"
#include "support/file.h"
#include "toolchain/compiler.h"
#include "toolchain/process.h"

namespace rvformer::toolchain {

program::ProgramImage load_program(const std::filesystem::path& path,
                                   const program::MemoryMap& map) {
  check_input_file(path);
  if (!is_source(path)) return program::load_elf_file(path, map);
  TemporaryDirectory build;
  std::filesystem::path elf = build.path() / (path.stem().string() + ".elf");
  compile_program({.sources = {path}, .output = elf, .optimization_level = 2, .map = map,
                   .verbose = false});
  return program::load_elf_file(elf, map);
}

}  // namespace rvformer::toolchain
