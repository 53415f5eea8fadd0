// tokenizer/added_tokens.cpp — see added_tokens.h. A match that fails its single_word check is
// dropped and the search goes on after it, as with Hugging Face's non-overlapping match iterator.
#include "tokenizer/added_tokens.h"

#include "tokenizer/unicode_text.h"

namespace rvformer::tokenizer {

namespace {

bool starts_with_word_character(std::string_view text, std::size_t offset) {
  return offset < text.size() && is_word_character(next_code_point(text, offset));
}

bool ends_with_word_character(std::string_view text, std::size_t offset) {
  return offset > 0 && is_word_character(previous_code_point(text, offset));
}

// Where the white space that ends at `offset` begins.
std::size_t skip_white_space_backwards(std::string_view text, std::size_t offset) {
  while (offset > 0) {
    std::size_t before = offset;
    if (!is_white_space(previous_code_point(text, before))) break;
    offset = before;
  }
  return offset;
}

// Where the white space that starts at `offset` ends.
std::size_t skip_white_space(std::string_view text, std::size_t offset) {
  while (offset < text.size()) {
    std::size_t after = offset;
    if (!is_white_space(next_code_point(text, after))) break;
    offset = after;
  }
  return offset;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<std::pair<std::string, const AddedToken*>>& patterns) {
  token_at_node_.push_back(nullptr);
  for (const auto& [pattern, token] : patterns) {
    if (pattern.empty()) continue;
    first_bytes_[static_cast<std::uint8_t>(pattern.front())] = true;
    std::int32_t node = 0;
    for (char byte : pattern) {
      const std::uint64_t key = (std::uint64_t(node) << 8) | static_cast<std::uint8_t>(byte);
      auto [it, inserted] = edges_.emplace(key, static_cast<std::int32_t>(token_at_node_.size()));
      if (inserted) token_at_node_.push_back(nullptr);
      node = it->second;
    }
    token_at_node_[node] = token;
  }
}

std::int32_t AddedTokenMatcher::child(std::int32_t node, std::uint8_t byte) const {
  auto it = edges_.find((std::uint64_t(node) << 8) | byte);
  return it == edges_.end() ? -1 : it->second;
}

std::optional<AddedTokenMatcher::Match> AddedTokenMatcher::longest_at(std::string_view text, std::size_t offset) const {
  std::optional<Match> longest;
  std::int32_t node = 0;
  for (std::size_t i = offset; i < text.size(); ++i) {
    node = child(node, static_cast<std::uint8_t>(text[i]));
    if (node < 0) break;
    if (token_at_node_[node]) longest = Match{offset, i + 1, token_at_node_[node]};
  }
  return longest;
}

void AddedTokenMatcher::split(std::string_view text, std::vector<TextSpan>& spans) const {
  auto add_text = [&](std::size_t begin, std::size_t end) {
    if (end > begin) spans.push_back({text.substr(begin, end - begin), std::nullopt});
  };
  std::size_t emitted = 0;  // text before this is in spans (or taken by a token)
  std::size_t offset = 0;
  while (offset < text.size()) {
    if (!first_bytes_[static_cast<std::uint8_t>(text[offset])]) {
      ++offset;
      continue;
    }
    std::optional<Match> match = longest_at(text, offset);
    if (!match) {
      ++offset;
      continue;
    }
    offset = match->end;
    const AddedToken& token = *match->token;
    if (token.single_word &&
        (ends_with_word_character(text, match->begin) || starts_with_word_character(text, match->end))) {
      continue;
    }
    if (token.lstrip) match->begin = std::max(skip_white_space_backwards(text, match->begin), emitted);
    if (token.rstrip) match->end = skip_white_space(text, match->end);
    add_text(emitted, match->begin);
    spans.push_back({text.substr(match->begin, match->end - match->begin), token.id});
    emitted = offset = match->end;
  }
  add_text(emitted, text.size());
}

}  // namespace rvformer::tokenizer
