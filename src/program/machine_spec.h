// program/machine_spec.h — the sizes of the machine's memories, from which everything else derives:
// the memory map programs are linked for, the circuit's memory banks, the trace vocabulary's jump
// payloads, the driver's loading and the verifier's state reader. The default keeps the rvformer
// map (256 KB code, 128 KB read-only data, 32 KB RAM); "large" gives 512 KB of code and 128 KB of
// RAM; "bigint" the default memories with the big-integer unit (docs/bigint-unit.md); "vector" the
// default memories with the vector unit (docs/vector-unit.md). The emulator-only map "emulator-1m"
// is listed here too (docs/memory-map.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "program/memory_map.h"

namespace rvformer::program {

struct MachineSpec {
  std::string_view name;
  std::uint32_t code_bytes;    // a power of two, 64 KB to 512 KB
  std::uint32_t rodata_bytes;  // a multiple of 4 KB, at most 128 KB
  std::uint32_t ram_bytes;     // a power of two, 8 KB to 128 KB
  bool bigint_unit = false;    // the big-integer unit and its memories
  // The vector unit's weight memory in bytes (kVectorWeightBytes), 0 for a machine without the unit.
  std::uint32_t vector_weight_bytes = 0;

  // Code from 1 MB, read-only data from 4 KB (below it: the null-pointer guard), RAM at the top of
  // the address space and the MMIO page 32 KB below RAM.
  constexpr MemoryMap memory_map() const {
    std::uint32_t ram_base = static_cast<std::uint32_t>((std::uint64_t{1} << 32) - ram_bytes);
    std::uint32_t mmio = ram_base - 0x8000;
    return MemoryMap{.name = name,
                     .code = {.base = 0x0010'0000, .size = code_bytes},
                     .rodata = {.base = 0x0000'1000, .size = rodata_bytes},
                     .ram = {.base = ram_base, .size = ram_bytes},
                     .console_address = mmio,
                     .exit_address = mmio + 4,
                     .exit_convention = ExitConvention::kExitCode,
                     .input_address = mmio + 8,
                     .bigint_unit = bigint_unit,
                     .vector_unit = vector_weight_bytes != 0};
  }
  // Bits of a code word index (the code ROM holds code_bytes / 4 words).
  constexpr int code_word_bits() const {
    int bits = 0;
    while ((std::uint32_t{1} << bits) < code_bytes / 4) ++bits;
    return bits;
  }
};

inline constexpr MachineSpec kDefaultMachine{"rvformer", 256 * 1024, 128 * 1024, 32 * 1024};
inline constexpr MachineSpec kLargeMachine{"rvformer-large", 512 * 1024, 128 * 1024, 128 * 1024};
inline constexpr MachineSpec kBigintMachine{"rvformer-bigint", 256 * 1024, 128 * 1024, 32 * 1024, true};
inline constexpr MachineSpec kVectorMachine{"rvformer-vector", 256 * 1024, 128 * 1024, 32 * 1024, false, kVectorWeightBytes};
inline constexpr MachineSpec kMachineSpecs[] = {kDefaultMachine, kLargeMachine, kBigintMachine, kVectorMachine};

// The spec called `name`, or nothing.
constexpr std::optional<MachineSpec> find_machine_spec(std::string_view name) {
  for (const MachineSpec& spec : kMachineSpecs)
    if (spec.name == name) return spec;
  return std::nullopt;
}

// The map of the rvformer CPU (the golden emulator's default): 0x00000000-0x00000FFF stays unmapped
// so that null-pointer accesses fault.
inline constexpr MemoryMap kRvformerMap = kDefaultMachine.memory_map();
static_assert(kRvformerMap.ram.base == 0xFFFF'8000 && kRvformerMap.console_address == 0xFFFF'0000);

// The map of the machine with the vector unit, the story firmware's vector build's.
inline constexpr MemoryMap kVectorMap = kVectorMachine.memory_map();

// An emulator-only map with 1 MB of RAM for programs whose data outgrows the machines, such as the
// story program's quantised model and KV cache (docs/story.md). It is a MemoryMap and not a
// MachineSpec because the circuit's memory banks stop at 128 KB of RAM; nothing compiles it into
// weights. Code and read-only data are where the rvformer map has them, the MMIO page 32 KB below
// RAM as in the machines' maps.
inline constexpr MemoryMap kEmulator1MbMap{.name = "emulator-1m",
                                           .code = kRvformerMap.code,
                                           .rodata = kRvformerMap.rodata,
                                           .ram = {.base = 0xFFF0'0000, .size = 1024 * 1024},
                                           .console_address = 0xFFEF'8000,
                                           .exit_address = 0xFFEF'8004,
                                           .exit_convention = ExitConvention::kExitCode,
                                           .input_address = 0xFFEF'8008};

inline constexpr MemoryMap kMemoryMaps[] = {kRvformerMap, kLargeMachine.memory_map(), kBigintMachine.memory_map(),
                                             kVectorMap, kQemuVirtMap, kEmulator1MbMap};

// The map called `name`, or nothing.
constexpr std::optional<MemoryMap> find_memory_map(std::string_view name) {
  for (const MemoryMap& map : kMemoryMaps)
    if (map.name == name) return map;
  return std::nullopt;
}

}  // namespace rvformer::program
