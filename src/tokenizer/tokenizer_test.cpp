// tokenizer/tokenizer_test.cpp — the tokenizer on small tokenizer.json files written here: BPE by
// merge rank in both merge formats, added tokens and their flags, NFC, the Split behaviours,
// ByteLevel options, decoding of ill-formed UTF-8, and one-line errors for malformed files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode_text.h"

namespace rvformer::tokenizer {
namespace {

using nlohmann::json;

constexpr const char* origin = "test/tokenizer.json";

std::string spell(std::string_view bytes) { return to_byte_level(bytes); }

// A byte-level BPE file: the 256 byte tokens (id = byte), then `tokens` (ids 256 on, written as
// raw text), then `merges` ("A B" of raw text), split by `pattern` (Isolated) before ByteLevel.
json byte_level_file(const std::vector<std::string>& tokens, const std::vector<std::pair<std::string, std::string>>& merges,
                     const std::string& pattern = R"(\s+|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+)") {
  json vocab = json::object();
  for (int byte = 0; byte < 256; ++byte) vocab[spell(std::string(1, static_cast<char>(byte)))] = byte;
  for (std::size_t i = 0; i < tokens.size(); ++i) vocab[spell(tokens[i])] = 256 + i;
  json merge_list = json::array();
  for (const auto& [left, right] : merges) merge_list.push_back(spell(left) + " " + spell(right));
  return {
      {"version", "1.0"},
      {"added_tokens", json::array()},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"fuse_unk", false}, {"byte_fallback", false},
        {"ignore_merges", false}, {"vocab", vocab}, {"merges", merge_list}}},
  };
}

Tokenizer load(const json& file) { return Tokenizer::parse(file.dump(), origin); }

json added_token(std::uint32_t id, const std::string& content, bool special = true) {
  return {{"id", id},           {"content", content}, {"single_word", false}, {"lstrip", false},
          {"rstrip", false},    {"normalized", false}, {"special", special}};
}

// An added token with one of its flags set, alone in an otherwise plain byte-level file.
Tokenizer with_flagged_token(const std::string& content, const std::string& flag) {
  json file = byte_level_file({}, {});
  json token = added_token(256, content);
  token[flag] = true;
  file["added_tokens"] = {token};
  return load(file);
}

std::vector<TokenId> ids(std::initializer_list<TokenId> list) { return list; }

TEST(ByteLevel, AlphabetSpellsEveryByteOnceAndRoundTrips) {
  EXPECT_EQ(byte_level_char(' '), U'\u0120');  // Ġ
  EXPECT_EQ(byte_level_char('\n'), U'\u010A');  // Ċ
  EXPECT_EQ(byte_level_char('a'), U'a');
  EXPECT_EQ(byte_level_char(0xAD), U'\u0143');
  std::string all;
  for (int byte = 0; byte < 256; ++byte) all.push_back(static_cast<char>(byte));
  EXPECT_EQ(from_byte_level(to_byte_level(all)), all);
  EXPECT_EQ(from_byte_level("a b"), std::nullopt);  // a plain space is not in the alphabet
}

TEST(Bpe, MergesByRankNotByPosition) {
  const std::vector<std::string> tokens = {"ab", "bc"};
  // "abc": the pair of lowest rank merges first, wherever it is.
  EXPECT_EQ(load(byte_level_file(tokens, {{"b", "c"}, {"a", "b"}})).encode("abc"), ids({'a', 257}));
  EXPECT_EQ(load(byte_level_file(tokens, {{"a", "b"}, {"b", "c"}})).encode("abc"), ids({256, 'c'}));
}

TEST(Bpe, EqualRanksMergeLeftmostFirstAndMergedTokensMergeAgain) {
  const Tokenizer tokenizer = load(byte_level_file({"aa", "aaaa"}, {{"a", "a"}, {"aa", "aa"}}));
  EXPECT_EQ(tokenizer.encode("aaa"), ids({256, 'a'}));
  EXPECT_EQ(tokenizer.encode("aaaaa"), ids({257, 'a'}));
  EXPECT_EQ(tokenizer.encode("aaaaaa"), ids({257, 256}));
}

TEST(Bpe, BothMergeFormatsAndVersionLinesGiveTheSameIds) {
  json legacy = byte_level_file({"he", "ll", "hell", "hello"}, {{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}});
  json pairs = legacy;
  pairs["model"]["merges"] = json::array();
  for (const auto& merge : legacy["model"]["merges"]) {
    const std::string line = merge;
    pairs["model"]["merges"].push_back({line.substr(0, line.find(' ')), line.substr(line.find(' ') + 1)});
  }
  legacy["model"]["merges"].insert(legacy["model"]["merges"].begin(), "#version: 0.2");
  const auto expected = ids({259, ' ', 258, 'l'});
  EXPECT_EQ(load(legacy).encode("hello helll"), expected);
  EXPECT_EQ(load(pairs).encode("hello helll"), expected);
}

TEST(Bpe, UnknownBytesBecomeTheUnknownTokenFusedOrNot) {
  json file = byte_level_file({"<unk>"}, {});
  file["model"]["vocab"].erase(spell("z"));
  file["model"]["unk_token"] = spell("<unk>");
  EXPECT_EQ(load(file).encode("azzb"), ids({'a', 256, 256, 'b'}));
  file["model"]["fuse_unk"] = true;
  EXPECT_EQ(load(file).encode("azzb"), ids({'a', 256, 'b'}));
  file["model"]["unk_token"] = nullptr;  // without one, Hugging Face drops the byte
  EXPECT_EQ(load(file).encode("azzb"), ids({'a', 'b'}));
}

TEST(Bpe, IgnoreMergesTakesWholeWordsFromTheVocabulary) {
  json file = byte_level_file({"xyz"}, {});
  EXPECT_EQ(load(file).encode("xyz"), ids({'x', 'y', 'z'}));
  file["model"]["ignore_merges"] = true;
  EXPECT_EQ(load(file).encode("xyz"), ids({256}));
}

TEST(Normalizer, NfcMakesDecomposedAndComposedTextEncodeAlike) {
  const Tokenizer tokenizer = load(byte_level_file({}, {}));
  EXPECT_EQ(tokenizer.encode("cafe\u0301"), tokenizer.encode("caf\u00E9"));
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("cafe\u0301")), "caf\u00E9");
  json unnormalized = byte_level_file({}, {});
  unnormalized["normalizer"] = nullptr;
  EXPECT_NE(load(unnormalized).encode("cafe\u0301"), tokenizer.encode("caf\u00E9"));
}

TEST(Normalizer, SequencesApplyEachForm) {
  json file = byte_level_file({}, {});
  file["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFKD"}}, {{"type", "NFC"}}}}};
  EXPECT_EQ(load(file).decode(load(file).encode("\uFB01 \u00E9")), "fi \u00E9");
}

TEST(AddedTokens, LongestMatchWinsAndSpecialOnesCanBeSkippedWhenDecoding) {
  json file = byte_level_file({}, {});
  file["added_tokens"] = {added_token(256, "<a>"), added_token(257, "<a><b>"), added_token(258, "<b>", false)};
  const Tokenizer tokenizer = load(file);
  EXPECT_EQ(tokenizer.encode("x<a><b>y<a>z<b>"), ids({'x', 257, 'y', 256, 'z', 258}));
  EXPECT_EQ(tokenizer.pieces("x<a><b>y"), (std::vector<std::string>{"x", "<a><b>", "y"}));
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("x<a>y<b>"), false), "x<a>y<b>");
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("x<a>y<b>"), true), "xy<b>");
  EXPECT_TRUE(tokenizer.is_special(256));
  EXPECT_FALSE(tokenizer.is_special(258));
  EXPECT_EQ(tokenizer.token_to_id("<a><b>"), 257u);
  EXPECT_EQ(tokenizer.id_limit(), 259u);
}

TEST(AddedTokens, PreTokenizationNeverCrossesAnAddedToken) {
  json file = byte_level_file({"ab"}, {{"a", "b"}});
  file["added_tokens"] = {added_token(257, "<sep>")};
  EXPECT_EQ(load(file).encode("ab"), ids({256}));
  EXPECT_EQ(load(file).encode("a<sep>b"), ids({'a', 257, 'b'}));
}

TEST(AddedTokens, StripFlagsTakeTheWhiteSpaceAround) {
  json file = byte_level_file({}, {});
  json left = added_token(256, "<L>");
  left["lstrip"] = true;
  json right = added_token(257, "<R>");
  right["rstrip"] = true;
  file["added_tokens"] = {left, right};
  const Tokenizer tokenizer = load(file);
  EXPECT_EQ(tokenizer.encode("a \t<L> b"), ids({'a', 256, ' ', 'b'}));
  EXPECT_EQ(tokenizer.encode("a <R> \n b"), ids({'a', ' ', 257, 'b'}));
}

TEST(AddedTokens, SingleWordTokensMatchOnlyBetweenNonWordCharacters) {
  const Tokenizer tokenizer = with_flagged_token("ok", "single_word");
  EXPECT_EQ(tokenizer.encode("ok"), ids({256}));
  EXPECT_EQ(tokenizer.encode("(ok)"), ids({'(', 256, ')'}));
  EXPECT_EQ(tokenizer.encode("oko"), ids({'o', 'k', 'o'}));
  EXPECT_EQ(tokenizer.encode("\u00E9ok"), ids({0xC3, 0xA9, 'o', 'k'}));  // é is a word character
}

TEST(AddedTokens, NormalizedTokensMatchInNormalizedText) {
  const Tokenizer tokenizer = with_flagged_token("e\u0301!", "normalized");
  EXPECT_EQ(tokenizer.encode("xe\u0301!"), ids({'x', 256}));
  EXPECT_EQ(tokenizer.encode("x\u00E9!"), ids({'x', 256}));
  // Hugging Face's ByteLevel decoder reads the normalized content as byte-level text when it can:
  // é spells the byte 0xE9, which is not UTF-8 on its own.
  EXPECT_EQ(tokenizer.decode(ids({256})), "\uFFFD!");
}

TEST(AddedTokens, IdsMustBeTheOnesHuggingFaceAssigns) {
  json file = byte_level_file({}, {});
  file["added_tokens"] = {added_token(256, "<a>"), added_token(258, "<b>")};
  try {
    load(file);
    FAIL() << "a gap in the added ids was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("added_tokens[1]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gives it id 257"), std::string::npos) << e.what();
  }
  file["added_tokens"] = {added_token(97, "a"), added_token(256, "<b>")};  // "a" keeps its vocabulary id
  EXPECT_EQ(load(file).encode("a<b>"), ids({97, 256}));
}

std::vector<std::string> split_pieces(const std::string& behavior, bool invert, const std::string& text) {
  json file = byte_level_file({}, {});
  file["pre_tokenizer"]["pretokenizers"][0] = {
      {"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", invert}};
  return load(file).pieces(text);
}

using Pieces = std::vector<std::string>;

TEST(PreTokenizer, SplitBehavioursMatchHuggingFace) {
  const std::string text = "The-final--countdown";
  EXPECT_EQ(split_pieces("Removed", false, text), (Pieces{"The", "final", "countdown"}));
  EXPECT_EQ(split_pieces("Isolated", false, text), (Pieces{"The", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split_pieces("MergedWithPrevious", false, text), (Pieces{"The-", "final-", "-", "countdown"}));
  EXPECT_EQ(split_pieces("MergedWithNext", false, text), (Pieces{"The", "-final", "-", "-countdown"}));
  EXPECT_EQ(split_pieces("Contiguous", false, text), (Pieces{"The", "-", "final", "--", "countdown"}));
  EXPECT_EQ(split_pieces("Removed", true, text), (Pieces{"-", "-", "-"}));
}

TEST(PreTokenizer, ByteLevelPrefixSpaceAndGpt2Regex) {
  json file = byte_level_file({}, {});
  file["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
  EXPECT_EQ(load(file).pieces("Hello world's  end"), (Pieces{" Hello", " world", "'s", " ", " end"}));
}

TEST(PreTokenizer, RegexClassesFollowUnicode) {
  // The Qwen3 pattern: digits one by one, letters in runs, white space before a word kept apart.
  const Tokenizer tokenizer = load(byte_level_file(
      {}, {}, R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"));
  EXPECT_EQ(tokenizer.pieces("I'M 123 ab  cd\n\n"), (Pieces{"I", "'M", " ", "1", "2", "3", " ab", " ", " cd", "\n\n"}));
  // Oniguruma and ICU fold case with Unicode: the long s matches 's.
  EXPECT_EQ(tokenizer.pieces("it'\u017Fa"), (Pieces{"it", "'\u017F", "a"}));
  // U+0085 is white space (\s) and U+FEFF is not.
  EXPECT_EQ(tokenizer.pieces("a\u0085\u0085b"), (Pieces{"a", "\u0085", "\u0085b"}));
  EXPECT_EQ(tokenizer.pieces("x\uFEFF\uFEFFy"), (Pieces{"x", "\uFEFF\uFEFF", "y"}));
}

TEST(PreTokenizer, LongWhiteSpaceRunsDoNotExhaustTheRegexStack) {
  const Tokenizer tokenizer = load(byte_level_file({}, {}, R"(\s*[\r\n]+|\s+(?!\S)|\s+|\S+)"));
  const auto pieces = tokenizer.pieces(std::string(1'000'000, ' ') + "x");
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].size(), 999'999u);
  EXPECT_EQ(pieces[1], " ");
}

TEST(Decode, IllFormedBytesBecomeOneReplacementPerMaximalSubpart) {
  const Tokenizer tokenizer = load(byte_level_file({}, {}));
  auto decode_bytes = [&](std::initializer_list<std::uint8_t> bytes) {
    std::vector<TokenId> list(bytes.begin(), bytes.end());
    return tokenizer.decode(list);
  };
  EXPECT_EQ(decode_bytes({0xE4, 0xB8, 'a'}), "\uFFFDa");
  EXPECT_EQ(decode_bytes({0xC0, 0x80}), "\uFFFD\uFFFD");
  EXPECT_EQ(decode_bytes({0xED, 0xA0, 0x80}), "\uFFFD\uFFFD\uFFFD");
  EXPECT_EQ(decode_bytes({0xF0, 0x9F, 0x98}), "\uFFFD");
  EXPECT_EQ(decode_bytes({0x80, 0xE4, 0xB8, 0xAD}), "\uFFFD\u4E2D");
  EXPECT_EQ(decode_bytes({0xF0, 0x9F, 0x98, 0x80}), "\U0001F600");
}

TEST(Decode, BytesComeWithoutReplacement) {
  const Tokenizer tokenizer = load(byte_level_file({}, {}));
  const std::vector<TokenId> split_emoji = {0xF0, 0x9F, 0x98};
  EXPECT_EQ(tokenizer.decode_bytes(split_emoji), "\xF0\x9F\x98");
  const std::vector<TokenId> with_unknown = {'a', 999'999, 0x80};
  EXPECT_EQ(tokenizer.decode_bytes(with_unknown), "a\x80");
}

TEST(Decode, TokensOutsideTheAlphabetStandForThemselvesAndUnknownIdsAreLeftOut) {
  json file = byte_level_file({}, {});
  file["added_tokens"] = {added_token(256, "<a b>")};
  const Tokenizer tokenizer = load(file);
  EXPECT_EQ(tokenizer.decode(ids({'x', 256, 'y', 999})), "x<a b>y");
  EXPECT_EQ(tokenizer.id_to_token(999), std::nullopt);
  EXPECT_EQ(tokenizer.id_to_token(' '), spell(" "));
}

TEST(Encode, RejectsIllFormedUtf8) {
  const Tokenizer tokenizer = load(byte_level_file({}, {}));
  EXPECT_THROW(tokenizer.encode("ab\xC3"), Error);
  EXPECT_TRUE(tokenizer.encode("").empty());
}

// Each malformed file gives one line naming the file and what is wrong with it.
void expect_error(const json& file, const std::string& expected) {
  try {
    load(file);
    ADD_FAILURE() << "accepted a file that should fail with: " << expected;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with(origin)) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(MalformedFiles, GiveOneLineNamingTheFileAndTheProblem) {
  const json good = byte_level_file({"ab"}, {{"a", "b"}});
  auto with = [&](const json::json_pointer& pointer, const json& value) {
    json file = good;
    file[pointer] = value;
    return file;
  };
  auto without = [&](const json::json_pointer& pointer) {
    json file = good;
    file[pointer.parent_pointer()].erase(pointer.back());
    return file;
  };
  expect_error(without("/model"_json_pointer), "missing key \"model\"");
  expect_error(without("/model/merges"_json_pointer), "model: missing key \"merges\"");
  expect_error(without("/decoder"_json_pointer), "missing key \"decoder\"");
  expect_error(with("/model/type"_json_pointer, "WordPiece"), "model.type: model type \"WordPiece\" is not supported");
  expect_error(with("/model/merges/0"_json_pointer, "a b c"), "model.merges[0]: \"a b c\" is not two tokens");
  expect_error(with("/model/merges/0"_json_pointer, "a q"), "model.merges[0]: merged token \"aq\" is not in the vocabulary");
  expect_error(with("/model/merges/0"_json_pointer, "a \u4E2D"), "merge part \"\u4E2D\" is not in the vocabulary");
  expect_error(with("/model/merges/0"_json_pointer, 7), "model.merges[0]: expected a string");
  expect_error(with("/model/vocab"_json_pointer, json::array()), "model.vocab: expected an object");
  expect_error(with("/model/dropout"_json_pointer, 0.1), "model.dropout: is not supported");
  expect_error(with("/pre_tokenizer/pretokenizers/0/pattern/Regex"_json_pointer, "(\\p{L}+"),
               "pre_tokenizer.pretokenizers[0].pattern.Regex: invalid regular expression (U_REGEX_MISMATCHED_PAREN");
  expect_error(with("/pre_tokenizer/pretokenizers/0/behavior"_json_pointer, "Sideways"), "unknown split behavior \"Sideways\"");
  expect_error(with("/pre_tokenizer/pretokenizers/1"_json_pointer, {{"type", "Whitespace"}}),
               "pre-tokenizer type \"Whitespace\" is not supported");
  expect_error(with("/pre_tokenizer"_json_pointer, good["pre_tokenizer"]["pretokenizers"][0]),
               "needs ByteLevel as the last pre-tokenizer");
  expect_error(with("/normalizer"_json_pointer, {{"type", "Lowercase"}}), "normalizer type \"Lowercase\" is not supported");
  expect_error(with("/decoder/type"_json_pointer, "WordPiece"), "decoder type \"WordPiece\" is not supported");
  expect_error(with("/version"_json_pointer, "2.0"), "unknown tokenizer.json version");
  expect_error(with("/added_tokens"_json_pointer, {{{"id", 257}, {"content", "<x>"}}}), "added_tokens[0]: missing key");
  try {
    Tokenizer::parse("{\"model\": ", origin);
    ADD_FAILURE() << "accepted truncated JSON";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test/tokenizer.json: not valid JSON"), std::string::npos) << e.what();
  }
}

TEST(MalformedFiles, MissingFileOrDirectoryWithoutOne) {
  EXPECT_THROW(Tokenizer::load("/nonexistent/tokenizer.json"), Error);
  try {
    Tokenizer::load("/");
    ADD_FAILURE() << "loaded a directory without tokenizer.json";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds no tokenizer.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rvformer::tokenizer
