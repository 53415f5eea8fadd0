// toolchain/program_loader.h — what `rvformer run PROGRAM` accepts: a C or assembly source file
// (what `rvformer cc` compiles), compiled first (-O2, into a temporary directory), or an ELF
// executable; and the firmware rvformer ships (firmware/NAME/), built the same way.
#pragma once

#include <filesystem>
#include <string>

#include "program/machine_spec.h"
#include "program/program_image.h"

namespace rvformer::toolchain {

program::ProgramImage load_program(const std::filesystem::path& path,
                                   const program::MemoryMap& map);

// Every C source of firmware/NAME/ (not its subdirectories), compiled with -O2 and loaded.
// Throws rvformer::BuildError when the firmware is missing or does not build.
program::ProgramImage load_firmware(const std::string& name, const program::MemoryMap& map);

}  // namespace rvformer::toolchain
