// chat/jinja_lexer.cpp — the template lexer. It reproduces Jinja2's lexer rules: newlines
// normalised to \n and one trailing newline dropped; `{%-`/`-%}` strip all whitespace on that side;
// lstrip_blocks removes a block or comment tag's indentation when only whitespace precedes it on
// its line (`{%+` keeps it); trim_blocks removes the newline after a block or comment tag (`+%}`
// keeps it); `{% raw %}` passes text through; tag ends are only recognised outside brackets.
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "chat/jinja_parser.h"
#include "chat/python_text.h"

namespace rvformer::chat::jinja {

namespace {

std::string normalize_newlines(std::string_view source, bool keep_trailing_newline) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

class Lexer {
 public:
  Lexer(std::string_view source, const Options& options, std::string_view source_name)
      : src_(normalize_newlines(source, options.keep_trailing_newline)), options_(options), source_name_(source_name) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const std::size_t tag = find_tag_start(pos_);
      if (tag == std::string::npos) {
        emit_data(src_.substr(pos_));
        pos_ = src_.size();
        break;
      }
      lex_tag(tag);
    }
    tokens_.push_back(Token{TokenType::end, "", 0, 0, line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw TemplateError(ErrorKind::syntax, source_name_, line_, message); }

  std::size_t find_tag_start(std::size_t from) const {
    for (std::size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string::npos;
  }

  // The code point at `at` when it is Python whitespace, with its byte length.
  std::size_t space_length(std::size_t at) const {
    if (at >= src_.size()) return 0;
    const auto lead = static_cast<unsigned char>(src_[at]);
    if (lead < 0x80) return python::is_space(lead) ? 1 : 0;
    std::size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (at + n > src_.size()) return 0;
    const std::u32string cps = python::code_points(std::string_view(src_).substr(at, n));
    return cps.size() == 1 && python::is_space(cps[0]) ? n : 0;
  }

  std::size_t skip_spaces(std::size_t at) const {
    while (std::size_t n = space_length(at)) at += n;
    return at;
  }

  void count_lines(std::string_view text) {
    for (char c : text) line_ += c == '\n';
  }

  void emit_data(std::string_view text) {
    if (!text.empty()) tokens_.push_back(Token{TokenType::data, std::string(text), 0, 0, line_});
    count_lines(text);
  }

  // The text before a tag, after the tag's left-side whitespace control.
  void emit_text_before_tag(std::string_view text, char sign, bool lstrip_applies) {
    std::string_view kept = text;
    if (sign == '-') {
      kept = text.substr(0, text.size() - trailing_space_bytes(text));
    } else if (sign != '+' && lstrip_applies && options_.lstrip_blocks) {
      const std::size_t line_start = text.rfind('\n') == std::string_view::npos ? 0 : text.rfind('\n') + 1;
      const std::string_view indentation = text.substr(line_start);
      if ((line_start > 0 || line_starting_) && !indentation.empty() && trailing_space_bytes(indentation) == indentation.size()) {
        kept = text.substr(0, line_start);
      }
    }
    emit_data(kept);
    count_lines(text.substr(kept.size()));
  }

  static std::size_t trailing_space_bytes(std::string_view text) {
    const std::u32string cps = python::code_points(text);
    std::size_t n = cps.size();
    while (n > 0 && python::is_space(cps[n - 1])) --n;
    return text.size() - python::utf8(std::u32string_view(cps).substr(0, n)).size();
  }

  // After a tag's closing delimiter: `-` strips all following whitespace, a plain block or comment
  // end drops one newline when trim_blocks is on.
  void finish_tag(std::size_t after_end, char sign, bool trim_applies) {
    std::size_t next = after_end;
    if (sign == '-') {
      next = skip_spaces(after_end);
    } else if (sign != '+' && trim_applies && options_.trim_blocks && next < src_.size() && src_[next] == '\n') {
      ++next;
    }
    count_lines(std::string_view(src_).substr(after_end, next - after_end));
    line_starting_ = next > 0 && src_[next - 1] == '\n';
    pos_ = next;
  }

  char sign_at(std::size_t at) const { return at < src_.size() && (src_[at] == '-' || src_[at] == '+') ? src_[at] : 0; }

  void lex_tag(std::size_t tag) {
    const char kind = src_[tag + 1];
    const char sign = sign_at(tag + 2);
    const std::string_view text = std::string_view(src_).substr(pos_, tag - pos_);
    std::size_t inner = tag + 2 + (sign ? 1 : 0);
    if (kind == '%') {
      if (std::optional<std::size_t> raw_end = raw_begin_end(inner)) {
        emit_text_before_tag(text, sign, true);
        lex_raw(*raw_end, tag);
        return;
      }
    }
    emit_text_before_tag(text, sign, kind != '{');
    count_lines(std::string_view(src_).substr(tag, inner - tag));
    if (kind == '#') {
      lex_comment(inner);
    } else {
      lex_expression_tag(inner, kind == '%');
    }
  }

  // `{% raw %}` (the part after `{%` and its sign starts at `at`): the position after its end.
  std::optional<std::size_t> raw_begin_end(std::size_t at) const {
    at = skip_spaces(at);
    if (src_.compare(at, 3, "raw") != 0) return std::nullopt;
    at = skip_spaces(at + 3);
    if (src_.compare(at, 3, "-%}") == 0) return skip_spaces(at + 3);
    if (src_.compare(at, 2, "%}") == 0) return at + 2;
    return std::nullopt;
  }

  void lex_raw(std::size_t content_start, std::size_t tag) {
    count_lines(std::string_view(src_).substr(tag, content_start - tag));
    for (std::size_t at = find_tag_start(content_start); at != std::string::npos; at = find_tag_start(at + 1)) {
      if (src_[at + 1] != '%') continue;
      const char sign = sign_at(at + 2);
      std::size_t p = skip_spaces(at + 2 + (sign ? 1 : 0));
      if (src_.compare(p, 6, "endraw") != 0) continue;
      p = skip_spaces(p + 6);
      const char end_sign = sign_at(p);
      if (src_.compare(p + (end_sign ? 1 : 0), 2, "%}") != 0) continue;
      line_starting_ = content_start > 0 && src_[content_start - 1] == '\n';
      emit_text_before_tag(std::string_view(src_).substr(content_start, at - content_start), sign, true);
      count_lines(std::string_view(src_).substr(at, p - at));
      finish_tag(p + (end_sign ? 1 : 0) + 2, end_sign, true);
      return;
    }
    fail("Missing end of raw directive");
  }

  void lex_comment(std::size_t at) {
    const std::size_t end = src_.find("#}", at);
    if (end == std::string::npos) fail("Missing end of comment tag");
    const char sign = end > at && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : 0;
    count_lines(std::string_view(src_).substr(at, end - at));
    finish_tag(end + 2, sign, true);
  }

  // `{{ ... }}` or `{% ... %}` from just after the opening delimiter.
  void lex_expression_tag(std::size_t at, bool block) {
    tokens_.push_back(Token{block ? TokenType::block_begin : TokenType::variable_begin, "", 0, 0, line_});
    std::string balance;  // the closing brackets we wait for
    pos_ = at;
    while (true) {
      if (pos_ >= src_.size()) fail("unexpected end of template");
      if (balance.empty()) {
        if (std::optional<std::pair<std::size_t, char>> end = tag_end(block)) {
          tokens_.push_back(Token{block ? TokenType::block_end : TokenType::variable_end, "", 0, 0, line_});
          finish_tag(end->first, end->second, block);
          return;
        }
      }
      if (std::size_t n = space_length(pos_)) {
        count_lines(std::string_view(src_).substr(pos_, n));
        pos_ += n;
        continue;
      }
      lex_token(balance);
    }
  }

  // The tag's closing delimiter at pos_: the position after it and its sign.
  std::optional<std::pair<std::size_t, char>> tag_end(bool block) const {
    const char* close = block ? "%}" : "}}";
    const char sign = sign_at(pos_);
    if (sign == '-' || (sign == '+' && block)) {
      if (src_.compare(pos_ + 1, 2, close) == 0) return std::make_pair(pos_ + 3, sign);
    }
    if (src_.compare(pos_, 2, close) == 0) return std::make_pair(pos_ + 2, '\0');
    return std::nullopt;
  }

  void lex_token(std::string& balance) {
    const char c = src_[pos_];
    if (is_digit(c)) return lex_number();
    if (is_name_start(c)) {
      std::size_t end = pos_;
      while (end < src_.size() && is_name_char(src_[end])) ++end;
      push(TokenType::name, src_.substr(pos_, end - pos_));
      pos_ = end;
      return;
    }
    if (c == '\'' || c == '"') return lex_string(c);
    lex_operator(balance);
  }

  void push(TokenType type, std::string text) { tokens_.push_back(Token{type, std::move(text), 0, 0, line_}); }

  // Digits with optional single underscores between them, starting at `at`; the position after.
  std::size_t digit_run(std::size_t at) const {
    if (at >= src_.size() || !is_digit(src_[at])) return at;
    std::size_t end = at + 1;
    while (end < src_.size()) {
      if (is_digit(src_[end])) {
        ++end;
      } else if (src_[end] == '_' && end + 1 < src_.size() && is_digit(src_[end + 1])) {
        end += 2;
      } else {
        break;
      }
    }
    return end;
  }

  void lex_number() {
    std::string digits;
    auto without_underscores = [](std::string_view s) {
      std::string out;
      for (char ch : s) {
        if (ch != '_') out.push_back(ch);
      }
      return out;
    };
    // Floats: digits '.' digits [exponent], or digits exponent.
    std::size_t end = digit_run(pos_);
    std::size_t float_end = end;
    const bool float_allowed = pos_ == 0 || src_[pos_ - 1] != '.';  // Jinja: (?<!\.)
    if (float_allowed && float_end < src_.size() && src_[float_end] == '.' && digit_run(float_end + 1) > float_end + 1) {
      float_end = digit_run(float_end + 1);
    }
    if (float_allowed && float_end < src_.size() && (src_[float_end] == 'e' || src_[float_end] == 'E')) {
      std::size_t e = float_end + 1;
      if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
      if (digit_run(e) > e) float_end = digit_run(e);
    }
    if (float_end > end) {
      const std::string text = without_underscores(std::string_view(src_).substr(pos_, float_end - pos_));
      Token token{TokenType::floating, text, 0, 0, line_};
      std::from_chars(text.data(), text.data() + text.size(), token.floating);
      tokens_.push_back(token);
      pos_ = float_end;
      return;
    }
    int base = 10;
    std::size_t start = pos_;
    if (src_[pos_] == '0' && pos_ + 1 < src_.size() && std::string_view("bBoOxX").find(src_[pos_ + 1]) != std::string_view::npos) {
      const char prefix = static_cast<char>(src_[pos_ + 1] | 0x20);
      base = prefix == 'b' ? 2 : prefix == 'o' ? 8 : 16;
      start = pos_ + 2;
      end = start;
      auto in_base = [&](char ch) {
        const int v = is_digit(ch) ? ch - '0' : ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f') ? (ch | 0x20) - 'a' + 10 : 99;
        return v < base;
      };
      while (end < src_.size() && (in_base(src_[end]) || (src_[end] == '_' && end + 1 < src_.size() && in_base(src_[end + 1])))) ++end;
      if (end == start) fail(fmt::format("invalid integer literal at line {}", line_));
    } else if (src_[pos_] == '0') {
      // Python allows no leading zeros: "0", "00", "0_0" only.
      end = pos_ + 1;
      while (end < src_.size() && (src_[end] == '0' || (src_[end] == '_' && end + 1 < src_.size() && src_[end + 1] == '0'))) ++end;
    }
    digits = without_underscores(std::string_view(src_).substr(start, end - start));
    Token token{TokenType::integer, digits, 0, 0, line_};
    const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), token.integer, base);
    if (result.ec != std::errc()) {
      throw TemplateError(ErrorKind::unsupported, source_name_, line_,
                          fmt::format("integer literal {} does not fit in 64 bits", digits));
    }
    tokens_.push_back(token);
    pos_ = end;
  }

  // A string literal with Python's unicode-escape rules.
  void lex_string(char quote) {
    std::string value;
    std::size_t i = pos_ + 1;
    const int start_line = line_;
    while (true) {
      if (i >= src_.size()) fail("unexpected end of string literal");
      const char c = src_[i];
      if (c == quote) break;
      if (c != '\\') {
        value.push_back(c);
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) fail("unexpected end of string literal");
      i = decode_escape(i + 1, value);
    }
    Token token{TokenType::string, std::move(value), 0, 0, start_line};
    tokens_.push_back(std::move(token));
    count_lines(std::string_view(src_).substr(pos_, i + 1 - pos_));
    pos_ = i + 1;
  }

  // The escape whose letter is at src_[i]; appends its text and returns the position after it.
  std::size_t decode_escape(std::size_t i, std::string& out) {
    const char e = src_[i];
    switch (e) {
      case '\n': return i + 1;
      case '\\': out += '\\'; return i + 1;
      case '\'': out += '\''; return i + 1;
      case '"': out += '"'; return i + 1;
      case 'a': out += '\a'; return i + 1;
      case 'b': out += '\b'; return i + 1;
      case 'f': out += '\f'; return i + 1;
      case 'n': out += '\n'; return i + 1;
      case 'r': out += '\r'; return i + 1;
      case 't': out += '\t'; return i + 1;
      case 'v': out += '\v'; return i + 1;
      case 'x': return hex_escape(i + 1, 2, out);
      case 'u': return hex_escape(i + 1, 4, out);
      case 'U': return hex_escape(i + 1, 8, out);
      case 'N':
        throw TemplateError(ErrorKind::unsupported, source_name_, line_, "\\N{...} escapes are not supported");
      default: break;
    }
    if (e >= '0' && e <= '7') {
      char32_t c = 0;
      std::size_t n = 0;
      while (n < 3 && i + n < src_.size() && src_[i + n] >= '0' && src_[i + n] <= '7') c = c * 8 + (src_[i + n++] - '0');
      python::append_utf8(out, c);
      return i + n;
    }
    out += '\\';  // unknown escapes stay as written
    return i;
  }

  std::size_t hex_escape(std::size_t i, std::size_t digits, std::string& out) {
    char32_t c = 0;
    for (std::size_t k = 0; k < digits; ++k) {
      const char h = i + k < src_.size() ? static_cast<char>(src_[i + k] | 0x20) : 'z';
      const int v = is_digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : -1;
      if (v < 0) fail("malformed \\x, \\u or \\U escape in a string literal");
      c = c * 16 + static_cast<char32_t>(v);
    }
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) fail("string literal escape is not a Unicode scalar value");
    python::append_utf8(out, c);
    return i + digits;
  }

  void lex_operator(std::string& balance) {
    static constexpr std::string_view two[] = {"**", "//", "==", "!=", ">=", "<="};
    for (std::string_view op : two) {
      if (src_.compare(pos_, 2, op) == 0) {
        push(TokenType::op, std::string(op));
        pos_ += 2;
        return;
      }
    }
    const char c = src_[pos_];
    if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos) {
      fail(fmt::format("unexpected char {} at {}", python::quote(std::string(1, c)), pos_));
    }
    if (c == '(' || c == '[' || c == '{') {
      balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (balance.empty()) fail(fmt::format("unexpected '{}'", c));
      if (balance.back() != c) fail(fmt::format("unexpected '{}', expected '{}'", c, balance.back()));
      balance.pop_back();
    }
    push(TokenType::op, std::string(1, c));
    ++pos_;
  }

  std::string src_;
  Options options_;
  std::string_view source_name_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const Options& options, std::string_view source_name) {
  return Lexer(source, options, source_name).run();
}

}  // namespace rvformer::chat::jinja
