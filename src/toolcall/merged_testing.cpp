// toolcall/merged_testing.cpp — see merged_testing.h.
#include "toolcall/merged_testing.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "chat/synthetic_chat_model.h"
#include "cpu/machine.h"
#include "driver/compiled_machine.h"
#include "engine/synthetic_checkpoint.h"
#include "merge/merge.h"
#include "support/error.h"

namespace rvformer::toolcall::testing {
namespace fs = std::filesystem;

namespace {

// Holds an exclusive lock on `path` while alive.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) : fd_(::open(path.c_str(), O_CREAT | O_RDWR, 0644)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) fail("cannot lock {}", path.string());
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

fs::path merged_test_checkpoint(const program::MachineSpec& spec) {
  const char* cache = std::getenv("RVFORMER_CACHE");
  const fs::path root = cache ? fs::path(cache) : fs::temp_directory_path() / "rvformer-toolcall-test";
  fs::create_directories(root);
  engine::SyntheticModel base = engine::synthetic_preset("narrow");
  const auto machine = cpu::build_machine(spec);
  const fs::path compiled = driver::machine_checkpoint(*machine, std::nullopt, [](const std::string&) {},
                                                       static_cast<int>(base.config.hidden_size));
  const fs::path merged = root / ("merged-narrow-" + compiled.filename().string());
  const FileLock lock(root / "merged-narrow.lock");
  if (!fs::exists(merged / "rvformer-merge.json")) {
    const fs::path base_dir = root / ("merged-narrow-base-" + std::string(spec.name));
    fs::remove_all(base_dir);
    fs::remove_all(merged);
    base.max_shard_bytes = 64'000'000;
    chat::testing::write_synthetic_chat_checkpoint(base_dir, base);
    merge::merge_checkpoints(base_dir, compiled, merged, {});
    fs::remove_all(base_dir);
  }
  return merged;
}

}  // namespace rvformer::toolcall::testing
