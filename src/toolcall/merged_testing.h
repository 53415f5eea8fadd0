// toolcall/merged_testing.h — for tests (library rvformer_toolcall_testing): a real machine merged
// into a synthetic Qwen3.5 base in the published layout (the "narrow" shape: the 4B's GDN geometry
// and widths, hidden 64, Qwen3's tokenizer files and Qwen3.5's chat template).
#pragma once

#include <filesystem>

#include "program/machine_spec.h"

namespace rvformer::toolcall::testing {

// Made once per build of the machine and kept in the compiled-machine cache ($RVFORMER_CACHE, else
// the test's temporary directory): writing it takes seconds and a gigabyte of disk. A file lock
// keeps concurrent test processes from making it twice.
std::filesystem::path merged_test_checkpoint(const program::MachineSpec& machine = program::kDefaultMachine);

}  // namespace rvformer::toolcall::testing
