// toolchain/micropython.h — Python scripts on the machine: the MicroPython interpreter image
// (firmware/micropython, built with make from the MicroPython core that
// firmware/micropython/fetch-source.sh fetches, cached per memory map) with a script placed in its
// read-only data. The script is data, not code: one interpreter image serves every script.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "program/machine_spec.h"
#include "program/program_image.h"

namespace rvformer::toolchain {

struct PythonScript {
  std::string name;  // what tracebacks call it
  std::string text;
};

// True for a path `run` treats as a Python script (.py).
bool is_python_script(const std::filesystem::path& path);

// The script at `path` (checked to be a readable file).
PythonScript read_python_script(const std::filesystem::path& path);

// Where the MicroPython core is looked for: $RVFORMER_MICROPYTHON_SOURCE, else
// build/micropython-src in the source tree.
std::filesystem::path micropython_source();

// Builds the interpreter for `map` unless the cached build is up to date, and returns its ELF.
// Throws rvformer::BuildError when the source or the cross compiler is missing or the build fails.
std::filesystem::path build_micropython(const program::MemoryMap& map);

// Where the interpreter image expects the script: the address of its __python_script symbol.
std::uint32_t script_address(const std::filesystem::path& interpreter);

// Places `script` into the image's read-only data at `address` (see firmware/micropython/main.c for
// the layout). Throws rvformer::Error when it does not fit.
void place_script(program::ProgramImage& image, std::uint32_t address, const PythonScript& script);

// The interpreter image for `map` carrying `script`, ready to run.
program::ProgramImage load_python_program(const PythonScript& script, const program::MemoryMap& map);

}  // namespace rvformer::toolchain
