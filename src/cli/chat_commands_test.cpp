// cli/chat_commands_test.cpp — `rvformer chat --print-prompt` on a model directory carrying the
// Qwen3.5 template: a scripted conversation from --messages prints byte-identically to Python's
// Jinja2 rendering of the same template; bad input gives one-line errors.
#include <gtest/gtest.h>

#include <fstream>

#include "chat/jinja_oracle_testing.h"
#include "chat/qwen35_template.h"
#include "cli/cli_testing.h"

namespace rvformer::cli {
namespace {

using nlohmann::ordered_json;

constexpr auto kTimeout = std::chrono::seconds(60);

class ChatCommand : public CommandTest {
 protected:
  // A model directory as Hugging Face ships Qwen3.5: the template in chat_template.jinja.
  std::string model_directory() {
    const std::filesystem::path dir = directory_.path() / "model";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "chat_template.jinja", std::ios::binary) << chat::qwen35_chat_template();
    std::ofstream(dir / "tokenizer_config.json") << R"({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": null})";
    return dir.string();
  }
};

const char* kConversation = R"({
  "messages": [
    {"role": "system", "content": "You are a careful calculator assistant."},
    {"role": "user", "content": "What is 123456789 * 987654321? Réponds en français."},
    {"role": "assistant", "reasoning_content": "Use the tool.", "content": "",
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "calculator", "arguments": "{\"expression\": \"123456789 * 987654321\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "121932631112635269"}
  ],
  "tools": [{"type": "function", "function": {"name": "calculator", "description": "Exact arithmetic",
             "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}}]
})";

TEST_F(ChatCommand, PrintsThePromptAsJinja2RendersIt) {
  const std::string model = model_directory();
  const std::string messages = write_source("talk.json", kConversation);
  for (bool thinking : {true, false}) {
    std::vector<std::string> arguments = {"chat", model, "--print-prompt", "--messages", messages, "--prompt", "Merci ! Et 2+2 ?"};
    if (!thinking) arguments.push_back("--no-thinking");
    const auto result = run_rvformer(arguments, kTimeout);
    ASSERT_EQ(result.exit_status, 0) << result.standard_error;

    // Hugging Face's rendering: the arguments string decoded to an object (as serving stacks do
    // before apply_chat_template), the tokenizer's special tokens, the --prompt message appended.
    ordered_json conversation = ordered_json::parse(kConversation);
    auto& call = conversation["messages"][2]["tool_calls"][0]["function"];
    call["arguments"] = ordered_json::parse(call["arguments"].get<std::string>());
    conversation["messages"].push_back({{"role", "user"}, {"content", "Merci ! Et 2+2 ?"}});
    ordered_json context = {{"eos_token", "<|im_end|>"}, {"pad_token", "<|endoftext|>"}, {"messages", conversation["messages"]},
                            {"tools", conversation["tools"]}, {"documents", nullptr}, {"add_generation_prompt", true}};
    if (!thinking) context["enable_thinking"] = false;
    const auto expected = chat::testing::render_with_jinja2({{"--print-prompt", std::string(chat::qwen35_chat_template()), context}});
    ASSERT_EQ(expected.size(), 1u);
    ASSERT_TRUE(expected[0].ok) << expected[0].message;
    EXPECT_EQ(result.standard_output, expected[0].text);
  }
}

TEST_F(ChatCommand, ReadsTheTemplateFromTokenizerConfig) {
  const std::filesystem::path dir = directory_.path() / "old-style";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokenizer_config.json") << ordered_json{{"chat_template", std::string(chat::qwen35_chat_template())}}.dump();
  const auto result = run_rvformer({"chat", dir.string(), "--print-prompt", "--prompt", "Hi"}, kTimeout);
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  EXPECT_EQ(result.standard_output, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n");
}

TEST_F(ChatCommand, ExplainsBadInputInOneLine) {
  const std::string model = model_directory();
  struct Case {
    std::vector<std::string> arguments;
    std::string error;
  };
  const std::string bad_role = write_source("bad.json", R"([{"role": "user", "content": "a"}, {"role": "wizard", "content": "b"}])");
  const std::string system_late = write_source("late.json", R"([{"role": "user", "content": "a"}, {"role": "system", "content": "b"}])");
  const std::vector<Case> cases = {
      {{"chat", model, "--print-prompt"}, "nothing to chat about"},
      {{"chat", model, "--print-prompt", "--messages", bad_role}, "bad.json: message 1: unknown role 'wizard'"},
      {{"chat", model, "--print-prompt", "--messages", path("missing.json")}, "missing.json"},
      {{"chat", model, "--print-prompt", "--messages", system_late}, "System message must be at the beginning."},
      {{"chat", path("no-such-model"), "--print-prompt", "--prompt", "x"}, "no-such-model: no such directory"},
      {{"chat", directory_.path().string(), "--print-prompt", "--prompt", "x"}, "no chat_template.jinja or tokenizer_config.json"},
      {{"chat", model, "--prompt", "x"}, "--print-prompt"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.arguments.back());
    const auto result = run_rvformer(c.arguments, kTimeout);
    EXPECT_EQ(result.exit_status, 2);
    EXPECT_EQ(result.standard_error.find("rvformer: error: "), 0u) << result.standard_error;
    EXPECT_NE(result.standard_error.find(c.error), std::string::npos) << result.standard_error;
    EXPECT_EQ(std::count(result.standard_error.begin(), result.standard_error.end(), '\n'), 1) << result.standard_error;
  }
}

}  // namespace
}  // namespace rvformer::cli
