// chat/chat_template.h — a model's chat template and how Hugging Face renders it: the template
// gets `messages`, `tools` (None when absent), `documents` (None), `add_generation_prompt`, the
// tokenizer's special tokens (bos_token, eos_token, ...) and any extra variables such as
// `enable_thinking` (left undefined unless given, so the template's default applies).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/jinja_template.h"
#include "chat/messages.h"

namespace rvformer::chat {

struct RenderOptions {
  bool add_generation_prompt = true;
  std::optional<bool> enable_thinking;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // more template variables
};

class ChatTemplate {
 public:
  // From a Hugging Face model directory, as transformers loads it: chat_template.jinja when
  // present, else tokenizer_config.json's "chat_template" (a string, or a list of
  // {"name", "template"} entries of which "default" is used). Throws rvformer::Error.
  static ChatTemplate load(const std::filesystem::path& model_directory);

  // `special_tokens`: {"eos_token": "<|im_end|>", ...}, passed to the template as variables.
  ChatTemplate(std::string source, std::string source_name,
               nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object());

  // `messages` and `tools` as the template sees them (tool call arguments as objects); a null
  // `tools` is Python's None. Throws jinja::TemplateError, whose message names the template line.
  std::string render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                     const RenderOptions& options) const;
  std::string render(const Conversation& conversation, const RenderOptions& options) const;

  // The variables render() gives the template.
  nlohmann::ordered_json context(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                 const RenderOptions& options) const;

  const std::string& source() const { return source_; }
  const std::string& source_name() const { return template_.source_name(); }

 private:
  std::string source_;
  jinja::Template template_;
  nlohmann::ordered_json special_tokens_;
};

}  // namespace rvformer::chat
