// chat/tool_calls.cpp — see tool_calls.h.
#include "chat/tool_calls.h"

#include <algorithm>

#include <fmt/format.h>

namespace rvformer::chat {
namespace {

std::string tool_name(const nlohmann::ordered_json& tool) {
  const auto function = tool.find("function");
  if (function == tool.end() || !function->is_object()) return {};
  const auto name = function->find("name");
  return name != function->end() && name->is_string() ? name->get<std::string>() : std::string{};
}

std::string unknown_tool_text(const ToolCall& call, const ToolAnswerer& answerer) {
  std::string names;
  for (const auto& tool : answerer.tools()) names += (names.empty() ? "" : ", ") + tool_name(tool);
  if (names.empty()) return fmt::format("error: there is no tool named '{}'", call.name);
  return fmt::format("error: there is no tool named '{}' (tools: {})", call.name, names);
}

}  // namespace

nlohmann::ordered_json offer_tools(const nlohmann::ordered_json& tools, const nlohmann::ordered_json& offered) {
  nlohmann::ordered_json result = tools.is_array() ? tools : nlohmann::ordered_json::array();
  for (const auto& tool : offered) {
    const std::string name = tool_name(tool);
    const bool present = std::any_of(result.begin(), result.end(),
                                     [&](const nlohmann::ordered_json& t) { return tool_name(t) == name; });
    if (!present) result.push_back(tool);
  }
  return result;
}

bool awaits_tool_responses(const std::vector<Message>& messages) {
  return !messages.empty() && messages.back().role == "assistant" && !messages.back().tool_calls.empty();
}

std::vector<Message> answer_tool_calls(const Message& assistant, ToolAnswerer& answerer,
                                       const std::function<void(const Message&)>& on_response) {
  std::vector<Message> responses;
  for (const ToolCall& call : assistant.tool_calls) {
    std::optional<std::string> text = answerer.answer(call);
    Message response{"tool", text ? std::move(*text) : unknown_tool_text(call, answerer), {}, {}, {}, {}};
    if (!call.id.empty()) response.tool_call_id = call.id;
    response.name = call.name;
    if (on_response) on_response(response);
    responses.push_back(std::move(response));
  }
  return responses;
}

}  // namespace rvformer::chat
