// cli/chat_commands.cpp — `rvformer chat MODEL_DIR`: a conversation with a Hugging Face Qwen3.5
// checkpoint through its own chat template, tokenizer and the engine's forward pass. One reply to
// --prompt / --messages, or turns read from stdin (one line each) until it ends; replies stream to
// stdout as they are generated; --json prints the messages instead; --state FILE keeps the chat
// (messages, the tokens fed, the engine's state file) to continue it later. `--print-prompt`
// prints the rendered prompt and exits; it needs only the checkpoint's template files. On a merged
// checkpoint the chat offers the computer's calculator as a tool and answers its calls inside the
// model's compiled layers (docs/tool-calls.md).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "chat/chat_template.h"
#include "chat/checkpoint_chat.h"
#include "chat/messages.h"
#include <fmt/format.h>

#include "chat/session.h"
#include "chat/tool_calls.h"
#include "cli/commands.h"
#include "cli/weights.h"
#include "support/error.h"
#include "support/file.h"
#include "toolcall/computer_tool.h"
#include "toolchain/program_loader.h"

namespace rvformer::cli {
namespace {

struct ChatOptions {
  std::string model_directory;
  std::optional<std::string> messages;  // --messages FILE.json
  std::optional<std::string> prompt;    // --prompt TEXT: one more user message
  bool interactive = false;             // turns from stdin after the given messages
  bool no_thinking = false;
  bool print_prompt = false;
  bool json = false;
  std::optional<std::string> state;  // --state FILE
  chat::SamplingOptions sampling;
  std::size_t max_tokens = 4096;
  std::size_t threads = 0;
  std::string engine = "dense";  // --engine dense|fast: the text's forward pass
  bool no_tools = false;         // --no-tools: a merged checkpoint's computer offers no tool
};

// Most rounds of tool calls and responses in one reply, so that a model that keeps calling ends.
constexpr int kMaxToolRounds = 16;

// The messages given on the command line (none when neither option is given).
chat::Conversation given_conversation(const ChatOptions& options) {
  chat::Conversation conversation;
  if (options.messages) conversation = chat::load_conversation(*options.messages);
  if (options.prompt) conversation.messages.push_back(chat::Message{"user", *options.prompt, {}, {}, {}, {}});
  return conversation;
}

// Whether the chat offers the computer's tools: a merged checkpoint, without --no-tools.
bool offers_computer_tools(const ChatOptions& options) {
  return !options.no_tools && std::filesystem::exists(std::filesystem::path(options.model_directory) / "rvformer-merge.json");
}

int print_prompt(const ChatOptions& options) {
  const chat::ChatTemplate chat_template = chat::ChatTemplate::load(options.model_directory);
  chat::Conversation conversation = given_conversation(options);
  if (offers_computer_tools(options)) {
    conversation.tools = chat::offer_tools(
        conversation.tools, nlohmann::ordered_json::array({toolcall::tool_object(toolcall::calculator_tool_spec())}));
  }
  if (conversation.messages.empty()) fail("nothing to chat about: give --prompt TEXT or --messages FILE.json");
  chat::RenderOptions render;
  // A conversation that ends with the assistant's message is rendered as history.
  render.add_generation_prompt = conversation.messages.back().role != "assistant";
  if (options.no_thinking) render.enable_thinking = false;
  const std::string prompt = chat_template.render(conversation, render);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  std::fflush(stdout);
  return 0;
}

void write_out(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// Drives one chat: the given messages, then (interactively) a user turn per line of stdin.
class ChatRun {
 public:
  ChatRun(const ChatOptions& options, chat::CheckpointChat& model, chat::ToolAnswerer* tools)
      : options_(options),
        session_(model.chat_template(), model.codec(), model.language_model(), session_options(options, model)),
        tools_(tools) {}

  int run() {
    const bool resumed = options_.state && std::filesystem::exists(*options_.state);
    if (resumed) load(*options_.state);
    chat::Conversation given = given_conversation(options_);
    if (!given.messages.empty()) begin(std::move(given), resumed);
    if (answer_tool_calls()) reply();
    const bool interactive = options_.interactive || (!options_.prompt && !options_.messages);
    if (session_.awaiting_reply()) reply();
    if (interactive) {
      read_turns();
    } else if (replies_ == 0) {
      fail("nothing to reply to: the conversation ends with the assistant's message (add a user or tool message, or -i)");
    }
    if (options_.json) {
      write_out(chat::to_json(session_.conversation().messages, chat::ArgumentsAs::string).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
      write_out("\n");
    }
    return 0;
  }

 private:
  static chat::SessionOptions session_options(const ChatOptions& options, const chat::CheckpointChat& model) {
    chat::SessionOptions session;
    if (options.no_thinking) session.enable_thinking = false;
    session.sampling = options.sampling;
    session.sampling.vocabulary_limit = model.vocabulary_limit();
    session.max_new_tokens = options.max_tokens;
    session.model_identity = model.identity();
    return session;
  }

  void begin(chat::Conversation given, bool resumed) {
    if (!resumed) {
      if (tools_) given.tools = chat::offer_tools(given.tools, tools_->tools());
      session_.start(std::move(given));
      return;
    }
    if (!given.tools.is_null() && given.tools != session_.conversation().tools) {
      fail("--messages: a saved chat keeps the tools it began with; give the new messages without tools");
    }
    session_.add(std::move(given.messages));
  }

  // Generates the assistant's turn; while it ends with tool calls, answers them and generates on.
  void reply() {
    const auto stream = [this](std::string_view text) {
      if (!options_.json) write_out(text);
    };
    for (int round = 0;; ++round) {
      session_.generate(stream);
      if (!options_.json) write_out("\n");
      if (round + 1 == kMaxToolRounds || !answer_tool_calls()) break;
    }
    ++replies_;
    if (options_.state) save(*options_.state);
  }

  // Answers the tool calls the conversation ends with, if it does and there are tools; false if not.
  bool answer_tool_calls() {
    if (tools_ == nullptr || !chat::awaits_tool_responses(session_.conversation().messages)) return false;
    const auto show = [this](const chat::Message& response) {
      if (!options_.json) write_out("<tool_response>\n" + response.content.value_or("") + "\n</tool_response>\n");
    };
    session_.add(chat::answer_tool_calls(session_.conversation().messages.back(), *tools_, show));
    return true;
  }

  void save(const std::string& path) {
    session_.save(path);
    if (tools_) tools_->save(path);
  }

  void load(const std::string& path) {
    session_.load(path);
    if (tools_) tools_->load(path);
  }

  void read_turns() {
    const bool terminal = isatty(STDIN_FILENO) == 1;
    std::string line;
    while (true) {
      if (terminal) std::fputs("> ", stderr);
      if (!std::getline(std::cin, line)) break;
      if (line.empty()) continue;
      chat::Message user{"user", line, {}, {}, {}, {}};
      if (session_.conversation().messages.empty()) {
        session_.start(chat::Conversation{{std::move(user)}, nullptr});
      } else {
        session_.add({std::move(user)});
      }
      reply();
    }
    if (terminal) std::fputs("\n", stderr);
  }

  const ChatOptions& options_;
  chat::ChatSession session_;
  chat::ToolAnswerer* tools_;  // null: no tools answered
  std::size_t replies_ = 0;
};

// Reports each answer of the computer on stderr.
void report_answer(const toolcall::ConsoleAnswer& answer) {
  print_progress(fmt::format("the computer answered in {} trace tokens ({} instructions)", answer.trace_tokens,
                             answer.instructions));
}

// The computer of a merged checkpoint with the calculator firmware; nothing for another checkpoint
// or with --no-tools.
struct ChatComputer {
  std::unique_ptr<toolcall::MergedComputer> computer;
  std::unique_ptr<toolcall::ComputerTool> calculator;
};

ChatComputer chat_computer(const ChatOptions& options) {
  ChatComputer loaded;
  if (!offers_computer_tools(options)) return loaded;
  print_progress("loading the computer's layers");
  loaded.computer = std::make_unique<toolcall::MergedComputer>(options.model_directory);
  program::ProgramImage firmware = toolchain::load_firmware("calc", loaded.computer->protocol().spec.memory_map());
  loaded.calculator = std::make_unique<toolcall::ComputerTool>(*loaded.computer, std::move(firmware),
                                                               toolcall::calculator_tool_spec(), report_answer);
  return loaded;
}

int run_chat(const ChatOptions& options) {
  check_input_directory(options.model_directory);
  if (options.messages) check_input_file(*options.messages);
  if (options.print_prompt) return print_prompt(options);
  chat::CheckpointChat model(options.model_directory,
                             {.threads = options.threads,
                              .engine = options.engine == "fast" ? chat::ChatEngine::fast : chat::ChatEngine::dense});
  ChatComputer computer = chat_computer(options);
  if (computer.calculator && !(options.state && std::filesystem::exists(*options.state))) {
    print_progress("loading the calculator into the computer");
    computer.calculator->start();
  }
  ChatRun run(options, model, computer.calculator.get());
  return run.run();
}

}  // namespace

void add_chat_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<ChatOptions>();
  CLI::App* chat = app.add_subcommand(
      "chat",
      "Chat with a Hugging Face Qwen3.5 checkpoint: one reply to --prompt/--messages, or one user turn per line of "
      "stdin; replies stream to stdout");
  chat->add_option("MODEL_DIR", options->model_directory,
                   "checkpoint directory (config.json, safetensors, tokenizer.json, chat_template.jinja or "
                   "tokenizer_config.json)")
      ->required();
  chat->add_option("--messages", options->messages,
                   "OpenAI-style messages file: a JSON array of messages, or {\"messages\": [...], \"tools\": [...]}");
  chat->add_option("--prompt", options->prompt, "a user message (after those of --messages)");
  chat->add_flag("-i,--interactive", options->interactive,
                 "after the given messages, read user turns from stdin (the default when none are given)");
  chat->add_flag("--no-thinking", options->no_thinking, "render with enable_thinking=false (no reasoning before the answer)");
  auto* print = chat->add_flag("--print-prompt", options->print_prompt, "print the rendered prompt exactly and exit");
  chat->add_flag("--json", options->json, "print the messages (given and generated) as a JSON array instead of streaming");
  chat->add_option("--state", options->state,
                   "chat file: continued when it exists, written after every reply (FILE and FILE.model)")
      ->excludes(print);
  chat->add_option("--temperature", options->sampling.temperature, "sampling temperature (default 0: greedy)");
  chat->add_option("--top-p", options->sampling.top_p, "nucleus sampling: smallest set of tokens reaching this probability");
  chat->add_option("--top-k", options->sampling.top_k, "sample among the k most likely tokens (default 0: all)");
  chat->add_option("--seed", options->sampling.seed, "random seed for sampling (default 0)");
  chat->add_option("--max-tokens", options->max_tokens, "most tokens per reply (default 4096)")
      ->check(CLI::PositiveNumber);
  chat->add_option("--threads", options->threads, "threads for matrix products (default 0: every core)");
  chat->add_option("--engine", options->engine,
                   "the text's forward pass: dense (reference, bf16 read in place, threaded; default) or fast (the "
                   "exact sparse executor, for checkpoints whose weights are mostly zero)")
      ->check(CLI::IsMember({"dense", "fast"}));
  chat->add_flag("--no-tools", options->no_tools,
                 "on a merged checkpoint, offer no computer tool (the calculator is offered by default)");
  chat->callback([&action, options] { action = [options] { return run_chat(*options); }; });
}

}  // namespace rvformer::cli
