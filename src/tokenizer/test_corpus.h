// tokenizer/test_corpus.h — texts the tokenizer tests run on: hand-picked cases (ASCII, code,
// digits, whitespace runs, CJK, combining marks, emoji with ZWJ sequences, added tokens inside
// text, contractions in mixed case, text that is not in NFC) and seeded random strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rvformer::tokenizer::testing {

std::vector<std::string> hand_picked_texts();

// `count` random strings of 1 to 40 runs drawn from many scripts, symbols, white space, marks,
// emoji, contraction fragments and Qwen's added tokens. They avoid the few code points on which
// the JavaScript reference knowingly differs from Hugging Face (U+0085, U+FEFF, U+017F; see
// docs/tokenizer.md) and code points assigned after Unicode 9, which the libraries may classify
// differently.
std::vector<std::string> random_texts(std::size_t count, std::uint32_t seed);

// A long text of code, prose and numbers, about `bytes` long.
std::string long_text(std::size_t bytes);

}  // namespace rvformer::tokenizer::testing
