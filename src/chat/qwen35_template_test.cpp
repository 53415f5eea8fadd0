// chat/qwen35_template_test.cpp — the Qwen3.5 chat template rendered by our engine, byte for
// byte equal to Python's Jinja2 on a scripted corpus of conversations (system prompts, tools, tool
// calls, tool results, thinking, errors), and the facts docs/chat.md states about its output.
#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "chat/jinja_oracle_testing.h"
#include "chat/qwen35_template.h"
#include "toolchain/process.h"

namespace rvformer::chat {
namespace {

using nlohmann::ordered_json;

const ordered_json kSpecialTokens = {{"eos_token", "<|im_end|>"}, {"pad_token", "<|endoftext|>"}};

ChatTemplate qwen35() { return ChatTemplate(std::string(qwen35_chat_template()), "qwen3.5 chat_template.jinja", kSpecialTokens); }

const ordered_json kWeatherTool = ordered_json::parse(R"({
  "type": "function",
  "function": {
    "name": "get_weather",
    "description": "Météo actuelle — current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "城市"},
                   "days": {"type": "integer"}}, "required": ["city"]}
  }
})");
const ordered_json kCalculatorTool = ordered_json::parse(R"({
  "type": "function",
  "function": {"name": "calculator", "description": "Evaluate an expression exactly.\nUse it for arithmetic.",
               "parameters": {"type": "object", "properties": {"expression": {"type": "string"},
                              "options": {"type": "object", "properties": {"precision": {"type": "integer"}}}}}}
})");

struct Scenario {
  std::string name;
  std::string messages;  // JSON
  ordered_json tools = nullptr;
  RenderOptions options = {};
};

RenderOptions no_thinking() {
  RenderOptions o;
  o.enable_thinking = false;
  return o;
}
RenderOptions thinking_on() {
  RenderOptions o;
  o.enable_thinking = true;
  return o;
}
RenderOptions history_only() {
  RenderOptions o;
  o.add_generation_prompt = false;
  return o;
}

std::vector<Scenario> corpus() {
  const ordered_json both_tools = ordered_json::array({kWeatherTool, kCalculatorTool});
  const ordered_json one_tool = ordered_json::array({kCalculatorTool});
  const std::string tool_loop = R"([
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is 12*34, and the weather in Oslo?"},
    {"role": "assistant", "reasoning_content": "Two tools needed.", "content": "",
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "calculator", "arguments": {"expression": "12*34"}}},
                    {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "408"},
    {"role": "tool", "tool_call_id": "c2", "content": "{\"temp\": -3, \"sky\": \"snow\"}"},
    {"role": "assistant", "reasoning_content": "\nNow answer.\n", "content": "12*34 = 408; Oslo: -3 °C, snow."}
  ])";
  return {
      {"one user message", R"([{"role": "user", "content": "Hello!"}])"},
      {"thinking off", R"([{"role": "user", "content": "Hello!"}])", nullptr, no_thinking()},
      {"thinking on explicitly", R"([{"role": "user", "content": "Hello!"}])", nullptr, thinking_on()},
      {"no generation prompt", R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}])", nullptr, history_only()},
      {"system prompt", R"([{"role": "system", "content": "  Be brief.  "}, {"role": "user", "content": "  2+2?\n"}])"},
      {"empty system prompt", R"([{"role": "system", "content": ""}, {"role": "user", "content": "x"}])"},
      {"multi-turn drops old reasoning",
       R"([{"role": "user", "content": "First?"},
           {"role": "assistant", "reasoning_content": "think one", "content": "One."},
           {"role": "user", "content": "Second?"},
           {"role": "assistant", "content": "<think>\ninline thought\n</think>\n\nTwo."},
           {"role": "user", "content": "Third?"}])"},
      {"reasoning after the last query", R"([{"role": "user", "content": "Q"},
           {"role": "assistant", "reasoning_content": "  spaced  ", "content": "A"}])", nullptr, history_only()},
      {"inline think after the last query", R"([{"role": "user", "content": "Q"},
           {"role": "assistant", "content": "<think>\n\nabc\n\n</think>\n\n\nanswer"}])", nullptr, history_only()},
      {"reasoning null and empty", R"([{"role": "user", "content": "Q"},
           {"role": "assistant", "reasoning_content": null, "content": "A"},
           {"role": "user", "content": "Q2"},
           {"role": "assistant", "reasoning_content": "", "content": "B"}])", nullptr, history_only()},
      {"tools block", R"([{"role": "user", "content": "Weather in Paris?"}])", both_tools},
      {"tools and system prompt", R"([{"role": "system", "content": "Use tools wisely."}, {"role": "user", "content": "12*34?"}])", one_tool},
      {"tools and whitespace system prompt", R"([{"role": "system", "content": "  \n "}, {"role": "user", "content": "12*34?"}])", one_tool},
      {"empty tools list", R"([{"role": "user", "content": "x"}])", ordered_json::array()},
      {"tool loop", tool_loop, both_tools},
      {"tool loop, thinking off", tool_loop, both_tools, no_thinking()},
      {"tool loop, history only", tool_loop, both_tools, history_only()},
      {"tool call without content", R"([{"role": "user", "content": "calc"},
           {"role": "assistant", "content": null, "tool_calls": [{"type": "function", "function": {"name": "calculator", "arguments": {}}}]}])", one_tool},
      {"tool call argument types", R"([{"role": "user", "content": "calc"},
           {"role": "assistant", "content": "Let me compute.",
            "tool_calls": [{"function": {"name": "calculator", "arguments": {"expression": "1/3", "options": {"precision": 50, "exact": true},
                            "list": [1, "two", null, 2.5], "flag": false, "nothing": null, "count": 7, "ratio": 0.25, "text": "multi\nline\n"}}}]}])", one_tool},
      {"flat tool call", R"([{"role": "user", "content": "calc"},
           {"role": "assistant", "content": "", "tool_calls": [{"name": "calculator", "arguments": {"expression": "2**10"}}]}])", one_tool},
      {"tool result then user", R"([{"role": "user", "content": "calc"},
           {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "calculator", "arguments": {"expression": "1+1"}}}]},
           {"role": "tool", "content": "  2  "},
           {"role": "user", "content": "Thanks. And 3+3?"}])", one_tool},
      {"tool response wrapped user message", R"([{"role": "user", "content": "Real question"},
           {"role": "assistant", "reasoning_content": "r", "content": "x"},
           {"role": "user", "content": "<tool_response>\n42\n</tool_response>"}])"},
      {"unicode", R"([{"role": "user", "content": "日本語で答えて 😀 — ñ, e\u0301, \u00a0nbsp"}, {"role": "assistant", "content": "はい 🎉"}])", nullptr, history_only()},
      {"text content parts", R"([{"role": "user", "content": [{"type": "text", "text": "part one, "}, {"type": "text", "text": "part two"}]}])"},
      {"image content", R"([{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What is this?"}]}])"},
      {"image with vision ids", R"([{"role": "user", "content": [{"type": "image"}, {"type": "video"}, {"type": "image_url", "image_url": "x"}]}])",
       nullptr, [] {
         RenderOptions o;
         o.extra = {{"add_vision_id", true}};
         return o;
       }()},
      // Errors the template raises itself, and what Hugging Face does with JSON-string arguments.
      {"no messages", "[]"},
      {"system not first", R"([{"role": "user", "content": "a"}, {"role": "system", "content": "b"}])"},
      {"no user query", R"([{"role": "system", "content": "s"}, {"role": "assistant", "content": "a"}])"},
      {"only tool responses", R"([{"role": "user", "content": "<tool_response>x</tool_response>"}])"},
      {"unexpected role", R"([{"role": "user", "content": "a"}, {"role": "developer", "content": "b"}])"},
      {"image in system message", R"([{"role": "system", "content": [{"type": "image"}]}, {"role": "user", "content": "a"}])"},
      {"unexpected content type", R"([{"role": "user", "content": 5}])"},
      {"unexpected content item", R"([{"role": "user", "content": [{"type": "audio"}]}])"},
      {"arguments as a JSON string", R"([{"role": "user", "content": "calc"},
           {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "calculator", "arguments": "{\"expression\": \"1+1\"}"}}]}])"},
  };
}

TEST(Qwen35Template, IsTheShippedFileByteForByte) {
  // SHA-256 of Qwen3.5-4B's chat_template.jinja as published (docs/chat.md).
  toolchain::TemporaryDirectory directory;
  const auto path = directory.path() / "chat_template.jinja";
  std::ofstream(path, std::ios::binary) << qwen35_chat_template();
  const auto result = toolchain::run_process({"sha256sum", path.string()}, {.capture_output = true, .timeout = std::nullopt});
  ASSERT_EQ(result.exit_status, 0);
  EXPECT_EQ(result.standard_output.substr(0, 64), "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715");
  EXPECT_EQ(qwen35_chat_template().size(), 7756u);
}

TEST(Qwen35Template, RendersLikeJinja2OnTheCorpus) {
  const ChatTemplate tpl = qwen35();
  std::vector<testing::OracleCase> cases;
  for (const Scenario& s : corpus()) {
    cases.push_back({s.name, tpl.source(), tpl.context(ordered_json::parse(s.messages), s.tools, s.options)});
  }
  testing::expect_same_as_jinja2(cases);
}

std::string render(const std::string& messages, const ordered_json& tools = nullptr, const RenderOptions& options = {}) {
  return qwen35().render(ordered_json::parse(messages), tools, options);
}

TEST(Qwen35Template, GenerationPromptOpensAThinkBlock) {
  const std::string user = R"([{"role": "user", "content": "Hi"}])";
  EXPECT_EQ(render(user), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n");
  EXPECT_EQ(render(user, nullptr, no_thinking()), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(Qwen35Template, ToolsComeFirstInTheSystemTurn) {
  const std::string text = render(R"([{"role": "system", "content": "Sys."}, {"role": "user", "content": "x"}])",
                                  ordered_json::array({kCalculatorTool}));
  const std::string head = "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n{\"type\": \"function\", ";
  EXPECT_EQ(text.substr(0, head.size()), head);
  EXPECT_NE(text.find("</IMPORTANT>\n\nSys.<|im_end|>\n<|im_start|>user\nx<|im_end|>\n"), std::string::npos) << text;
}

TEST(Qwen35Template, ToolResultsShareOneUserTurn) {
  const std::string text = render(R"([{"role": "user", "content": "q"},
      {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}, {"function": {"name": "g", "arguments": {}}}]},
      {"role": "tool", "content": "r1"}, {"role": "tool", "content": "r2"}])");
  EXPECT_NE(text.find("<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"
                      "\n<tool_call>\n<function=g>\n</function>\n</tool_call><|im_end|>\n"
                      "<|im_start|>user\n<tool_response>\nr1\n</tool_response>\n<tool_response>\nr2\n</tool_response><|im_end|>\n"
                      "<|im_start|>assistant\n<think>\n"),
            std::string::npos)
      << text;
}

TEST(Qwen35Template, RaisesTheTemplatesOwnErrors) {
  try {
    render(R"([{"role": "assistant", "content": "a"}])");
    FAIL() << "expected the template to refuse a conversation without a user query";
  } catch (const jinja::TemplateError& e) {
    EXPECT_EQ(e.kind(), jinja::ErrorKind::raised);
    EXPECT_EQ(e.message(), "No user query found in messages.");
    EXPECT_NE(std::string(e.what()).find("qwen3.5 chat_template.jinja line "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rvformer::chat
