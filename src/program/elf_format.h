// program/elf_format.h — the ELF32 constants and record sizes shared by the loader and the builder.
#pragma once

#include <cstdint>

namespace rvformer::program::elf {

inline constexpr std::uint8_t kMagic[4] = {0x7F, 'E', 'L', 'F'};
inline constexpr std::uint8_t kClass32 = 1;
inline constexpr std::uint8_t kLittleEndian = 1;
inline constexpr std::uint8_t kCurrentVersion = 1;
inline constexpr std::uint16_t kTypeExecutable = 2;
inline constexpr std::uint16_t kMachineRiscv = 243;

inline constexpr std::uint32_t kIdentificationSize = 16;  // e_ident
inline constexpr std::uint32_t kHeaderSize = 52;
inline constexpr std::uint32_t kProgramHeaderSize = 32;

inline constexpr std::uint32_t kSegmentLoad = 1;
inline constexpr std::uint32_t kSegmentExecute = 1;  // p_flags bits
inline constexpr std::uint32_t kSegmentWrite = 2;
inline constexpr std::uint32_t kSegmentRead = 4;

inline constexpr std::uint32_t kFlagRvc = 0x1;             // EF_RISCV_RVC
inline constexpr std::uint32_t kFlagFloatAbiMask = 0x6;    // EF_RISCV_FLOAT_ABI

// Byte offsets of the ELF header fields the loader reads.
namespace header {
inline constexpr std::uint32_t kClass = 4, kData = 5, kIdentVersion = 6;
inline constexpr std::uint32_t kType = 16, kMachine = 18, kVersion = 20, kEntry = 24;
inline constexpr std::uint32_t kProgramHeaderOffset = 28, kFlags = 36, kHeaderSize = 40;
inline constexpr std::uint32_t kProgramHeaderEntrySize = 42, kProgramHeaderCount = 44;
}  // namespace header

// Byte offsets of the program header fields.
namespace segment {
inline constexpr std::uint32_t kType = 0, kOffset = 4, kVirtualAddress = 8, kPhysicalAddress = 12;
inline constexpr std::uint32_t kFileSize = 16, kMemorySize = 20, kFlags = 24, kAlign = 28;
}  // namespace segment

}  // namespace rvformer::program::elf
