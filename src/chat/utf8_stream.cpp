// chat/utf8_stream.cpp — see utf8_stream.h.
#include "chat/utf8_stream.h"

namespace rvformer::chat {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Bytes [0, n) of `text` that start a well-formed sequence: its full length when complete, or
// the length of the longest valid (possibly unfinished) prefix; `complete` says which.
std::size_t valid_prefix(std::string_view text, bool& complete) {
  const auto lead = static_cast<unsigned char>(text[0]);
  complete = false;
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead < 0x80) {
    complete = true;
    return 1;
  }
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    low = lead == 0xE0 ? 0xA0 : 0x80;
    high = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    low = lead == 0xF0 ? 0x90 : 0x80;
    high = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  std::size_t n = 1;
  for (; n < length && n < text.size(); ++n) {
    const auto c = static_cast<unsigned char>(text[n]);
    const bool ok = n == 1 ? (c >= low && c <= high) : (c >= 0x80 && c <= 0xBF);
    if (!ok) return n;
  }
  complete = n == length;
  return n;
}

// Decodes `text`; with `hold_tail`, an unfinished sequence at the very end is left in `rest`.
std::string decode(std::string_view text, bool hold_tail, std::string& rest) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    bool complete = false;
    const std::size_t n = valid_prefix(text.substr(i), complete);
    if (complete) {
      out += text.substr(i, n);
      i += n;
    } else if (hold_tail && n > 0 && i + n == text.size()) {
      rest = std::string(text.substr(i));
      return out;
    } else {
      out += kReplacement;
      i += n == 0 ? 1 : n;
    }
  }
  rest.clear();
  return out;
}

}  // namespace

std::string Utf8Stream::push(std::string_view bytes) {
  const std::string text = pending_ + std::string(bytes);
  return decode(text, true, pending_);
}

std::string Utf8Stream::finish() {
  std::string rest;
  const std::string text = decode(pending_, false, rest);
  pending_.clear();
  return text;
}

std::string valid_utf8(std::string_view bytes) {
  std::string rest;
  return decode(bytes, false, rest);
}

}  // namespace rvformer::chat
