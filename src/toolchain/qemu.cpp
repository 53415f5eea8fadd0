// toolchain/qemu.cpp — the qemu-system-riscv32 command line.
#include "toolchain/qemu.h"

#include "support/error.h"
#include "toolchain/process.h"

namespace rvformer::toolchain {

QemuResult run_on_qemu(const std::filesystem::path& elf, std::chrono::milliseconds timeout) {
  constexpr const char* kQemu = "qemu-system-riscv32";
  if (!find_executable(kQemu)) {
    fail("{} is not installed; install it with: sudo apt-get install qemu-system-misc", kQemu);
  }
  // QEMU 7.2 enables A, C, F, D and the B extensions by default; F and D need Zicsr, which the
  // reset stub at 0x1000 uses, so Zicsr stays.
  ProcessResult result = run_process(
      {kQemu, "-machine", "virt", "-bios", "none", "-display", "none", "-serial", "stdio",
       "-monitor", "none", "-cpu",
       "rv32,a=false,c=false,f=false,d=false,zba=true,zbb=false,zbc=false,zbs=false", "-kernel",
       elf.string()},
      {.capture_output = true, .timeout = timeout});
  if (!result.timed_out && result.exit_status != 0 && result.standard_output.empty() &&
      !result.standard_error.empty()) {
    fail("QEMU could not run {}: {}", elf.string(),
         result.standard_error.substr(0, result.standard_error.find('\n')));
  }
  return {.console = std::move(result.standard_output),
          .exit_status = result.exit_status,
          .timed_out = result.timed_out};
}

}  // namespace rvformer::toolchain
