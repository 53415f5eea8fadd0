// chat/session.cpp — see session.h.
#include "chat/session.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "chat/utf8_stream.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::chat {

namespace {

using nlohmann::ordered_json;

constexpr int kSessionFormatVersion = 1;

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

std::size_t common_prefix(std::string_view a, std::string_view b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<std::size_t>(ia - a.begin());
}

// FNV-1a, to recognise the template a session was saved with.
std::uint64_t fingerprint(std::string_view text) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  return h;
}

std::filesystem::path model_state_path(const std::filesystem::path& path) {
  std::filesystem::path p = path;
  p += ".model";
  return p;
}

}  // namespace

ChatSession::ChatSession(const ChatTemplate& chat_template, const TextCodec& codec, LanguageModel& model, SessionOptions options)
    : template_(chat_template), codec_(codec), model_(model), options_(std::move(options)), sampler_(options_.sampling) {
  for (const std::string& text : options_.stop_tokens) {
    if (std::optional<TokenId> id = codec_.special_token(text)) {
      if (stop_ids_.empty()) end_of_turn_ = text;
      stop_ids_.push_back(*id);
    }
  }
  if (stop_ids_.empty()) fail("the vocabulary has none of the end-of-turn tokens ({})", fmt::join(options_.stop_tokens, ", "));
}

std::string ChatSession::render(const Conversation& conversation, bool add_generation_prompt) const {
  RenderOptions options;
  options.add_generation_prompt = add_generation_prompt;
  options.enable_thinking = options_.enable_thinking;
  return template_.render(conversation, options);
}

std::string ChatSession::closed_rendering(const Conversation& conversation, bool finished) const {
  const std::string text = render(conversation, false);
  const std::size_t end = text.rfind(end_of_turn_);
  if (end == std::string::npos) return text;
  // A finished turn ends with the end-of-turn token the model wrote; an unfinished one lacks it,
  // so the next turn's text starts by closing it.
  return text.substr(0, finished ? end + end_of_turn_.size() : end);
}

void ChatSession::start(Conversation conversation) {
  if (conversation.messages.empty()) fail("the conversation has no messages");
  const bool replied = conversation.messages.back().role == "assistant";
  // Rendered before anything changes: a template error leaves the session as it was.
  const std::string rendering = replied ? closed_rendering(conversation, true) : std::string();
  if (!replied) {
    const std::vector<Message> none;
    open_turn(std::move(conversation), none, true);
    return;
  }
  conversation_ = std::move(conversation);
  restart();
  feed_up_to(rendering);
  awaiting_reply_ = false;
}

void ChatSession::add(std::vector<Message> messages) { open_turn(conversation_, messages, false); }

void ChatSession::open_turn(Conversation conversation, const std::vector<Message>& messages, bool from_start) {
  for (const Message& m : messages) {
    if (m.role != "user" && m.role != "tool") fail("only user and tool messages can be added to a chat, not {}", m.role);
    conversation.messages.push_back(m);
  }
  const std::string history = render(conversation, false);
  const std::string prompt = render(conversation, true);
  // The generation prompt is what add_generation_prompt appends; an unclosed <think> in it means
  // the reply starts inside the reasoning.
  const std::string generation_prompt = starts_with(prompt, history) ? prompt.substr(history.size()) : "";
  const std::size_t open = generation_prompt.rfind("<think>");
  const std::size_t close = generation_prompt.rfind("</think>");
  conversation_ = std::move(conversation);
  if (from_start) restart();
  reasoning_open_ = open != std::string::npos && (close == std::string::npos || close < open);
  feed_up_to(prompt);
  awaiting_reply_ = true;
}

void ChatSession::restart() {
  model_.reset();
  fed_.clear();
  canonical_.clear();
  pending_.clear();
  checkpoints_.clear();
}

void ChatSession::feed_up_to(const std::string& rendering) {
  if (!starts_with(rendering, canonical_)) go_back_for(rendering);
  const bool saved_here = !checkpoints_.empty() && checkpoints_.back().segments == fed_.size() &&
                          checkpoints_.back().canonical_length == canonical_.size();
  if (options_.max_snapshots > 0 && !saved_here) {
    if (checkpoints_.size() == options_.max_snapshots) checkpoints_.pop_front();
    checkpoints_.push_back(Checkpoint{fed_.size(), canonical_.size(), pending_, model_.snapshot()});
  }
  feed_template_text(rendering.substr(canonical_.size()));
  canonical_ = rendering;
}

void ChatSession::go_back_for(const std::string& rendering) {
  const std::size_t unchanged = common_prefix(rendering, canonical_);
  while (!checkpoints_.empty() && checkpoints_.back().canonical_length > unchanged) checkpoints_.pop_back();
  if (checkpoints_.empty()) {
    model_.reset();
    fed_.clear();
    canonical_.clear();
    pending_.clear();
    ++counts_.resets;
    return;
  }
  const Checkpoint& back = checkpoints_.back();
  model_.restore(*back.state);
  fed_.resize(back.segments);
  canonical_.resize(back.canonical_length);
  pending_ = back.pending;
  ++counts_.restores;
}

void ChatSession::feed_template_text(const std::string& text) {
  std::vector<TokenId> tokens = codec_.encode(text);
  std::vector<TokenId> all = pending_;
  all.insert(all.end(), tokens.begin(), tokens.end());
  if (all.empty()) return;
  logits_ = model_.feed(all);
  pending_.clear();
  counts_.template_tokens += tokens.size();
  if (!text.empty()) fed_.push_back(Segment{text, std::move(tokens), false});
}

bool ChatSession::is_stop(TokenId token) const { return std::find(stop_ids_.begin(), stop_ids_.end(), token) != stop_ids_.end(); }

Reply ChatSession::generate(const std::function<void(std::string_view)>& on_text) {
  if (!awaiting_reply_) fail("there is nothing to reply to: add a user or tool message first");
  Reply reply;
  std::vector<TokenId> generated;
  Utf8Stream stream;
  std::optional<TokenId> stop;
  while (generated.size() < options_.max_new_tokens) {
    const TokenId token = sampler_.sample(logits_);
    if (is_stop(token)) {
      stop = token;
      break;
    }
    generated.push_back(token);
    const TokenId one[] = {token};
    if (on_text) {
      const std::string piece = stream.push(codec_.decode(one));
      if (!piece.empty()) on_text(piece);
    }
    logits_ = model_.feed(one);
  }
  if (on_text) {
    const std::string rest = stream.finish();
    if (!rest.empty()) on_text(rest);
  }
  const std::string raw = codec_.decode(generated);
  reply.parsed = parse_reply(valid_utf8(raw), reasoning_open_, conversation_.tools);
  reply.tokens = generated.size();
  reply.finished = stop.has_value();
  conversation_.messages.push_back(reply.parsed.message);
  fed_.push_back(Segment{raw, generated, true});
  if (stop) {
    const TokenId one[] = {*stop};
    fed_.push_back(Segment{codec_.decode(one), {*stop}, true});
    pending_ = {*stop};
  }
  awaiting_reply_ = false;
  // What the model read stands for the template's rendering of its reply, unless the template
  // renders the turn so that it no longer starts with the generation prompt the model was given
  // (e.g. it hides the reasoning of every past turn): then the text as read is kept, and the next
  // turn goes back to before the prompt.
  const std::string closed = closed_rendering(conversation_, reply.finished);
  canonical_ = starts_with(closed, canonical_) ? closed : canonical_ + valid_utf8(fed_text_of_reply(reply.finished));
  return reply;
}

std::string ChatSession::fed_text_of_reply(bool finished) const {
  const std::size_t segments = finished ? 2 : 1;
  std::string text;
  for (std::size_t i = fed_.size() - segments; i < fed_.size(); ++i) text += fed_[i].text;
  return text;
}

std::string ChatSession::fed_text() const {
  std::string text;
  for (const Segment& s : fed_) text += s.text;
  return text;
}

std::vector<TokenId> ChatSession::fed_tokens() const {
  std::vector<TokenId> tokens;
  for (const Segment& s : fed_) tokens.insert(tokens.end(), s.tokens.begin(), s.tokens.end());
  return tokens;
}

void ChatSession::save(const std::filesystem::path& path) const {
  if (awaiting_reply_) fail("a chat session can be saved between turns only, not while a reply is awaited");
  ordered_json segments = ordered_json::array();
  for (const Segment& s : fed_) segments.push_back({{"text", s.text}, {"tokens", s.tokens}, {"from_model", s.from_model}});
  const ordered_json json = {
      {"format", "rvformer chat session"},
      {"version", kSessionFormatVersion},
      {"template", {{"source", template_.source_name()}, {"fingerprint", fingerprint(template_.source())}}},
      {"model", options_.model_identity},
      {"tools", conversation_.tools},
      {"messages", to_json(conversation_.messages, ArgumentsAs::object)},
      {"segments", segments},
      {"canonical", canonical_},
      {"pending", pending_},
      {"random", sampler_.random().state()},
  };
  model_.save_state(model_state_path(path));
  write_file_atomic(path, json.dump(1, ' ', false, ordered_json::error_handler_t::replace) + "\n");
}

void ChatSession::load(const std::filesystem::path& path) {
  const ordered_json json = ordered_json::parse(read_file_text(path), nullptr, false);
  auto bad = [&](const std::string& what) { fail("{}: {}", path.string(), what); };
  if (json.is_discarded() || !json.is_object() || json.value("format", "") != "rvformer chat session") bad("not an rvformer chat session file");
  if (json.value("version", 0) != kSessionFormatVersion) bad(fmt::format("session format version {} (this build reads {})", json.value("version", 0), kSessionFormatVersion));
  try {
    if (json.at("template").at("fingerprint").get<std::uint64_t>() != fingerprint(template_.source())) {
      bad(fmt::format("saved with a different chat template ({})", json.at("template").value("source", "?")));
    }
    if (json.at("model").get<std::string>() != options_.model_identity) {
      bad(fmt::format("saved with a different model ({}; this one is {})", json.at("model").get<std::string>(), options_.model_identity));
    }
    Conversation conversation = parse_conversation(ordered_json({{"messages", json.at("messages")}, {"tools", json.at("tools")}}).dump(), path.string());
    std::vector<Segment> segments;
    for (const ordered_json& s : json.at("segments")) {
      segments.push_back(Segment{s.at("text").get<std::string>(), s.at("tokens").get<std::vector<TokenId>>(), s.at("from_model").get<bool>()});
    }
    std::string canonical = json.at("canonical").get<std::string>();
    std::vector<TokenId> pending = json.at("pending").get<std::vector<TokenId>>();
    const auto random = json.at("random").get<std::array<std::uint64_t, 4>>();
    // The model's state is read last: it is left as it was when its file is bad.
    model_.load_state(model_state_path(path));
    conversation_ = std::move(conversation);
    fed_ = std::move(segments);
    canonical_ = std::move(canonical);
    pending_ = std::move(pending);
    sampler_.random().set_state(random);
  } catch (const ordered_json::exception& e) {
    bad(fmt::format("malformed session file ({})", e.what()));
  }
  checkpoints_.clear();
  logits_.clear();
  awaiting_reply_ = false;
}

}  // namespace rvformer::chat
