// chat/checkpoint_chat.cpp — see checkpoint_chat.h.
#include "chat/checkpoint_chat.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/file.h"

namespace rvformer::chat {

namespace {

struct EngineSnapshot : ModelSnapshot {
  explicit EngineSnapshot(engine::State s) : state(std::move(s)) {}
  engine::State state;
};

const engine::State& snapshot_state(const ModelSnapshot& snapshot) {
  const auto* saved = dynamic_cast<const EngineSnapshot*>(&snapshot);
  if (saved == nullptr) fail("a model snapshot from another kind of model");
  return saved->state;
}

// FNV-1a, continued over each text.
std::uint64_t fingerprint(std::uint64_t h, std::string_view text) {
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  return h;
}

std::string checkpoint_identity(const std::filesystem::path& directory) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const char* file : {"config.json", "tokenizer.json"}) h = fingerprint(h, read_file_text(directory / file));
  return fmt::format("config.json+tokenizer.json {:016x}", h);
}

// A merged checkpoint's first id that is not the base's own text token (its rvformer-merge.json: the
// merge's reserved fillers and the computer's trace tokens follow); nothing for any other checkpoint.
std::optional<std::size_t> merged_text_limit(const std::filesystem::path& directory) {
  const std::filesystem::path path = directory / "rvformer-merge.json";
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    return nlohmann::json::parse(read_file_text(path)).at("first_reserved_token").get<std::size_t>();
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not a merge description ({})", path.string(), e.what());
  }
}

}  // namespace

std::optional<TokenId> TokenizerCodec::special_token(std::string_view text) const {
  for (const tokenizer::AddedToken& token : tokenizer_.added_tokens()) {
    if (token.content == text) return token.id;
  }
  return std::nullopt;
}

std::vector<float> EngineLanguageModel::feed(std::span<const TokenId> tokens) { return model_.prefill(state_, tokens); }

std::unique_ptr<ModelSnapshot> EngineLanguageModel::snapshot() const { return std::make_unique<EngineSnapshot>(state_); }

void EngineLanguageModel::restore(const ModelSnapshot& snapshot) { state_ = snapshot_state(snapshot); }

std::vector<float> FastEngineLanguageModel::feed(std::span<const TokenId> tokens) {
  return model_.prefill(state_, tokens);
}

std::unique_ptr<ModelSnapshot> FastEngineLanguageModel::snapshot() const {
  return std::make_unique<EngineSnapshot>(state_.state());
}

void FastEngineLanguageModel::restore(const ModelSnapshot& snapshot) { state_ = model_.adopt(snapshot_state(snapshot)); }

void FastEngineLanguageModel::load_state(const std::filesystem::path& path) {
  engine::State state(model_.config());
  state.load(path);
  state_ = model_.adopt(std::move(state));
}

namespace {

std::unique_ptr<LanguageModel> chat_language_model(const engine::Model& model,
                                                   std::unique_ptr<engine::FastModel>& fast_model,
                                                   const std::filesystem::path& directory, ChatEngine engine) {
  if (engine == ChatEngine::dense) return std::make_unique<EngineLanguageModel>(model);
  fast_model = std::make_unique<engine::FastModel>(engine::FastModel::load(directory));
  return std::make_unique<FastEngineLanguageModel>(*fast_model);
}

}  // namespace

CheckpointChat::CheckpointChat(const std::filesystem::path& directory, const CheckpointChatOptions& options)
    : template_(ChatTemplate::load(directory)),
      codec_(tokenizer::Tokenizer::load(directory)),
      model_(engine::Model::load(directory, {.threads = options.threads})),
      language_model_(chat_language_model(model_, fast_model_, directory, options.engine)),
      identity_(checkpoint_identity(directory)),
      text_limit_(merged_text_limit(directory)) {}

std::size_t CheckpointChat::vocabulary_limit() const {
  const std::size_t limit = std::min<std::size_t>(codec_.tokenizer().id_limit(), model_.config().vocab_size);
  return text_limit_ ? std::min(limit, *text_limit_) : limit;
}

}  // namespace rvformer::chat
