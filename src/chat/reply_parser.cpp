// chat/reply_parser.cpp — see reply_parser.h. The reasoning split follows the Qwen3.5 template's
// own reading of an assistant message (text before the first </think>, after its last <think>;
// the content after the last </think>), so that rendering a parsed reply gives the model's text
// back.
#include "chat/reply_parser.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "chat/python_text.h"

namespace rvformer::chat {

namespace {

using nlohmann::ordered_json;

constexpr std::string_view kCallOpen = "<tool_call>";
constexpr std::string_view kCallClose = "</tool_call>";
constexpr std::string_view kFunctionOpen = "<function=";
constexpr std::string_view kFunctionClose = "</function>";
constexpr std::string_view kParameterOpen = "<parameter=";
constexpr std::string_view kParameterClose = "</parameter>";

std::string trim(std::string_view text) { return python::strip(text, std::nullopt, python::StripSide::both); }

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// A short quotation of model text for a problem report.
std::string excerpt(std::string_view text) {
  std::string t = trim(text);
  if (python::code_points(t).size() > 60) t = python::utf8(python::code_points(t).substr(0, 57)) + "...";
  return nlohmann::json(t).dump();
}

// The JSON Schema "type" of a tool's parameter, as a list (empty when unknown).
std::vector<std::string> parameter_types(const ordered_json& tools, std::string_view function, std::string_view parameter) {
  if (!tools.is_array()) return {};
  for (const ordered_json& tool : tools) {
    const ordered_json* f = tool.is_object() && tool.contains("function") ? &tool["function"] : nullptr;
    if (!f || !f->is_object() || f->value("name", "") != function) continue;
    const ordered_json properties = f->value("parameters", ordered_json::object()).value("properties", ordered_json::object());
    if (!properties.is_object() || !properties.contains(parameter) || !properties[std::string(parameter)].is_object()) return {};
    const ordered_json type = properties[std::string(parameter)].value("type", ordered_json());
    if (type.is_string()) return {type.get<std::string>()};
    std::vector<std::string> types;
    if (type.is_array()) {
      for (const ordered_json& t : type) {
        if (t.is_string()) types.push_back(t.get<std::string>());
      }
    }
    return types;
  }
  return {};
}

std::optional<ordered_json> as_type(const std::string& text, const std::string& type) {
  if (type == "string") return ordered_json(text);
  if (type == "boolean") {
    if (text == "true" || text == "True") return ordered_json(true);
    if (text == "false" || text == "False") return ordered_json(false);
    return std::nullopt;
  }
  if (type == "null") {
    if (text == "null" || text == "None") return ordered_json(nullptr);
    return std::nullopt;
  }
  if (type == "integer") {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return ordered_json(value);
  }
  const ordered_json parsed = ordered_json::parse(text, nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  if (type == "number" && parsed.is_number()) return parsed;
  if (type == "object" && parsed.is_object()) return parsed;
  if (type == "array" && parsed.is_array()) return parsed;
  return std::nullopt;
}

class CallParser {
 public:
  CallParser(std::string_view body, const ordered_json& tools, std::vector<std::string>& problems)
      : body_(body), tools_(tools), problems_(problems) {}

  // A call, or nothing with the reason in `error`.
  std::optional<ToolCall> parse(std::string& error) {
    skip_space();
    if (!starts_with(rest(), kFunctionOpen)) {
      error = "no <function=NAME> in the tool call";
      return std::nullopt;
    }
    at_ += kFunctionOpen.size();
    const std::size_t name_end = body_.find('>', at_);
    const std::size_t line_end = body_.find('\n', at_);
    if (name_end == std::string_view::npos || (line_end != std::string_view::npos && line_end < name_end)) {
      error = "the <function=NAME> tag is not closed with '>'";
      return std::nullopt;
    }
    ToolCall call;
    call.name = trim(body_.substr(at_, name_end - at_));
    if (call.name.empty()) {
      error = "the function name is empty";
      return std::nullopt;
    }
    at_ = name_end + 1;
    while (true) {
      skip_space();
      if (at_ >= body_.size()) {
        problems_.push_back(fmt::format("tool call {}: the function block is not closed with </function>", call.name));
        return call;
      }
      if (starts_with(rest(), kFunctionClose)) {
        at_ += kFunctionClose.size();
        if (!trim(rest()).empty()) problems_.push_back(fmt::format("tool call {}: text after </function>: {}", call.name, excerpt(rest())));
        return call;
      }
      if (!starts_with(rest(), kParameterOpen)) {
        error = fmt::format("unexpected text in the function block: {}", excerpt(rest()));
        return std::nullopt;
      }
      if (!parameter(call, error)) return std::nullopt;
    }
  }

 private:
  std::string_view rest() const { return body_.substr(std::min(at_, body_.size())); }
  void skip_space() {
    while (at_ < body_.size() && python::is_space(static_cast<unsigned char>(body_[at_]))) ++at_;
  }

  bool parameter(ToolCall& call, std::string& error) {
    at_ += kParameterOpen.size();
    const std::size_t key_end = body_.find('>', at_);
    const std::size_t line_end = body_.find('\n', at_);
    if (key_end == std::string_view::npos || (line_end != std::string_view::npos && line_end < key_end)) {
      error = "a <parameter=NAME> tag is not closed with '>'";
      return false;
    }
    const std::string key = trim(body_.substr(at_, key_end - at_));
    std::size_t start = key_end + 1;
    if (start < body_.size() && body_[start] == '\n') ++start;
    std::size_t end = body_.find(kParameterClose, start);
    const std::size_t next = std::min(body_.find(kParameterOpen, start), body_.find(kFunctionClose, start));
    std::size_t resume = end + kParameterClose.size();
    if (end == std::string_view::npos || next < end) {
      problems_.push_back(fmt::format("tool call {}: parameter {} is not closed with </parameter>", call.name, key));
      end = std::min(next, body_.size());
      resume = end;
    }
    std::string_view value = body_.substr(start, end - start);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    if (call.arguments.contains(key)) problems_.push_back(fmt::format("tool call {}: parameter {} is given twice; the last one counts", call.name, key));
    call.arguments[key] = convert(call.name, key, std::string(value));
    at_ = resume;
    return true;
  }

  ordered_json convert(const std::string& function, const std::string& key, const std::string& text) {
    const std::vector<std::string> types = parameter_types(tools_, function, key);
    if (types.empty()) return text;
    // Text fits "string" always, so with a union of types the others are tried first.
    for (const std::string& type : types) {
      if (type == "string") continue;
      if (std::optional<ordered_json> v = as_type(text, type)) return *v;
    }
    if (std::find(types.begin(), types.end(), "string") != types.end()) return text;
    problems_.push_back(fmt::format("tool call {}: parameter {} = {} is not of type {}; kept as text", function, key, excerpt(text),
                                    fmt::join(types, " or ")));
    return text;
  }

  std::string_view body_;
  const ordered_json& tools_;
  std::vector<std::string>& problems_;
  std::size_t at_ = 0;
};

// Splits off the reasoning; returns the text after it.
std::string_view take_reasoning(std::string_view text, bool reasoning_open, ParsedReply& reply) {
  const std::size_t close = text.find("</think>");
  if (close == std::string_view::npos) {
    if (!reasoning_open) return text;
    std::string_view reasoning = text;
    if (const std::size_t open = reasoning.rfind("<think>"); open != std::string_view::npos) reasoning.remove_prefix(open + 7);
    reply.message.reasoning_content = trim(reasoning);
    reply.problems.push_back("the reasoning was not closed with </think> (the reply was cut off)");
    return {};
  }
  std::string_view reasoning = text.substr(0, close);
  if (const std::size_t open = reasoning.rfind("<think>"); open != std::string_view::npos) reasoning.remove_prefix(open + 7);
  reply.message.reasoning_content = trim(reasoning);
  return text.substr(text.rfind("</think>") + 8);
}

}  // namespace

ParsedReply parse_reply(std::string_view text, bool reasoning_open, const ordered_json& tools) {
  ParsedReply reply;
  reply.message.role = "assistant";
  const std::string_view rest = take_reasoning(text, reasoning_open, reply);
  std::size_t at = rest.find(kCallOpen);
  std::string content = trim(rest.substr(0, at));
  std::vector<std::string> kept;  // text that is neither content before the calls nor a call
  while (at != std::string_view::npos) {
    const std::size_t body = at + kCallOpen.size();
    const std::size_t close = rest.find(kCallClose, body);
    const std::size_t next_open = rest.find(kCallOpen, body);
    if (close == std::string_view::npos || (next_open != std::string_view::npos && next_open < close)) {
      const std::size_t end = next_open == std::string_view::npos ? rest.size() : next_open;
      kept.push_back(trim(rest.substr(at, end - at)));
      reply.problems.push_back(fmt::format("malformed tool call (no </tool_call>): {}", excerpt(rest.substr(at, end - at))));
      at = next_open;
      continue;
    }
    std::string error;
    if (std::optional<ToolCall> call = CallParser(rest.substr(body, close - body), tools, reply.problems).parse(error)) {
      reply.message.tool_calls.push_back(std::move(*call));
    } else {
      kept.push_back(trim(rest.substr(at, close + kCallClose.size() - at)));
      reply.problems.push_back(fmt::format("malformed tool call ({}): {}", error, excerpt(rest.substr(body, close - body))));
    }
    const std::size_t after = close + kCallClose.size();
    at = rest.find(kCallOpen, after);
    const std::string between = trim(rest.substr(after, (at == std::string_view::npos ? rest.size() : at) - after));
    if (!between.empty()) {
      kept.push_back(between);
      reply.problems.push_back(fmt::format("text after a tool call: {}", excerpt(between)));
    }
  }
  for (const std::string& k : kept) {
    if (!content.empty()) content += "\n\n";
    content += k;
  }
  if (!content.empty() || reply.message.tool_calls.empty()) reply.message.content = content;
  return reply;
}

}  // namespace rvformer::chat
