// support/cache.h — rvformer's cache directory (compiled machines, built interpreter images), an
// advisory lock that keeps two processes from filling the same cache entry at once, and the pruning
// of entries nothing has used for a long time (every build of the machine's sources compiles a new
// one of some hundreds of megabytes).
#pragma once

#include <chrono>
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

// Records that the cache entry `entry` (a directory) is in use: its modification time becomes now.
void mark_cache_entry_used(const std::filesystem::path& entry);

// Removes the directories in `root` whose names start with `prefix` and that were last marked used
// (or written) longer than `unused_for` ago, with their lock files; returns how many it removed.
// Best effort: an entry it cannot remove stays.
int prune_cache(const std::filesystem::path& root, const std::string& prefix, std::chrono::hours unused_for);

}  // namespace rvformer
