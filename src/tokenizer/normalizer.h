// tokenizer/normalizer.h — the "normalizer" of tokenizer.json: the Unicode normalization forms
// (NFC as Qwen uses, NFD, NFKC, NFKD), alone or in a Sequence, applied with ICU.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unicode/normalizer2.h>

#include "tokenizer/json_node.h"

namespace rvformer::tokenizer {

class Normalizer {
 public:
  // `node` is the "normalizer" value; nothing (null) normalizes nothing.
  static Normalizer from_json(const std::optional<JsonNode>& node);

  // `text` is well-formed UTF-8.
  std::string apply(std::string_view text) const;

 private:
  void add(const JsonNode& node);

  std::vector<const icu::Normalizer2*> forms_;  // applied in order
};

}  // namespace rvformer::tokenizer
