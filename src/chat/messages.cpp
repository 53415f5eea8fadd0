// chat/messages.cpp — see messages.h.
#include "chat/messages.h"

#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "chat/jinja_builtins.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::chat {

namespace {

using nlohmann::ordered_json;

// Values nested deeper than this are refused: nothing in a conversation needs them, and every
// consumer (the template, json.dumps) walks values recursively.
constexpr std::size_t kMaxNesting = 64;

std::size_t nesting(const ordered_json& value) {
  std::size_t deepest = 0;
  std::vector<std::pair<const ordered_json*, std::size_t>> pending{{&value, 1}};
  while (!pending.empty()) {
    const auto [v, depth] = pending.back();
    pending.pop_back();
    deepest = std::max(deepest, depth);
    if (depth > kMaxNesting) break;
    if (v->is_structured()) {
      for (const auto& child : *v) pending.emplace_back(&child, depth + 1);
    }
  }
  return deepest;
}

const char* json_type(const ordered_json& v) {
  switch (v.type()) {
    case ordered_json::value_t::null: return "null";
    case ordered_json::value_t::boolean: return "a boolean";
    case ordered_json::value_t::string: return "a string";
    case ordered_json::value_t::array: return "an array";
    case ordered_json::value_t::object: return "an object";
    default: return "a number";
  }
}

class MessageParser {
 public:
  MessageParser(std::string_view source, std::size_t index) : source_(source), index_(index) {}

  [[noreturn]] void fail(const std::string& what) const { rvformer::fail("{}: message {}: {}", source_, index_, what); }

  Message parse(const ordered_json& json) const {
    if (!json.is_object()) fail(fmt::format("expected an object, got {}", json_type(json)));
    if (!json.contains("role")) fail("missing field 'role'");
    if (!json["role"].is_string()) fail(fmt::format("'role' must be a string, got {}", json_type(json["role"])));
    Message m;
    m.role = json["role"].get<std::string>();
    check_fields(json, m.role);
    if (json.contains("content")) m.content = content(json["content"]);
    if (m.role != "assistant" && !m.content) fail(fmt::format("a {} message needs 'content'", m.role));
    m.name = optional_string(json, "name");
    m.reasoning_content = optional_string(json, "reasoning_content");
    m.tool_call_id = optional_string(json, "tool_call_id");
    if (json.contains("tool_calls") && !json["tool_calls"].is_null()) {
      const ordered_json& calls = json["tool_calls"];
      if (!calls.is_array()) fail(fmt::format("'tool_calls' must be an array, got {}", json_type(calls)));
      for (std::size_t i = 0; i < calls.size(); ++i) m.tool_calls.push_back(tool_call(calls[i], i));
    }
    return m;
  }

 private:
  void check_fields(const ordered_json& json, const std::string& role) const {
    std::vector<std::string_view> allowed;
    if (role == "system" || role == "user") {
      allowed = {"role", "content", "name"};
    } else if (role == "assistant") {
      allowed = {"role", "content", "name", "reasoning_content", "tool_calls"};
    } else if (role == "tool") {
      allowed = {"role", "content", "name", "tool_call_id"};
    } else {
      fail(fmt::format("unknown role '{}' (expected system, user, assistant or tool)", role));
    }
    for (const auto& [key, value] : json.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        fail(fmt::format("unknown field '{}' (a {} message has: {})", key, role, fmt::join(allowed, ", ")));
      }
    }
  }

  std::optional<std::string> optional_string(const ordered_json& json, const char* key) const {
    if (!json.contains(key) || json[key].is_null()) return std::nullopt;
    if (!json[key].is_string()) fail(fmt::format("'{}' must be a string, got {}", key, json_type(json[key])));
    return json[key].get<std::string>();
  }

  std::optional<std::string> content(const ordered_json& value) const {
    if (value.is_null()) return std::nullopt;
    if (value.is_string()) return value.get<std::string>();
    if (!value.is_array()) fail(fmt::format("'content' must be a string, null or an array of text parts, got {}", json_type(value)));
    std::string text;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const ordered_json& part = value[i];
      if (!part.is_object() || !part.contains("type") || part["type"] != "text") {
        fail(fmt::format("content part {} is not a text part (only {{\"type\": \"text\", \"text\": ...}} is supported)", i));
      }
      for (const auto& [key, v] : part.items()) {
        if (key != "type" && key != "text") fail(fmt::format("content part {}: unknown field '{}'", i, key));
      }
      if (!part.contains("text") || !part["text"].is_string()) fail(fmt::format("content part {}: 'text' must be a string", i));
      text += part["text"].get<std::string>();
    }
    return text;
  }

  ToolCall tool_call(const ordered_json& json, std::size_t i) const {
    auto bad = [&](const std::string& what) { fail(fmt::format("tool_calls[{}]: {}", i, what)); };
    if (!json.is_object()) bad(fmt::format("expected an object, got {}", json_type(json)));
    // The OpenAI form nests name and arguments in "function"; the flat form has them at the top.
    const bool nested = json.contains("function");
    for (const auto& [key, v] : json.items()) {
      const bool known = nested ? (key == "id" || key == "type" || key == "function") : (key == "id" || key == "type" || key == "name" || key == "arguments");
      if (!known) bad(fmt::format("unknown field '{}'", key));
    }
    if (json.contains("type") && json["type"] != "function") bad("'type' must be \"function\"");
    ToolCall call;
    if (json.contains("id") && !json["id"].is_null()) {
      if (!json["id"].is_string()) bad("'id' must be a string");
      call.id = json["id"].get<std::string>();
    }
    const ordered_json& function = nested ? json["function"] : json;
    if (!function.is_object()) bad("'function' must be an object");
    for (const auto& [key, v] : function.items()) {
      if (key != "name" && key != "arguments" && nested) bad(fmt::format("function: unknown field '{}'", key));
    }
    if (!function.contains("name") || !function["name"].is_string() || function["name"].get<std::string>().empty()) {
      bad("the function needs a non-empty string 'name'");
    }
    call.name = function["name"].get<std::string>();
    if (function.contains("arguments") && !function["arguments"].is_null()) call.arguments = arguments(function["arguments"], i);
    return call;
  }

  ordered_json arguments(const ordered_json& value, std::size_t i) const {
    if (value.is_object()) return value;
    if (!value.is_string()) fail(fmt::format("tool_calls[{}]: 'arguments' must be a JSON object or a string holding one", i));
    const std::string& text = value.get_ref<const std::string&>();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) return ordered_json::object();
    const ordered_json parsed = ordered_json::parse(text, nullptr, false);
    if (parsed.is_discarded()) fail(fmt::format("tool_calls[{}]: 'arguments' is not valid JSON", i));
    if (!parsed.is_object()) fail(fmt::format("tool_calls[{}]: 'arguments' must hold a JSON object, not {}", i, json_type(parsed)));
    return parsed;
  }

  std::string_view source_;
  std::size_t index_;
};

ordered_json parse_tools(const ordered_json& tools, std::string_view source) {
  if (tools.is_null()) return tools;
  if (!tools.is_array()) fail("{}: 'tools' must be an array, got {}", source, json_type(tools));
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const ordered_json& tool = tools[i];
    const bool ok = tool.is_object() && tool.value("type", "") == "function" && tool.contains("function") &&
                    tool["function"].is_object() && tool["function"].contains("name") && tool["function"]["name"].is_string();
    if (!ok) fail("{}: tool {}: expected {{\"type\": \"function\", \"function\": {{\"name\": ..., ...}}}}", source, i);
  }
  return tools;
}

}  // namespace

Conversation parse_conversation(std::string_view json_text, std::string_view source) {
  ordered_json json;
  try {
    json = ordered_json::parse(json_text);
  } catch (const ordered_json::parse_error& e) {
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
    std::string what = e.what();
    const std::size_t at = what.find("] ");
    fail("{}: not valid JSON: {}", source, at == std::string::npos ? what : what.substr(at + 2));
  }
  if (nesting(json) > kMaxNesting) fail("{}: values are nested more than {} levels deep", source, kMaxNesting);
  Conversation conversation;
  const ordered_json* messages = &json;
  if (json.is_object()) {
    for (const auto& [key, v] : json.items()) {
      if (key != "messages" && key != "tools") fail("{}: unknown field '{}' (expected 'messages' and optionally 'tools')", source, key);
    }
    if (!json.contains("messages")) fail("{}: missing field 'messages'", source);
    messages = &json["messages"];
    if (json.contains("tools")) conversation.tools = parse_tools(json["tools"], source);
  }
  if (!messages->is_array()) fail("{}: expected an array of messages or an object with 'messages', got {}", source, json_type(*messages));
  for (std::size_t i = 0; i < messages->size(); ++i) conversation.messages.push_back(MessageParser(source, i).parse((*messages)[i]));
  return conversation;
}

Conversation load_conversation(const std::filesystem::path& path) { return parse_conversation(read_file_text(path), path.string()); }

std::string python_json(const ordered_json& value) { return jinja::json_dumps(jinja::from_json(value)); }

ordered_json to_json(const Message& m, ArgumentsAs arguments) {
  ordered_json json = ordered_json::object();
  json["role"] = m.role;
  json["content"] = m.content ? ordered_json(*m.content) : ordered_json();
  if (m.reasoning_content) json["reasoning_content"] = *m.reasoning_content;
  if (!m.tool_calls.empty()) {
    ordered_json calls = ordered_json::array();
    for (const ToolCall& call : m.tool_calls) {
      ordered_json c = ordered_json::object();
      if (!call.id.empty()) c["id"] = call.id;
      c["type"] = "function";
      c["function"] = {{"name", call.name},
                       {"arguments", arguments == ArgumentsAs::object ? call.arguments : ordered_json(python_json(call.arguments))}};
      calls.push_back(std::move(c));
    }
    json["tool_calls"] = std::move(calls);
  }
  if (m.tool_call_id) json["tool_call_id"] = *m.tool_call_id;
  if (m.name) json["name"] = *m.name;
  return json;
}

ordered_json to_json(const std::vector<Message>& messages, ArgumentsAs arguments) {
  ordered_json array = ordered_json::array();
  for (const Message& m : messages) array.push_back(to_json(m, arguments));
  return array;
}

}  // namespace rvformer::chat
