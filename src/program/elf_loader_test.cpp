// program/elf_loader_test.cpp — the ELF loader accepts well-formed executables and rejects every
// malformed, truncated, foreign or oversized one with a one-sentence error.
#include "program/elf_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "program/elf_format.h"
#include "program/elf_writer.h"
#include "support/error.h"

namespace rvformer::program {
namespace {

using ::testing::HasSubstr;

constexpr std::uint32_t kCodeBase = kRvformerMap.code.base;

std::vector<std::uint8_t> code_bytes(std::size_t count) {
  std::vector<std::uint8_t> bytes(count);
  for (std::size_t i = 0; i < count; ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return bytes;
}

// Code, read-only data with the load image of .data, zero-filled RAM: what `rvformer cc` makes.
std::vector<ElfSegment> typical_segments() {
  return {
      {.address = kCodeBase, .bytes = code_bytes(64), .flags = elf::kSegmentRead | elf::kSegmentExecute},
      {.address = kRvformerMap.rodata.base, .bytes = {1, 2, 3}, .flags = elf::kSegmentRead},
      {.address = kRvformerMap.ram.base, .bytes = {9}, .memory_size = 16,
       .flags = elf::kSegmentRead | elf::kSegmentWrite},
  };
}

std::vector<std::uint8_t> typical_elf() { return write_elf(kCodeBase + 8, typical_segments()); }

std::string load_error(std::span<const std::uint8_t> bytes, const MemoryMap& map = kRvformerMap) {
  try {
    load_elf(bytes, map, "program.elf");
  } catch (const Error& error) {
    return error.what();
  }
  return "(loaded)";
}

void put_u32(std::vector<std::uint8_t>& bytes, std::size_t offset, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

std::size_t segment_field(int index, std::uint32_t field) {
  return elf::kHeaderSize + index * elf::kProgramHeaderSize + field;
}

TEST(ElfLoader, LoadsEachSegmentIntoItsRegion) {
  ProgramImage image = load_elf(typical_elf(), kRvformerMap, "program.elf");
  EXPECT_EQ(image.entry, kCodeBase + 8);
  EXPECT_EQ(image.code, code_bytes(64));
  EXPECT_EQ(image.rodata, (std::vector<std::uint8_t>{1, 2, 3}));
  std::vector<std::uint8_t> ram(16, 0);
  ram[0] = 9;
  EXPECT_EQ(image.ram, ram);
  EXPECT_EQ(image.map.name, "rvformer");
}

TEST(ElfLoader, PadsCodeToWholeWords) {
  std::vector<ElfSegment> segments = {{.address = kCodeBase, .bytes = code_bytes(6)}};
  EXPECT_EQ(load_elf(write_elf(kCodeBase, segments), kRvformerMap, "p").code.size(), 8u);
}

TEST(ElfLoader, PlacesSegmentsForTheQemuVirtMap) {
  std::vector<ElfSegment> segments = {{.address = kQemuVirtMap.code.base, .bytes = code_bytes(8)}};
  std::vector<std::uint8_t> elf = write_elf(kQemuVirtMap.code.base, segments);
  EXPECT_EQ(load_elf(elf, kQemuVirtMap, "p").code, code_bytes(8));
  EXPECT_THAT(load_error(elf), HasSubstr("lies outside the code ROM, read-only data and RAM"));
}

TEST(ElfLoader, RejectsWhatIsNotAnElfFile) {
  EXPECT_EQ(load_error({}), "program.elf: not an ELF file (no ELF magic number)");
  std::vector<std::uint8_t> text = {'#', '!', '/', 'b', 'i', 'n'};
  EXPECT_EQ(load_error(text), "program.elf: not an ELF file (no ELF magic number)");
}

TEST(ElfLoader, RejectsTruncatedHeader) {
  std::vector<std::uint8_t> elf = typical_elf();
  elf.resize(30);
  EXPECT_EQ(load_error(elf), "program.elf: truncated ELF header (30 bytes, the header needs 52)");
}

TEST(ElfLoader, Rejects64BitElf) {
  std::vector<std::uint8_t> elf = typical_elf();
  elf[elf::header::kClass] = 2;
  EXPECT_EQ(load_error(elf), "program.elf: not a 32-bit ELF (class 2)");
  elf.resize(20);  // the identification bytes are enough to tell
  EXPECT_EQ(load_error(elf), "program.elf: not a 32-bit ELF (class 2)");
  elf.resize(10);
  EXPECT_EQ(load_error(elf), "program.elf: truncated ELF header (10 bytes, the header needs 52)");
}

TEST(ElfLoader, RejectsBigEndianElf) {
  std::vector<std::uint8_t> elf = typical_elf();
  elf[elf::header::kData] = 2;
  EXPECT_EQ(load_error(elf), "program.elf: not a little-endian ELF (data encoding 2)");
}

TEST(ElfLoader, RejectsObjectFilesAndOtherMachines) {
  std::vector<std::uint8_t> object = typical_elf();
  object[elf::header::kType] = 1;
  EXPECT_THAT(load_error(object), HasSubstr("not an executable ELF (type 1"));
  std::vector<std::uint8_t> x86 = typical_elf();
  x86[elf::header::kMachine] = 62;
  EXPECT_EQ(load_error(x86), "program.elf: not a RISC-V program (ELF machine 62)");
}

TEST(ElfLoader, RejectsUnexpectedVersionsAndRecordSizes) {
  std::vector<std::uint8_t> version = typical_elf();
  version[elf::header::kIdentVersion] = 0;
  EXPECT_EQ(load_error(version), "program.elf: unsupported ELF version 0");
  std::vector<std::uint8_t> header_size = typical_elf();
  header_size[elf::header::kHeaderSize] = 64;
  EXPECT_EQ(load_error(header_size), "program.elf: ELF header size is 64, expected 52");
  std::vector<std::uint8_t> entry_size = typical_elf();
  entry_size[elf::header::kProgramHeaderEntrySize] = 56;
  EXPECT_EQ(load_error(entry_size), "program.elf: program header size is 56, expected 32");
}

TEST(ElfLoader, RejectsCompressedInstructions) {
  std::vector<std::uint8_t> elf = write_elf(kCodeBase, typical_segments(), elf::kFlagRvc);
  EXPECT_THAT(load_error(elf), HasSubstr("program.elf: uses compressed instructions"));
}

TEST(ElfLoader, RejectsHardwareFloatAbis) {
  for (std::uint32_t flags : {0x2u, 0x4u, 0x6u}) {
    std::vector<std::uint8_t> elf = write_elf(kCodeBase, typical_segments(), flags);
    EXPECT_THAT(load_error(elf), HasSubstr("uses a hardware floating-point ABI"));
  }
}

TEST(ElfLoader, RejectsMissingOrTruncatedProgramHeaders) {
  EXPECT_EQ(load_error(write_elf(kCodeBase, {})), "program.elf: has no program headers");
  std::vector<std::uint8_t> elf = typical_elf();
  elf.resize(elf::kHeaderSize + 40);
  EXPECT_EQ(load_error(elf), "program.elf: program header table (3 entries at offset 52) extends "
                             "past the end of the file (92 bytes)");
}

TEST(ElfLoader, RejectsSegmentsPastTheEndOfTheFile) {
  std::vector<std::uint8_t> elf = typical_elf();
  put_u32(elf, segment_field(0, elf::segment::kOffset), 0xFFFFFFF0);
  EXPECT_THAT(load_error(elf), HasSubstr("segment 0 (64 bytes at file offset 4294967280) extends "
                                         "past the end of the file"));
}

TEST(ElfLoader, RejectsMoreFileBytesThanMemoryBytes) {
  std::vector<std::uint8_t> elf = typical_elf();
  put_u32(elf, segment_field(1, elf::segment::kMemorySize), 2);
  EXPECT_EQ(load_error(elf),
            "program.elf: segment 1 has more bytes in the file (3) than in memory (2)");
}

TEST(ElfLoader, RejectsSegmentsOutsideTheMemoryMap) {
  for (std::uint32_t address : {0x0u, 0x800u, 0x00021000u, 0x00140000u, 0x80000000u}) {
    std::vector<ElfSegment> segments = typical_segments();
    segments[1].address = address;
    EXPECT_THAT(load_error(write_elf(kCodeBase, segments)),
                HasSubstr("segment 1 (0x" + fmt::format("{:08x}", address) +
                          ", 3 bytes) lies outside the code ROM, read-only data and RAM"));
  }
}

TEST(ElfLoader, RejectsImagesLargerThanTheirRegion) {
  std::vector<ElfSegment> code = {{.address = kCodeBase, .bytes = code_bytes(300000)}};
  EXPECT_EQ(load_error(write_elf(kCodeBase, code)),
            "program.elf: code is 300000 bytes, larger than the 262144-byte code ROM at 0x00100000");
  std::vector<ElfSegment> rodata = typical_segments();
  rodata[1].address = kRvformerMap.rodata.base + 0x1F000;
  rodata[1].memory_size = 0x2000;
  EXPECT_THAT(load_error(write_elf(kCodeBase, rodata)),
              HasSubstr("read-only data is 135168 bytes, larger than the 131072-byte read-only "
                        "data region"));
  std::vector<ElfSegment> ram = typical_segments();
  ram[2].memory_size = 0xFFFFFFF0;  // would wrap around 2^32
  EXPECT_THAT(load_error(write_elf(kCodeBase, ram)),
              HasSubstr("initialised RAM is 4294967280 bytes, larger than the 32768-byte RAM"));
}

TEST(ElfLoader, RejectsOverlappingSegments) {
  std::vector<ElfSegment> segments = typical_segments();
  segments.push_back({.address = kCodeBase + 60, .bytes = {1, 2, 3, 4, 5, 6, 7, 8}});
  EXPECT_EQ(load_error(write_elf(kCodeBase, segments)),
            "program.elf: segments 0 and 3 overlap at 0x0010003c");
}

TEST(ElfLoader, RejectsBadEntryPoints) {
  EXPECT_EQ(load_error(write_elf(0x1000, typical_segments())),
            "program.elf: entry point 0x00001000 is outside the code ROM (0x00100000-0x0013ffff)");
  EXPECT_EQ(load_error(write_elf(kCodeBase + 2, typical_segments())),
            "program.elf: entry point 0x00100002 is not 4-byte aligned");
  EXPECT_EQ(load_error(write_elf(kCodeBase + 64, typical_segments())),
            "program.elf: entry point 0x00100040 lies past the end of the program's 64 bytes of "
            "code");
}

TEST(ElfLoader, IgnoresNonLoadableAndEmptySegments) {
  std::vector<ElfSegment> segments = typical_segments();
  segments.push_back({.address = 0x12345678, .bytes = {}});  // empty: nothing to place
  std::vector<std::uint8_t> elf = write_elf(kCodeBase, segments);
  put_u32(elf, segment_field(1, elf::segment::kType), 7);  // PT_TLS
  put_u32(elf, segment_field(1, elf::segment::kPhysicalAddress), 0x00000010);
  ProgramImage image = load_elf(elf, kRvformerMap, "p");
  EXPECT_TRUE(image.rodata.empty());
}

// Every prefix and many random corruptions of a valid file either load or give an rvformer::Error.
TEST(ElfLoader, SurvivesTruncationAndCorruption) {
  const std::vector<std::uint8_t> valid = typical_elf();
  for (std::size_t length = 0; length < valid.size(); ++length) {
    std::span<const std::uint8_t> prefix(valid.data(), length);
    EXPECT_NE(load_error(prefix), "(loaded)") << length;
  }
  std::mt19937 random(12345);
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<std::uint8_t> corrupted = valid;
    int flips = 1 + static_cast<int>(random() % 4);
    for (int i = 0; i < flips; ++i) {
      std::size_t at = random() % std::min<std::size_t>(corrupted.size(), 160);
      corrupted[at] = static_cast<std::uint8_t>(random());
    }
    load_error(corrupted);
  }
}

TEST(ElfLoader, NamesTheFileItCannotRead) {
  EXPECT_THROW(load_elf_file("/nonexistent/program.elf", kRvformerMap), Error);
  for (const char* path : {"/tmp", "/dev/zero"}) {
    try {
      load_elf_file(path, kRvformerMap);
      ADD_FAILURE() << path;
    } catch (const Error& error) {
      EXPECT_EQ(error.what(), std::string(path) + ": not a regular file");
    }
  }
}

}  // namespace
}  // namespace rvformer::program
