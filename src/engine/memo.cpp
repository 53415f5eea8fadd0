// engine/memo.cpp — see memo.h.
#include "engine/memo.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace rvformer::engine {

namespace {
constexpr std::size_t header_words = 4;  // hash (2), key length, result length
}  // namespace

void Memo::FreeWords::operator()(std::uint32_t* words) const { std::free(words); }

Memo::Memo(std::size_t max_key, std::size_t max_result, std::size_t slots_log2)
    : max_key_(max_key),
      max_result_(max_result),
      mask_((std::size_t{1} << slots_log2) - 1),
      stride_(header_words + max_key + max_result),
      words_(static_cast<std::uint32_t*>(std::calloc((mask_ + 1) * stride_, sizeof(std::uint32_t)))) {
  if (!words_) throw std::bad_alloc();
}

// Four independent multiply-xor chains over pairs of words (a single chain is bound by the
// multiplier's latency), folded at the end.
std::uint64_t Memo::hash(std::span<const std::uint32_t> key) {
  std::uint64_t lanes[4] = {0x9e3779b97f4a7c15ull ^ key.size(), 0x6a09e667f3bcc909ull, 0xbb67ae8584caa73bull,
                            0x3c6ef372fe94f82bull};
  std::size_t k = 0;
  for (; k + 8 <= key.size(); k += 8) {
    for (std::size_t lane = 0; lane < 4; ++lane) {
      const std::uint64_t pair = key[k + 2 * lane] | std::uint64_t{key[k + 2 * lane + 1]} << 32;
      lanes[lane] = (lanes[lane] ^ pair) * 0xbf58476d1ce4e5b9ull;
    }
  }
  for (; k < key.size(); ++k) lanes[k % 4] = (lanes[k % 4] ^ key[k]) * 0x94d049bb133111ebull;
  std::uint64_t hash = lanes[0];
  for (std::size_t lane = 1; lane < 4; ++lane) hash = (hash ^ (hash >> 29) ^ lanes[lane]) * 0xbf58476d1ce4e5b9ull;
  return (hash ^ (hash >> 31)) | 1;  // odd: never the empty mark 0
}

std::optional<std::span<const std::uint32_t>> Memo::match(const std::uint32_t* entry,
                                                          std::span<const std::uint32_t> key) const {
  if (entry[2] != key.size() || !std::equal(key.begin(), key.end(), entry + header_words)) return std::nullopt;
  return std::span(entry + header_words + max_key_, entry[3]);
}

std::optional<std::span<const std::uint32_t>> Memo::find(std::span<const std::uint32_t> key) const {
  if (key.size() > max_key_) return std::nullopt;  // never remembered
  if (recent_ != nullptr) {
    if (const auto result = match(recent_, key)) return result;
  }
  const std::uint64_t key_hash = hash(key);
  const std::uint32_t* entry = words(slot(key_hash));
  std::uint64_t stored;
  std::memcpy(&stored, entry, sizeof stored);
  if (stored != key_hash) return std::nullopt;
  const auto result = match(entry, key);
  if (result) recent_ = entry;
  return result;
}

void Memo::remember(std::span<const std::uint32_t> key, std::span<const std::uint32_t> result) {
  if (key.size() > max_key_ || result.size() > max_result_) return;
  const std::uint64_t key_hash = hash(key);
  std::uint32_t* entry = words(slot(key_hash));
  std::memcpy(entry, &key_hash, sizeof key_hash);
  entry[2] = static_cast<std::uint32_t>(key.size());
  entry[3] = static_cast<std::uint32_t>(result.size());
  std::copy(key.begin(), key.end(), entry + header_words);
  std::copy(result.begin(), result.end(), entry + header_words + max_key_);
  recent_ = entry;
}

}  // namespace rvformer::engine
