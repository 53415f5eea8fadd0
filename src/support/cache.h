// support/cache.h — rvformer's cache directory (compiled machines, built interpreter images) and an
// advisory lock that keeps two processes from filling the same cache entry at once.
#pragma once

#include <filesystem>
#include <string>

namespace rvformer {

// $RVFORMER_CACHE, else $XDG_CACHE_HOME/rvformer, else ~/.cache/rvformer; throws rvformer::Error
// when none is set.
std::filesystem::path cache_root();

// An exclusive advisory lock on a file (created if missing), held for the object's lifetime.
class CacheLock {
 public:
  explicit CacheLock(const std::string& path);
  ~CacheLock();
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int fd_;
};

}  // namespace rvformer
