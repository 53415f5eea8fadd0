// engine/crc32.h — CRC-32 (IEEE 802.3, the zlib polynomial) for state-file payloads.
#pragma once

#include <cstdint>
#include <span>

namespace rvformer::engine {

// Continues a CRC over `bytes`; start with crc = 0.
std::uint32_t crc32(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0);

}  // namespace rvformer::engine
