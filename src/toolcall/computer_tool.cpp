// toolcall/computer_tool.cpp — see computer_tool.h.
#include "toolcall/computer_tool.h"

#include <algorithm>

#include <fmt/format.h>

#include "support/error.h"

namespace rvformer::toolcall {
namespace {

// The parameter's value as one request line: a string as it is, a number as JSON spells it; line
// breaks become spaces, since the program reads one request per line. Nothing for other values.
std::optional<std::string> request_value(const chat::ToolCall& call, const std::string& parameter) {
  const auto value = call.arguments.find(parameter);
  if (value == call.arguments.end()) return std::nullopt;
  std::string text;
  if (value->is_string()) {
    text = value->get<std::string>();
  } else if (value->is_number()) {
    text = value->dump();
  } else {
    return std::nullopt;
  }
  std::replace_if(text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return text;
}

std::filesystem::path computer_state_path(const std::filesystem::path& chat_path) {
  return std::filesystem::path(chat_path.string() + ".computer");
}

}  // namespace

ComputerToolSpec calculator_tool_spec() {
  return {
      .name = "calculator",
      .description = "Evaluates an arithmetic expression exactly: integers of any length, decimals, + - * / // % ** "
                     "and parentheses. Answers with an integer, a terminating decimal or a fraction p/q.",
      .parameter = "expression",
      .parameter_description = "the expression, for example (12345678901234567890 * 98765) // 7",
  };
}

ComputerTool::ComputerTool(MergedComputer& computer, program::ProgramImage firmware, ComputerToolSpec spec,
                           std::function<void(const ConsoleAnswer&)> on_answer)
    : spec_(std::move(spec)), program_(computer, std::move(firmware)), on_answer_(std::move(on_answer)) {}

void ComputerTool::start() {
  const ConsoleAnswer started = program_.start();
  if (on_answer_) on_answer_(started);
  if (started.failure) fail("the {} program did not start in the computer: {}", spec_.name, *started.failure);
}

nlohmann::ordered_json tool_object(const ComputerToolSpec& spec) {
  nlohmann::ordered_json parameters = {
      {"type", "object"},
      {"properties", {{spec.parameter, {{"type", "string"}, {"description", spec.parameter_description}}}}},
      {"required", {spec.parameter}}};
  return {{"type", "function"},
          {"function", {{"name", spec.name}, {"description", spec.description}, {"parameters", std::move(parameters)}}}};
}

nlohmann::ordered_json ComputerTool::tools() const { return nlohmann::ordered_json::array({tool_object(spec_)}); }

std::optional<std::string> ComputerTool::answer(const chat::ToolCall& call) {
  if (call.name != spec_.name) return std::nullopt;
  const std::optional<std::string> value = request_value(call, spec_.parameter);
  if (!value) return fmt::format("error: {} needs a string argument '{}'", spec_.name, spec_.parameter);
  const ConsoleAnswer answer = program_.request(*value + "\n");
  if (on_answer_) on_answer_(answer);
  std::string text = answer.output;
  if (text.ends_with('\n')) text.pop_back();
  if (answer.failure) {
    text += fmt::format("{}error: the {} stopped ({}); it starts afresh on the next call", text.empty() ? "" : "\n",
                        spec_.name, *answer.failure);
  }
  return text;
}

void ComputerTool::save(const std::filesystem::path& chat_path) const { program_.save(computer_state_path(chat_path)); }

void ComputerTool::load(const std::filesystem::path& chat_path) { program_.load(computer_state_path(chat_path)); }

}  // namespace rvformer::toolcall
