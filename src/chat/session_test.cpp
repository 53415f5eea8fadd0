// chat/session_test.cpp — ChatSession with the Qwen3.5 template and stand-in codec and model:
// what the model reads is always the template's rendering of the whole conversation (the
// concatenation of the turns equals the full render), fed incrementally, going back to a saved
// state only where the template re-renders history; streaming, stops, save and load.
#include <gtest/gtest.h>

#include "chat/chat_testing.h"
#include "chat/python_text.h"
#include "chat/qwen35_template.h"
#include "toolchain/process.h"

namespace rvformer::chat {
namespace {

using nlohmann::ordered_json;

const ordered_json kCalculator = ordered_json::parse(R"([{"type": "function", "function": {"name": "calculator",
  "parameters": {"type": "object", "properties": {"expression": {"type": "string"}, "digits": {"type": "integer"}}}}}])");

Message user(const std::string& text) { return Message{"user", text, {}, {}, {}, {}}; }
Message tool(const std::string& text) { return Message{"tool", text, {}, {}, {}, {}}; }

class Session : public ::testing::Test {
 protected:
  Session() : template_(std::string(qwen35_chat_template()), "qwen3.5") {}

  ChatSession make(SessionOptions options = {}) { return ChatSession(template_, codec_, model_, std::move(options)); }

  std::string full_render(const ChatSession& s, bool add_generation_prompt, std::optional<bool> thinking = std::nullopt) const {
    RenderOptions o;
    o.add_generation_prompt = add_generation_prompt;
    o.enable_thinking = thinking;
    return template_.render(s.conversation(), o);
  }

  // After a reply: the history rendered, up to the end-of-turn token the model wrote.
  std::string rendered_through_reply(const ChatSession& s) const {
    const std::string text = full_render(s, false);
    return text.substr(0, text.rfind("<|im_end|>") + 10);
  }

  // The model has read exactly what the session says it fed (the last end-of-turn token is read
  // with the next turn).
  void expect_model_read(const ChatSession& s) const {
    std::string fed = s.fed_text();
    if (!s.awaiting_reply() && fed.size() >= 10 && fed.substr(fed.size() - 10) == "<|im_end|>") fed.resize(fed.size() - 10);
    EXPECT_EQ(model_.read_text(), fed);
  }

  ChatTemplate template_;
  testing::FakeCodec codec_;
  testing::FakeModel model_{codec_};
};

TEST_F(Session, TheTurnsConcatenateToTheFullRender) {
  ChatSession s = make();
  model_.say("The user greets me.\n</think>\n\nHello! How can I help?");
  s.start(Conversation{{Message{"system", "Be kind.", {}, {}, {}, {}}, user("Hi")}, nullptr});
  EXPECT_EQ(s.fed_text(), full_render(s, true));
  const Reply r = s.generate();
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.parsed.message.content, "Hello! How can I help?");
  EXPECT_EQ(r.parsed.message.reasoning_content, "The user greets me.");
  EXPECT_EQ(s.fed_text(), rendered_through_reply(s));
  expect_model_read(s);

  // A new question: the template now drops the first answer's reasoning, so the session goes back
  // to the state before that turn and feeds the re-rendered history.
  model_.say("Math.\n</think>\n\n4");
  s.add({user("2+2?")});
  EXPECT_EQ(s.fed_text(), full_render(s, true));
  EXPECT_EQ(s.counts().restores, 1u);
  EXPECT_EQ(s.counts().resets, 0u);
  s.generate();
  EXPECT_EQ(s.fed_text(), rendered_through_reply(s));
  expect_model_read(s);
  EXPECT_EQ(s.conversation().messages.size(), 5u);
}

TEST_F(Session, AToolLoopOnlyAppends) {
  ChatSession s = make();
  model_.say("Need the calculator.\n</think>\n\n<tool_call>\n<function=calculator>\n<parameter=expression>\n12*34\n</parameter>\n"
             "<parameter=digits>\n3\n</parameter>\n</function>\n</tool_call>");
  s.start(Conversation{{user("What is 12*34?")}, kCalculator});
  const std::string prompt = s.fed_text();
  const Reply call = s.generate();
  ASSERT_EQ(call.parsed.message.tool_calls.size(), 1u);
  EXPECT_EQ(call.parsed.message.tool_calls[0].arguments, ordered_json::parse(R"({"expression": "12*34", "digits": 3})"));
  EXPECT_TRUE(call.parsed.problems.empty());
  const std::string after_call = s.fed_text();
  EXPECT_EQ(after_call.substr(0, prompt.size()), prompt);

  model_.say("Got it.\n</think>\n\n12*34 = 408.");
  s.add({tool("408")});
  // Exactly the bytes the template adds for a tool result, and the new generation prompt.
  EXPECT_EQ(s.fed_text(), after_call + "\n<|im_start|>user\n<tool_response>\n408\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n");
  EXPECT_EQ(s.fed_text(), full_render(s, true));
  s.generate();
  EXPECT_EQ(s.fed_text(), rendered_through_reply(s));
  EXPECT_EQ(s.counts().restores + s.counts().resets, 0u);
  expect_model_read(s);
}

TEST_F(Session, WithoutSavedStatesItFeedsEverythingAgain) {
  SessionOptions options;
  options.max_snapshots = 0;
  options.enable_thinking = false;
  ChatSession s = make(options);
  model_.say("One.");
  s.start(Conversation{{user("First")}, nullptr});
  s.generate();
  model_.say("Two.");
  s.add({user("Second")});
  EXPECT_EQ(s.fed_text(), full_render(s, true, false));  // the first answer lost its empty think block
  EXPECT_EQ(s.counts().resets, 1u);
  s.generate();
  expect_model_read(s);
}

TEST_F(Session, KeepsTheModelsOwnTextAsWritten) {
  ChatSession s = make();
  // Extra blank lines the template would trim: the model keeps what it wrote, and the next turn
  // still adds exactly the template's bytes for it.
  model_.say("  thinking  \n</think>\n\n\n<tool_call>\n<function=calculator>\n<parameter=expression>\n1+1\n</parameter>\n</function>\n</tool_call>  ");
  s.start(Conversation{{user("1+1?")}, kCalculator});
  s.generate();
  const std::string before = s.fed_text();
  EXPECT_NE(before, rendered_through_reply(s));
  model_.say("done\n</think>\n\n2");
  s.add({tool("2")});
  EXPECT_EQ(s.fed_text(), before + "\n<|im_start|>user\n<tool_response>\n2\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n");
  expect_model_read(s);
}

TEST_F(Session, GoesBackWhenTheTemplateHidesTheReplyItRead) {
  // A template that never shows past reasoning: the reply the model read (after "<think>\n") is
  // not what the template renders for it, so the next turn feeds the re-rendered history.
  const ChatTemplate hiding(
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
      "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}",
      "hiding");
  ChatSession s(hiding, codec_, model_, {});
  model_.say("secret\n</think>\n\nvisible");
  s.start(Conversation{{user("q")}, nullptr});
  s.generate();
  model_.say("r\n</think>\n\nsecond");
  s.add({user("q2")});
  EXPECT_EQ(s.fed_text(), hiding.render(s.conversation(), {}));
  EXPECT_EQ(s.counts().restores, 1u);
  expect_model_read(s);
}

TEST_F(Session, StreamsWholeCharacters) {
  ChatSession s = make();
  model_.say("x\n</think>\n\n日本語 😀 ok");
  s.start(Conversation{{user("hi")}, nullptr});
  std::vector<std::string> pieces;
  s.generate([&](std::string_view piece) { pieces.emplace_back(piece); });
  std::string joined;
  for (const std::string& p : pieces) {
    EXPECT_TRUE(python::valid_utf8(p)) << p;
    joined += p;
  }
  EXPECT_EQ(joined, "x\n</think>\n\n日本語 😀 ok");
  EXPECT_GT(pieces.size(), 10u);
}

TEST_F(Session, StopsAtEndOfTextAndAtTheTokenLimit) {
  SessionOptions options;
  options.max_new_tokens = 5;
  ChatSession s = make(options);
  model_.say("abc", "<|endoftext|>");
  s.start(Conversation{{user("q")}, nullptr});
  Reply r = s.generate();
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.tokens, 3u);
  model_.say("abcdefgh");
  s.add({user("again")});
  r = s.generate();
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.tokens, 5u);
  EXPECT_FALSE(r.parsed.problems.empty());  // the reasoning never closed
  // The cut-off turn is closed by the template's text when the conversation goes on.
  model_.say("x\n</think>\n\ny");
  s.add({user("more")});
  EXPECT_EQ(s.fed_text(), full_render(s, true));
  expect_model_read(s);
}

TEST_F(Session, SamplesOnlyBelowTheVocabularyLimit) {
  SessionOptions options;
  options.sampling.vocabulary_limit = 256;  // bytes only: the model's favourite special tokens are out
  options.max_new_tokens = 3;
  ChatSession s = make(options);
  model_.say("<tool_call>");
  s.start(Conversation{{user("q")}, nullptr});
  const Reply r = s.generate();
  for (TokenId t : s.fed_tokens()) EXPECT_LT(t, codec_.vocabulary_size());
  EXPECT_EQ(r.tokens, 3u);
  EXPECT_EQ(s.fed_text().find("<tool_call>"), std::string::npos);
}

TEST_F(Session, SavesAndLoadsBetweenTurns) {
  toolchain::TemporaryDirectory directory;
  const auto path = directory.path() / "chat.session";
  ChatSession s = make();
  model_.say("r\n</think>\n\nfirst answer");
  s.start(Conversation{{user("one")}, nullptr});
  EXPECT_THROW(s.save(path), Error);  // a reply is awaited
  s.generate();
  s.save(path);
  const std::string fed = s.fed_text();

  testing::FakeModel other(codec_);
  ChatSession loaded(template_, codec_, other, {});
  loaded.load(path);
  EXPECT_EQ(loaded.fed_text(), fed);
  EXPECT_EQ(loaded.conversation().messages, s.conversation().messages);
  EXPECT_EQ(other.history(), model_.history());
  other.say("r2\n</think>\n\nsecond");
  loaded.add({user("two")});
  EXPECT_EQ(loaded.fed_text(), full_render(loaded, true));
  loaded.generate();
  EXPECT_EQ(loaded.conversation().messages.back().content, "second");

  ChatTemplate different("{{ messages }}", "other");
  ChatSession wrong(different, codec_, other, {});
  EXPECT_THROW(wrong.load(path), Error);
}

TEST_F(Session, RefusesWhatCannotBeDone) {
  ChatSession s = make();
  EXPECT_THROW(s.start(Conversation{}), Error);
  EXPECT_THROW(s.generate(), Error);
  EXPECT_THROW(s.start(Conversation{{Message{"system", "only a system prompt", {}, {}, {}, {}}}, nullptr}), jinja::TemplateError);
  model_.say("a");
  s.start(Conversation{{user("q")}, nullptr});
  EXPECT_THROW(s.add({Message{"assistant", "x", {}, {}, {}, {}}}), Error);
  SessionOptions options;
  options.stop_tokens = {"<|nope|>"};
  EXPECT_THROW(make(options), Error);
}

TEST_F(Session, ContinuesAConversationEndingWithTheAssistant) {
  ChatSession s = make();
  Message call{"assistant", std::nullopt, "r", {ToolCall{"c1", "calculator", ordered_json::parse(R"({"expression": "2+2"})")}}, {}, {}};
  s.start(Conversation{{user("2+2?"), call}, kCalculator});
  EXPECT_FALSE(s.awaiting_reply());
  EXPECT_EQ(s.fed_text(), rendered_through_reply(s));
  model_.say("ok\n</think>\n\n4");
  s.add({tool("4")});
  EXPECT_EQ(s.fed_text(), full_render(s, true));
  EXPECT_EQ(s.generate().parsed.message.content, "4");
}

}  // namespace
}  // namespace rvformer::chat
