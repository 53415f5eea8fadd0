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

namespace rvformer::engine {

class Memo {
 public:
  // Keys of up to max_key words and results of up to max_result words; 2^slots_log2 entries.
  Memo(std::size_t max_key, std::size_t max_result, std::size_t slots_log2);

  std::size_t max_key() const { return max_key_; }
  std::size_t max_result() const { return max_result_; }
  // The result remembered for `key`, if any. The entry last found or remembered is compared first,
  // without hashing: a compiled model's layer often sees the same input as on the token before.
  std::optional<std::span<const std::uint32_t>> find(std::span<const std::uint32_t> key) const;
  // Remembers a result, unless the key or the result is too long.
  void remember(std::span<const std::uint32_t> key, std::span<const std::uint32_t> result);

 private:
  static std::uint64_t hash(std::span<const std::uint32_t> key);
  std::size_t slot(std::uint64_t hash) const { return (hash >> 32) & mask_; }
  // The result in `entry` when it holds `key`.
  std::optional<std::span<const std::uint32_t>> match(const std::uint32_t* entry, std::span<const std::uint32_t> key) const;
  std::uint32_t* words(std::size_t slot) { return words_.get() + slot * stride_; }
  const std::uint32_t* words(std::size_t slot) const { return words_.get() + slot * stride_; }

  // Frees calloc's memory.
  struct FreeWords {
    void operator()(std::uint32_t* words) const;
  };

  std::size_t max_key_;
  std::size_t max_result_;
  std::size_t mask_;
  // Per slot: the key's hash (two words; 0 when empty, as hash() is never 0), key length, result
  // length, key, result; one look-up reads one place. Zeroed by calloc, whose large blocks are
  // fresh pages: a memo occupies memory only for the slots it uses.
  std::size_t stride_;
  std::unique_ptr<std::uint32_t[], FreeWords> words_;
  mutable const std::uint32_t* recent_ = nullptr;  // the entry last found or remembered
};

}  // namespace rvformer::engine
