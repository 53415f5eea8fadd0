// chat/messages_test.cpp — strict parsing of messages files, their JSON forms, and loading a
// model directory's chat template from either file Hugging Face uses.
#include <gtest/gtest.h>

#include <fstream>

#include "chat/chat_template.h"
#include "chat/messages.h"
#include "toolchain/process.h"

namespace rvformer::chat {
namespace {

using nlohmann::ordered_json;

std::string error_of(const std::string& json) {
  try {
    parse_conversation(json, "talk.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Messages, ParsesTheOpenAIForm) {
  const Conversation c = parse_conversation(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "a "}, {"type": "text", "text": "b"}]},
      {"role": "assistant", "content": null, "reasoning_content": "hm",
       "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "calc", "arguments": "{\"x\": 1, \"y\": [2]}"}},
                      {"name": "flat", "arguments": {"k": "v"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "3"}
    ],
    "tools": [{"type": "function", "function": {"name": "calc", "parameters": {}}}]
  })", "talk.json");
  ASSERT_EQ(c.messages.size(), 4u);
  EXPECT_EQ(c.messages[1].content, "a b");
  EXPECT_FALSE(c.messages[2].content.has_value());
  EXPECT_EQ(c.messages[2].reasoning_content, "hm");
  ASSERT_EQ(c.messages[2].tool_calls.size(), 2u);
  EXPECT_EQ(c.messages[2].tool_calls[0].id, "call_1");
  EXPECT_EQ(c.messages[2].tool_calls[0].arguments.dump(), R"({"x":1,"y":[2]})");
  EXPECT_EQ(c.messages[2].tool_calls[1].name, "flat");
  EXPECT_EQ(c.messages[3].tool_call_id, "call_1");
  EXPECT_EQ(c.tools.size(), 1u);

  const ordered_json wire = to_json(c.messages[2], ArgumentsAs::string);
  EXPECT_EQ(wire["tool_calls"][0]["function"]["arguments"], R"({"x": 1, "y": [2]})");
  EXPECT_EQ(to_json(c.messages[2], ArgumentsAs::object)["tool_calls"][1]["function"]["arguments"]["k"], "v");
  // The JSON form parses back to the same messages.
  EXPECT_EQ(parse_conversation(to_json(c.messages, ArgumentsAs::string).dump(), "again").messages, c.messages);
}

TEST(Messages, AcceptsABareArray) {
  const Conversation c = parse_conversation(R"([{"role": "user", "content": "hi"}])", "talk.json");
  EXPECT_EQ(c.messages.size(), 1u);
  EXPECT_TRUE(c.tools.is_null());
}

TEST(Messages, NamesTheFileMessageAndField) {
  EXPECT_EQ(error_of("[{\"role\": \"user\"}]"), "talk.json: message 0: a user message needs 'content'");
  EXPECT_EQ(error_of(R"([{"role": "user", "content": "x"}, {"role": "robot", "content": "y"}])"),
            "talk.json: message 1: unknown role 'robot' (expected system, user, assistant or tool)");
  EXPECT_EQ(error_of(R"([{"role": "user", "content": "x", "mood": 1}])"),
            "talk.json: message 0: unknown field 'mood' (a user message has: role, content, name)");
  EXPECT_EQ(error_of(R"([{"content": "x"}])"), "talk.json: message 0: missing field 'role'");
  EXPECT_EQ(error_of(R"([{"role": "user", "content": 3}])"),
            "talk.json: message 0: 'content' must be a string, null or an array of text parts, got a number");
  EXPECT_EQ(error_of(R"([{"role": "user", "content": [{"type": "image_url", "image_url": "x"}]}])"),
            "talk.json: message 0: content part 0 is not a text part (only {\"type\": \"text\", \"text\": ...} is supported)");
  EXPECT_EQ(error_of(R"([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}]}])"),
            "talk.json: message 0: tool_calls[0]: 'arguments' is not valid JSON");
  EXPECT_EQ(error_of(R"([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}]}])"),
            "talk.json: message 0: tool_calls[0]: 'arguments' must hold a JSON object, not an array");
  EXPECT_EQ(error_of(R"([{"role": "assistant", "tool_calls": [{"function": {"arguments": {}}}]}])"),
            "talk.json: message 0: tool_calls[0]: the function needs a non-empty string 'name'");
  EXPECT_EQ(error_of(R"([{"role": "tool", "content": "x", "tool_call_id": 5}])"), "talk.json: message 0: 'tool_call_id' must be a string, got a number");
  EXPECT_EQ(error_of(R"({"messages": [], "extra": 1})"), "talk.json: unknown field 'extra' (expected 'messages' and optionally 'tools')");
  EXPECT_EQ(error_of(R"({"tools": []})"), "talk.json: missing field 'messages'");
  EXPECT_EQ(error_of(R"({"messages": [], "tools": [{"type": "function"}]})"),
            "talk.json: tool 0: expected {\"type\": \"function\", \"function\": {\"name\": ..., ...}}");
  EXPECT_EQ(error_of("[1, 2"), "talk.json: not valid JSON: parse error at line 1, column 6: syntax error while parsing array - unexpected end of input; expected ']'");
  EXPECT_EQ(error_of(std::string(100, '[') + std::string(100, ']')), "talk.json: values are nested more than 64 levels deep");
  EXPECT_EQ(error_of("\"just a string\""), "talk.json: expected an array of messages or an object with 'messages', got a string");
}

TEST(Messages, PythonJsonSpacing) {
  EXPECT_EQ(python_json(ordered_json::parse(R"({"b": [1, 2.5, true, null], "a": "é\n"})")), R"({"b": [1, 2.5, true, null], "a": "é\n"})");
}

class ModelDirectory : public ::testing::Test {
 protected:
  void write(const std::string& name, const std::string& text) { std::ofstream(directory_.path() / name, std::ios::binary) << text; }
  toolchain::TemporaryDirectory directory_;
};

const ordered_json kUser = ordered_json::parse(R"([{"role": "user", "content": "x"}])");

TEST_F(ModelDirectory, PrefersChatTemplateJinja) {
  write("tokenizer_config.json", R"({"chat_template": "from config", "eos_token": "<|im_end|>"})");
  write("chat_template.jinja", "from file {{ eos_token }} {{ messages[0].content }}");
  const ChatTemplate t = ChatTemplate::load(directory_.path());
  EXPECT_EQ(t.render(kUser, nullptr, {}), "from file <|im_end|> x");
  EXPECT_EQ(t.source_name(), (directory_.path() / "chat_template.jinja").string());
}

TEST_F(ModelDirectory, FallsBackToTokenizerConfig) {
  write("tokenizer_config.json", R"({"chat_template": "config {{ bos_token }}|{{ eos_token }}", "bos_token": null,
                                    "eos_token": {"content": "</s>", "special": true}})");
  EXPECT_EQ(ChatTemplate::load(directory_.path()).render(kUser, nullptr, {}), "config |</s>");
}

TEST_F(ModelDirectory, TakesTheDefaultOfNamedTemplates) {
  write("tokenizer_config.json", R"({"chat_template": [{"name": "tool_use", "template": "tools"}, {"name": "default", "template": "plain"}]})");
  EXPECT_EQ(ChatTemplate::load(directory_.path()).render(kUser, nullptr, {}), "plain");
}

TEST_F(ModelDirectory, ExplainsWhatIsMissing) {
  EXPECT_THROW(ChatTemplate::load(directory_.path()), Error);
  write("tokenizer_config.json", R"({"eos_token": "x"})");
  try {
    ChatTemplate::load(directory_.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no chat template"), std::string::npos) << e.what();
  }
  write("tokenizer_config.json", "{not json");
  EXPECT_THROW(ChatTemplate::load(directory_.path()), Error);
  write("tokenizer_config.json", R"({"chat_template": "{% if %}"})");
  EXPECT_THROW(ChatTemplate::load(directory_.path()), jinja::TemplateError);
}

}  // namespace
}  // namespace rvformer::chat
