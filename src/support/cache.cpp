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

void mark_cache_entry_used(const std::filesystem::path& entry) {
  std::error_code ignored;
  std::filesystem::last_write_time(entry, std::filesystem::file_time_type::clock::now(), ignored);
}

int prune_cache(const std::filesystem::path& root, const std::string& prefix, std::chrono::hours unused_for) {
  namespace fs = std::filesystem;
  const auto oldest = fs::file_time_type::clock::now() - unused_for;
  std::error_code error;
  int removed = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !entry.is_directory(error) || entry.last_write_time(error) >= oldest || error)
      continue;
    if (fs::remove_all(entry.path(), error) == static_cast<std::uintmax_t>(-1) || error) continue;
    fs::remove(entry.path().string() + ".lock", error);
    ++removed;
  }
  return removed;
}

}  // namespace rvformer
