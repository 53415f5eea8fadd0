// engine/part_memo.cpp — see part_memo.h.
#include "engine/part_memo.h"

#include <algorithm>

namespace rvformer::engine {

PartMemo::PartMemo(std::size_t key_length, std::size_t slots_log2)
    : key_length_(key_length),
      mask_((std::size_t{1} << slots_log2) - 1),
      hashes_(mask_ + 1, 0),
      keys_((mask_ + 1) * key_length, 0),
      outputs_(mask_ + 1) {}

std::uint64_t PartMemo::hash(std::span<const std::uint32_t> key) {
  std::uint64_t hash = 0x9e3779b97f4a7c15ull;
  for (std::uint32_t word : key) hash = (hash ^ word) * 0xbf58476d1ce4e5b9ull;
  return (hash ^ (hash >> 31)) | 1;  // odd: never the empty mark 0
}

const PartMemo::Outputs* PartMemo::find(std::span<const std::uint32_t> key, std::uint64_t hash) const {
  const std::size_t slot = (hash >> 32) & mask_;
  if (hashes_[slot] != hash) return nullptr;
  if (!std::equal(key.begin(), key.end(), keys_.begin() + static_cast<std::ptrdiff_t>(slot * key_length_))) return nullptr;
  return &outputs_[slot];
}

void PartMemo::remember(std::span<const std::uint32_t> key, std::uint64_t hash, const Outputs& outputs) {
  const std::size_t slot = (hash >> 32) & mask_;
  hashes_[slot] = hash;
  std::copy(key.begin(), key.end(), keys_.begin() + static_cast<std::ptrdiff_t>(slot * key_length_));
  outputs_[slot] = outputs;
}

}  // namespace rvformer::engine
