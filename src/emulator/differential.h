// emulator/differential.h — runs the same ELF on QEMU and on the golden emulator (with the
// qemu-virt memory map) and compares what they print and how they end.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "emulator/random_program.h"
#include "program/program_image.h"

namespace rvformer::emulator {

// How one machine's run of a program ended.
struct MachineRun {
  std::string console;
  int exit_status = 0;   // the program's exit code modulo 256
  std::string failure;   // empty when the program exited; otherwise why it did not
  std::uint64_t instructions = 0;  // emulator only
};

MachineRun run_on_emulator(const program::ProgramImage& image, std::uint64_t max_instructions);
MachineRun run_on_qemu(const std::filesystem::path& elf, std::chrono::milliseconds timeout);

struct RandomProgramComparison {
  int streams = 0;
  int mismatched_streams = 0;
  std::string first_mismatch;  // registers and scratch words that differ, and the stream's code
  std::uint64_t instructions = 0;  // executed by the emulator
};

// Writes the program to `elf_path`, runs it on both machines and compares the dump of every
// stream.
RandomProgramComparison compare_with_qemu(const RandomProgram& program,
                                          const std::filesystem::path& elf_path);

}  // namespace rvformer::emulator
