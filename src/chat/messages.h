// chat/messages.h — a conversation in the OpenAI chat format: messages (system, user, assistant
// with optional reasoning and tool calls, tool results) and the tools offered. Messages files are
// parsed strictly, with one-line errors naming the file, the message and the field.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rvformer::chat {

struct ToolCall {
  std::string id;  // may be empty
  std::string name;
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();  // always a JSON object

  bool operator==(const ToolCall&) const = default;
};

struct Message {
  std::string role;                              // system, user, assistant or tool
  std::optional<std::string> content;            // absent or null: nothing
  std::optional<std::string> reasoning_content;  // assistant only
  std::vector<ToolCall> tool_calls;              // assistant only
  std::optional<std::string> tool_call_id;       // tool only
  std::optional<std::string> name;

  bool operator==(const Message&) const = default;
};

struct Conversation {
  std::vector<Message> messages;
  // The OpenAI tool objects ({"type": "function", "function": {...}}), kept verbatim: the
  // template prints them with tojson. Null when the file names no tools.
  nlohmann::ordered_json tools;
};

// A messages file: a JSON array of messages, or {"messages": [...], "tools": [...]}. Content may
// be a string, null, or an array of {"type": "text", "text": ...} parts (joined, as the template
// joins them). Tool call arguments may be a JSON object or a string holding one (the OpenAI form).
// Throws rvformer::Error "SOURCE: message N: ...".
Conversation parse_conversation(std::string_view json_text, std::string_view source);
Conversation load_conversation(const std::filesystem::path& path);

// How tool call arguments appear in JSON: as an object (what chat templates iterate over, and
// what Hugging Face's apply_chat_template needs) or as a JSON string (the OpenAI wire format).
enum class ArgumentsAs { object, string };
nlohmann::ordered_json to_json(const Message& message, ArgumentsAs arguments);
nlohmann::ordered_json to_json(const std::vector<Message>& messages, ArgumentsAs arguments);

// json.dumps(obj, ensure_ascii=False) of a JSON value: the text OpenAI clients put in
// `arguments` and the spelling the Qwen3.5 template gives object and array parameters.
std::string python_json(const nlohmann::ordered_json& value);

}  // namespace rvformer::chat
