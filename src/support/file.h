// support/file.h — whole-file reads and crash-safe writes (temporary file + fsync + rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace rvformer {

std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path);
std::string read_file_text(const std::filesystem::path& path);

// Writes `bytes` to `path` atomically: readers see either the old file or the complete new one.
void write_file_atomic(const std::filesystem::path& path, std::span<const std::uint8_t> bytes);
void write_file_atomic(const std::filesystem::path& path, const std::string& text);

}  // namespace rvformer
