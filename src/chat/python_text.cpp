// chat/python_text.cpp — see python_text.h.
#include "chat/python_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include <fmt/format.h>

#include "chat/jinja_value.h"

namespace rvformer::chat::python {

namespace {

// Length of the UTF-8 sequence that starts with `lead`, 0 for a byte that cannot start one.
int sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Decodes the sequence at text[i] (valid UTF-8 assumed) and advances i.
char32_t next_code_point(std::string_view text, std::size_t& i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const int n = sequence_length(lead);
  if (n <= 1) {
    ++i;
    return lead;
  }
  char32_t c = lead & (0x7F >> n);
  for (int k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  i += n;
  return c;
}

bool in_set(char32_t c, const std::u32string& set) { return set.find(c) != std::u32string::npos; }

// Characters repr() escapes although they are not ASCII control characters: CPython's
// non-printable set (categories Cc, Cf, Co, Zl, Zp, Zs) for the assigned code points chat text
// meets; unassigned code points are treated as printable.
bool non_printable(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD) return true;
  if (c == 0x1680 || (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F)) return true;
  if ((c >= 0x205F && c <= 0x2064) || (c >= 0x2066 && c <= 0x206F) || c == 0x3000) return true;
  if ((c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F || c == 0x180E) return true;
  if (c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) || (c >= 0xE000 && c <= 0xF8FF) || c >= 0xF0000) return true;
  return false;
}

bool ascii_lower(char c) { return c >= 'a' && c <= 'z'; }
bool ascii_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool ascii_letter(char c) { return ascii_lower(c) || ascii_upper(c); }
char to_upper(char c) { return ascii_lower(c) ? static_cast<char>(c - 'a' + 'A') : c; }
char to_lower(char c) { return ascii_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const int n = sequence_length(lead);
    if (n == 0 || i + n > text.size()) return false;
    for (int k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    const auto second = n > 1 ? static_cast<unsigned char>(text[i + 1]) : 0;
    if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) || (lead == 0xF0 && second < 0x90) ||
        (lead == 0xF4 && second > 0x8F)) {
      return false;  // overlong, surrogate or beyond U+10FFFF
    }
    i += n;
  }
  return true;
}

std::u32string code_points(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) out.push_back(next_code_point(text, i));
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string utf8(std::u32string_view cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t c : cps) append_utf8(out, c);
  return out;
}

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string strip(std::string_view text, std::optional<std::string_view> chars, StripSide side) {
  const std::u32string cps = code_points(text);
  const std::u32string set = chars ? code_points(*chars) : std::u32string();
  auto strippable = [&](char32_t c) { return chars ? in_set(c, set) : is_space(c); };
  std::size_t begin = 0;
  std::size_t end = cps.size();
  if (side != StripSide::right) {
    while (begin < end && strippable(cps[begin])) ++begin;
  }
  if (side != StripSide::left) {
    while (end > begin && strippable(cps[end - 1])) --end;
  }
  return utf8(std::u32string_view(cps).substr(begin, end - begin));
}

namespace {

std::vector<std::string> split_whitespace(std::string_view text, std::int64_t maxsplit, bool from_right) {
  std::u32string cps = code_points(text);
  if (from_right) std::reverse(cps.begin(), cps.end());
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (true) {
    while (i < cps.size() && is_space(cps[i])) ++i;
    if (i == cps.size()) break;
    if (maxsplit >= 0 && static_cast<std::int64_t>(parts.size()) == maxsplit) {
      std::size_t end = cps.size();
      while (end > i && is_space(cps[end - 1])) --end;
      std::u32string rest = cps.substr(i, end - i);
      if (from_right) std::reverse(rest.begin(), rest.end());
      parts.push_back(utf8(rest));
      break;
    }
    std::size_t j = i;
    while (j < cps.size() && !is_space(cps[j])) ++j;
    std::u32string word = cps.substr(i, j - i);
    if (from_right) std::reverse(word.begin(), word.end());
    parts.push_back(utf8(word));
    i = j;
  }
  if (from_right) std::reverse(parts.begin(), parts.end());
  return parts;
}

}  // namespace

std::vector<std::string> split(std::string_view text, std::optional<std::string_view> separator,
                               std::int64_t maxsplit, bool from_right) {
  if (!separator) return split_whitespace(text, maxsplit, from_right);
  if (separator->empty()) jinja::raise(jinja::ErrorKind::value, "empty separator");
  std::vector<std::string> parts;
  if (!from_right) {
    std::size_t start = 0;
    while (maxsplit < 0 || static_cast<std::int64_t>(parts.size()) < maxsplit) {
      const std::size_t at = text.find(*separator, start);
      if (at == std::string_view::npos) break;
      parts.emplace_back(text.substr(start, at - start));
      start = at + separator->size();
    }
    parts.emplace_back(text.substr(start));
    return parts;
  }
  std::size_t end = text.size();
  while (maxsplit < 0 || static_cast<std::int64_t>(parts.size()) < maxsplit) {
    if (end < separator->size()) break;
    const std::size_t at = text.rfind(*separator, end - separator->size());
    if (at == std::string_view::npos) break;
    parts.emplace_back(text.substr(at + separator->size(), end - at - separator->size()));
    end = at;
  }
  parts.emplace_back(text.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::string replace(std::string_view text, std::string_view old, std::string_view replacement, std::int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts the replacement before every code point and at the end.
    std::int64_t done = 0;
    for (std::size_t i = 0; i < text.size();) {
      if (count < 0 || done < count) {
        out += replacement;
        ++done;
      }
      const std::size_t start = i;
      next_code_point(text, i);
      out += text.substr(start, i - start);
    }
    if (count < 0 || done < count) out += replacement;
    return out;
  }
  std::size_t start = 0;
  std::int64_t done = 0;
  while (count < 0 || done < count) {
    const std::size_t at = text.find(old, start);
    if (at == std::string_view::npos) break;
    out += text.substr(start, at - start);
    out += replacement;
    start = at + old.size();
    ++done;
  }
  out += text.substr(start);
  return out;
}

std::int64_t count(std::string_view text, std::string_view needle) {
  if (needle.empty()) return static_cast<std::int64_t>(code_points(text).size()) + 1;
  std::int64_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

std::int64_t find(std::string_view text, std::string_view needle) {
  const std::size_t at = text.find(needle);
  if (at == std::string_view::npos) return -1;
  return static_cast<std::int64_t>(code_points(text.substr(0, at)).size());
}

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), to_upper);
  return out;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), to_lower);
  return out;
}

std::string title(std::string_view text) {
  std::string out(text);
  bool previous_cased = false;
  for (char& c : out) {
    c = previous_cased ? to_lower(c) : to_upper(c);
    previous_cased = ascii_letter(c);
  }
  return out;
}

std::string capitalize(std::string_view text) {
  std::string out = lower(text);
  if (!out.empty()) out[0] = to_upper(out[0]);
  return out;
}

std::string format_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view text(buffer, result.ptr - buffer);  // "-d.ddde±XX", shortest round-trip digits
  const bool negative = text.front() == '-';
  if (negative) text.remove_prefix(1);
  const std::size_t e = text.find('e');
  std::string digits(text.substr(0, e));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  int exponent = 0;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+'), text.data() + text.size(), exponent);

  std::string out = negative ? "-" : "";
  const int n = static_cast<int>(digits.size());
  if (exponent >= -4 && exponent < 16) {
    // Fixed notation, as repr() uses for 1e-4 <= |x| < 1e16.
    if (exponent < 0) {
      out.append("0.").append(static_cast<std::size_t>(-exponent - 1), '0').append(digits);
    } else if (exponent + 1 >= n) {
      out.append(digits).append(static_cast<std::size_t>(exponent + 1 - n), '0').append(".0");
    } else {
      out.append(digits, 0, static_cast<std::size_t>(exponent + 1)).append(".").append(digits, static_cast<std::size_t>(exponent + 1));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (n > 1) out.append(".").append(digits, 1);
  out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out;
}

std::string quote(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote_char = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote_char);
  for (std::size_t i = 0; i < text.size();) {
    const char32_t c = next_code_point(text, i);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<char32_t>(quote_char)) {
      out += '\\';
      out += quote_char;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (non_printable(c)) {
      out += c < 0x100 ? fmt::format("\\x{:02x}", static_cast<unsigned>(c))
             : c < 0x10000 ? fmt::format("\\u{:04x}", static_cast<unsigned>(c))
                           : fmt::format("\\U{:08x}", static_cast<unsigned>(c));
    } else {
      append_utf8(out, c);
    }
  }
  out += quote_char;
  return out;
}

std::string json_quote(std::string_view text, bool ensure_ascii) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const char32_t c = next_code_point(text, i);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || (ensure_ascii && c >= 0x7F && c < 0x10000)) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else if (ensure_ascii && c >= 0x10000) {
          const char32_t v = c - 0x10000;
          out += fmt::format("\\u{:04x}\\u{:04x}", static_cast<unsigned>(0xD800 + (v >> 10)), static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
        } else {
          append_utf8(out, c);
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace rvformer::chat::python
