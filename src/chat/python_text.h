// chat/python_text.h — Python's text semantics on UTF-8 strings: code points, str.isspace, the str
// methods chat templates call (strip, split, ...), float repr and the string quoting of repr() and
// json.dumps(ensure_ascii=False). Case mapping covers ASCII only (docs/chat.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rvformer::chat::python {

bool valid_utf8(std::string_view text);
// The string's code points; the caller guarantees valid UTF-8.
std::u32string code_points(std::string_view text);
std::string utf8(std::u32string_view code_points);
void append_utf8(std::string& out, char32_t code_point);

// str.isspace() for one code point (also what `\s` matches in Python's re).
bool is_space(char32_t c);

enum class StripSide { both, left, right };
// str.strip / lstrip / rstrip; `chars` absent strips whitespace.
std::string strip(std::string_view text, std::optional<std::string_view> chars, StripSide side);
// str.split / str.rsplit; `separator` absent splits on whitespace runs. maxsplit < 0: no limit.
// Throws ValueError (via jinja::raise) for an empty separator.
std::vector<std::string> split(std::string_view text, std::optional<std::string_view> separator,
                               std::int64_t maxsplit, bool from_right);
// str.replace; count < 0: every occurrence.
std::string replace(std::string_view text, std::string_view old, std::string_view replacement, std::int64_t count);
std::int64_t count(std::string_view text, std::string_view needle);
// str.find in code points, -1 when absent.
std::int64_t find(std::string_view text, std::string_view needle);

std::string upper(std::string_view text);
std::string lower(std::string_view text);
std::string title(std::string_view text);
std::string capitalize(std::string_view text);

// repr(float) / str(float): the shortest digits that round-trip, in Python's layout ("1.0",
// "1e-05", "1.5e+16", "inf", "nan").
std::string format_float(double value);
// repr(str): quoted with ' (or " when the text holds ' but no "), escapes as CPython writes them.
std::string quote(std::string_view text);
// A JSON string literal as json.dumps writes it (ensure_ascii: non-ASCII as \uXXXX escapes).
std::string json_quote(std::string_view text, bool ensure_ascii = false);

}  // namespace rvformer::chat::python
