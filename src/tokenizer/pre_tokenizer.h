// tokenizer/pre_tokenizer.h — the "pre_tokenizer" of tokenizer.json: Split steps (an ICU regex
// or a literal, with Hugging Face's five delimiter behaviours and invert), then ByteLevel (the
// optional prefix space and GPT-2 regex) last, as byte-level BPE files have it. Qwen2/3/3.5 use
// Sequence[Split(their regex, Isolated), ByteLevel(use_regex false)].
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unicode/regex.h>

#include "tokenizer/json_node.h"

namespace rvformer::tokenizer {

// What Split does with the pieces its pattern matches (Hugging Face's SplitDelimiterBehavior).
enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

class PreTokenizer {
 public:
  // `node` is the "pre_tokenizer" value.
  static PreTokenizer from_json(const std::optional<JsonNode>& node);

  // Splits normalized, well-formed UTF-8 `text` into the words BPE encodes one by one (as raw
  // bytes; the byte-level spelling is implied) and appends them to `words`.
  void split(std::string_view text, std::vector<std::string>& words) const;

 private:
  struct Step {
    std::shared_ptr<const icu::RegexPattern> pattern;  // null: ByteLevel's prefix-space step
    SplitBehavior behavior = SplitBehavior::isolated;
    bool invert = false;
  };

  void add(const JsonNode& node, bool last);
  void add_byte_level(const JsonNode& node, bool last);

  std::vector<Step> steps_;
};

}  // namespace rvformer::tokenizer
