// chat/reply_parser.h — what the model wrote, as an assistant message: its reasoning (up to
// </think>), its text, and its tool calls in Qwen3.5's XML format
//   <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n...</function>\n</tool_call>
// Parameter values are text; the tool's JSON Schema says which are numbers, booleans, objects or
// arrays. Anything malformed is reported, kept in the message's text, and never throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/messages.h"

namespace rvformer::chat {

struct ParsedReply {
  Message message;                    // role "assistant"
  std::vector<std::string> problems;  // one line each: malformed calls, unconvertible values, ...
};

// `reasoning_open`: the generation prompt opened a <think> block the reply continues (Qwen3.5
// with thinking on), so the text before </think> is reasoning even without a <think> of its own.
// `tools`: the OpenAI tool list (or null), for the parameter types.
ParsedReply parse_reply(std::string_view text, bool reasoning_open, const nlohmann::ordered_json& tools);

}  // namespace rvformer::chat
