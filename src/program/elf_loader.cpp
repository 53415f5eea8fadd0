// program/elf_loader.cpp — ELF32 validation and placement of loadable segments into memory regions.
#include "program/elf_loader.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "program/elf_format.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::program {
namespace {

std::uint16_t read_u16(std::span<const std::uint8_t> bytes, std::uint64_t offset) {
  return static_cast<std::uint16_t>(bytes[offset] | bytes[offset + 1] << 8);
}

std::uint32_t read_u32(std::span<const std::uint8_t> bytes, std::uint64_t offset) {
  return static_cast<std::uint32_t>(read_u16(bytes, offset)) |
         static_cast<std::uint32_t>(read_u16(bytes, offset + 2)) << 16;
}

struct Segment {
  std::uint32_t index;
  std::uint32_t file_offset;
  std::uint32_t file_size;
  std::uint32_t address;  // physical (load) address
  std::uint32_t memory_size;
};

// One memory region the loader fills, with the words its messages use for it.
struct Destination {
  Region region;
  const char* region_name;   // "the 262144-byte code ROM"
  const char* content_name;  // "code is 300000 bytes"
  std::vector<std::uint8_t> ProgramImage::*bytes;
};

class ElfLoader {
 public:
  ElfLoader(std::span<const std::uint8_t> bytes, const MemoryMap& map, std::string_view name)
      : bytes_(bytes), map_(map), name_(name) {}

  ProgramImage load() {
    check_identification();
    check_header();
    std::vector<Segment> segments = read_load_segments();
    check_no_overlap(segments);
    ProgramImage image;
    image.map = map_;
    for (const Segment& segment : segments) place(segment, image);
    image.code.resize((image.code.size() + 3) / 4 * 4);
    image.entry = read_u32(bytes_, elf::header::kEntry);
    check_entry(image);
    return image;
  }

 private:
  template <typename... Args>
  [[noreturn]] void reject(fmt::format_string<Args...> format, Args&&... args) const {
    fail("{}: {}", name_, fmt::format(format, std::forward<Args>(args)...));
  }

  void check_identification() const {
    if (bytes_.size() < 4 || std::memcmp(bytes_.data(), elf::kMagic, 4) != 0) {
      reject("not an ELF file (no ELF magic number)");
    }
    if (bytes_.size() < elf::kIdentificationSize) reject_truncated_header();
    if (std::uint8_t ident_class = bytes_[elf::header::kClass]; ident_class != elf::kClass32) {
      reject("not a 32-bit ELF (class {})", ident_class);
    }
    if (std::uint8_t data = bytes_[elf::header::kData]; data != elf::kLittleEndian) {
      reject("not a little-endian ELF (data encoding {})", data);
    }
    if (std::uint8_t version = bytes_[elf::header::kIdentVersion];
        version != elf::kCurrentVersion) {
      reject("unsupported ELF version {}", version);
    }
    if (bytes_.size() < elf::kHeaderSize) reject_truncated_header();
  }

  [[noreturn]] void reject_truncated_header() const {
    reject("truncated ELF header ({} bytes, the header needs {})", bytes_.size(),
           elf::kHeaderSize);
  }

  void check_header() const {
    if (std::uint16_t type = read_u16(bytes_, elf::header::kType); type != elf::kTypeExecutable) {
      reject("not an executable ELF (type {}; object files and shared libraries cannot run)",
             type);
    }
    if (std::uint16_t machine = read_u16(bytes_, elf::header::kMachine);
        machine != elf::kMachineRiscv) {
      reject("not a RISC-V program (ELF machine {})", machine);
    }
    if (std::uint32_t version = read_u32(bytes_, elf::header::kVersion);
        version != elf::kCurrentVersion) {
      reject("unsupported ELF version {}", version);
    }
    if (std::uint16_t size = read_u16(bytes_, elf::header::kHeaderSize);
        size != elf::kHeaderSize) {
      reject("ELF header size is {}, expected {}", size, elf::kHeaderSize);
    }
    if (std::uint16_t size = read_u16(bytes_, elf::header::kProgramHeaderEntrySize);
        size != elf::kProgramHeaderSize) {
      reject("program header size is {}, expected {}", size, elf::kProgramHeaderSize);
    }
    std::uint32_t flags = read_u32(bytes_, elf::header::kFlags);
    if (flags & elf::kFlagRvc) {
      reject("uses compressed instructions (ELF flag RVC), which this machine does not have; "
             "compile with -march=rv32im or rv32im_zba");
    }
    if (flags & elf::kFlagFloatAbiMask) {
      reject("uses a hardware floating-point ABI (ELF flags 0x{:x}), which this machine does not "
             "have; compile with -mabi=ilp32", flags);
    }
  }

  std::vector<Segment> read_load_segments() const {
    std::uint64_t table_offset = read_u32(bytes_, elf::header::kProgramHeaderOffset);
    std::uint32_t count = read_u16(bytes_, elf::header::kProgramHeaderCount);
    if (count == 0) reject("has no program headers");
    if (table_offset + std::uint64_t{count} * elf::kProgramHeaderSize > bytes_.size()) {
      reject("program header table ({} entries at offset {}) extends past the end of the file "
             "({} bytes)", count, table_offset, bytes_.size());
    }
    std::vector<Segment> segments;
    for (std::uint32_t index = 0; index < count; ++index) {
      std::uint64_t at = table_offset + std::uint64_t{index} * elf::kProgramHeaderSize;
      if (read_u32(bytes_, at + elf::segment::kType) != elf::kSegmentLoad) continue;
      Segment segment{
          .index = index,
          .file_offset = read_u32(bytes_, at + elf::segment::kOffset),
          .file_size = read_u32(bytes_, at + elf::segment::kFileSize),
          .address = read_u32(bytes_, at + elf::segment::kPhysicalAddress),
          .memory_size = read_u32(bytes_, at + elf::segment::kMemorySize),
      };
      check_segment(segment);
      if (segment.memory_size > 0) segments.push_back(segment);
    }
    return segments;
  }

  // Address arithmetic is done in 64 bits, so a segment running past 2^32 is simply too large for
  // its region (or outside every region).
  void check_segment(const Segment& segment) const {
    if (std::uint64_t{segment.file_offset} + segment.file_size > bytes_.size()) {
      reject("segment {} ({} bytes at file offset {}) extends past the end of the file ({} bytes)",
             segment.index, segment.file_size, segment.file_offset, bytes_.size());
    }
    if (segment.file_size > segment.memory_size) {
      reject("segment {} has more bytes in the file ({}) than in memory ({})", segment.index,
             segment.file_size, segment.memory_size);
    }
  }

  void check_no_overlap(std::vector<Segment>& segments) const {
    std::sort(segments.begin(), segments.end(),
              [](const Segment& a, const Segment& b) { return a.address < b.address; });
    for (std::size_t i = 1; i < segments.size(); ++i) {
      const Segment& previous = segments[i - 1];
      if (std::uint64_t{previous.address} + previous.memory_size > segments[i].address) {
        reject("segments {} and {} overlap at 0x{:08x}", previous.index, segments[i].index,
               segments[i].address);
      }
    }
  }

  std::vector<Destination> destinations() const {
    return {
        {map_.code, "code ROM", "code", &ProgramImage::code},
        {map_.rodata, "read-only data region", "read-only data", &ProgramImage::rodata},
        {map_.ram, "RAM", "initialised RAM", &ProgramImage::ram},
    };
  }

  void place(const Segment& segment, ProgramImage& image) const {
    for (const Destination& destination : destinations()) {
      const Region& region = destination.region;
      if (!region.contains(segment.address)) continue;
      std::uint64_t extent = std::uint64_t{segment.address} - region.base + segment.memory_size;
      if (extent > region.size) {
        reject("{} is {} bytes, larger than the {}-byte {} at 0x{:08x}", destination.content_name,
               extent, region.size, destination.region_name, region.base);
      }
      std::vector<std::uint8_t>& bytes = image.*destination.bytes;
      bytes.resize(std::max<std::size_t>(bytes.size(), extent));
      std::uint32_t start = segment.address - region.base;
      std::copy_n(bytes_.begin() + segment.file_offset, segment.file_size, bytes.begin() + start);
      return;
    }
    reject("segment {} (0x{:08x}, {} bytes) lies outside the code ROM, read-only data and RAM of "
           "the {} memory map", segment.index, segment.address, segment.memory_size, map_.name);
  }

  void check_entry(const ProgramImage& image) const {
    if (!map_.code.contains(image.entry)) {
      reject("entry point 0x{:08x} is outside the code ROM (0x{:08x}-0x{:08x})", image.entry,
             map_.code.base, map_.code.end() - 1);
    }
    if (image.entry % 4 != 0) reject("entry point 0x{:08x} is not 4-byte aligned", image.entry);
    if (image.entry - map_.code.base >= image.code.size()) {
      reject("entry point 0x{:08x} lies past the end of the program's {} bytes of code",
             image.entry, image.code.size());
    }
  }

  std::span<const std::uint8_t> bytes_;
  const MemoryMap& map_;
  std::string_view name_;
};

}  // namespace

ProgramImage load_elf(std::span<const std::uint8_t> bytes, const MemoryMap& map,
                      std::string_view name) {
  return ElfLoader(bytes, map, name).load();
}

ProgramImage load_elf_file(const std::filesystem::path& path, const MemoryMap& map) {
  // Directories and devices would make reading fail or never end.
  std::error_code error;
  if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error)) {
    fail("{}: not a regular file", path.string());
  }
  std::vector<std::uint8_t> bytes = read_file_bytes(path);
  return load_elf(bytes, map, path.string());
}

}  // namespace rvformer::program
