// engine/block_vector.h — the activation vectors of the fast executor (fast_model.h): dense fp32 arrays
// cut into blocks of 16 lanes that remember which blocks may hold anything but +0, so clearing,
// adding and scanning a mostly-zero vector cost only its listed blocks; the list of a vector's
// non-zero entries that sparse matrix products consume; and a bitset of block indices.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <vector>

#include "engine/fast_kernels.h"

namespace rvformer::engine {

inline constexpr std::size_t block_lanes = 16;

constexpr std::size_t block_count(std::size_t size) { return (size + block_lanes - 1) / block_lanes; }

// Allocates on 64-byte boundaries, so that every block is one cache line (an unaligned block
// straddles two, which doubles the cost of loading and storing it).
template <typename T>
struct BlockAllocator {
  using value_type = T;
  static constexpr std::align_val_t alignment{64};

  BlockAllocator() = default;
  template <typename U>
  BlockAllocator(const BlockAllocator<U>&) {}  // NOLINT: converting, as allocators are
  T* allocate(std::size_t count) { return static_cast<T*>(::operator new(count * sizeof(T), alignment)); }
  void deallocate(T* pointer, std::size_t) { ::operator delete(pointer, alignment); }
  template <typename U>
  bool operator==(const BlockAllocator<U>&) const { return true; }
};

// Floats in whole, cache-line aligned blocks.
using BlockFloats = std::vector<float, BlockAllocator<float>>;

namespace detail {
// True when test(bits) is non-zero for some value's bit pattern; a plain loop over integers without
// early exit (vectorised, and independent of the floating-point environment).
template <typename Test>
bool any_value(const float* values, std::size_t count, Test test) {
  std::uint32_t found = 0;
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    found |= test(bits);
  }
  return found != 0;
}
}  // namespace detail

// True when some value of [values, values + count) has a bit pattern other than +0's (−0 counts).
inline bool any_bits_set(const float* values, std::size_t count) {
  return detail::any_value(values, count, [](std::uint32_t bits) { return bits; });
}
// True when every value of [values, values + count) is finite.
inline bool all_finite(const float* values, std::size_t count) {
  return !detail::any_value(values, count, [](std::uint32_t bits) {
    return static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  });
}

// The entries of a vector that are not ±0, in increasing index order, in fixed-capacity storage that
// kernels fill directly.
class SparseVector {
 public:
  SparseVector() = default;
  explicit SparseVector(std::size_t capacity) : index_(capacity), value_(capacity) {}

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::uint32_t index(std::size_t k) const { return index_[k]; }
  float value(std::size_t k) const { return value_[k]; }
  std::span<const std::uint32_t> indices() const { return {index_.data(), size_}; }
  std::span<const float> values() const { return {value_.data(), size_}; }
  std::span<float> values() {
    largest_ = unknown;
    return {value_.data(), size_};
  }

  void clear() { set_size(0); }
  // Copies other's entries (capacity permitting).
  void assign(const SparseVector& other) {
    std::copy_n(other.index_.begin(), other.size_, index_.begin());
    std::copy_n(other.value_.begin(), other.size_, value_.begin());
    set_size(other.size_);
  }
  void push(std::uint32_t index, float value) {
    index_[size_] = index;
    value_[size_] = value;
    ++size_;
    largest_ = unknown;
  }
  // Where a kernel writes (after the current entries); then set_size() with size() plus the count
  // it returns.
  NonzeroSink sink() { return {index_.data() + size_, value_.data() + size_}; }
  void set_size(std::size_t size) {
    size_ = size;
    largest_ = unknown;
  }
  // The same, when the writer already knows largest_magnitude() (saves a pass).
  void set_size(std::size_t size, float largest_magnitude) {
    size_ = size;
    largest_ = largest_magnitude;
  }

  // The entries as words (index, value bits), appended to `words`; and back.
  void append_words(std::vector<std::uint32_t>& words) const;
  void assign_words(std::span<const std::uint32_t> words);

  // The largest |value| (+∞ when a value is not finite), computed once per content.
  float largest_magnitude() const;
  // |value| as bits, every non-finite one as +∞'s (ordered like the magnitudes).
  static std::uint32_t magnitude_bits(float value) {
    return std::min(std::bit_cast<std::uint32_t>(value) & 0x7fffffffu, std::uint32_t{0x7f800000u});
  }
  bool all_finite() const { return largest_magnitude() < INFINITY; }

 private:
  static constexpr float unknown = -1.0f;

  std::vector<std::uint32_t> index_;
  std::vector<float> value_;
  std::size_t size_ = 0;
  mutable float largest_ = 0.0f;
};

// A set of block indices as a bitset.
class BlockSet {
 public:
  BlockSet() = default;
  explicit BlockSet(std::size_t blocks) : words_((blocks + 63) / 64, 0) {}

  void insert(std::size_t block) { words_[block / 64] |= std::uint64_t{1} << (block % 64); }
  bool contains(std::size_t block) const { return (words_[block / 64] >> (block % 64)) & 1; }
  void clear();
  // The smallest block not in the set (at least the capacity given when every block is in it).
  std::size_t first_missing() const;
  // The members in increasing order, appended to `out` (cleared first).
  void list(std::vector<std::uint32_t>& out) const;
  // Bit b % 64 of word b / 64 is block b.
  std::span<const std::uint64_t> words() const { return words_; }
  std::span<std::uint64_t> words() { return words_; }
  bool operator==(const BlockSet&) const = default;

 private:
  std::vector<std::uint64_t> words_;
};

// A vector of `size` floats whose blocks outside blocks() are all +0. Writers mark a block before
// writing to it; clear() zeroes only the marked blocks.
class BlockVector {
 public:
  BlockVector() = default;
  explicit BlockVector(std::size_t size);

  std::size_t size() const { return size_; }
  std::span<float> values() { return {values_.data(), size_}; }
  std::span<const float> values() const { return {values_.data(), size_}; }
  float* data() { return values_.data(); }
  const float* data() const { return values_.data(); }
  // Marked blocks, in increasing order.
  const std::vector<std::uint32_t>& blocks() const { return blocks_; }
  // Lanes of block b that lie inside the vector (16 except perhaps for the last block).
  std::size_t lanes(std::size_t block) const;

  // Zeroes the marked blocks and unmarks them.
  void clear();
  // Marks a block (marking a marked one is a no-op; marking in increasing order is the fast case).
  void mark(std::uint32_t block);
  // Marks every block covering [begin, end) (in increasing order, after the blocks marked so far).
  void mark_range(std::size_t begin, std::size_t end);
  void mark(std::span<const std::uint32_t> sorted_blocks);
  void mark_all();
  // A set over this vector's blocks, empty between uses, in which a product records the blocks it
  // writes before mark_written() marks them.
  BlockSet& written() { return written_; }
  // Marks the blocks recorded in written() (after the blocks marked so far) and empties it.
  void mark_written();
  // The largest |value| (+∞ when a value is not finite).
  float largest_magnitude() const;

  // this += other, lane by lane over other's marked blocks; this then also marks those blocks.
  void add(const BlockVector& other);
  // out = the entries that are not ±0, in index order.
  void gather(SparseVector& out) const;
  bool all_finite() const;

 private:
  std::size_t size_ = 0;
  BlockFloats values_;  // whole blocks; lanes past size_ stay +0
  std::vector<std::uint32_t> blocks_;
  std::vector<std::uint32_t> merged_;  // scratch for add()
  BlockSet written_;
};

}  // namespace rvformer::engine
