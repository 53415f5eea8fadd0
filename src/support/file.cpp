// support/file.cpp — see file.h.
#include "support/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "support/error.h"

namespace rvformer {

std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {}: {}", path.string(), std::strerror(errno));
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("cannot read {}", path.string());
  return bytes;
}

std::string read_file_text(const std::filesystem::path& path) {
  auto bytes = read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

void write_file_atomic(const std::filesystem::path& path, std::span<const std::uint8_t> bytes) {
  auto temporary = path;
  temporary += fmt::format(".tmp.{}", ::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail("cannot create {}: {}", temporary.string(), std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      fail("cannot write {}: {}", temporary.string(), std::strerror(saved));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(temporary.c_str());
    fail("cannot flush {}: {}", temporary.string(), std::strerror(errno));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(temporary.c_str());
    fail("cannot rename {} to {}: {}", temporary.string(), path.string(), std::strerror(saved));
  }
}

void write_file_atomic(const std::filesystem::path& path, const std::string& text) {
  write_file_atomic(path, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

}  // namespace rvformer
