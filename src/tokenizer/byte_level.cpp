// tokenizer/byte_level.cpp — see byte_level.h.
#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/unicode_text.h"

namespace rvformer::tokenizer {

namespace {

// Bytes that are printable Latin-1 stand for themselves; the rest, in byte order, take the code
// points from U+0100 on.
constexpr bool spells_itself(unsigned byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE);
}

constexpr std::array<char32_t, 256> make_alphabet() {
  std::array<char32_t, 256> alphabet{};
  char32_t next_extra = 0x100;
  for (unsigned byte = 0; byte < 256; ++byte) alphabet[byte] = spells_itself(byte) ? byte : next_extra++;
  return alphabet;
}

constexpr std::array<char32_t, 256> alphabet = make_alphabet();
constexpr char32_t last_alphabet_char = 0x100 + 255;

// The byte each code point up to last_alphabet_char spells, or -1.
constexpr std::array<std::int16_t, last_alphabet_char + 1> make_inverse() {
  std::array<std::int16_t, last_alphabet_char + 1> inverse{};
  for (auto& entry : inverse) entry = -1;
  for (unsigned byte = 0; byte < 256; ++byte) inverse[alphabet[byte]] = static_cast<std::int16_t>(byte);
  return inverse;
}

constexpr auto inverse = make_inverse();

}  // namespace

char32_t byte_level_char(std::uint8_t byte) { return alphabet[byte]; }

std::string to_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char byte : bytes) append_utf8(out, alphabet[static_cast<std::uint8_t>(byte)]);
  return out;
}

std::optional<std::string> from_byte_level(std::string_view token) {
  std::string bytes;
  for (std::size_t offset = 0; offset < token.size();) {
    const char32_t code_point = next_code_point(token, offset);
    if (code_point > last_alphabet_char || inverse[code_point] < 0) return std::nullopt;
    bytes.push_back(static_cast<char>(inverse[code_point]));
  }
  return bytes;
}

}  // namespace rvformer::tokenizer
