// toolchain/program_loader.h — what `rvformer run PROGRAM` accepts: a C or assembly source file
// (what `rvformer cc` compiles), compiled first (-O2, into a temporary directory), or an ELF
// executable; and the firmware rvformer ships (firmware/NAME/, every source file of it).
#pragma once

#include <filesystem>

#include "program/machine_spec.h"
#include "program/program_image.h"

namespace rvformer::toolchain {

program::ProgramImage load_program(const std::filesystem::path& path,
                                   const program::MemoryMap& map);

// firmware/NAME/ of the source tree, compiled (-O2) and linked for `map`. Throws rvformer::Error
// when the folder is missing, BuildError when it does not build.
program::ProgramImage load_firmware(const std::string& name, const program::MemoryMap& map);

}  // namespace rvformer::toolchain
