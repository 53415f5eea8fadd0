// toolchain/program_testing.h — a C program given as text, compiled for a machine's memory map and
// loaded, for tests that run small programs.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "program/machine_spec.h"
#include "toolchain/program_loader.h"

namespace rvformer::toolchain {

inline program::ProgramImage compile_test_program(const std::string& name, const std::string& source,
                                                  const program::MemoryMap& map = program::kRvformerMap) {
  auto path = std::filesystem::path(::testing::TempDir()) / (name + ".c");
  std::ofstream(path) << source;
  return load_program(path, map);
}

}  // namespace rvformer::toolchain
