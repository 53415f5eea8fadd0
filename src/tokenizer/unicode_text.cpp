// tokenizer/unicode_text.cpp — see unicode_text.h. ICU's U8_NEXT treats each maximal subpart of an
// ill-formed sequence as one error, which is exactly the U+FFFD substitution rule we need.
#include "tokenizer/unicode_text.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

namespace rvformer::tokenizer {

namespace {

constexpr char32_t replacement_character = 0xFFFD;

// The code point at `offset` (advanced past it), or a negative value for an ill-formed sequence.
UChar32 decode_at(std::string_view text, std::size_t& offset) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
  const auto length = static_cast<std::int32_t>(text.size());
  auto position = static_cast<std::int32_t>(offset);
  UChar32 code_point;
  U8_NEXT(bytes, position, length, code_point);
  offset = static_cast<std::size_t>(position);
  return code_point;
}

}  // namespace

std::optional<std::size_t> find_ill_formed_utf8(std::string_view text) {
  for (std::size_t offset = 0; offset < text.size();) {
    const std::size_t start = offset;
    if (decode_at(text, offset) < 0) return start;
  }
  return std::nullopt;
}

std::string to_well_formed_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t offset = 0; offset < bytes.size();) {
    const std::size_t start = offset;
    const UChar32 code_point = decode_at(bytes, offset);
    if (code_point < 0) {
      append_utf8(out, replacement_character);
    } else {
      out.append(bytes.substr(start, offset - start));
    }
  }
  return out;
}

char32_t next_code_point(std::string_view text, std::size_t& offset) {
  const UChar32 code_point = decode_at(text, offset);
  return code_point < 0 ? replacement_character : static_cast<char32_t>(code_point);
}

char32_t previous_code_point(std::string_view text, std::size_t& offset) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
  auto position = static_cast<std::int32_t>(offset);
  UChar32 code_point;
  U8_PREV(bytes, 0, position, code_point);
  offset = static_cast<std::size_t>(position);
  return code_point < 0 ? replacement_character : static_cast<char32_t>(code_point);
}

void append_utf8(std::string& out, char32_t code_point) {
  std::uint8_t buffer[U8_MAX_LENGTH];
  std::int32_t length = 0;
  U8_APPEND_UNSAFE(buffer, length, static_cast<UChar32>(code_point));
  out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(length));
}

bool is_white_space(char32_t code_point) {
  return u_hasBinaryProperty(static_cast<UChar32>(code_point), UCHAR_WHITE_SPACE);
}

bool is_word_character(char32_t code_point) {
  const auto c = static_cast<UChar32>(code_point);
  constexpr std::uint32_t word_categories = U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK;
  return u_hasBinaryProperty(c, UCHAR_ALPHABETIC) || (U_GET_GC_MASK(c) & word_categories) != 0 ||
         u_hasBinaryProperty(c, UCHAR_JOIN_CONTROL);
}

}  // namespace rvformer::tokenizer
