// engine/atomic_file_writer.h — streams a large file (a checkpoint) to disk atomically: it is written
// under a temporary name, flushed and renamed into place on commit(), and removed if never committed.
// Blocks that are entirely zero are skipped and left as holes, so mostly-zero checkpoints write
// quickly and take little disk; readers see zeros there as usual.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace rvformer::engine {

class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);  // throws rvformer::Error
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::span<const std::uint8_t> bytes);
  void commit();

 private:
  void flush();

  std::filesystem::path path_;
  std::filesystem::path temporary_;
  int fd_ = -1;
  std::vector<std::uint8_t> buffer_;
  std::uint64_t flushed_ = 0;  // bytes before buffer_
};

}  // namespace rvformer::engine
