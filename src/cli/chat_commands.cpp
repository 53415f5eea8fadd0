// cli/chat_commands.cpp — `rvformer chat MODEL_DIR`: a conversation with a Hugging Face chat
// model through its own chat template. `--print-prompt` prints the rendered prompt and exits; it
// needs only the checkpoint's template files (chat_template.jinja or tokenizer_config.json).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "chat/chat_template.h"
#include "chat/messages.h"
#include "cli/commands.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::cli {
namespace {

struct ChatOptions {
  std::string model_directory;
  std::optional<std::string> messages;  // --messages FILE.json
  std::optional<std::string> prompt;    // --prompt TEXT: one more user message
  bool no_thinking = false;
  bool print_prompt = false;
};

chat::Conversation conversation_from(const ChatOptions& options) {
  chat::Conversation conversation;
  if (options.messages) conversation = chat::load_conversation(*options.messages);
  if (options.prompt) conversation.messages.push_back(chat::Message{"user", *options.prompt, {}, {}, {}, {}});
  if (conversation.messages.empty()) fail("nothing to chat about: give --prompt TEXT or --messages FILE.json");
  return conversation;
}

int run_chat(const ChatOptions& options) {
  check_input_directory(options.model_directory);
  if (options.messages) check_input_file(*options.messages);
  const chat::ChatTemplate chat_template = chat::ChatTemplate::load(options.model_directory);
  const chat::Conversation conversation = conversation_from(options);
  if (!options.print_prompt) {
    fail("replying needs the model's tokenizer and engine, which `rvformer chat` does not drive yet; "
         "--print-prompt shows the prompt the model would read");
  }
  chat::RenderOptions render;
  // A conversation that ends with the assistant's message is rendered as history.
  render.add_generation_prompt = conversation.messages.back().role != "assistant";
  if (options.no_thinking) render.enable_thinking = false;
  const std::string prompt = chat_template.render(conversation, render);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace

void add_chat_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<ChatOptions>();
  CLI::App* chat = app.add_subcommand("chat", "Chat with a Hugging Face chat model through its chat template");
  chat->add_option("MODEL_DIR", options->model_directory, "checkpoint directory (chat_template.jinja or tokenizer_config.json)")->required();
  chat->add_option("--messages", options->messages,
                   "OpenAI-style messages file: a JSON array of messages, or {\"messages\": [...], \"tools\": [...]}");
  chat->add_option("--prompt", options->prompt, "a user message (after those of --messages)");
  chat->add_flag("--no-thinking", options->no_thinking, "render with enable_thinking=false (no reasoning before the answer)");
  chat->add_flag("--print-prompt", options->print_prompt, "print the rendered prompt exactly and exit");
  chat->callback([&action, options] { action = [options] { return run_chat(*options); }; });
}

}  // namespace rvformer::cli
