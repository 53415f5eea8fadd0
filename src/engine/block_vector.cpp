// engine/block_vector.cpp — see block_vector.h.
#include "engine/block_vector.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>

namespace rvformer::engine {

// Magnitudes compared as bit patterns (ordered like the values for non-negative floats), every
// non-finite one as +∞: an integer loop the compiler vectorises.
float SparseVector::largest_magnitude() const {
  if (largest_ == unknown) {
    std::uint32_t largest = 0;
    for (std::size_t k = 0; k < size_; ++k) largest = std::max(largest, magnitude_bits(value_[k]));
    largest_ = std::bit_cast<float>(largest);
  }
  return largest_;
}

void SparseVector::append_words(std::vector<std::uint32_t>& words) const {
  for (std::size_t k = 0; k < size_; ++k) words.insert(words.end(), {index_[k], std::bit_cast<std::uint32_t>(value_[k])});
}

void SparseVector::assign_words(std::span<const std::uint32_t> words) {
  const std::size_t count = words.size() / 2;
  for (std::size_t k = 0; k < count; ++k) {
    index_[k] = words[2 * k];
    value_[k] = std::bit_cast<float>(words[2 * k + 1]);
  }
  set_size(count);
}

BlockVector::BlockVector(std::size_t size)
    : size_(size), values_(block_count(size) * block_lanes, 0.0f), written_(block_count(size)) {
  blocks_.reserve(block_count(size));
  merged_.reserve(block_count(size));
}

std::size_t BlockVector::lanes(std::size_t block) const {
  return std::min(block_lanes, size_ - block * block_lanes);
}

void BlockVector::clear() {
  for (std::uint32_t block : blocks_) std::memset(values_.data() + block * block_lanes, 0, block_lanes * sizeof(float));
  blocks_.clear();
}

void BlockVector::mark(std::uint32_t block) {
  if (blocks_.empty() || blocks_.back() < block) {
    blocks_.push_back(block);
    return;
  }
  const auto at = std::lower_bound(blocks_.begin(), blocks_.end(), block);
  if (*at != block) blocks_.insert(at, block);
}

void BlockVector::mark_range(std::size_t begin, std::size_t end) {
  if (begin == end) return;
  for (std::size_t block = begin / block_lanes; block <= (end - 1) / block_lanes; ++block) {
    mark(static_cast<std::uint32_t>(block));
  }
}

void BlockVector::mark(std::span<const std::uint32_t> sorted_blocks) {
  if (blocks_.empty() || (!sorted_blocks.empty() && blocks_.back() < sorted_blocks.front())) {
    blocks_.insert(blocks_.end(), sorted_blocks.begin(), sorted_blocks.end());
    return;
  }
  for (std::uint32_t block : sorted_blocks) mark(block);
}

void BlockVector::mark_all() { mark_range(0, size_); }

void BlockVector::mark_written() {
  const std::span<std::uint64_t> words = written_.words();
  for (std::size_t w = 0; w < words.size(); ++w) {
    for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      mark(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
    }
    words[w] = 0;
  }
}

void BlockVector::add(const BlockVector& other) {
  for (std::uint32_t block : other.blocks_) {
    float* target = values_.data() + block * block_lanes;
    const float* source = other.values_.data() + block * block_lanes;
    for (std::size_t lane = 0; lane < block_lanes; ++lane) target[lane] += source[lane];
  }
  merged_.clear();
  std::set_union(blocks_.begin(), blocks_.end(), other.blocks_.begin(), other.blocks_.end(),
                 std::back_inserter(merged_));
  std::swap(blocks_, merged_);
}

void BlockVector::gather(SparseVector& out) const {
  out.clear();
  out.set_size(fast_kernels().gather(values_.data(), blocks_.data(), blocks_.size(), out.sink()));
}

float BlockVector::largest_magnitude() const {
  float largest = 0.0f;
  for (std::uint32_t block : blocks_) {
    for (std::size_t lane = 0; lane < block_lanes; ++lane) {
      const float value = values_[block * block_lanes + lane];
      largest = std::max(largest, std::isfinite(value) ? std::fabs(value) : INFINITY);
    }
  }
  return largest;
}

bool BlockVector::all_finite() const {
  return std::all_of(blocks_.begin(), blocks_.end(), [this](std::uint32_t block) {
    return engine::all_finite(values_.data() + block * block_lanes, block_lanes);
  });
}

void BlockSet::clear() { std::fill(words_.begin(), words_.end(), 0); }

std::size_t BlockSet::first_missing() const {
  for (std::size_t w = 0; w < words_.size(); ++w) {
    if (~words_[w] != 0) return w * 64 + static_cast<std::size_t>(__builtin_ctzll(~words_[w]));
  }
  return words_.size() * 64;
}

void BlockSet::list(std::vector<std::uint32_t>& out) const {
  out.clear();
  for (std::size_t w = 0; w < words_.size(); ++w) {
    for (std::uint64_t bits = words_[w]; bits != 0; bits &= bits - 1) {
      out.push_back(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
    }
  }
}

}  // namespace rvformer::engine
