// tokenizer/test_corpus.cpp — see test_corpus.h.
#include "tokenizer/test_corpus.h"

#include <random>
#include <utility>

#include "tokenizer/unicode_text.h"

namespace rvformer::tokenizer::testing {

namespace {

// Inclusive code point ranges, every one assigned since Unicode 9 or earlier.
using Range = std::pair<char32_t, char32_t>;

const std::vector<std::vector<Range>> character_pools = {
    {{'a', 'z'}, {'A', 'Z'}},                                     // ASCII letters
    {{'0', '9'}},                                                 // digits
    {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}},             // ASCII punctuation
    {{' ', ' '}, {'\t', '\t'}, {'\n', '\n'}, {'\r', '\r'}},        // common white space
    {{0x0B, 0x0C}, {0xA0, 0xA0}, {0x2002, 0x200A}, {0x3000, 0x3000}, {0x2028, 0x2029}},  // rarer white space
    {{0x01, 0x08}, {0x0E, 0x1F}, {0x7F, 0x84}, {0x86, 0x9F}},     // control characters
    {{0xC0, 0xFF}, {0x100, 0x17E}},                               // Latin-1 and Latin Extended-A
    {{0x300, 0x36F}},                                             // combining diacritical marks
    {{0x391, 0x3A9}, {0x3B1, 0x3C9}, {0x410, 0x44F}},             // Greek, Cyrillic
    {{0x5D0, 0x5EA}, {0x5B0, 0x5BD}, {0x627, 0x64A}, {0x64B, 0x652}},  // Hebrew, Arabic with marks
    {{0x905, 0x939}, {0x93E, 0x94D}, {0xE01, 0xE3A}},             // Devanagari with signs, Thai
    {{0x4E00, 0x9FA5}, {0x3041, 0x3096}, {0x30A1, 0x30FA}},       // CJK, kana
    {{0xAC00, 0xD7A3}, {0x1100, 0x1112}, {0x1161, 0x1175}},       // Hangul syllables and jamo
    {{0x660, 0x669}, {0x966, 0x96F}, {0xFF10, 0xFF19}, {0x2160, 0x216B}, {0xB2, 0xB3}},  // other digits
    {{0xFF01, 0xFF5E}, {0x2010, 0x2027}, {0x2030, 0x205E}},       // fullwidth forms, punctuation
    {{0x2190, 0x21FF}, {0x2200, 0x22FF}, {0x2500, 0x257F}},       // arrows, maths, box drawing
    {{0x1F600, 0x1F64F}, {0x1F300, 0x1F5FF}, {0x1F3FB, 0x1F3FF}, {0x1F1E6, 0x1F1FF}},  // emoji
    {{0x200D, 0x200D}, {0xFE0F, 0xFE0F}, {0x200B, 0x200C}},       // joiners, variation selector
};

const std::vector<std::string> fragments = {
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'M", "'LL", "'D", "'x",
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_call>", "<think>", "</think>",
    "<|im_sta", "<tool_", "\r\n", "    ", "\n\n", " \n", "\t\t", "e\u0301", "\U0001F468\u200D\U0001F469",
};

char32_t pick(std::mt19937& random, const std::vector<Range>& ranges) {
  std::size_t total = 0;
  for (const auto& [first, last] : ranges) total += last - first + 1;
  std::size_t index = std::uniform_int_distribution<std::size_t>(0, total - 1)(random);
  for (const auto& [first, last] : ranges) {
    if (index <= last - first) return static_cast<char32_t>(first + index);
    index -= last - first + 1;
  }
  return ranges.front().first;
}

std::string random_text(std::mt19937& random) {
  std::string text;
  const int runs = std::uniform_int_distribution<int>(1, 40)(random);
  for (int run = 0; run < runs; ++run) {
    if (std::uniform_int_distribution<int>(0, 5)(random) == 0) {
      text += fragments[std::uniform_int_distribution<std::size_t>(0, fragments.size() - 1)(random)];
      continue;
    }
    const auto& pool = character_pools[std::uniform_int_distribution<std::size_t>(0, character_pools.size() - 1)(random)];
    const int length = std::uniform_int_distribution<int>(1, 4)(random);
    for (int i = 0; i < length; ++i) append_utf8(text, pick(random, pool));
  }
  return text;
}

}  // namespace

std::vector<std::string> hand_picked_texts() {
  return {
      // ASCII prose, punctuation, contractions in mixed case
      "Hello, world!",
      "The quick brown fox jumps over the lazy dog.",
      "I'm sure it's fine; we'll see, they've said you'd know. I'M SURE IT'S FINE. We'Ll, They'VE, You'D",
      "don't DON'T Don'T can't isn't 'tis o'clock rock'n'roll ''s ' s",
      "Mr. O'Neil's dog—“quoted” ‘single’ «guillemets» … ellipsis",
      // code
      "int main(int argc, char** argv) {\n    return argc > 1 ? 0 : -1;\n}\n",
      "def f(x):\n\tif x:\n\t\treturn {'a': [1, 2, 3]}\n    # comment   \n",
      "for (auto& [k, v] : m) std::cout << k << \"=\" << v << '\\n';",
      "{\"name\": \"run\", \"arguments\": {\"cmd\": \"ls -la /tmp && echo $HOME\"}}",
      "x+=1;y-=2;z*=3;w/=4;a<<=1;b>>=2;c!=d;e==f;g<=h;i>=j;k&&l||m",
      "<html><body class=\"x\">&amp;&lt;&gt;</body></html>",
      // digits
      "0123456789",
      "3.14159265358979 2,718 1e-10 0x1F 1_000_000 -42 +7",
      "In 2024, 1234567 people paid $99.99 (≈ €92,50) on 12/31.",
      "١٢٣٤٥ ０１２３ ²³ ⅠⅡⅢ ५६७",
      // whitespace runs: spaces, tabs, newlines, trailing spaces, \r\n
      "a  b   c    d     e",
      "trailing spaces   ",
      "   leading spaces",
      "tabs\t\there\t",
      "line1\nline2\n\nline4\n\n\n",
      "windows\r\nline\r\n\r\nend",
      " \n \n  \n\t\n",
      "mixed \t \n\t  \r\n  x",
      "\n",
      " ",
      "                                                                x",
      "a\u00A0b\u3000c\u2003d",
      // CJK
      "你好，世界！今天天气很好。",
      "日本語のテキストとカタカナ、ひらがな。",
      "한국어 텍스트입니다. 안녕하세요!",
      "中文English混合text123数字",
      // combining marks (also text that is not in NFC)
      "caf\u00E9 cafe\u0301 na\u00EFve nai\u0308ve",
      "\u1100\u1161\u11A8 (conjoining jamo)",
      "a\u0308\u0301 e\u0301\u0302x o\u0328\u0304",
      "हिन्दी भाषा देवनागरी",
      "ภาษาไทย ที่นี่",
      "עִבְרִית וְעוֹד",
      "العَرَبِيَّة",
      "Z\u0351\u0308\u0342a\u0310\u0305l\u0352g\u036Do",
      "Tiếng Việt có dấu",
      // emoji, including ZWJ sequences, skin tones, flags, keycaps
      "I ❤️ emoji 😀😃😄",
      "family: 👨‍👩‍👧‍👦 and 👩🏽‍💻 and 🏳️‍🌈",
      "flags 🇩🇪🇫🇷🇯🇵 keycap 1️⃣ #️⃣",
      "👍🏻👍🏼👍🏽👍🏾👍🏿",
      // added tokens inside text
      "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
      "before<|endoftext|>after",
      "<tool_call>\n<function=run>\n<parameter=cmd>\nls\n</parameter>\n</function>\n</tool_call>",
      "<think>\nhmm\n</think>\n\nanswer",
      "<|im_start|><|im_end|><|im_start|>",
      "<|im_sta rt|> <|im_end| > <tool_call <|fim_prefix|>x<|fim_middle|>",
      "  <|im_end|>  spaced  ",
      // other scripts and symbols
      "Ελληνικά και Русский текст",
      "∀x∈ℝ: x² ≥ 0 → ∑ᵢ aᵢ ≠ ∞",
      "┌──┐\n│ab│\n└──┘",
      "ｆｕｌｌｗｉｄｔｈ　ＡＢＣ",
      "",
  };
}

std::vector<std::string> random_texts(std::size_t count, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < count; ++i) texts.push_back(random_text(random));
  return texts;
}

std::string long_text(std::size_t bytes) {
  const std::vector<std::string> parts = hand_picked_texts();
  std::string text;
  for (std::size_t i = 0; text.size() < bytes; ++i) {
    text += parts[(i * 7) % parts.size()];
    text += i % 3 == 0 ? "\n" : " ";
  }
  return text;
}

}  // namespace rvformer::tokenizer::testing
