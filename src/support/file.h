// support/file.h — whole-file reads, crash-safe writes (temporary file + fsync + rename), and the
// checks made of the files a user names before any long work, so that a directory, a missing file
// or a missing directory is reported at once, naming the user's path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace rvformer {

// Throw rvformer::Error "PATH: no such file", "PATH: is a directory" and the like (see file.cpp).
std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path);
std::string read_file_text(const std::filesystem::path& path);

// Writes `bytes` to `path` atomically: readers see either the old file or the complete new one.
void write_file_atomic(const std::filesystem::path& path, std::span<const std::uint8_t> bytes);
void write_file_atomic(const std::filesystem::path& path, const std::string& text);

// An existing regular file that can be read: else "PATH: no such file", "PATH: is a directory",
// "PATH: not a regular file" or "PATH: cannot be read (REASON)".
void check_input_file(const std::filesystem::path& path);
// A path a file can be written to: an existing regular file, or a new name in an existing,
// writable directory. Else "cannot write PATH: it is a directory", "...: no such directory DIR",
// "...: DIR is not a directory" or "...: DIR is not writable".
void check_output_file(const std::filesystem::path& path);
// An existing directory: else "PATH: no such directory" or "PATH: not a directory".
void check_input_directory(const std::filesystem::path& path);
// A path a directory can be made at, parents included: nothing on the way is a file that is not a
// directory. Else "cannot write PATH: FILE is not a directory".
void check_output_directory(const std::filesystem::path& path);

}  // namespace rvformer
