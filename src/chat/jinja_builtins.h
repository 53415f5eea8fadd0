// chat/jinja_builtins.h — what a template can call: Jinja's filters and tests, the Python methods
// of str, dict and list that the sandbox allows, and the globals Hugging Face provides
// (range, namespace, dict, raise_exception, strftime_now).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "chat/jinja_syntax.h"
#include "chat/jinja_value.h"

namespace rvformer::chat::jinja {

// Null when unknown.
FilterFunction find_filter(std::string_view name);
TestFunction find_test(std::string_view name);
// Real Jinja filters and tests this engine does not implement (reported as unsupported rather
// than unknown).
bool is_unsupported_filter(std::string_view name);
bool is_unsupported_test(std::string_view name);

// `self.name` for str, dict and list methods: a bound method, an unsafe undefined for methods the
// immutable sandbox blocks (list.append, dict.update, ...), or nothing.
std::optional<Value> method(const Value& self, std::string_view name);

// The global names every template sees.
Dict global_functions();

struct JsonFormat {
  std::optional<std::string> indent;  // absent: one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// Python's json.dumps. TypeError for values JSON cannot hold.
std::string json_dumps(const Value& v, const JsonFormat& format = {});

}  // namespace rvformer::chat::jinja
