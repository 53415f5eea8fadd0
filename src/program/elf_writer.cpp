// program/elf_writer.cpp — see elf_writer.h.
#include "program/elf_writer.h"

#include <algorithm>

#include "program/elf_format.h"

namespace rvformer::program {
namespace {

void put_u16(std::vector<std::uint8_t>& out, std::uint32_t offset, std::uint16_t value) {
  out[offset] = static_cast<std::uint8_t>(value);
  out[offset + 1] = static_cast<std::uint8_t>(value >> 8);
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t offset, std::uint32_t value) {
  put_u16(out, offset, static_cast<std::uint16_t>(value));
  put_u16(out, offset + 2, static_cast<std::uint16_t>(value >> 16));
}

}  // namespace

std::vector<std::uint8_t> write_elf(std::uint32_t entry, std::span<const ElfSegment> segments,
                                    std::uint32_t elf_flags) {
  auto count = static_cast<std::uint32_t>(segments.size());
  std::uint32_t data_offset = elf::kHeaderSize + count * elf::kProgramHeaderSize;
  std::vector<std::uint8_t> out(data_offset);

  std::copy_n(elf::kMagic, 4, out.begin());
  out[elf::header::kClass] = elf::kClass32;
  out[elf::header::kData] = elf::kLittleEndian;
  out[elf::header::kIdentVersion] = elf::kCurrentVersion;
  put_u16(out, elf::header::kType, elf::kTypeExecutable);
  put_u16(out, elf::header::kMachine, elf::kMachineRiscv);
  put_u32(out, elf::header::kVersion, elf::kCurrentVersion);
  put_u32(out, elf::header::kEntry, entry);
  put_u32(out, elf::header::kProgramHeaderOffset, elf::kHeaderSize);
  put_u32(out, elf::header::kFlags, elf_flags);
  put_u16(out, elf::header::kHeaderSize, elf::kHeaderSize);
  put_u16(out, elf::header::kProgramHeaderEntrySize, elf::kProgramHeaderSize);
  put_u16(out, elf::header::kProgramHeaderCount, static_cast<std::uint16_t>(count));

  for (std::uint32_t index = 0; index < count; ++index) {
    const ElfSegment& segment = segments[index];
    std::uint32_t at = elf::kHeaderSize + index * elf::kProgramHeaderSize;
    auto file_size = static_cast<std::uint32_t>(segment.bytes.size());
    put_u32(out, at + elf::segment::kType, elf::kSegmentLoad);
    put_u32(out, at + elf::segment::kOffset, static_cast<std::uint32_t>(out.size()));
    put_u32(out, at + elf::segment::kVirtualAddress, segment.address);
    put_u32(out, at + elf::segment::kPhysicalAddress, segment.address);
    put_u32(out, at + elf::segment::kFileSize, file_size);
    put_u32(out, at + elf::segment::kMemorySize, std::max(segment.memory_size, file_size));
    put_u32(out, at + elf::segment::kFlags, segment.flags);
    put_u32(out, at + elf::segment::kAlign, 4);
    out.insert(out.end(), segment.bytes.begin(), segment.bytes.end());
  }
  return out;
}

}  // namespace rvformer::program
