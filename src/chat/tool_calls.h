// chat/tool_calls.h — answering the tool calls an assistant message makes. A ToolAnswerer knows
// some tools (it offers them in the OpenAI format and answers their calls); a call to any other
// tool, or one that cannot be answered, gets a tool response saying so, which the model reads like
// any other: a reply's tool calls never end the chat.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/messages.h"

namespace rvformer::chat {

class ToolAnswerer {
 public:
  virtual ~ToolAnswerer() = default;
  // The tools answered here, as OpenAI tool objects ({"type": "function", "function": {...}}).
  virtual nlohmann::ordered_json tools() const = 0;
  // The response text to `call`, or nothing when the tool is not one of these.
  virtual std::optional<std::string> answer(const ToolCall& call) = 0;
  // What the answerer keeps between calls, saved beside a saved chat (PATH is the chat's file).
  virtual void save(const std::filesystem::path& chat_path) const = 0;
  // Restores what save() wrote for the chat at PATH (nothing when it wrote nothing there).
  virtual void load(const std::filesystem::path& chat_path) = 0;
};

// `tools` (an OpenAI tool list, or null) with each tool of `offered` added whose name it does not
// have yet.
nlohmann::ordered_json offer_tools(const nlohmann::ordered_json& tools, const nlohmann::ordered_json& offered);

// Whether the conversation ends with an assistant message that calls tools (its responses are due).
bool awaits_tool_responses(const std::vector<Message>& messages);

// One tool message per call of the last message (an assistant message), in order: the answerer's
// response, or for a tool it does not know, a one-line error naming the tool and the tools it has.
// `on_response` sees each as it is made.
std::vector<Message> answer_tool_calls(const Message& assistant, ToolAnswerer& answerer,
                                       const std::function<void(const Message&)>& on_response = {});

}  // namespace rvformer::chat
