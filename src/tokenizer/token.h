// tokenizer/token.h — token ids and the added tokens of tokenizer.json (special ones such as
// <|im_end|>, plain ones such as <tool_call>), with Hugging Face's flags.
#pragma once

#include <cstdint>
#include <string>

namespace rvformer::tokenizer {

// The engine's token id type.
using TokenId = std::uint32_t;

struct AddedToken {
  TokenId id = 0;
  std::string content;
  bool special = false;      // skipped when decoding with skip_special_tokens
  bool single_word = false;  // matches only where no word character touches it
  bool lstrip = false;       // takes the white space on its left
  bool rstrip = false;       // takes the white space on its right
  bool normalized = true;    // matched in normalized text (else in the raw text)
};

}  // namespace rvformer::tokenizer
