// support/cache.cpp — see cache.h.
#include "support/cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "support/error.h"

namespace rvformer {

std::filesystem::path cache_root() {
  if (const char* dir = std::getenv("RVFORMER_CACHE")) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME")) return std::filesystem::path(xdg) / "rvformer";
  if (const char* home = std::getenv("HOME")) return std::filesystem::path(home) / ".cache" / "rvformer";
  fail("no cache directory: set RVFORMER_CACHE (or HOME)");
}

CacheLock::CacheLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
  if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) fail("cannot lock {}: {}", path, std::strerror(errno));
}

CacheLock::~CacheLock() { ::close(fd_); }

}  // namespace rvformer
