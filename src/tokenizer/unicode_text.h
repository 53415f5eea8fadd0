// tokenizer/unicode_text.h — the UTF-8 and Unicode property helpers the tokenizer needs, on top of
// ICU: well-formedness checks, lossy decoding of arbitrary bytes, code point iteration, and the
// White_Space / word-character classes Hugging Face's tokenizers use around added tokens. Texts are
// shorter than 2 GiB (ICU indexes them with 32-bit integers).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rvformer::tokenizer {

// The offset of the first byte of the first ill-formed UTF-8 sequence in `text`, or nothing.
std::optional<std::size_t> find_ill_formed_utf8(std::string_view text);

// `bytes` as UTF-8 with every ill-formed sequence replaced by U+FFFD, one per maximal subpart
// (Unicode's recommended practice; what Rust's String::from_utf8_lossy and the WHATWG decoder do).
std::string to_well_formed_utf8(std::string_view bytes);

// Decodes the code point of well-formed `text` at `offset` and moves `offset` past it.
char32_t next_code_point(std::string_view text, std::size_t& offset);
// Decodes the code point of well-formed `text` that ends at `offset` and moves `offset` before it.
char32_t previous_code_point(std::string_view text, std::size_t& offset);

void append_utf8(std::string& out, char32_t code_point);

// Unicode's White_Space property (Rust's char::is_whitespace, the regex class \s).
bool is_white_space(char32_t code_point);
// The regex class \w: Alphabetic, marks, decimal digits, connector punctuation, joiners.
bool is_word_character(char32_t code_point);

}  // namespace rvformer::tokenizer
