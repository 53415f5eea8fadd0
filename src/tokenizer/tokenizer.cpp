// tokenizer/tokenizer.cpp — see tokenizer.h. Added tokens are numbered and matched as Hugging
// Face's tokenizers does it: non-normalized ones in the raw text, normalized ones in each
// normalized stretch, and a file whose listed ids differ from the ids Hugging Face would assign is
// rejected rather than silently tokenized differently.
#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "support/error.h"
#include "support/file.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/json_node.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode_text.h"

namespace rvformer::tokenizer {

namespace {

// The longest text encode() accepts (ICU indexes text with 32-bit integers).
constexpr std::size_t max_text_bytes = std::numeric_limits<std::int32_t>::max();

void check_format(const JsonNode& root) {
  if (!root.json().is_object()) root.fail(fmt::format("expected a JSON object, found {}", root.json().type_name()));
  if (auto version = root.find("version"); version && version->string() != "1.0") {
    version->fail(fmt::format("unknown tokenizer.json version \"{}\" (expected \"1.0\")", version->string()));
  }
  const JsonNode decoder = root["decoder"];
  const std::string type = decoder["type"].string();
  if (type != "ByteLevel") decoder.fail(fmt::format("decoder type \"{}\" is not supported (byte-level BPE needs ByteLevel)", type));
}

AddedToken read_added_token(const JsonNode& node) {
  AddedToken token;
  const std::int64_t id = node["id"].integer();
  if (id < 0 || id > std::numeric_limits<std::int32_t>::max()) node["id"].fail(fmt::format("id {} is out of range", id));
  token.id = static_cast<TokenId>(id);
  token.content = node["content"].string();
  if (token.content.empty()) node["content"].fail("an added token cannot be empty");
  token.special = node["special"].boolean();
  token.single_word = node["single_word"].boolean();
  token.lstrip = node["lstrip"].boolean();
  token.rstrip = node["rstrip"].boolean();
  token.normalized = node["normalized"].boolean();
  return token;
}

// Hugging Face ignores the listed ids: an added token takes its vocabulary id when the model
// vocabulary holds its content, and otherwise the next id after the vocabulary, in file order.
std::vector<AddedToken> read_added_tokens(const std::optional<JsonNode>& list, const BpeModel& model) {
  std::vector<AddedToken> tokens;
  if (!list) return tokens;
  const auto& vocabulary = model.vocabulary();
  TokenId next_id = static_cast<TokenId>(vocabulary.size());
  std::vector<bool> model_ids;
  for (const auto& [text, id] : vocabulary) {
    if (id >= model_ids.size()) model_ids.resize(id + 1, false);
    model_ids[id] = true;
  }
  std::unordered_map<std::string, TokenId> added_ids;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const JsonNode node = (*list)[i];
    AddedToken token = read_added_token(node);
    TokenId assigned;
    if (auto it = added_ids.find(token.content); it != added_ids.end()) {
      assigned = it->second;
    } else if (auto known = vocabulary.find(token.content); known != vocabulary.end()) {
      assigned = known->second;
    } else {
      assigned = next_id++;
      if (assigned < model_ids.size() && model_ids[assigned]) {
        node.fail(fmt::format("\"{}\" would take id {}, which a vocabulary token already has", token.content, assigned));
      }
    }
    if (token.id != assigned) {
      node.fail(fmt::format("\"{}\" is listed with id {}, but Hugging Face's tokenizers gives it id {} (a token in "
                            "the vocabulary keeps its id; the others are numbered from the vocabulary size on, "
                            "in file order)",
                            token.content, token.id, assigned));
    }
    added_ids.emplace(token.content, assigned);
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace

struct Tokenizer::Impl {
  explicit Impl(const JsonNode& root);

  // Cuts `text` as encode() does, calling `on_added` for each added token and `on_word` for each
  // word BPE encodes.
  void walk(std::string_view text, const std::function<void(TokenId, std::string_view)>& on_added,
            const std::function<void(std::string_view)>& on_word) const;
  void build_id_tables();
  std::string bytes_of(std::span<const TokenId> ids, bool skip_special_tokens) const;
  AddedTokenMatcher matcher(bool normalized) const;

  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  BpeModel model;
  std::vector<AddedToken> added;
  AddedTokenMatcher raw_matcher;         // tokens matched in the raw text
  AddedTokenMatcher normalized_matcher;  // tokens matched in normalized text
  // By id: the token as the file spells it, the bytes it decodes to, whether it exists or is special.
  std::vector<std::string> spelling;
  std::vector<std::string> decoded;
  std::vector<bool> present;
  std::vector<bool> special;
};

Tokenizer::Impl::Impl(const JsonNode& root)
    : normalizer(Normalizer::from_json(root.find("normalizer"))),
      pre_tokenizer(PreTokenizer::from_json(root.find("pre_tokenizer"))),
      model(root["model"]),
      added(read_added_tokens(root.find("added_tokens"), model)),
      raw_matcher(matcher(false)),
      normalized_matcher(matcher(true)) {
  build_id_tables();
}

AddedTokenMatcher Tokenizer::Impl::matcher(bool normalized) const {
  std::vector<std::pair<std::string, const AddedToken*>> patterns;
  for (const AddedToken& token : added) {
    if (token.normalized == normalized) patterns.emplace_back(normalized ? normalizer.apply(token.content) : token.content, &token);
  }
  return AddedTokenMatcher(patterns);
}

// What Hugging Face's ByteLevel decoder makes of a token: the bytes it spells, or its own UTF-8
// when it is not byte-level text. Normalized added tokens decode as their normalized content.
void Tokenizer::Impl::build_id_tables() {
  TokenId limit = 0;
  for (const auto& [token, id] : model.vocabulary()) limit = std::max(limit, id + 1);
  for (const AddedToken& token : added) limit = std::max(limit, token.id + 1);
  spelling.assign(limit, {});
  decoded.assign(limit, {});
  present.assign(limit, false);
  special.assign(limit, false);
  auto define = [&](TokenId id, const std::string& text, std::string shown) {
    spelling[id] = text;
    decoded[id] = from_byte_level(shown).value_or(shown);
    present[id] = true;
  };
  for (const auto& [token, id] : model.vocabulary()) define(id, token, token);
  for (const AddedToken& token : added) {
    define(token.id, token.content, token.normalized ? normalizer.apply(token.content) : token.content);
    special[token.id] = token.special;
  }
}

std::string Tokenizer::Impl::bytes_of(std::span<const TokenId> ids, bool skip_special_tokens) const {
  std::string bytes;
  for (TokenId id : ids) {
    if (id >= present.size() || !present[id]) continue;
    if (skip_special_tokens && special[id]) continue;
    bytes += decoded[id];
  }
  return bytes;
}

void Tokenizer::Impl::walk(std::string_view text, const std::function<void(TokenId, std::string_view)>& on_added,
                           const std::function<void(std::string_view)>& on_word) const {
  if (text.size() > max_text_bytes) fail("text of {} bytes is too long to tokenize", text.size());
  if (auto bad = find_ill_formed_utf8(text)) fail("text is not valid UTF-8 (byte {} of {})", *bad, text.size());
  std::vector<TextSpan> raw_spans;
  raw_matcher.split(text, raw_spans);
  std::vector<TextSpan> spans;
  std::vector<std::string> words;
  for (const TextSpan& raw : raw_spans) {
    if (raw.added) {
      on_added(*raw.added, raw.text);
      continue;
    }
    const std::string normalized = normalizer.apply(raw.text);
    spans.clear();
    normalized_matcher.split(normalized, spans);
    for (const TextSpan& span : spans) {
      if (span.added) {
        on_added(*span.added, span.text);
        continue;
      }
      words.clear();
      pre_tokenizer.split(span.text, words);
      for (const std::string& word : words) on_word(word);
    }
  }
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::load(const std::filesystem::path& path) {
  std::filesystem::path file = path;
  if (std::filesystem::is_directory(path)) {
    file = path / "tokenizer.json";
    if (!std::filesystem::exists(file)) fail("{} holds no tokenizer.json", path.string());
  }
  return parse(read_file_text(file), file.string());
}

Tokenizer Tokenizer::parse(std::string_view json_text, const std::string& origin) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", origin, e.what());
  }
  const JsonNode root(json, origin);
  check_format(root);
  return Tokenizer(std::make_unique<Impl>(root));
}

std::vector<TokenId> Tokenizer::encode(std::string_view text) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3);
  impl_->walk(
      text, [&](TokenId id, std::string_view) { ids.push_back(id); },
      [&](std::string_view word) { impl_->model.encode_word(word, ids); });
  return ids;
}

std::vector<std::string> Tokenizer::pieces(std::string_view text) const {
  std::vector<std::string> pieces;
  impl_->walk(
      text, [&](TokenId, std::string_view content) { pieces.emplace_back(content); },
      [&](std::string_view word) { pieces.emplace_back(word); });
  return pieces;
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skip_special_tokens) const {
  return to_well_formed_utf8(impl_->bytes_of(ids, skip_special_tokens));
}

std::string Tokenizer::decode_bytes(std::span<const TokenId> ids) const { return impl_->bytes_of(ids, false); }

std::optional<std::string> Tokenizer::id_to_token(TokenId id) const {
  if (id >= impl_->present.size() || !impl_->present[id]) return std::nullopt;
  return impl_->spelling[id];
}

std::optional<TokenId> Tokenizer::token_to_id(std::string_view token) const {
  for (const AddedToken& added : impl_->added) {
    if (added.content == token) return added.id;
  }
  const auto& vocabulary = impl_->model.vocabulary();
  auto it = vocabulary.find(std::string(token));
  if (it == vocabulary.end()) return std::nullopt;
  return it->second;
}

bool Tokenizer::is_special(TokenId id) const { return id < impl_->special.size() && impl_->special[id]; }

const std::vector<AddedToken>& Tokenizer::added_tokens() const { return impl_->added; }

TokenId Tokenizer::id_limit() const { return static_cast<TokenId>(impl_->present.size()); }

}  // namespace rvformer::tokenizer
