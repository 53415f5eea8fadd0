// chat/utf8_stream.h — the bytes of successive tokens as printable text. Byte-level tokens can
// end inside a UTF-8 sequence; such a tail is held back until the next token completes it.
// Bytes that cannot form UTF-8 become U+FFFD, one per maximal invalid subsequence, which is what
// Python's bytes.decode("utf-8", errors="replace") (and so Hugging Face's decode) shows.
#pragma once

#include <string>
#include <string_view>

namespace rvformer::chat {

class Utf8Stream {
 public:
  // The text that `bytes` completes.
  std::string push(std::string_view bytes);
  // What is left at the end of the stream (an unfinished sequence becomes U+FFFD).
  std::string finish();

 private:
  std::string pending_;
};

// The whole of `bytes` decoded with replacement.
std::string valid_utf8(std::string_view bytes);

}  // namespace rvformer::chat
