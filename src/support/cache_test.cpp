// Pruning the cache: entries unused for longer than the limit go, with their lock files; recent
// ones, entries marked used, other kinds of entry and plain files stay.
#include "support/cache.h"

#include <gtest/gtest.h>

#include <fstream>

namespace rvformer {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;

class CachePruning : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / "cache_pruning";
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A directory with a file in it and its lock file, last written `age` ago.
  fs::path entry(const std::string& name, hours age) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir);
    std::ofstream(dir / "model.safetensors") << "weights";
    std::ofstream(dir.string() + ".lock");
    fs::last_write_time(dir, fs::file_time_type::clock::now() - age);
    return dir;
  }

  fs::path root_;
};

TEST_F(CachePruning, RemovesOnlyTheMachinesUnusedForLongerThanTheLimit) {
  const fs::path old = entry("machine-0123456789abcdef", hours(24 * 40));
  const fs::path old_merged = entry("machine-0123456789abcdef-after-2560", hours(24 * 31));
  const fs::path recent = entry("machine-fedcba9876543210", hours(24 * 29));
  const fs::path used = entry("machine-1111111111111111", hours(24 * 90));
  const fs::path other_kind = entry("micropython-rvformer-large-42", hours(24 * 90));
  std::ofstream(root_ / "machine-notes") << "a file, not an entry";
  fs::last_write_time(root_ / "machine-notes", fs::file_time_type::clock::now() - hours(24 * 90));
  mark_cache_entry_used(used);

  EXPECT_EQ(prune_cache(root_, "machine-", hours(24 * 30)), 2);
  EXPECT_FALSE(fs::exists(old));
  EXPECT_FALSE(fs::exists(old.string() + ".lock"));
  EXPECT_FALSE(fs::exists(old_merged));
  for (const fs::path& kept : {recent, used, other_kind}) {
    EXPECT_TRUE(fs::exists(kept / "model.safetensors")) << kept;
    EXPECT_TRUE(fs::exists(kept.string() + ".lock")) << kept;
  }
  EXPECT_TRUE(fs::exists(root_ / "machine-notes"));
  EXPECT_EQ(prune_cache(root_, "machine-", hours(24 * 30)), 0);
}

TEST_F(CachePruning, AMissingCacheHasNothingToPrune) {
  EXPECT_EQ(prune_cache(root_ / "absent", "machine-", hours(1)), 0);
}

}  // namespace
}  // namespace rvformer
