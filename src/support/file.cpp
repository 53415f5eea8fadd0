// support/file.cpp — see file.h.
#include "support/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/error.h"

namespace rvformer {
namespace fs = std::filesystem;

namespace {

// The file's type, following links; fs::file_type::not_found when there is nothing (or a dangling link).
fs::file_type type_of(const fs::path& path) {
  std::error_code error;
  return fs::status(path, error).type();
}

// The directory a new file at `path` goes into.
fs::path directory_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

}  // namespace

void check_input_file(const fs::path& path) {
  switch (type_of(path)) {
    case fs::file_type::regular: break;
    case fs::file_type::directory: fail("{}: is a directory", path.string());
    case fs::file_type::not_found: fail("{}: no such file", path.string());
    default: fail("{}: not a regular file", path.string());
  }
  if (::access(path.c_str(), R_OK) != 0) fail("{}: cannot be read ({})", path.string(), std::strerror(errno));
}

void check_output_file(const fs::path& path) {
  const fs::file_type type = type_of(path);
  if (type == fs::file_type::directory) fail("cannot write {}: it is a directory", path.string());
  if (type != fs::file_type::not_found && type != fs::file_type::regular)
    fail("cannot write {}: not a regular file", path.string());
  const fs::path directory = directory_of(path);
  const fs::file_type directory_type = type_of(directory);
  if (directory_type == fs::file_type::not_found)
    fail("cannot write {}: no such directory {}", path.string(), directory.string());
  if (directory_type != fs::file_type::directory)
    fail("cannot write {}: {} is not a directory", path.string(), directory.string());
  if (::access(directory.c_str(), W_OK) != 0)
    fail("cannot write {}: {} is not writable ({})", path.string(), directory.string(), std::strerror(errno));
}

void check_input_directory(const fs::path& path) {
  const fs::file_type type = type_of(path);
  if (type == fs::file_type::not_found) fail("{}: no such directory", path.string());
  if (type != fs::file_type::directory) fail("{}: not a directory", path.string());
}

void check_output_directory(const fs::path& path) {
  for (fs::path ancestor = path; !ancestor.empty(); ancestor = ancestor.parent_path()) {
    const fs::file_type type = type_of(ancestor);
    if (type == fs::file_type::directory) return;
    if (type != fs::file_type::not_found) {
      if (ancestor == path) return;  // an existing file there: the caller decides whether to replace it
      fail("cannot write {}: {} is not a directory", path.string(), ancestor.string());
    }
    if (ancestor == ancestor.parent_path()) return;
  }
}

std::vector<std::uint8_t> read_file_bytes(const fs::path& path) {
  check_input_file(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open {}: {}", path.string(), std::strerror(errno));
  std::vector<std::uint8_t> bytes;
  std::uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      fail("cannot read {}: {}", path.string(), std::strerror(saved));
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  ::close(fd);
  return bytes;
}

std::string read_file_text(const fs::path& path) {
  auto bytes = read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

void write_file_atomic(const fs::path& path, std::span<const std::uint8_t> bytes) {
  check_output_file(path);
  auto temporary = path;
  temporary += fmt::format(".tmp.{}", ::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot write {}: {}", path.string(), std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      fail("cannot write {}: {}", path.string(), std::strerror(saved));
    }
    done += static_cast<std::size_t>(n);
  }
  const int sync_error = ::fsync(fd) == 0 ? 0 : errno;
  const int close_error = ::close(fd) == 0 ? 0 : errno;
  if (sync_error != 0 || close_error != 0) {
    ::unlink(temporary.c_str());
    fail("cannot write {}: {}", path.string(), std::strerror(sync_error != 0 ? sync_error : close_error));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(temporary.c_str());
    fail("cannot write {}: {}", path.string(), std::strerror(saved));
  }
}

void write_file_atomic(const fs::path& path, const std::string& text) {
  write_file_atomic(path, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

}  // namespace rvformer
