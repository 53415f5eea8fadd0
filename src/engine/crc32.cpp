// engine/crc32.cpp — see crc32.h. Slicing-by-4 tables: state files reach tens of megabytes.
#include "engine/crc32.h"

#include <array>

namespace rvformer::engine {

namespace {

using Tables = std::array<std::array<std::uint32_t, 256>, 4>;

constexpr Tables make_tables() {
  Tables tables{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? 0xedb88320u : 0u);
    tables[0][byte] = crc;
  }
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    for (std::size_t slice = 1; slice < 4; ++slice) {
      const std::uint32_t previous = tables[slice - 1][byte];
      tables[slice][byte] = (previous >> 8) ^ tables[0][previous & 0xffu];
    }
  }
  return tables;
}

constexpr Tables tables = make_tables();

}  // namespace

std::uint32_t crc32(std::span<const std::uint8_t> bytes, std::uint32_t crc) {
  crc = ~crc;
  std::size_t i = 0;
  for (; i + 4 <= bytes.size(); i += 4) {
    crc ^= static_cast<std::uint32_t>(bytes[i]) | static_cast<std::uint32_t>(bytes[i + 1]) << 8 |
           static_cast<std::uint32_t>(bytes[i + 2]) << 16 | static_cast<std::uint32_t>(bytes[i + 3]) << 24;
    crc = tables[3][crc & 0xffu] ^ tables[2][(crc >> 8) & 0xffu] ^ tables[1][(crc >> 16) & 0xffu] ^
          tables[0][crc >> 24];
  }
  for (; i < bytes.size(); ++i) crc = (crc >> 8) ^ tables[0][(crc ^ bytes[i]) & 0xffu];
  return ~crc;
}

}  // namespace rvformer::engine
