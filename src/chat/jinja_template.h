// chat/jinja_template.h — a Jinja template engine for chat templates: parse once, render with a
// context of variables. It follows Python's Jinja2 (3.1) as Hugging Face configures it for chat
// templates: trim_blocks and lstrip_blocks on, an immutable sandbox, loop controls, a `tojson`
// that is json.dumps(ensure_ascii=False) and the globals raise_exception and strftime_now.
// docs/chat.md lists what it covers.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "chat/jinja_value.h"

namespace rvformer::chat::jinja {

struct Options {
  bool trim_blocks = true;    // drop the first newline after a block or comment tag
  bool lstrip_blocks = true;  // drop the spaces and tabs before a block or comment tag on its line
  bool keep_trailing_newline = false;
};

class Template {
 public:
  // Throws TemplateError (syntax, assertion or unsupported) naming `source_name` and the line.
  static Template parse(std::string_view source, std::string source_name = "chat template", const Options& options = {});

  // `context` holds the variables; names it lacks are undefined. Throws TemplateError.
  std::string render(const Dict& context) const;

  const std::string& source_name() const { return source_name_; }

 private:
  struct Parsed;
  Template(std::shared_ptr<const Parsed> parsed, std::string source_name);
  std::shared_ptr<const Parsed> parsed_;
  std::string source_name_;
};

}  // namespace rvformer::chat::jinja
