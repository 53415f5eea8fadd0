// toolchain/program_loader.cpp — see program_loader.h.
#include "toolchain/program_loader.h"

#include <algorithm>

#include "program/elf_loader.h"
#include "support/file.h"
#include "toolchain/compiler.h"
#include "toolchain/process.h"
#include "toolchain/source_tree.h"

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

program::ProgramImage load_firmware(const std::string& name, const program::MemoryMap& map) {
  const std::filesystem::path folder = source_tree() / "firmware" / name;
  check_input_directory(folder);
  std::vector<std::filesystem::path> sources;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_regular_file() && is_source(entry.path())) sources.push_back(entry.path());
  }
  std::sort(sources.begin(), sources.end());
  TemporaryDirectory build;
  const std::filesystem::path elf = build.path() / (name + ".elf");
  compile_program({.sources = sources, .output = elf, .optimization_level = 2, .map = map, .verbose = false});
  return program::load_elf_file(elf, map);
}

}  // namespace rvformer::toolchain
