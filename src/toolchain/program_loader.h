// toolchain/program_loader.h — what `rvformer run PROGRAM` accepts: a C source file, compiled
// first (-O2, into a temporary directory), or an ELF executable.
#pragma once

#include <filesystem>

#include "program/machine_spec.h"
#include "program/program_image.h"

namespace rvformer::toolchain {

bool is_c_source(const std::filesystem::path& path);

program::ProgramImage load_program(const std::filesystem::path& path,
                                   const program::MemoryMap& map);

}  // namespace rvformer::toolchain
