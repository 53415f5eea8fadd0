// chat/checkpoint_chat.h — a Hugging Face Qwen3.5 checkpoint directory as a chat model: its chat
// template, its tokenizer.json (src/tokenizer) behind TextCodec, and the engine's generic forward
// pass (the dense path: bf16 weights read in place from the mapped shards, products split between
// threads; or the fast exact executor) behind LanguageModel, with the engine's state files. This is library
// rvformer_chat_checkpoint, so that rvformer_chat itself depends on neither the engine nor the
// tokenizer.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "chat/session.h"
#include "engine/fast_model.h"
#include "engine/model.h"
#include "tokenizer/tokenizer.h"

namespace rvformer::chat {

class TokenizerCodec : public TextCodec {
 public:
  explicit TokenizerCodec(tokenizer::Tokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}

  std::vector<TokenId> encode(std::string_view text) const override { return tokenizer_.encode(text); }
  std::string decode(std::span<const TokenId> tokens) const override { return tokenizer_.decode_bytes(tokens); }
  // Added tokens only: a plain vocabulary entry that happens to spell "<|im_end|>" is not one.
  std::optional<TokenId> special_token(std::string_view text) const override;

  const tokenizer::Tokenizer& tokenizer() const { return tokenizer_; }

 private:
  tokenizer::Tokenizer tokenizer_;
};

// The engine's dense reference path with one State: what the chat has fed so far.
class EngineLanguageModel : public LanguageModel {
 public:
  explicit EngineLanguageModel(const engine::Model& model) : model_(model), state_(model.new_state()) {}

  std::vector<float> feed(std::span<const TokenId> tokens) override;
  void reset() override { state_ = model_.new_state(); }
  std::unique_ptr<ModelSnapshot> snapshot() const override;
  void restore(const ModelSnapshot& snapshot) override;
  void save_state(const std::filesystem::path& path) const override { state_.save(path); }
  void load_state(const std::filesystem::path& path) override { state_.load(path); }

  const engine::State& state() const { return state_; }

 private:
  const engine::Model& model_;
  engine::State state_;
};

// The same on the fast exact executor, which gives the same logits and state bit for bit; it pays
// where most weights are zero, as in a merged checkpoint's compiled layers, which text leaves
// silent.
class FastEngineLanguageModel : public LanguageModel {
 public:
  explicit FastEngineLanguageModel(engine::FastModel& model) : model_(model), state_(model.new_state()) {}

  std::vector<float> feed(std::span<const TokenId> tokens) override;
  void reset() override { state_ = model_.new_state(); }
  std::unique_ptr<ModelSnapshot> snapshot() const override;
  void restore(const ModelSnapshot& snapshot) override;
  void save_state(const std::filesystem::path& path) const override { state_.state().save(path); }
  void load_state(const std::filesystem::path& path) override;

  const engine::State& state() const { return state_.state(); }

 private:
  engine::FastModel& model_;
  engine::FastState state_;
};

enum class ChatEngine { dense, fast };

struct CheckpointChatOptions {
  std::size_t threads = 0;  // the dense engine's: 0 is every CPU this process may use
  ChatEngine engine = ChatEngine::dense;
};

// Everything a chat needs from a checkpoint directory, loaded once. Not movable: the session and
// the language model refer to the parts.
class CheckpointChat {
 public:
  // Throws rvformer::Error naming the directory's bad or missing file.
  CheckpointChat(const std::filesystem::path& directory, const CheckpointChatOptions& options);
  CheckpointChat(const CheckpointChat&) = delete;
  CheckpointChat& operator=(const CheckpointChat&) = delete;

  const ChatTemplate& chat_template() const { return template_; }
  const TokenizerCodec& codec() const { return codec_; }
  const engine::Config& config() const { return model_.config(); }
  // The dense model (also when the chat runs on the fast executor: it maps the weights in place).
  const engine::Model& model() const { return model_; }
  LanguageModel& language_model() { return *language_model_; }

  // Ids a reply may use: those the tokenizer knows that have a row in the model (a checkpoint's
  // vocabulary is padded beyond its tokenizer's ids; those rows are never sampled), and in a merged
  // checkpoint only the base's (its rvformer-merge.json: the merge's fillers and the computer's
  // trace tokens follow them).
  std::size_t vocabulary_limit() const;
  // Names the config and the tokenizer, so that a saved chat is not continued with another
  // checkpoint (one with the same files but other weights is not told apart).
  const std::string& identity() const { return identity_; }

 private:
  ChatTemplate template_;
  TokenizerCodec codec_;
  engine::Model model_;
  std::unique_ptr<engine::FastModel> fast_model_;  // with ChatEngine::fast
  std::unique_ptr<LanguageModel> language_model_;
  std::string identity_;
  std::optional<std::size_t> text_limit_;  // a merged checkpoint's
};

}  // namespace rvformer::chat
