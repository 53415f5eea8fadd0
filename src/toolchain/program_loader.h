// toolchain/program_loader.h — what `rvformer run PROGRAM` accepts: a C or assembly source file
// (what `rvformer cc` compiles), compiled first (-O2, into a temporary directory), or an ELF
// executable.
#pragma once

#include <filesystem>

#include "program/machine_spec.h"
#include "program/program_image.h"

namespace rvformer::toolchain {

program::ProgramImage load_program(const std::filesystem::path& path,
                                   const program::MemoryMap& map);

}  // namespace rvformer::toolchain
