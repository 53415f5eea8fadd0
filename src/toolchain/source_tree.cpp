// toolchain/source_tree.cpp — see source_tree.h.
#include "toolchain/source_tree.h"

#include <algorithm>
#include <cstdlib>

namespace rvformer::toolchain {

std::filesystem::path source_tree() {
  if (const char* overridden = std::getenv("RVFORMER_SOURCE_DIR"); overridden && *overridden) {
    return overridden;
  }
  return RVFORMER_SOURCE_DIR;
}

std::filesystem::path runtime_directory() { return source_tree() / "runtime"; }
std::filesystem::path examples_directory() { return source_tree() / "examples"; }
std::filesystem::path default_program() { return examples_directory() / "hello.c"; }
std::filesystem::path firmware_directory(const std::string& name) { return source_tree() / "firmware" / name; }

std::vector<std::filesystem::path> example_programs() {
  std::vector<std::filesystem::path> programs;
  for (const auto& entry : std::filesystem::directory_iterator(examples_directory()))
    if (entry.path().extension() == ".c") programs.push_back(entry.path());
  std::sort(programs.begin(), programs.end());
  return programs;
}

}  // namespace rvformer::toolchain
