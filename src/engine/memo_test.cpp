// engine/memo_test.cpp — the memo returns a result only for the very key it was remembered with:
// through the recent-entry shortcut, through the hashed slot, after a slot was taken over by
// another key, and never for a prefix or extension of a key.
#include "engine/memo.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace rvformer::engine {
namespace {

using Words = std::vector<std::uint32_t>;

Words found(const Memo& memo, const Words& key) {
  const auto result = memo.find(key);
  EXPECT_TRUE(result.has_value()) << "key of " << key.size() << " words not found";
  return result ? Words(result->begin(), result->end()) : Words{};
}

TEST(MemoTest, FindsWhatWasRememberedAndNothingElse) {
  Memo memo(8, 8, 6);
  const Words a{1, 0x3f800000}, b{2, 0x40000000, 7, 0xbf800000};
  EXPECT_FALSE(memo.find(a).has_value());
  memo.remember(a, Words{10, 11});
  memo.remember(b, Words{20});
  EXPECT_EQ(found(memo, a), (Words{10, 11}));  // a is no longer the recent entry: found by its hash
  EXPECT_EQ(found(memo, b), (Words{20}));
  EXPECT_EQ(found(memo, b), (Words{20}));  // the recent entry
  EXPECT_FALSE(memo.find(Words{1, 0x3f800001}).has_value());
  memo.remember(Words{}, Words{30});
  EXPECT_EQ(found(memo, Words{}), (Words{30}));
}

TEST(MemoTest, ARecentEntryTakenOverByAnotherKeyIsNotReturnedForTheOldKey) {
  Memo memo(8, 8, 0);  // one slot: every key shares it
  const Words a{1, 2}, b{3, 4};
  memo.remember(a, Words{5});
  EXPECT_EQ(found(memo, a), (Words{5}));
  memo.remember(b, Words{6});
  EXPECT_FALSE(memo.find(a).has_value());
  EXPECT_EQ(found(memo, b), (Words{6}));
}

TEST(MemoTest, APrefixOrExtensionOfAKeyIsAnotherKey) {
  Memo memo(8, 8, 0);
  memo.remember(Words{1, 2, 3, 4}, Words{9});
  EXPECT_FALSE(memo.find(Words{1, 2}).has_value());
  EXPECT_FALSE(memo.find(Words{1, 2, 3, 4, 5, 6}).has_value());
  EXPECT_EQ(found(memo, Words{1, 2, 3, 4}), (Words{9}));
}

TEST(MemoTest, KeysOrResultsTooLongAreNotRemembered) {
  Memo memo(4, 2, 4);
  memo.remember(Words{1, 2, 3, 4, 5, 6}, Words{1});
  memo.remember(Words{7, 8}, Words{1, 2, 3});
  EXPECT_FALSE(memo.find(Words{1, 2, 3, 4, 5, 6}).has_value());
  EXPECT_FALSE(memo.find(Words{7, 8}).has_value());
  memo.remember(Words{7, 8}, Words{1, 2});
  EXPECT_EQ(found(memo, Words{7, 8}), (Words{1, 2}));
}

}  // namespace
}  // namespace rvformer::engine
