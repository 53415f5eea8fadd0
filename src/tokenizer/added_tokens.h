// tokenizer/added_tokens.h — how text is cut around the added tokens before anything else happens:
// leftmost-longest matches, with each token's single_word, lstrip and rstrip flags applied as
// Hugging Face's AddedVocabulary does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/token.h"

namespace rvformer::tokenizer {

// A stretch of text: an added token, or text still to be tokenized.
struct TextSpan {
  std::string_view text;
  std::optional<TokenId> added;
};

class AddedTokenMatcher {
 public:
  // `patterns` are the texts to find (a token's content, or its normalized content) and the tokens.
  explicit AddedTokenMatcher(const std::vector<std::pair<std::string, const AddedToken*>>& patterns);

  // Cuts `text` into spans; the spans cover it in order, except white space an lstrip or rstrip
  // token takes. Empty stretches of text are left out.
  void split(std::string_view text, std::vector<TextSpan>& spans) const;

 private:
  struct Match {
    std::size_t begin;
    std::size_t end;
    const AddedToken* token;
  };

  // The longest pattern that starts at `offset`, if any.
  std::optional<Match> longest_at(std::string_view text, std::size_t offset) const;
  std::int32_t child(std::int32_t node, std::uint8_t byte) const;

  // A byte trie: edges keyed by node << 8 | byte; each node's token, or null.
  std::unordered_map<std::uint64_t, std::int32_t> edges_;
  std::vector<const AddedToken*> token_at_node_;
  bool first_bytes_[256] = {};
};

}  // namespace rvformer::tokenizer
