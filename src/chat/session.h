// chat/session.h — a conversation with a model whose state holds everything it has read: a
// recurrent model (Qwen3.5's Gated DeltaNet layers) cannot take a token back, so the session
// renders the chat template once, feeds it, and afterwards feeds only what the template adds for
// each new turn, keeping the model's own tokens as it wrote them. When the template renders the
// earlier history differently once new messages arrive (Qwen3.5 drops the reasoning of assistant
// turns before the latest user query), the session restores the state saved at the last turn
// boundary before the change and feeds the template's text from there, so the model always reads
// what the template renders for the whole history.
//
// The tokenizer and the model come in through the interfaces below, so this module depends on
// neither (docs/chat.md describes the flow and what an engine adapter provides).
#pragma once

#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "chat/messages.h"
#include "chat/reply_parser.h"
#include "chat/sampler.h"

namespace rvformer::chat {

// The tokenizer, as far as a chat needs it.
class TextCodec {
 public:
  virtual ~TextCodec() = default;
  // Text to ids. The text of special and added tokens ("<|im_start|>", "<think>") becomes their
  // ids, as Hugging Face's tokenizer treats a rendered chat prompt.
  virtual std::vector<TokenId> encode(std::string_view text) const = 0;
  // Ids to bytes, with no replacement: a byte-level token may end inside a UTF-8 sequence.
  virtual std::string decode(std::span<const TokenId> tokens) const = 0;
  // The id of a special or added token given by its text, if the vocabulary has it.
  virtual std::optional<TokenId> special_token(std::string_view text) const = 0;
};

// A copy of a model's state kept in memory, to return to.
class ModelSnapshot {
 public:
  virtual ~ModelSnapshot() = default;
};

// The model, as far as a chat needs it.
class LanguageModel {
 public:
  virtual ~LanguageModel() = default;
  // Feeds `tokens` in order; returns the logits over the vocabulary that follow the last one.
  virtual std::vector<float> feed(std::span<const TokenId> tokens) = 0;
  // Back to the state before any token.
  virtual void reset() = 0;
  virtual std::unique_ptr<ModelSnapshot> snapshot() const = 0;
  virtual void restore(const ModelSnapshot& snapshot) = 0;
  // The model's state file (the engine's state file format).
  virtual void save_state(const std::filesystem::path& path) const = 0;
  virtual void load_state(const std::filesystem::path& path) = 0;
};

struct SessionOptions {
  std::optional<bool> enable_thinking;  // absent: the template's default
  SamplingOptions sampling;
  std::size_t max_new_tokens = 4096;
  // Turn-boundary states kept for going back (each is a full copy of the model's state). With
  // none kept, going back feeds the whole history again from the initial state.
  std::size_t max_snapshots = 4;
  // Tokens that end the assistant's turn (the first one the vocabulary has is also what the
  // template writes at the end of a turn).
  std::vector<std::string> stop_tokens = {"<|im_end|>", "<|endoftext|>"};
  // Names the model and tokenizer; a saved session records it, and load() refuses a session saved
  // with another.
  std::string model_identity;
};

struct Reply {
  ParsedReply parsed;
  std::size_t tokens = 0;  // generated, not counting the end-of-turn token
  bool finished = false;   // ended with an end-of-turn token, not at max_new_tokens
};

// How much a session fed the model, for reports and tests.
struct FeedCounts {
  std::size_t template_tokens = 0;  // tokens of template text fed
  std::size_t restores = 0;         // returns to a saved turn-boundary state
  std::size_t resets = 0;           // returns to the initial state (no saved state far enough back)
};

class ChatSession {
 public:
  // The template, codec and model must outlive the session. Throws rvformer::Error when the
  // vocabulary has none of the stop tokens.
  ChatSession(const ChatTemplate& chat_template, const TextCodec& codec, LanguageModel& model, SessionOptions options);

  // Begins a conversation (the model is reset): feeds its rendering, with the generation prompt
  // unless the last message is the assistant's. Throws the template's errors.
  void start(Conversation conversation);
  // Adds user or tool messages and feeds what the template adds for them and the generation prompt.
  void add(std::vector<Message> messages);
  // Generates the assistant's turn, passing each piece of text to `on_text` as it comes, and adds
  // the parsed reply to the conversation.
  Reply generate(const std::function<void(std::string_view)>& on_text = {});

  const Conversation& conversation() const { return conversation_; }
  bool awaiting_reply() const { return awaiting_reply_; }
  // Everything the model has been given, as text: the template's text and the model's own output
  // as it wrote it (including an end-of-turn token it will read with the next turn).
  std::string fed_text() const;
  std::vector<TokenId> fed_tokens() const;
  const FeedCounts& counts() const { return counts_; }

  // PATH holds the session (JSON) and PATH.model the model's state file. Only between turns
  // (after a reply): throws rvformer::Error while a reply is awaited.
  void save(const std::filesystem::path& path) const;
  // Replaces this session with a saved one; the template and the model identity must be those it
  // was saved with. Throws rvformer::Error and leaves the session as it was on a bad file.
  void load(const std::filesystem::path& path);

 private:
  struct Segment {
    std::string text;  // as the model read it; model output is raw bytes
    std::vector<TokenId> tokens;
    bool from_model = false;
  };
  struct Checkpoint {
    std::size_t segments = 0;
    std::size_t canonical_length = 0;
    std::vector<TokenId> pending;
    std::unique_ptr<ModelSnapshot> state;
  };

  std::string render(const Conversation& conversation, bool add_generation_prompt) const;
  // The rendering of `conversation` up to the end of its last turn, as the model reads it.
  std::string closed_rendering(const Conversation& conversation, bool finished) const;
  // Makes `conversation` plus `messages` current and feeds it up to the generation prompt.
  void open_turn(Conversation conversation, const std::vector<Message>& messages, bool from_start);
  void restart();
  // The text of the reply just generated, with its end-of-turn token when it has one.
  std::string fed_text_of_reply(bool finished) const;
  void feed_up_to(const std::string& rendering);
  void go_back_for(const std::string& rendering);
  void feed_template_text(const std::string& text);
  bool is_stop(TokenId token) const;

  const ChatTemplate& template_;
  const TextCodec& codec_;
  LanguageModel& model_;
  SessionOptions options_;
  Sampler sampler_;
  std::vector<TokenId> stop_ids_;
  std::string end_of_turn_;  // the text of the first stop token

  Conversation conversation_;
  std::vector<Segment> fed_;
  std::string canonical_;        // the template text the fed segments stand for
  std::vector<TokenId> pending_;  // the end-of-turn token, read with the next turn
  std::vector<float> logits_;
  bool awaiting_reply_ = false;
  bool reasoning_open_ = false;  // the generation prompt left a <think> block open
  std::deque<Checkpoint> checkpoints_;
  FeedCounts counts_;
};

}  // namespace rvformer::chat
