// engine/memo.cpp — see memo.h.
#include "engine/memo.h"

#include <algorithm>

namespace rvformer::engine {

Memo::Memo(std::size_t max_key, std::size_t max_result, std::size_t slots_log2)
    : max_key_(max_key),
      max_result_(max_result),
      mask_((std::size_t{1} << slots_log2) - 1),
      stride_(2 + max_key + max_result),
      hashes_(mask_ + 1, 0),
      words_(std::make_unique_for_overwrite<std::uint32_t[]>((mask_ + 1) * stride_)) {}

std::uint64_t Memo::hash(std::span<const std::uint32_t> key) {
  std::uint64_t hash = 0x9e3779b97f4a7c15ull ^ key.size();
  for (std::uint32_t word : key) hash = (hash ^ word) * 0xbf58476d1ce4e5b9ull;
  return (hash ^ (hash >> 31)) | 1;  // odd: never the empty mark 0
}

std::optional<std::span<const std::uint32_t>> Memo::find(std::span<const std::uint32_t> key, std::uint64_t hash) const {
  const std::size_t at = slot(hash);
  if (hashes_[at] != hash) return std::nullopt;
  const std::uint32_t* entry = words(at);
  if (entry[0] != key.size() || !std::equal(key.begin(), key.end(), entry + 2)) return std::nullopt;
  return std::span(entry + 2 + max_key_, entry[1]);
}

void Memo::remember(std::span<const std::uint32_t> key, std::uint64_t hash, std::span<const std::uint32_t> result) {
  if (key.size() > max_key_ || result.size() > max_result_) return;
  const std::size_t at = slot(hash);
  hashes_[at] = hash;
  std::uint32_t* entry = words(at);
  entry[0] = static_cast<std::uint32_t>(key.size());
  entry[1] = static_cast<std::uint32_t>(result.size());
  std::copy(key.begin(), key.end(), entry + 2);
  std::copy(result.begin(), result.end(), entry + 2 + max_key_);
}

}  // namespace rvformer::engine
