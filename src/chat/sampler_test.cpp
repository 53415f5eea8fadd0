// chat/sampler_test.cpp — greedy choice, the vocabulary limit, seeded sampling (reproducible and
// with the right frequencies), top-k and top-p; UTF-8 streaming of token bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "chat/sampler.h"
#include "chat/utf8_stream.h"
#include "support/error.h"

namespace rvformer::chat {
namespace {

TEST(Sampler, GreedyTakesTheHighestAndTheLowestIdOnTies) {
  Sampler s({});
  const std::vector<float> logits = {0.5f, 2.0f, 2.0f, NAN, -1.0f};
  EXPECT_EQ(s.sample(logits), 1u);
  const std::vector<float> all_nan = {NAN, NAN};
  EXPECT_EQ(s.sample(all_nan), 0u);
}

TEST(Sampler, RespectsTheVocabularyLimit) {
  SamplingOptions o;
  o.vocabulary_limit = 2;
  Sampler greedy(o);
  const std::vector<float> logits = {0.0f, 1.0f, 9.0f};
  EXPECT_EQ(greedy.sample(logits), 1u);
  o.temperature = 1.0;
  Sampler sampled(o);
  for (int i = 0; i < 200; ++i) EXPECT_LT(sampled.sample(logits), 2u);
  EXPECT_THROW(Sampler({}).sample(std::span<const float>()), Error);
}

TEST(Sampler, ASeedReproducesTheDraws) {
  SamplingOptions o;
  o.temperature = 0.8;
  o.seed = 42;
  const std::vector<float> logits = {1.0f, 1.1f, 0.9f, 1.05f, 0.2f};
  Sampler a(o);
  Sampler b(o);
  o.seed = 43;
  Sampler c(o);
  std::vector<TokenId> da, db, dc;
  for (int i = 0; i < 64; ++i) {
    da.push_back(a.sample(logits));
    db.push_back(b.sample(logits));
    dc.push_back(c.sample(logits));
  }
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
}

TEST(Sampler, DrawsWithTheSoftmaxProbabilities) {
  SamplingOptions o;
  o.temperature = 2.0;
  o.seed = 7;
  Sampler s(o);
  // Logits 2*log(p) at temperature 2 give probabilities p.
  const std::vector<double> p = {0.5, 0.3, 0.15, 0.05};
  std::vector<float> logits;
  for (double x : p) logits.push_back(static_cast<float>(2 * std::log(x)));
  std::map<TokenId, int> counts;
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) ++counts[s.sample(logits)];
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_NEAR(counts[static_cast<TokenId>(i)] / static_cast<double>(kDraws), p[i], 0.01) << "token " << i;
  }
}

TEST(Sampler, TopKAndTopPCutTheTail) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  SamplingOptions o;
  o.temperature = 1.0;
  o.top_k = 2;
  Sampler k(o);
  o.top_k = 0;
  o.top_p = 0.75;  // 0.5 + 0.3 reaches it: two tokens
  Sampler p(o);
  std::map<TokenId, int> from_k, from_p;
  for (int i = 0; i < 20000; ++i) {
    ++from_k[k.sample(logits)];
    ++from_p[p.sample(logits)];
  }
  EXPECT_EQ(from_k.size(), 2u);
  EXPECT_EQ(from_p.size(), 2u);
  EXPECT_NEAR(from_k[0] / 20000.0, 0.5 / 0.8, 0.02);
  o.top_p = 0.01;
  Sampler one(o);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(one.sample(logits), 0u);
}

TEST(Sampler, RefusesBadOptions) {
  SamplingOptions o;
  o.temperature = -1;
  EXPECT_THROW(Sampler{o}, Error);
  o.temperature = 1;
  o.top_p = 0;
  EXPECT_THROW(Sampler{o}, Error);
}

TEST(Utf8Stream, HoldsSplitSequencesUntilComplete) {
  Utf8Stream s;
  const std::string text = "a日😀";
  std::string out;
  for (char byte : text) out += s.push(std::string(1, byte));
  EXPECT_EQ(out, text);
  EXPECT_EQ(s.push("\xE6\x97"), "");
  EXPECT_EQ(s.finish(), "\xEF\xBF\xBD");
}

TEST(Utf8Stream, ReplacesLikePython) {
  // Python's bytes.decode("utf-8", errors="replace") on the same bytes.
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(valid_utf8("\xE6\x97x"), r + "x");
  EXPECT_EQ(valid_utf8("\xFF"), r);
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), r + r + r);
  EXPECT_EQ(valid_utf8("\xF0\x9F\x98"), r);
  EXPECT_EQ(valid_utf8("a\xC3"), "a" + r);
  EXPECT_EQ(valid_utf8("\xC3("), r + "(");
  EXPECT_EQ(valid_utf8("\xE0\x80\xAF"), r + r + r);
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);
  EXPECT_EQ(valid_utf8("\xC0\xAF"), r + r);
  Utf8Stream s;
  EXPECT_EQ(s.push("\xFF\xE6"), r);
  EXPECT_EQ(s.push("\x97\xA5"), "日");
}

}  // namespace
}  // namespace rvformer::chat
