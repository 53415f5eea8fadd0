// tokenizer/byte_level.h — GPT-2's byte-level alphabet, which Qwen's vocabularies are written in:
// each of the 256 bytes is spelled by one printable code point (printable Latin-1 bytes by
// themselves, the others by U+0100 onwards), so that every token is text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rvformer::tokenizer {

// The code point that spells `byte`.
char32_t byte_level_char(std::uint8_t byte);

// The byte-level text (UTF-8) that spells `bytes`.
std::string to_byte_level(std::string_view bytes);

// The bytes that the byte-level text `token` spells, or nothing when one of its code points is
// outside the alphabet (such tokens, e.g. added ones containing a space, stand for themselves).
std::optional<std::string> from_byte_level(std::string_view token);

}  // namespace rvformer::tokenizer
