// chat/chat_template.cpp — see chat_template.h.
#include "chat/chat_template.h"

#include "support/error.h"
#include "support/file.h"

namespace rvformer::chat {

namespace {

using nlohmann::ordered_json;

// tokenizer_config.json's special tokens: strings, or AddedToken objects {"content": ...}.
ordered_json special_tokens_of(const ordered_json& config) {
  ordered_json tokens = ordered_json::object();
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    if (!config.contains(key)) continue;
    const ordered_json& token = config[key];
    if (token.is_string()) tokens[key] = token;
    if (token.is_object() && token.contains("content") && token["content"].is_string()) tokens[key] = token["content"];
  }
  return tokens;
}

std::string template_from_config(const ordered_json& config, const std::string& source) {
  if (!config.contains("chat_template")) fail("{}: no chat template (neither chat_template.jinja nor a \"chat_template\" entry)", source);
  const ordered_json& entry = config["chat_template"];
  if (entry.is_string()) return entry.get<std::string>();
  if (entry.is_array()) {
    for (const ordered_json& named : entry) {
      if (named.is_object() && named.value("name", "") == "default" && named.contains("template") && named["template"].is_string()) {
        return named["template"].get<std::string>();
      }
    }
    fail("{}: \"chat_template\" lists no template named \"default\"", source);
  }
  fail("{}: \"chat_template\" must be a string or a list of named templates", source);
}

}  // namespace

ChatTemplate ChatTemplate::load(const std::filesystem::path& model_directory) {
  const std::filesystem::path config_path = model_directory / "tokenizer_config.json";
  const std::filesystem::path jinja_path = model_directory / "chat_template.jinja";
  ordered_json config = ordered_json::object();
  if (std::filesystem::exists(config_path)) {
    config = ordered_json::parse(read_file_text(config_path), nullptr, false);
    if (config.is_discarded() || !config.is_object()) fail("{}: not a JSON object", config_path.string());
  } else if (!std::filesystem::exists(jinja_path)) {
    fail("{}: no chat_template.jinja or tokenizer_config.json (is this a Hugging Face model directory?)", model_directory.string());
  }
  if (std::filesystem::exists(jinja_path)) return ChatTemplate(read_file_text(jinja_path), jinja_path.string(), special_tokens_of(config));
  return ChatTemplate(template_from_config(config, config_path.string()), config_path.string(), special_tokens_of(config));
}

ChatTemplate::ChatTemplate(std::string source, std::string source_name, ordered_json special_tokens)
    : source_(std::move(source)), template_(jinja::Template::parse(source_, std::move(source_name))), special_tokens_(std::move(special_tokens)) {}

ordered_json ChatTemplate::context(const ordered_json& messages, const ordered_json& tools, const RenderOptions& options) const {
  ordered_json context = special_tokens_;
  for (const auto& [key, value] : options.extra.items()) context[key] = value;
  context["messages"] = messages;
  context["tools"] = tools;
  context["documents"] = nullptr;
  context["add_generation_prompt"] = options.add_generation_prompt;
  if (options.enable_thinking) context["enable_thinking"] = *options.enable_thinking;
  return context;
}

std::string ChatTemplate::render(const ordered_json& messages, const ordered_json& tools, const RenderOptions& options) const {
  return template_.render(jinja::from_json(context(messages, tools, options)).as_dict());
}

std::string ChatTemplate::render(const Conversation& conversation, const RenderOptions& options) const {
  return render(to_json(conversation.messages, ArgumentsAs::object), conversation.tools, options);
}

}  // namespace rvformer::chat
