// engine/atomic_file_writer.cpp — see atomic_file_writer.h.
#include "engine/atomic_file_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "support/error.h"

namespace rvformer::engine {

namespace {

constexpr std::size_t buffer_capacity = std::size_t{4} << 20;
constexpr std::size_t hole_block = std::size_t{64} << 10;

bool all_zero(std::span<const std::uint8_t> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t byte) { return byte == 0; });
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path) : path_(std::move(path)) {
  temporary_ = path_;
  temporary_ += fmt::format(".tmp.{}", ::getpid());
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("cannot create {}: {}", temporary_.string(), std::strerror(errno));
  buffer_.reserve(buffer_capacity);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temporary_.c_str());
  }
}

void AtomicFileWriter::write(std::span<const std::uint8_t> bytes) {
  while (!bytes.empty()) {
    const std::size_t take = std::min(bytes.size(), buffer_capacity - buffer_.size());
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
    bytes = bytes.subspan(take);
    if (buffer_.size() == buffer_capacity) flush();
  }
}

void AtomicFileWriter::flush() {
  for (std::size_t start = 0; start < buffer_.size(); start += hole_block) {
    const auto block = std::span(buffer_).subspan(start, std::min(hole_block, buffer_.size() - start));
    if (all_zero(block)) continue;
    std::size_t done = 0;
    while (done < block.size()) {
      const ssize_t n = ::pwrite(fd_, block.data() + done, block.size() - done,
                                 static_cast<off_t>(flushed_ + start + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot write {}: {}", temporary_.string(), std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
  }
  flushed_ += buffer_.size();
  buffer_.clear();
}

void AtomicFileWriter::commit() {
  flush();
  if (::ftruncate(fd_, static_cast<off_t>(flushed_)) != 0 || ::fsync(fd_) != 0) {
    fail("cannot flush {}: {}", temporary_.string(), std::strerror(errno));
  }
  ::close(fd_);
  fd_ = -1;
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary_.c_str());
    fail("cannot rename {} to {}: {}", temporary_.string(), path_.string(), std::strerror(saved));
  }
}

}  // namespace rvformer::engine
