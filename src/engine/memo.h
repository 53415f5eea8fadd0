// engine/memo.h — remembers, for recent inputs, the result of a pure function whose input and
// result are short sequences of 32-bit words (a direct-mapped cache). The fast executor keys such
// memos by the exact bits of the inputs a computation reads — the layer input at a query or key
// head's columns, or at an MLP's columns — so a hit returns bit for bit what computing would give;
// compiled models see the same addresses and signals over and over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace rvformer::engine {

class Memo {
 public:
  // Keys of up to max_key words and results of up to max_result words; 2^slots_log2 entries.
  Memo(std::size_t max_key, std::size_t max_result, std::size_t slots_log2);

  std::size_t max_key() const { return max_key_; }
  std::size_t max_result() const { return max_result_; }
  static std::uint64_t hash(std::span<const std::uint32_t> key);
  // The result remembered for `key` (whose hash is `hash`), if any.
  std::optional<std::span<const std::uint32_t>> find(std::span<const std::uint32_t> key, std::uint64_t hash) const;
  // Remembers a result, unless the key or the result is too long.
  void remember(std::span<const std::uint32_t> key, std::uint64_t hash, std::span<const std::uint32_t> result);

 private:
  std::size_t slot(std::uint64_t hash) const { return (hash >> 32) & mask_; }
  std::uint32_t* words(std::size_t slot) { return words_.get() + slot * stride_; }
  const std::uint32_t* words(std::size_t slot) const { return words_.get() + slot * stride_; }

  std::size_t max_key_;
  std::size_t max_result_;
  std::size_t mask_;
  std::size_t stride_;                 // per slot: key length, result length, key, result
  std::vector<std::uint64_t> hashes_;  // per slot, 0 when empty (hash() is never 0)
  // Left uninitialised: a slot's words are read only once it has been written, so a large memo
  // occupies memory only for the slots it uses.
  std::unique_ptr<std::uint32_t[]> words_;
};

}  // namespace rvformer::engine
