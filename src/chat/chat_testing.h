// chat/chat_testing.h — stand-ins for a tokenizer and a model in session tests. The codec is
// byte-level (ids 0-255 are bytes, so UTF-8 sequences split across tokens) plus the Qwen3.5
// special tokens; the model records every token it reads and says what the test scripts.
#pragma once

#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chat/session.h"
#include "support/error.h"

namespace rvformer::chat::testing {

class FakeCodec : public TextCodec {
 public:
  FakeCodec()
      : special_{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
                 "<tool_response>", "</tool_response>", "<think>", "</think>"} {}

  static constexpr TokenId kFirstSpecial = 256;
  std::size_t vocabulary_size() const { return kFirstSpecial + special_.size(); }

  std::vector<TokenId> encode(std::string_view text) const override {
    std::vector<TokenId> ids;
    for (std::size_t i = 0; i < text.size();) {
      bool matched = false;
      for (std::size_t s = 0; s < special_.size(); ++s) {
        if (text.substr(i, special_[s].size()) == special_[s]) {
          ids.push_back(static_cast<TokenId>(kFirstSpecial + s));
          i += special_[s].size();
          matched = true;
          break;
        }
      }
      if (!matched) ids.push_back(static_cast<unsigned char>(text[i++]));
    }
    return ids;
  }

  std::string decode(std::span<const TokenId> tokens) const override {
    std::string text;
    for (TokenId t : tokens) {
      if (t < kFirstSpecial) {
        text.push_back(static_cast<char>(t));
      } else {
        text += special_.at(t - kFirstSpecial);
      }
    }
    return text;
  }

  std::optional<TokenId> special_token(std::string_view text) const override {
    for (std::size_t s = 0; s < special_.size(); ++s) {
      if (special_[s] == text) return static_cast<TokenId>(kFirstSpecial + s);
    }
    return std::nullopt;
  }

 private:
  std::vector<std::string> special_;
};

class FakeModel : public LanguageModel {
 public:
  explicit FakeModel(const FakeCodec& codec) : codec_(codec) {}

  // The model's next reply: its tokens, then the end-of-turn token given. Say it before the prompt
  // it answers is fed.
  void say(const std::string& text, const std::string& end = "<|im_end|>") {
    std::vector<TokenId> reply = codec_.encode(text);
    if (!end.empty()) reply.push_back(*codec_.special_token(end));
    replies_.push_back(std::move(reply));
  }

  std::vector<float> feed(std::span<const TokenId> tokens) override {
    for (TokenId t : tokens) {
      if (t >= codec_.vocabulary_size()) fail("fake model: token {} is outside the vocabulary", t);
    }
    if (!replies_.empty()) {
      const std::vector<TokenId>& reply = replies_.front();
      if (tokens.size() == 1 && cursor_ < reply.size() && tokens[0] == reply[cursor_]) {
        ++cursor_;  // it reads back what it said
      } else if (cursor_ > 0) {
        replies_.pop_front();  // a new turn: the reply it was giving is over
        cursor_ = 0;
      }
    }
    history_.insert(history_.end(), tokens.begin(), tokens.end());
    std::vector<float> logits(codec_.vocabulary_size(), 0.0f);
    if (!replies_.empty() && cursor_ < replies_.front().size()) logits[replies_.front()[cursor_]] = 10.0f;
    return logits;
  }

  void reset() override {
    history_.clear();
    ++resets_;
  }

  struct Snapshot : ModelSnapshot {
    std::vector<TokenId> history;
  };
  std::unique_ptr<ModelSnapshot> snapshot() const override {
    auto s = std::make_unique<Snapshot>();
    s->history = history_;
    return s;
  }
  void restore(const ModelSnapshot& snapshot) override { history_ = dynamic_cast<const Snapshot&>(snapshot).history; }

  void save_state(const std::filesystem::path& path) const override {
    std::ofstream out(path);
    for (TokenId t : history_) out << t << ' ';
  }
  void load_state(const std::filesystem::path& path) override {
    std::ifstream in(path);
    if (!in) fail("cannot open {}", path.string());
    history_.clear();
    for (TokenId t; in >> t;) history_.push_back(t);
  }

  // What the model has read, as text.
  std::string read_text() const { return codec_.decode(history_); }
  const std::vector<TokenId>& history() const { return history_; }
  std::size_t resets() const { return resets_; }

 private:
  const FakeCodec& codec_;
  std::deque<std::vector<TokenId>> replies_;
  std::size_t cursor_ = 0;  // how much of the first reply it has said
  std::vector<TokenId> history_;
  std::size_t resets_ = 0;
};

}  // namespace rvformer::chat::testing
