// tokenizer/bpe_model.h — the "model" of tokenizer.json when it is BPE over the byte-level
// alphabet: the vocabulary, the merges by rank, and the encoding of one word (Hugging Face's
// algorithm: repeatedly merge the adjacent pair of lowest rank, leftmost first), with a cache.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/json_node.h"
#include "tokenizer/token.h"

namespace rvformer::tokenizer {

class BpeModel {
 public:
  // `node` is the "model" value. Rejects other model types, merges of tokens outside the
  // vocabulary, and the options byte-level BPE does not use (dropout, byte fallback, affixes).
  explicit BpeModel(const JsonNode& node);

  // Appends the ids of `word` (raw bytes).
  void encode_word(std::string_view word, std::vector<TokenId>& ids) const;

  // The vocabulary, as the file spells it (byte-level text).
  const std::unordered_map<std::string, TokenId>& vocabulary() const { return vocabulary_; }

 private:
  struct Merge {
    std::uint32_t rank;
    TokenId merged;
  };

  void read_vocabulary(const JsonNode& node);
  void read_merges(const JsonNode& node);
  void add_merge(const JsonNode& merges, std::size_t index, const std::string& left, const std::string& right,
                 std::uint32_t rank);
  std::vector<TokenId> merge_word(std::string_view word) const;
  // The initial symbols of `word`: one per byte, unknown bytes as the unknown token or dropped.
  std::vector<TokenId> byte_symbols(std::string_view word) const;
  const Merge* find_merge(TokenId left, TokenId right) const;

  std::unordered_map<std::string, TokenId> vocabulary_;
  std::unordered_map<std::uint64_t, Merge> merges_;  // key: left << 32 | right
  std::optional<TokenId> byte_ids_[256];
  std::optional<TokenId> unknown_;
  bool fuse_unknown_ = false;
  bool ignore_merges_ = false;

  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<TokenId>> cache_;
};

}  // namespace rvformer::tokenizer
