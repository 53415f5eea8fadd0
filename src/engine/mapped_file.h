// engine/mapped_file.h — a read-only memory map of a whole file (checkpoint shards), unmapped when
// the last owner lets go.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

namespace rvformer::engine {

class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path);  // throws rvformer::Error
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace rvformer::engine
