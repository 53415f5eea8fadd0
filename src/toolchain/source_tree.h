// toolchain/source_tree.h — where rvformer finds its own files at run time: the program runtime
// (crt0, linker script, console), the example programs and the firmware rvformer runs itself. The
// source tree's path is compiled in; the environment variable RVFORMER_SOURCE_DIR overrides it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace rvformer::toolchain {

std::filesystem::path source_tree();
std::filesystem::path runtime_directory();  // source_tree()/runtime
std::filesystem::path examples_directory();  // source_tree()/examples
std::filesystem::path default_program();     // examples/hello.c
std::filesystem::path firmware_directory(const std::string& name);  // source_tree()/firmware/NAME
std::vector<std::filesystem::path> example_programs();  // examples/*.c, sorted

}  // namespace rvformer::toolchain
