// toolchain/program_loader.cpp — see program_loader.h.
#include "toolchain/program_loader.h"

#include <algorithm>
#include <vector>

#include "program/elf_loader.h"
#include "support/error.h"
#include "support/file.h"
#include "toolchain/compiler.h"
#include "toolchain/process.h"
#include "toolchain/source_tree.h"

namespace rvformer::toolchain {
namespace {

program::ProgramImage compile_and_load(const std::vector<std::filesystem::path>& sources, const std::string& name,
                                       const program::MemoryMap& map) {
  TemporaryDirectory build;
  std::filesystem::path elf = build.path() / (name + ".elf");
  compile_program({.sources = sources, .output = elf, .optimization_level = 2, .map = map, .verbose = false});
  return program::load_elf_file(elf, map);
}

}  // namespace

program::ProgramImage load_program(const std::filesystem::path& path,
                                   const program::MemoryMap& map) {
  check_input_file(path);
  if (!is_source(path)) return program::load_elf_file(path, map);
  return compile_and_load({path}, path.stem().string(), map);
}

program::ProgramImage load_firmware(const std::string& name, const program::MemoryMap& map) {
  std::filesystem::path directory = firmware_directory(name);
  std::vector<std::filesystem::path> sources;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error))
    if (entry.is_regular_file() && entry.path().extension() == ".c") sources.push_back(entry.path());
  if (sources.empty())
    fail_build("the {} firmware is missing ({} has no C sources); set RVFORMER_SOURCE_DIR to the rvformer source tree",
               name, directory.string());
  std::sort(sources.begin(), sources.end());
  return compile_and_load(sources, name, map);
}

}  // namespace rvformer::toolchain
