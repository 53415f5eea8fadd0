// toolchain/qemu.h — runs an ELF built for the qemu-virt memory map on QEMU's `virt` machine with
// the CPU restricted to RV32IM + Zba: the reference the golden emulator is compared with.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace rvformer::toolchain {

struct QemuResult {
  std::string console;  // everything the program wrote to the UART
  int exit_status = 0;  // the finisher's exit code (mod 256)
  bool timed_out = false;
};

// A program that traps never ends on QEMU (there is no trap handler), so every run has a limit.
QemuResult run_on_qemu(const std::filesystem::path& elf, std::chrono::milliseconds timeout);

}  // namespace rvformer::toolchain
