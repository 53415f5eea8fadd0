// engine/part_memo.h — remembers, for recent inputs, the few non-zero outputs of a pure function of
// a handful of input values. The fast executor uses it for the query and key heads of Gated DeltaNet
// layers: SiLU(conv(projection)) of such a head depends only on the layer input at the head's
// columns (when its conv reads only the current token), so equal input bits give bit-identical
// outputs, and compiled models see the same addresses over and over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rvformer::engine {

class PartMemo {
 public:
  static constexpr std::size_t max_outputs = 8;  // outputs with more non-zeros are not remembered

  // A function's non-zero outputs: positions (within its outputs) and values.
  struct Outputs {
    std::uint32_t count = 0;
    std::uint16_t index[max_outputs] = {};
    float value[max_outputs] = {};
  };

  // Inputs of key_length words; 2^slots_log2 entries, direct-mapped.
  PartMemo(std::size_t key_length, std::size_t slots_log2);

  std::size_t key_length() const { return key_length_; }
  static std::uint64_t hash(std::span<const std::uint32_t> key);
  // The outputs remembered for `key`, or null.
  const Outputs* find(std::span<const std::uint32_t> key, std::uint64_t hash) const;
  void remember(std::span<const std::uint32_t> key, std::uint64_t hash, const Outputs& outputs);

 private:
  std::size_t key_length_;
  std::size_t mask_;
  std::vector<std::uint64_t> hashes_;  // per slot, 0 when empty (hash() is never 0)
  std::vector<std::uint32_t> keys_;    // per slot, key_length_ words
  std::vector<Outputs> outputs_;
};

}  // namespace rvformer::engine
