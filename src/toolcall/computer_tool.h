// toolcall/computer_tool.h — a chat tool answered by the merged model's computer: a program that
// serves one request per line over its console (the calculator firmware, firmware/calc), offered to
// the chat model in the OpenAI tool format with one string parameter. A call's parameter value is
// the request line; the program's output line, written by the model's own OUT tokens, is the tool
// response (docs/tool-calls.md).
#pragma once

#include <functional>
#include <string>

#include "chat/tool_calls.h"
#include "program/program_image.h"
#include "toolcall/console_program.h"
#include "toolcall/merged_computer.h"

namespace rvformer::toolcall {

struct ComputerToolSpec {
  std::string name;         // the function's name, e.g. "calculator"
  std::string description;  // what the model reads about it
  std::string parameter;    // the one (string) parameter whose value is the request
  std::string parameter_description;
};

// The calculator tool's description (the firmware that answers it is firmware/calc).
ComputerToolSpec calculator_tool_spec();

// The tool as the chat offers it: an OpenAI tool object with the one string parameter.
nlohmann::ordered_json tool_object(const ComputerToolSpec& spec);

class ComputerTool : public chat::ToolAnswerer {
 public:
  // `on_answer` (optional) sees each call's answer as the computer gave it: its figures for
  // reports.
  ComputerTool(MergedComputer& computer, program::ProgramImage firmware, ComputerToolSpec spec,
               std::function<void(const ConsoleAnswer&)> on_answer = {});

  // Loads the firmware now (otherwise the first call does). Throws rvformer::Error if it stops
  // instead of waiting for its first request.
  void start();

  nlohmann::ordered_json tools() const override;
  std::optional<std::string> answer(const chat::ToolCall& call) override;
  // The computer's state beside the chat: PATH.computer (a run checkpoint).
  void save(const std::filesystem::path& chat_path) const override;
  void load(const std::filesystem::path& chat_path) override;

 private:
  ComputerToolSpec spec_;
  ConsoleProgram program_;
  std::function<void(const ConsoleAnswer&)> on_answer_;
};

}  // namespace rvformer::toolcall
