// chat/reply_parser_test.cpp — model output back into messages: reasoning, text and Qwen3.5 XML
// tool calls typed by the tool schemas; rendering then parsing gives the message back; malformed
// calls are reported and kept, never fatal.
#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "chat/qwen35_template.h"
#include "chat/reply_parser.h"

namespace rvformer::chat {
namespace {

using nlohmann::ordered_json;

const ordered_json kTools = ordered_json::parse(R"([
  {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
    "query": {"type": "string"}, "limit": {"type": "integer"}, "ratio": {"type": "number"}, "exact": {"type": "boolean"},
    "filters": {"type": "object"}, "tags": {"type": "array"}, "cursor": {"type": ["string", "null"]}, "maybe": {"type": ["integer", "null"]}}}}},
  {"type": "function", "function": {"name": "calculator", "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}}
])");

TEST(ReplyParser, SplitsReasoningAndContent) {
  ParsedReply r = parse_reply("The user wants a greeting.\n</think>\n\nHello!", true, nullptr);
  EXPECT_EQ(r.message.role, "assistant");
  EXPECT_EQ(r.message.reasoning_content, "The user wants a greeting.");
  EXPECT_EQ(r.message.content, "Hello!");
  EXPECT_TRUE(r.problems.empty());

  r = parse_reply("Just text.", false, nullptr);
  EXPECT_FALSE(r.message.reasoning_content.has_value());
  EXPECT_EQ(r.message.content, "Just text.");

  r = parse_reply("<think>\nown think tags\n</think>\n\nanswer", false, nullptr);
  EXPECT_EQ(r.message.reasoning_content, "own think tags");
  EXPECT_EQ(r.message.content, "answer");

  r = parse_reply("still thinking when cut off", true, nullptr);
  EXPECT_EQ(r.message.reasoning_content, "still thinking when cut off");
  EXPECT_EQ(r.message.content, "");
  ASSERT_EQ(r.problems.size(), 1u);
}

TEST(ReplyParser, ReadsToolCallsWithTheSchemaTypes) {
  const ParsedReply r = parse_reply(
      "r\n</think>\n\nSearching now.\n\n<tool_call>\n<function=search>\n<parameter=query>\nqwen 3.5\nrelease\n</parameter>\n"
      "<parameter=limit>\n10\n</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n<parameter=exact>\nTrue\n</parameter>\n"
      "<parameter=filters>\n{\"lang\": \"en\", \"year\": [2025, 2026]}\n</parameter>\n<parameter=tags>\n[\"a\", 1]\n</parameter>\n"
      "<parameter=cursor>\nNone\n</parameter>\n<parameter=maybe>\n7\n</parameter>\n<parameter=unknown>\n{\"stays\": \"text\"}\n</parameter>\n"
      "</function>\n</tool_call>\n<tool_call>\n<function=calculator>\n<parameter=expression>\n2**10\n</parameter>\n</function>\n</tool_call>",
      true, kTools);
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_EQ(r.message.content, "Searching now.");
  ASSERT_EQ(r.message.tool_calls.size(), 2u);
  EXPECT_EQ(r.message.tool_calls[0].name, "search");
  EXPECT_EQ(r.message.tool_calls[0].arguments,
            ordered_json::parse(R"({"query": "qwen 3.5\nrelease", "limit": 10, "ratio": 0.5, "exact": true,
              "filters": {"lang": "en", "year": [2025, 2026]}, "tags": ["a", 1], "cursor": null, "maybe": 7, "unknown": "{\"stays\": \"text\"}"})"));
  EXPECT_EQ(r.message.tool_calls[1].arguments, ordered_json::parse(R"({"expression": "2**10"})"));
}

TEST(ReplyParser, AToolCallAloneHasNoContent) {
  const ParsedReply r = parse_reply("<tool_call>\n<function=calculator>\n</function>\n</tool_call>", false, kTools);
  EXPECT_FALSE(r.message.content.has_value());
  ASSERT_EQ(r.message.tool_calls.size(), 1u);
  EXPECT_TRUE(r.message.tool_calls[0].arguments.empty());
}

TEST(ReplyParser, RenderingThenParsingGivesTheMessageBack) {
  const ChatTemplate tpl(std::string(qwen35_chat_template()), "qwen3.5");
  const std::vector<std::string> messages = {
      R"({"role": "assistant", "reasoning_content": "think", "content": "Plain answer."})",
      R"({"role": "assistant", "reasoning_content": "", "content": "No reasoning."})",
      R"({"role": "assistant", "reasoning_content": "two calls", "content": "Let me look.",
          "tool_calls": [{"type": "function", "function": {"name": "search", "arguments": {"query": "multi\nline", "limit": 3, "ratio": 2.5,
            "exact": false, "filters": {"k": [1, {"x": null}]}, "tags": [], "cursor": null}}},
                         {"type": "function", "function": {"name": "calculator", "arguments": {"expression": "(1+2)*3"}}}]})",
      R"({"role": "assistant", "reasoning_content": "only a call", "content": null,
          "tool_calls": [{"type": "function", "function": {"name": "calculator", "arguments": {"expression": "日本 😀"}}}]})",
  };
  for (const std::string& text : messages) {
    SCOPED_TRACE(text);
    const Message original = parse_conversation("[" + text + "]", "m").messages.front();
    ordered_json conversation = ordered_json::array({{{"role", "user"}, {"content", "q"}}, to_json(original, ArgumentsAs::object)});
    RenderOptions options;
    options.add_generation_prompt = false;
    const std::string rendered = tpl.render(conversation, kTools, options);
    const std::string opening = "<|im_start|>assistant\n<think>\n";
    const std::size_t start = rendered.rfind(opening) + opening.size();
    const std::string written = rendered.substr(start, rendered.rfind("<|im_end|>") - start);
    const ParsedReply back = parse_reply(written, true, kTools);
    EXPECT_TRUE(back.problems.empty()) << back.problems.front();
    EXPECT_EQ(back.message, original) << written;
  }
}

TEST(ReplyParser, ReportsMalformedCallsAndKeepsTheirText) {
  struct Case {
    std::string text;
    std::size_t calls;
    std::string problem;  // part of the first problem
  };
  const std::vector<Case> cases = {
      {"<tool_call>\n<function=calculator>\n<parameter=expression>\n1+", 0, "no </tool_call>"},
      {"<tool_call>\nnot a function\n</tool_call>", 0, "no <function=NAME>"},
      {"<tool_call>\n<function=>\n</function>\n</tool_call>", 0, "name is empty"},
      {"<tool_call>\n<function=calculator\n</function>\n</tool_call>", 0, "not closed with '>'"},
      {"<tool_call>\n<function=calculator>\nstray words\n</function>\n</tool_call>", 0, "unexpected text"},
      {"<tool_call>\n<function=calculator>\n<parameter=expression>\n1+1\n</function>\n</tool_call>", 1, "not closed with </parameter>"},
      {"<tool_call>\n<function=calculator>\n<parameter=expression>\n1\n</parameter>\n</tool_call>", 1, "not closed with </function>"},
      {"<tool_call>\n<function=search>\n<parameter=limit>\nten\n</parameter>\n</function>\n</tool_call>", 1, "is not of type integer"},
      {"<tool_call>\n<function=search>\n<parameter=query>\na\n</parameter>\n<parameter=query>\nb\n</parameter>\n</function>\n</tool_call>", 1,
       "given twice"},
      {"<tool_call>\n<function=calculator>\n</function>\n</tool_call>\nand then some words", 1, "text after a tool call"},
      {"<tool_call>\n<tool_call>\n<function=calculator>\n</function>\n</tool_call>", 1, "no </tool_call>"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const ParsedReply r = parse_reply(c.text, false, kTools);
    EXPECT_EQ(r.message.tool_calls.size(), c.calls);
    ASSERT_FALSE(r.problems.empty());
    EXPECT_NE(r.problems.front().find(c.problem), std::string::npos) << r.problems.front();
    if (c.calls == 0) {
      ASSERT_TRUE(r.message.content.has_value());
      EXPECT_NE(r.message.content->find("<tool_call>"), std::string::npos);  // nothing the model wrote is lost
    }
  }
}

TEST(ReplyParser, NeverFailsOnArbitraryText) {
  const std::string pieces[] = {"<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>", ">", "\n",
                                "x", "</think>", "<think>", "{", "1"};
  std::uint64_t state = 12345;
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    for (int i = 0; i < 12; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      text += pieces[(state >> 33) % std::size(pieces)];
    }
    EXPECT_NO_THROW(parse_reply(text, round % 2 == 0, kTools)) << text;
  }
}

}  // namespace
}  // namespace rvformer::chat
