// chat/jinja_parser.h — from template source to syntax tree: the lexer (tags, whitespace control,
// literals) and the parser (Jinja's statement and expression grammar).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja_syntax.h"
#include "chat/jinja_template.h"

namespace rvformer::chat::jinja {

enum class TokenType { data, variable_begin, variable_end, block_begin, block_end, name, string, integer, floating, op, end };

struct Token {
  TokenType type;
  std::string text;  // data text, name, decoded string, operator spelling
  std::int64_t integer = 0;
  double floating = 0;
  int line = 1;
};

// Throws TemplateError(syntax) for malformed tags, literals and unbalanced brackets.
std::vector<Token> tokenize(std::string_view source, const Options& options, std::string_view source_name);

// Throws TemplateError (syntax, assertion, unsupported).
Body parse(const std::vector<Token>& tokens, std::string_view source_name);

}  // namespace rvformer::chat::jinja
