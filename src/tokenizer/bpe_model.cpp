// tokenizer/bpe_model.cpp — see bpe_model.h. Words are merged as ids, not strings: the merge table
// maps a pair of ids to the rank and id of their concatenation, as Hugging Face's BPE does.
#include "tokenizer/bpe_model.h"

#include <queue>

#include <fmt/format.h>

#include "support/error.h"
#include "tokenizer/byte_level.h"

namespace rvformer::tokenizer {

namespace {

// Hugging Face's cache bounds: words this long or longer are not cached; when the cache holds this
// many words it starts afresh.
constexpr std::size_t max_cached_word_bytes = 256;
constexpr std::size_t cache_capacity = 10000;

// Ids above this are certainly a mistake, and would make id-indexed tables huge.
constexpr std::int64_t max_token_id = std::int64_t{1} << 24;

std::uint64_t pair_key(TokenId left, TokenId right) { return (std::uint64_t{left} << 32) | right; }

void reject_option(const JsonNode& node, std::string_view key, std::string_view why) {
  auto value = node.find(key);
  if (!value) return;
  const nlohmann::json& json = value->json();
  const bool unset = (json.is_string() && json.get<std::string>().empty()) || (json.is_boolean() && !json.get<bool>()) ||
                     (json.is_number() && json.get<double>() == 0.0);
  if (!unset) value->fail(fmt::format("is not supported ({})", why));
}

}  // namespace

BpeModel::BpeModel(const JsonNode& node) {
  const std::string type = node["type"].string();
  if (type != "BPE") node["type"].fail(fmt::format("model type \"{}\" is not supported (only BPE)", type));
  reject_option(node, "dropout", "encoding must be deterministic");
  reject_option(node, "byte_fallback", "byte-level BPE spells every byte");
  reject_option(node, "continuing_subword_prefix", "byte-level BPE has no word-piece affixes");
  reject_option(node, "end_of_word_suffix", "byte-level BPE has no word-piece affixes");
  read_vocabulary(node["vocab"]);
  read_merges(node["merges"]);
  fuse_unknown_ = node.boolean_or("fuse_unk", false);
  ignore_merges_ = node.boolean_or("ignore_merges", false);
  if (auto unknown = node.find("unk_token")) {
    auto it = vocabulary_.find(unknown->string());
    if (it == vocabulary_.end()) unknown->fail(fmt::format("the unknown token \"{}\" is not in the vocabulary", unknown->string()));
    unknown_ = it->second;
  }
  for (unsigned byte = 0; byte < 256; ++byte) {
    auto it = vocabulary_.find(to_byte_level(std::string(1, static_cast<char>(byte))));
    if (it != vocabulary_.end()) byte_ids_[byte] = it->second;
  }
}

void BpeModel::read_vocabulary(const JsonNode& node) {
  if (!node.json().is_object()) node.fail(fmt::format("expected an object of token ids, found {}", node.json().type_name()));
  vocabulary_.reserve(node.json().size());
  std::unordered_map<TokenId, const std::string*> token_of_id;
  for (const auto& [token, id] : node.json().items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > max_token_id) {
      node.fail(fmt::format("token \"{}\" has id {}, expected an integer from 0 to {}", token, id.dump(), max_token_id));
    }
    const auto value = static_cast<TokenId>(id.get<std::int64_t>());
    auto [it, inserted] = vocabulary_.emplace(token, value);
    auto [other, fresh] = token_of_id.emplace(value, &it->first);
    if (!fresh) node.fail(fmt::format("tokens \"{}\" and \"{}\" share id {}", *other->second, token, value));
  }
}

// Both of Hugging Face's formats: "A B" strings (older files; "#version" lines are skipped) and
// ["A", "B"] pairs (tokenizers 0.20 on, which allows spaces inside tokens). A pair listed twice
// keeps its later rank, as in Hugging Face's merge table. The list is long, so its elements are
// read straight from the JSON and get a JsonNode only to report a problem.
void BpeModel::read_merges(const JsonNode& node) {
  const std::size_t count = node.size();
  const nlohmann::json& merges = node.json();
  const bool pairs = count > 0 && merges[0].is_array();
  merges_.reserve(count);
  std::uint32_t rank = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const nlohmann::json& merge = merges[i];
    if (pairs) {
      if (!merge.is_array() || merge.size() != 2 || !merge[0].is_string() || !merge[1].is_string()) {
        node[i].fail(fmt::format("expected a pair of strings like the first merge, found {}", merge.dump()));
      }
      add_merge(node, i, merge[0].get_ref<const std::string&>(), merge[1].get_ref<const std::string&>(), rank++);
      continue;
    }
    if (!merge.is_string()) node[i].fail(fmt::format("expected a string \"A B\" like the first merge, found {}", merge.dump()));
    const std::string& line = merge.get_ref<const std::string&>();
    if (line.starts_with("#version")) continue;
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      node[i].fail(fmt::format("\"{}\" is not two tokens separated by one space", line));
    }
    add_merge(node, i, line.substr(0, space), line.substr(space + 1), rank++);
  }
}

void BpeModel::add_merge(const JsonNode& merges, std::size_t index, const std::string& left, const std::string& right,
                         std::uint32_t rank) {
  auto id = [&](const std::string& token, std::string_view role) {
    auto it = vocabulary_.find(token);
    if (it == vocabulary_.end()) merges[index].fail(fmt::format("{} \"{}\" is not in the vocabulary", role, token));
    return it->second;
  };
  const TokenId left_id = id(left, "merge part");
  const TokenId right_id = id(right, "merge part");
  const TokenId merged = id(left + right, "merged token");
  merges_[pair_key(left_id, right_id)] = Merge{rank, merged};
}

const BpeModel::Merge* BpeModel::find_merge(TokenId left, TokenId right) const {
  auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

void BpeModel::encode_word(std::string_view word, std::vector<TokenId>& ids) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    auto it = vocabulary_.find(to_byte_level(word));
    if (it != vocabulary_.end()) return ids.push_back(it->second);
  }
  const bool cacheable = word.size() < max_cached_word_bytes;
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    auto it = cache_.find(std::string(word));
    if (it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<TokenId> merged = merge_word(word);
  ids.insert(ids.end(), merged.begin(), merged.end());
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    if (cache_.size() >= cache_capacity) cache_.clear();
    cache_.emplace(std::string(word), std::move(merged));
  }
}

std::vector<TokenId> BpeModel::byte_symbols(std::string_view word) const {
  std::vector<TokenId> symbols;
  symbols.reserve(word.size());
  bool unknown_pending = false;
  for (char byte : word) {
    const auto& id = byte_ids_[static_cast<std::uint8_t>(byte)];
    if (id) {
      if (unknown_pending) symbols.push_back(*unknown_);
      unknown_pending = false;
      symbols.push_back(*id);
    } else if (unknown_) {
      if (unknown_pending && !fuse_unknown_) symbols.push_back(*unknown_);
      unknown_pending = true;
    }
  }
  if (unknown_pending) symbols.push_back(*unknown_);
  return symbols;
}

std::vector<TokenId> BpeModel::merge_word(std::string_view word) const {
  struct Symbol {
    TokenId id;
    std::int32_t previous;
    std::int32_t next;
    bool alive;
  };
  struct Candidate {
    std::uint32_t rank;
    std::int32_t position;  // of the left symbol
    TokenId merged;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : position > other.position;
    }
  };
  const std::vector<TokenId> initial = byte_symbols(word);
  const auto count = static_cast<std::int32_t>(initial.size());
  std::vector<Symbol> symbols(initial.size());
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto consider = [&](std::int32_t left) {
    const std::int32_t right = symbols[left].next;
    if (right < 0) return;
    if (const Merge* merge = find_merge(symbols[left].id, symbols[right].id)) queue.push({merge->rank, left, merge->merged});
  };
  for (std::int32_t i = 0; i < count; ++i) symbols[i] = {initial[i], i - 1, i + 1 < count ? i + 1 : -1, true};
  for (std::int32_t i = 0; i + 1 < count; ++i) consider(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.position];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    // A stale candidate: one of its symbols has merged since it was queued.
    const Merge* merge = find_merge(left.id, right.id);
    if (!merge || merge->merged != top.merged) continue;
    left.id = top.merged;
    right.alive = false;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].previous = top.position;
    if (left.previous >= 0) consider(left.previous);
    consider(top.position);
  }

  std::vector<TokenId> ids;
  for (std::int32_t i = count > 0 ? 0 : -1; i >= 0; i = symbols[i].next) ids.push_back(symbols[i].id);
  return ids;
}

}  // namespace rvformer::tokenizer
