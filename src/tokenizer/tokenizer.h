// tokenizer/tokenizer.h — a Hugging Face tokenizer.json of byte-level BPE, as Qwen2, Qwen3 and
// Qwen3.5 ship it: text to ids exactly as Hugging Face's tokenizers encodes it (added tokens cut
// out first, then normalizer, pre-tokenizer regex, byte-level BPE by merge rank; no special tokens
// are added around the text), and ids back to text as its ByteLevel decoder does.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/token.h"

namespace rvformer::tokenizer {

class Tokenizer {
 public:
  // Reads `path`: a tokenizer.json, or a checkpoint directory holding one. A malformed file gives
  // an rvformer::Error of one line naming the file and the problem.
  static Tokenizer load(const std::filesystem::path& path);
  // Parses the text of a tokenizer.json; `origin` names it in error messages.
  static Tokenizer parse(std::string_view json_text, const std::string& origin);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // The ids of UTF-8 `text` (rvformer::Error if it is not well-formed). Added tokens written in
  // the text, special ones included, become their ids.
  std::vector<TokenId> encode(std::string_view text) const;
  // The text of `ids`: their bytes as UTF-8, each ill-formed sequence as one U+FFFD per maximal
  // subpart. Ids that name no token are left out, as Hugging Face does.
  std::string decode(std::span<const TokenId> ids, bool skip_special_tokens = false) const;
  // The bytes `ids` stand for, with no replacement: a byte-level token may end inside a UTF-8
  // sequence that the next one completes (for streaming generated text). Unknown ids are left out.
  std::string decode_bytes(std::span<const TokenId> ids) const;
  // The pieces `text` is cut into before BPE: added tokens and pre-tokenized words, as UTF-8.
  std::vector<std::string> pieces(std::string_view text) const;

  // The token as tokenizer.json spells it (byte-level text for vocabulary tokens).
  std::optional<std::string> id_to_token(TokenId id) const;
  std::optional<TokenId> token_to_id(std::string_view token) const;
  bool is_special(TokenId id) const;
  const std::vector<AddedToken>& added_tokens() const;
  // One more than the highest id of any token.
  TokenId id_limit() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rvformer::tokenizer
