// merge/tokenizer_files.cpp — see tokenizer_files.h.
#include "merge/tokenizer_files.h"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "merge/merge.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::merge {
namespace fs = std::filesystem;
// std::map objects (keys sorted; Hugging Face reads them as maps): with 150K vocabulary keys an
// ordered_json, which looks keys up linearly, would be quadratic to build.
using json = nlohmann::json;

namespace {

json read_document(const fs::path& path) {
  json document = json::parse(read_file_text(path), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) fail("{}: not a JSON object", path.string());
  return document;
}

// One more than the highest id tokenizer.json assigns (vocabulary or added token).
std::size_t id_limit(const json& tokenizer, const fs::path& path) {
  const auto model = tokenizer.find("model");
  const auto added = tokenizer.find("added_tokens");
  if (model == tokenizer.end() || !model->contains("vocab") || !(*model)["vocab"].is_object() ||
      added == tokenizer.end() || !added->is_array())
    fail("{}: needs model.vocab and added_tokens", path.string());
  std::size_t limit = 0;
  for (const auto& [token, id] : (*model)["vocab"].items())
    if (id.is_number_unsigned()) limit = std::max(limit, id.get<std::size_t>() + 1);
  for (const json& token : *added)
    if (token.contains("id") && token["id"].is_number_unsigned()) limit = std::max(limit, token["id"].get<std::size_t>() + 1);
  return limit;
}

// The added tokens the merge appends, in id order: fillers, then the trace tokens.
template <typename Add>
void for_each_new_token(std::size_t first_filler, std::size_t base_vocab, std::size_t trace_tokens, Add add) {
  for (std::size_t id = first_filler; id < base_vocab; ++id) add(id, reserved_token_name(id));
  for (std::size_t i = 0; i < trace_tokens; ++i) add(base_vocab + i, trace_token_name(i));
}

}  // namespace

bool is_tokenizer_file(std::string_view name) { return name == "tokenizer.json" || name == "tokenizer_config.json"; }

std::size_t write_tokenizer_files(const fs::path& base, const fs::path& output, std::size_t base_vocab,
                                  std::size_t trace_tokens) {
  const fs::path tokenizer_path = base / "tokenizer.json";
  if (!fs::exists(tokenizer_path)) return base_vocab;
  json tokenizer = read_document(tokenizer_path);
  const std::size_t first_filler = id_limit(tokenizer, tokenizer_path);
  if (first_filler > base_vocab)
    fail("{}: assigns ids up to {}, beyond the base's {} embedding rows", tokenizer_path.string(), first_filler - 1,
         base_vocab);
  json& added = tokenizer["added_tokens"];
  for_each_new_token(first_filler, base_vocab, trace_tokens, [&](std::size_t id, const std::string& content) {
    added.push_back({{"id", id},
                     {"content", content},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  });
  write_file_atomic(output / "tokenizer.json", tokenizer.dump(2) + "\n");

  // transformers' slow tokenizer takes its added tokens from here, so they are listed here too.
  const fs::path config_path = base / "tokenizer_config.json";
  if (!fs::exists(config_path)) return first_filler;
  json config = read_document(config_path);
  if (config.contains("added_tokens_decoder") && config["added_tokens_decoder"].is_object()) {
    json& decoder = config["added_tokens_decoder"];
    for_each_new_token(first_filler, base_vocab, trace_tokens, [&](std::size_t id, const std::string& content) {
      decoder[std::to_string(id)] = {{"content", content}, {"lstrip", false},      {"normalized", false},
                                     {"rstrip", false},    {"single_word", false}, {"special", true}};
    });
  }
  write_file_atomic(output / "tokenizer_config.json", config.dump(2) + "\n");
  return first_filler;
}

}  // namespace rvformer::merge
