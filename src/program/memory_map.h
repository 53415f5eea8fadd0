// program/memory_map.h — a memory map: where code, read-only data, RAM and the MMIO registers live,
// and what each region allows. The rvformer maps derive from a MachineSpec (machine_spec.h);
// `kQemuVirtMap` places the same regions where QEMU's `virt` machine has RAM and devices, so one
// ELF runs on QEMU and on the emulator in differential tests. docs/memory-map.md describes them.
#pragma once

#include <cstdint>
#include <string_view>

namespace rvformer::program {

struct Region {
  std::uint32_t base;
  std::uint32_t size;

  // True when [address, address + length) lies inside the region (no wrap-around).
  constexpr bool contains(std::uint32_t address, std::uint64_t length = 1) const {
    return address >= base && std::uint64_t{address - base} + length <= size;
  }
  constexpr std::uint64_t end() const { return std::uint64_t{base} + size; }
};

// How a word store to the exit register turns into an exit code.
enum class ExitConvention {
  kExitCode,            // the stored word is the exit code
  kSifiveTestFinisher,  // QEMU virt's finisher: 0x5555 = exit 0, (code << 16) | 0x3333 = exit code
};

struct MemoryMap {
  std::string_view name;
  Region code;    // execute-only: instruction fetch only
  Region rodata;  // read-only: loads only (constants and the load image of .data/.tdata)
  Region ram;     // loads and stores (.data, .bss, TLS, heap, stack)
  std::uint32_t console_address;  // a byte store (sb) writes one byte to the console
  std::uint32_t exit_address;     // a word store (sw) ends the program
  ExitConvention exit_convention;
  // A word load (lw) takes the next byte of console input (0-255), or -1 at its end; 0: no input.
  std::uint32_t input_address = 0;
  // The machine has the big-integer unit: its bz.* instructions execute (docs/bigint-unit.md);
  // elsewhere they are illegal instructions.
  bool bigint_unit = false;
  // The machine has the vector unit: its vu.* instructions execute (docs/vector-unit.md); elsewhere
  // they are illegal instructions.
  bool vector_unit = false;
};

// The vector unit's memories: WM in bytes (runtime/rvformer_vector.h's VU_WEIGHT_BYTES), which a
// program image may fill, AM in int16 elements (VU_ACTIVATION_ELEMENTS), and the KV cache in slots
// (VU_KV_SLOTS) of a key and a value vector of VU_KV_ELEMENTS elements each.
inline constexpr std::uint32_t kVectorWeightBytes = 384 * 1024;
inline constexpr std::uint32_t kVectorActivationElements = 32 * 1024;
inline constexpr std::uint32_t kVectorLineElements = 16;  // vu.put's line buffer commits a line of AM
inline constexpr std::uint32_t kVectorKvSlots = 4096;
inline constexpr std::uint32_t kVectorKvElements = 32;

// QEMU virt: RAM from 0x80000000, NS16550 UART transmit register at 0x10000000, sifive_test
// finisher at 0x100000. The regions keep the sizes of the rvformer map.
inline constexpr MemoryMap kQemuVirtMap{
    .name = "qemu-virt",
    .code = {.base = 0x8000'0000, .size = 256 * 1024},
    .rodata = {.base = 0x8004'0000, .size = 128 * 1024},
    .ram = {.base = 0x8006'0000, .size = 32 * 1024},
    .console_address = 0x1000'0000,
    .exit_address = 0x0010'0000,
    .exit_convention = ExitConvention::kSifiveTestFinisher,
};

}  // namespace rvformer::program
