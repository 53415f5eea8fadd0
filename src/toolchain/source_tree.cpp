// toolchain/source_tree.cpp — see source_tree.h.
#include "toolchain/source_tree.h"

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

}  // namespace rvformer::toolchain
