// tokenizer/pre_tokenizer.cpp — see pre_tokenizer.h. Matching runs ICU's regex engine directly on
// the UTF-8 text (a UText), so match offsets are byte offsets. ICU's \s, \p{L}, \p{N}, \p{M},
// lookahead and (?i:...) (with Unicode case folding) agree with Oniguruma, which Hugging Face's
// tokenizers uses.
#include "tokenizer/pre_tokenizer.h"

#include <fmt/format.h>
#include <unicode/utext.h>

#include "support/error.h"

namespace rvformer::tokenizer {

namespace {

// GPT-2's pattern, which ByteLevel applies when "use_regex" is true.
constexpr std::string_view gpt2_pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::shared_ptr<const icu::RegexPattern> compile(const JsonNode& where, std::string_view pattern,
                                                 std::uint32_t flags) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError parse_error{};
  const auto text = icu::UnicodeString::fromUTF8(icu::StringPiece(pattern.data(), static_cast<std::int32_t>(pattern.size())));
  std::shared_ptr<const icu::RegexPattern> compiled(icu::RegexPattern::compile(text, flags, parse_error, status));
  if (U_FAILURE(status)) {
    where.fail(fmt::format("invalid regular expression ({} at offset {})", u_errorName(status), parse_error.offset));
  }
  return compiled;
}

SplitBehavior parse_behavior(const JsonNode& node) {
  const std::string name = node.string();
  if (name == "Removed") return SplitBehavior::removed;
  if (name == "Isolated") return SplitBehavior::isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (name == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (name == "Contiguous") return SplitBehavior::contiguous;
  node.fail(fmt::format("unknown split behavior \"{}\"", name));
}

struct Segment {
  std::size_t begin;
  std::size_t end;
  bool is_match;
};

// The matches of `matcher` in `text` and the stretches between them, in order, covering `text`.
std::vector<Segment> find_segments(icu::RegexMatcher& matcher, std::string_view text, bool invert) {
  UErrorCode status = U_ZERO_ERROR;
  UText utext = UTEXT_INITIALIZER;
  utext_openUTF8(&utext, text.data(), static_cast<std::int64_t>(text.size()), &status);
  matcher.reset(&utext);
  std::vector<Segment> segments;
  std::size_t previous = 0;
  while (matcher.find(status) && U_SUCCESS(status)) {
    const auto begin = static_cast<std::size_t>(matcher.start64(status));
    const auto end = static_cast<std::size_t>(matcher.end64(status));
    if (previous != begin) segments.push_back({previous, begin, invert});
    segments.push_back({begin, end, !invert});
    previous = end;
  }
  utext_close(&utext);
  if (U_FAILURE(status)) fail("regular expression matching failed: {}", u_errorName(status));
  if (previous != text.size()) segments.push_back({previous, text.size(), invert});
  return segments;
}

// Hugging Face's NormalizedString::split: which stretches the behaviour keeps, merged as it says.
std::vector<Segment> apply_behavior(const std::vector<Segment>& segments, SplitBehavior behavior) {
  std::vector<Segment> kept;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::removed:
      for (const Segment& segment : segments) {
        if (!segment.is_match) kept.push_back(segment);
      }
      return kept;
    case SplitBehavior::isolated:
      return segments;
    case SplitBehavior::contiguous:
    case SplitBehavior::merged_with_previous:
      for (const Segment& segment : segments) {
        const bool joins = behavior == SplitBehavior::contiguous ? segment.is_match == previous_match
                                                                 : segment.is_match && !previous_match;
        if (joins && !kept.empty()) {
          kept.back().end = segment.end;
        } else {
          kept.push_back(segment);
        }
        previous_match = segment.is_match;
      }
      return kept;
    case SplitBehavior::merged_with_next:
      for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
        if (it->is_match && !previous_match && !kept.empty()) {
          kept.back().begin = it->begin;
        } else {
          kept.push_back(*it);
        }
        previous_match = it->is_match;
      }
      return {kept.rbegin(), kept.rend()};
  }
  return kept;
}

}  // namespace

PreTokenizer PreTokenizer::from_json(const std::optional<JsonNode>& node) {
  if (!node) fail("tokenizer.json has no pre_tokenizer; byte-level BPE needs ByteLevel");
  PreTokenizer pre_tokenizer;
  pre_tokenizer.add(*node, true);
  return pre_tokenizer;
}

void PreTokenizer::add(const JsonNode& node, bool last) {
  const std::string type = node["type"].string();
  if (type == "Sequence") {
    const JsonNode steps = node["pretokenizers"];
    if (steps.size() == 0) steps.fail("an empty Sequence has no ByteLevel step");
    for (std::size_t i = 0; i < steps.size(); ++i) add(steps[i], last && i + 1 == steps.size());
    return;
  }
  if (type == "ByteLevel") return add_byte_level(node, last);
  if (type != "Split") {
    node.fail(fmt::format("pre-tokenizer type \"{}\" is not supported (Split, ByteLevel, Sequence)", type));
  }
  if (last) node.fail("byte-level BPE needs ByteLevel as the last pre-tokenizer");
  const JsonNode pattern = node["pattern"];
  Step step;
  if (auto regex = pattern.find("Regex")) {
    step.pattern = compile(*regex, regex->string(), 0);
  } else if (auto literal = pattern.find("String")) {
    step.pattern = compile(*literal, literal->string(), UREGEX_LITERAL);
  } else {
    pattern.fail("expected {\"Regex\": ...} or {\"String\": ...}");
  }
  step.behavior = parse_behavior(node["behavior"]);
  step.invert = node["invert"].boolean();
  steps_.push_back(std::move(step));
}

void PreTokenizer::add_byte_level(const JsonNode& node, bool last) {
  if (!last) node.fail("byte-level BPE needs ByteLevel as the last pre-tokenizer");
  if (node["add_prefix_space"].boolean()) steps_.push_back(Step{});
  if (node.boolean_or("use_regex", true)) {
    steps_.push_back(Step{compile(node, gpt2_pattern, 0), SplitBehavior::isolated, false});
  }
}

void PreTokenizer::split(std::string_view text, std::vector<std::string>& words) const {
  std::vector<std::string> pieces;
  if (!text.empty()) pieces.emplace_back(text);
  std::vector<std::string> next;
  for (const Step& step : steps_) {
    next.clear();
    if (!step.pattern) {
      for (std::string& piece : pieces) {
        if (piece.front() != ' ') piece.insert(piece.begin(), ' ');
        next.push_back(std::move(piece));
      }
    } else {
      UErrorCode status = U_ZERO_ERROR;
      std::unique_ptr<icu::RegexMatcher> matcher(step.pattern->matcher(status));
      // ICU's backtracking stack is capped at 8 MB by default, which a white space run of some
      // hundred kilobytes exceeds; its depth grows only linearly with the text, so lift the cap.
      if (U_SUCCESS(status)) matcher->setStackLimit(0, status);
      if (U_FAILURE(status)) fail("cannot start regular expression matching: {}", u_errorName(status));
      for (const std::string& piece : pieces) {
        for (const Segment& segment : apply_behavior(find_segments(*matcher, piece, step.invert), step.behavior)) {
          if (segment.end > segment.begin) next.push_back(piece.substr(segment.begin, segment.end - segment.begin));
        }
      }
    }
    pieces.swap(next);
  }
  for (std::string& piece : pieces) words.push_back(std::move(piece));
}

}  // namespace rvformer::tokenizer
