// cli/chat_commands_test.cpp — `rvformer chat` end to end on a tiny synthetic Qwen3.5 checkpoint in
// the published Hugging Face layout, carrying the Qwen3 tokenizer (Qwen3.5's pre-tokenizer pattern)
// and the Qwen3.5 chat template: a scripted conversation from --messages is fed exactly as Python's
// Jinja2 renders the template, the reply is the engine's own greedy decode of those ids (streamed,
// and in --json), --state continues a chat as one long session would, and bad input gives one-line
// errors. `--print-prompt` needs only the template files.
#include <gtest/gtest.h>

#include <fstream>

#include "chat/jinja_oracle_testing.h"
#include "chat/qwen35_template.h"
#include "chat/reply_parser.h"
#include "chat/sampler.h"
#include "chat/utf8_stream.h"
#include "cli/cli_testing.h"
#include "engine/model.h"
#include "chat/synthetic_chat_model.h"
#include "support/file.h"
#include "tokenizer/reference_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace rvformer::cli {
namespace {

using nlohmann::ordered_json;
using toolchain::ProcessResult;

constexpr auto kTimeout = std::chrono::seconds(120);

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
constexpr const char* kFollowUp = "Merci ! Et 2+2 ?";

// Hugging Face's rendering of kConversation plus the follow-up: the arguments string decoded to an
// object (as serving stacks do before apply_chat_template), the tokenizer's special tokens.
std::string jinja2_prompt(bool thinking) {
  ordered_json conversation = ordered_json::parse(kConversation);
  auto& call = conversation["messages"][2]["tool_calls"][0]["function"];
  call["arguments"] = ordered_json::parse(call["arguments"].get<std::string>());
  conversation["messages"].push_back({{"role", "user"}, {"content", kFollowUp}});
  ordered_json context = {{"eos_token", "<|im_end|>"}, {"pad_token", "<|endoftext|>"}, {"messages", conversation["messages"]},
                          {"tools", conversation["tools"]}, {"documents", nullptr}, {"add_generation_prompt", true}};
  if (!thinking) context["enable_thinking"] = false;
  const auto expected = chat::testing::render_with_jinja2({{"prompt", std::string(chat::qwen35_chat_template()), context}});
  EXPECT_EQ(expected.size(), 1u);
  EXPECT_TRUE(expected.at(0).ok) << expected.at(0).message;
  return expected.at(0).text;
}

class ChatCommand : public CommandTest {
 protected:
  // A model directory with only the template files, as Hugging Face ships Qwen3.5's.
  std::string template_directory() {
    const std::filesystem::path dir = directory_.path() / "template-only";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "chat_template.jinja", std::ios::binary) << chat::qwen35_chat_template();
    std::ofstream(dir / "tokenizer_config.json") << chat::testing::synthetic_tokenizer_config;
    return dir.string();
  }
};

TEST_F(ChatCommand, PrintsThePromptAsJinja2RendersIt) {
  const std::string model = template_directory();
  const std::string messages = write_source("talk.json", kConversation);
  for (bool thinking : {true, false}) {
    std::vector<std::string> arguments = {"chat", model, "--print-prompt", "--messages", messages, "--prompt", kFollowUp};
    if (!thinking) arguments.push_back("--no-thinking");
    const auto result = run_rvformer(arguments, kTimeout);
    ASSERT_EQ(result.exit_status, 0) << result.standard_error;
    EXPECT_EQ(result.standard_output, jinja2_prompt(thinking));
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

// The tiny synthetic checkpoint, written once for all tests.
class ChatWithModel : public ChatCommand {
 protected:
  static void SetUpTestSuite() {
    if (!tokenizer::testing::missing_reference_package().empty()) return;
    checkpoint_directory_ = new toolchain::TemporaryDirectory();
    chat::testing::write_synthetic_chat_checkpoint(model_directory(), engine::synthetic_preset("tiny"));
  }
  static void TearDownTestSuite() {
    delete checkpoint_directory_;
    checkpoint_directory_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(tokenizer::testing::missing_reference_package(), ""); }

  static std::filesystem::path model_directory() { return checkpoint_directory_->path() / "qwen35-tiny"; }
  static std::string model() { return model_directory().string(); }

  // `rvformer chat ARGUMENTS < stdin_text`.
  ProcessResult chat_with_input(const std::vector<std::string>& arguments, const std::string& stdin_text) {
    const std::string input = write_source("stdin.txt", stdin_text);
    std::string command = "exec '" RVFORMER_BINARY "' chat";
    for (const std::string& a : arguments) command += " '" + a + "'";
    command += " < '" + input + "'";
    return toolchain::run_process({"/bin/sh", "-c", command}, {.capture_output = true, .timeout = kTimeout});
  }

  static toolchain::TemporaryDirectory* checkpoint_directory_;
};

toolchain::TemporaryDirectory* ChatWithModel::checkpoint_directory_ = nullptr;

// A reply decoded directly with the engine: `choose` picks each token from the logits, until an
// end-of-turn token or `limit` tokens.
std::vector<engine::TokenId> direct_reply(const std::filesystem::path& model_dir, const std::vector<engine::TokenId>& prompt,
                                          std::size_t limit,
                                          const std::function<engine::TokenId(std::span<const float>, std::size_t)>& choose) {
  const engine::Model model = engine::Model::load(model_dir, {.threads = 1});
  const tokenizer::Tokenizer tokenizer = tokenizer::Tokenizer::load(model_dir);
  const std::size_t vocabulary = std::min<std::size_t>(tokenizer.id_limit(), model.config().vocab_size);
  const engine::TokenId im_end = *tokenizer.token_to_id("<|im_end|>");
  const engine::TokenId end_of_text = *tokenizer.token_to_id("<|endoftext|>");
  engine::State state = model.new_state();
  std::vector<float> logits = model.prefill(state, prompt);
  std::vector<engine::TokenId> reply;
  while (reply.size() < limit) {
    const engine::TokenId next = choose(logits, vocabulary);
    if (next == im_end || next == end_of_text) break;
    reply.push_back(next);
    logits = model.decode(state, next);
  }
  return reply;
}

// Greedy: the highest logit among the tokenizer's ids, the lowest id on ties.
std::vector<engine::TokenId> greedy_reply(const std::filesystem::path& model_dir, const std::vector<engine::TokenId>& prompt,
                                          std::size_t limit) {
  return direct_reply(model_dir, prompt, limit, [](std::span<const float> logits, std::size_t vocabulary) {
    engine::TokenId best = 0;
    for (engine::TokenId id = 1; id < vocabulary; ++id) {
      if (logits[id] > logits[best]) best = id;
    }
    return best;
  });
}

ordered_json read_json(const std::string& path) { return ordered_json::parse(read_file_text(path)); }

TEST_F(ChatWithModel, AScriptedChatIsFedTheTemplatesRenderingAndRepliesAsTheEngineDecodes) {
  const std::string messages = write_source("talk.json", kConversation);
  const std::string state = path("chat.state");
  const auto result = run_rvformer({"chat", model(), "--messages", messages, "--prompt", kFollowUp, "--max-tokens", "12",
                                    "--threads", "2", "--json", "--state", state},
                                   kTimeout);
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;

  // What the model read: the template's rendering, byte for byte as Jinja2 gives it, in the
  // tokenizer's ids; then its own reply.
  const std::string prompt = jinja2_prompt(true);
  const tokenizer::Tokenizer tokenizer = tokenizer::Tokenizer::load(model_directory());
  const std::vector<engine::TokenId> prompt_ids = tokenizer.encode(prompt);
  const ordered_json session = read_json(state);
  const ordered_json& segments = session.at("segments");
  ASSERT_GE(segments.size(), 2u) << segments.dump();
  EXPECT_EQ(segments[0].at("text").get<std::string>(), prompt);
  EXPECT_EQ(segments[0].at("tokens").get<std::vector<engine::TokenId>>(), prompt_ids);
  ASSERT_TRUE(segments[1].at("from_model").get<bool>());
  const auto generated = segments[1].at("tokens").get<std::vector<engine::TokenId>>();
  EXPECT_EQ(generated, greedy_reply(model_directory(), prompt_ids, 12));
  EXPECT_FALSE(generated.empty());

  // --json: the given messages (the arguments in the OpenAI string form), the follow-up and the
  // reply parsed from the decoded text.
  const ordered_json output = ordered_json::parse(result.standard_output);
  ordered_json given = ordered_json::parse(kConversation)["messages"];
  given.push_back({{"role", "user"}, {"content", kFollowUp}});
  ASSERT_EQ(output.size(), given.size() + 1);
  for (std::size_t i = 0; i < given.size(); ++i) {
    EXPECT_EQ(output[i].at("role"), given[i].at("role"));
    EXPECT_EQ(output[i].value("content", ordered_json()), given[i].value("content", ordered_json()));
  }
  EXPECT_EQ(output[2]["tool_calls"][0]["function"]["arguments"], given[2]["tool_calls"][0]["function"]["arguments"]);
  const std::string reply_text = chat::valid_utf8(tokenizer.decode_bytes(generated));
  const chat::Conversation tools = chat::parse_conversation(kConversation, "talk.json");
  EXPECT_EQ(output.back(), chat::to_json(chat::parse_reply(reply_text, true, tools.tools).message, chat::ArgumentsAs::string));
  EXPECT_EQ(output.back().at("role"), "assistant");

  // Without --json the reply streams to stdout as text, then a newline.
  const auto streamed = run_rvformer({"chat", model(), "--messages", messages, "--prompt", kFollowUp, "--max-tokens", "12"}, kTimeout);
  ASSERT_EQ(streamed.exit_status, 0) << streamed.standard_error;
  EXPECT_EQ(streamed.standard_output, reply_text + "\n");
}

TEST_F(ChatWithModel, WithoutThinkingTheGenerationPromptClosesTheReasoning) {
  const std::string messages = write_source("talk.json", kConversation);
  const std::string state = path("chat.state");
  const auto result = run_rvformer({"chat", model(), "--messages", messages, "--prompt", kFollowUp, "--max-tokens", "4",
                                    "--no-thinking", "--state", state},
                                   kTimeout);
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  const ordered_json segments = read_json(state).at("segments");
  const std::string prompt = jinja2_prompt(false);
  EXPECT_EQ(segments.at(0).at("text").get<std::string>(), prompt);
  const tokenizer::Tokenizer tokenizer = tokenizer::Tokenizer::load(model_directory());
  EXPECT_EQ(segments.at(1).at("tokens").get<std::vector<engine::TokenId>>(), greedy_reply(model_directory(), tokenizer.encode(prompt), 4));
}

TEST_F(ChatWithModel, AChatContinuedFromItsStateEqualsOneLongSession) {
  // Turns from stdin (not a terminal), one per line; the empty line is skipped.
  const std::string whole = path("whole.state");
  const auto long_session = chat_with_input({model(), "--max-tokens", "6", "--state", whole}, "Hello there\n\nAnd then?\nWhy?\n");
  ASSERT_EQ(long_session.exit_status, 0) << long_session.standard_error;
  EXPECT_GE(std::count(long_session.standard_output.begin(), long_session.standard_output.end(), '\n'), 3);

  const std::string parts = path("parts.state");
  for (const char* turn : {"Hello there", "And then?"}) {
    const auto result = run_rvformer({"chat", model(), "--prompt", turn, "--max-tokens", "6", "--state", parts}, kTimeout);
    ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  }
  const auto last = chat_with_input({model(), "--max-tokens", "6", "--state", parts, "--json"}, "Why?\n");
  ASSERT_EQ(last.exit_status, 0) << last.standard_error;

  const ordered_json a = read_json(whole);
  const ordered_json b = read_json(parts);
  EXPECT_EQ(a.at("messages").size(), 6u);
  EXPECT_EQ(a, b);
  EXPECT_EQ(read_file_text(whole + ".model"), read_file_text(parts + ".model"));
  EXPECT_EQ(ordered_json::parse(last.standard_output), chat::to_json(chat::parse_conversation(a.at("messages").dump(), "whole").messages, chat::ArgumentsAs::string));
}

TEST_F(ChatWithModel, SamplesWithTheGivenOptions) {
  const std::string state = path("chat.state");
  const auto result = run_rvformer({"chat", model(), "--prompt", "Tell me a story.", "--max-tokens", "10", "--temperature", "0.8",
                                    "--top-k", "40", "--top-p", "0.9", "--seed", "5", "--state", state},
                                   kTimeout);
  ASSERT_EQ(result.exit_status, 0) << result.standard_error;
  const ordered_json segments = read_json(state).at("segments");
  chat::SamplingOptions options{.temperature = 0.8, .top_k = 40, .top_p = 0.9, .seed = 5};
  std::optional<chat::Sampler> sampler;
  const auto sampled = direct_reply(model_directory(), segments.at(0).at("tokens").get<std::vector<engine::TokenId>>(), 10,
                                    [&](std::span<const float> logits, std::size_t vocabulary) {
                                      if (!sampler) {
                                        options.vocabulary_limit = vocabulary;
                                        sampler.emplace(options);
                                      }
                                      return sampler->sample(logits);
                                    });
  const auto generated = segments.at(1).at("tokens").get<std::vector<engine::TokenId>>();
  EXPECT_EQ(generated, sampled);
  EXPECT_NE(generated, greedy_reply(model_directory(), segments.at(0).at("tokens").get<std::vector<engine::TokenId>>(), 10));
}

void expect_one_line_error(const ProcessResult& result, const std::string& error) {
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_EQ(result.standard_error.find("rvformer: error: "), 0u) << result.standard_error;
  EXPECT_NE(result.standard_error.find(error), std::string::npos) << result.standard_error;
  EXPECT_EQ(std::count(result.standard_error.begin(), result.standard_error.end(), '\n'), 1) << result.standard_error;
}

TEST_F(ChatCommand, ExplainsBadInputInOneLine) {
  const std::string model = template_directory();
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
      {{"chat", model, "--prompt", "x"}, "holds no tokenizer.json"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.arguments.back());
    expect_one_line_error(run_rvformer(c.arguments, kTimeout), c.error);
  }
}

TEST_F(ChatWithModel, ExplainsBadInputInOneLine) {
  const std::string state = path("chat.state");
  ASSERT_EQ(run_rvformer({"chat", model(), "--prompt", "Hi", "--max-tokens", "2", "--state", state}, kTimeout).exit_status, 0);
  auto chat = [&](std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), {"chat", model()});
    return run_rvformer(arguments, kTimeout);
  };
  auto edited = [&](const std::string& name, const std::function<void(ordered_json&)>& edit) {
    ordered_json json = read_json(state);
    edit(json);
    write_file_atomic(path(name), json.dump());
    std::filesystem::copy_file(state + ".model", path(name) + ".model");
    return path(name);
  };

  write_file_atomic(path("garbage.state"), "{not json");
  expect_one_line_error(chat({"--prompt", "x", "--state", path("garbage.state")}), "garbage.state: not an rvformer chat session file");
  const std::string other_model = edited("other.state", [](ordered_json& j) { j["model"] = "config.json+tokenizer.json 0123"; });
  expect_one_line_error(chat({"--prompt", "x", "--state", other_model}), "other.state: saved with a different model");
  const std::string other_template = edited("template.state", [](ordered_json& j) { j["template"]["fingerprint"] = 1; });
  expect_one_line_error(chat({"--prompt", "x", "--state", other_template}), "saved with a different chat template");
  const std::string no_segments = edited("segments.state", [](ordered_json& j) { j.erase("segments"); });
  expect_one_line_error(chat({"--prompt", "x", "--state", no_segments}), "malformed session file");
  const std::string truncated = edited("truncated.state", [](ordered_json&) {});
  const std::string model_state = read_file_text(state + ".model");
  write_file_atomic(truncated + ".model", model_state.substr(0, model_state.size() / 2));
  expect_one_line_error(chat({"--prompt", "x", "--state", truncated}), "truncated.state.model");
  const std::string tooled = write_source("tools.json", R"({"messages": [{"role": "user", "content": "a"}], "tools": [{"type": "function", "function": {"name": "f"}}]})");
  expect_one_line_error(chat({"--messages", tooled, "--state", state}), "keeps the tools it began with");
  const std::string replied = write_source("replied.json", R"([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])");
  expect_one_line_error(chat({"--messages", replied}), "nothing to reply to");
  expect_one_line_error(chat({"--messages", replied, "--state", state}), "only user and tool messages can be added");
  expect_one_line_error(chat({"--prompt", "x", "--temperature", "-1"}), "temperature");
  // The state file is left as it was by every failed continuation.
  EXPECT_EQ(read_json(state).at("messages").size(), 2u);
}

}  // namespace
}  // namespace rvformer::cli
