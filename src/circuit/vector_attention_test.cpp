// Tests of vu.attend as passes: composed, the passes give story_attention_head for heads of every
// length and magnitude; the element pass's circuit, in the exact evaluator with its exactness checks
// on, gives each pass's running sum (and zeros with every neuron off when disabled).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "circuit/vector_attention_testing.h"

namespace rvformer::circuit {
namespace {

TEST(VectorAttention, PassesComposeToTheReference) {
  RandomOperands r(41);
  for (int n = 0; n < 400; ++n) {
    const int positions = n < 64 ? n + 1 : r.pick(1, 512), head_size = r.pick(1, 3) == 1 ? r.pick(1, 16) : 8;
    const AttentionHead h = random_head(r, positions, head_size, 12);
    ASSERT_EQ(attention_by_passes(h), attention_reference(h)) << positions << " positions, head size " << head_size;
  }
}

// Heads whose scores reach the high part's clamp, equal scores everywhere, one dominant position.
TEST(VectorAttention, PassesComposeToTheReferenceAtTheExtremes) {
  RandomOperands r(42);
  for (int positions : {1, 31, 32, 33, 200, 512}) {
    AttentionHead h = random_head(r, positions, 8, 12);
    for (int q : {4095, -4096})
      for (int k : {4095, -4096, 0}) {
        std::fill(h.q.begin(), h.q.end(), q);
        for (auto& key : h.k) std::fill(key.begin(), key.end(), k);
        ASSERT_EQ(attention_by_passes(h), attention_reference(h)) << positions << " positions, q " << q << ", k " << k;
      }
    h.k[positions / 2].assign(8, 4095);
    ASSERT_EQ(attention_by_passes(h), attention_reference(h)) << positions << " positions, one dominant";
    h = staircase_head(r, positions);
    ASSERT_EQ(attention_by_passes(h), attention_reference(h)) << positions << " positions on the staircase";
  }
}

// Element passes of heads of up to 96 positions (three blocks, the last one short), whose queries
// and keys spread the weights or concentrate them, in twelve stages.
TEST(VectorAttention, ElementPassGivesTheRunningSumInTwelveStages) {
  RandomOperands r(43);
  std::vector<AttentionHead> heads;
  for (int n = 0; n < 6; ++n) heads.push_back(random_head(r, r.pick(1, 96), 8, n < 3 ? 8 : 12));
  AttentionHead extreme = random_head(r, 40, 8, 12);
  extreme.q.assign(8, 4095);
  extreme.k[3].assign(8, 4095);
  heads.push_back(extreme);
  heads.push_back(staircase_head(r, 300));  // distances 0..100 eighths, on, below and above each step
  AttentionPassMachine m(element_passes(heads), 8);
  EXPECT_EQ(stages(m.c, m.results()[AttentionPassMachine::result_of(PassKind::kElement)]), 12);
  expect_every_case(m);
}

// Sum passes of heads whose weights spread (the cap at 4095 reached when level and anchor leave
// many weights near 2^10) or concentrate, in eight stages.
TEST(VectorAttention, SumPassGivesTheWeightsSumInEightStages) {
  RandomOperands r(44);
  std::vector<AttentionHead> heads;
  for (int n = 0; n < 8; ++n) heads.push_back(random_head(r, r.pick(1, 512), 8, n < 4 ? 6 : 12));
  heads.push_back(staircase_head(r, 300));
  std::vector<AttentionPass> passes = block_passes(PassKind::kSum, heads);
  for (AttentionPass p : block_passes(PassKind::kSum, {random_head(r, 64, 8, 2)})) {  // equal-ish scores: a sum near the cap
    p.level = 0;
    passes.push_back(p);
  }
  AttentionPassMachine m(passes, 8);
  EXPECT_EQ(stages(m.c, m.results()[AttentionPassMachine::result_of(PassKind::kSum)]), 8);
  expect_every_case(m);
}

// A head whose scores fall on, just below and just above multiples of 2^11, where the anchor's
// ceiling steps: q = (2^11, 1, 0, …) and position t's key (c_t, δ_t, 0, …), so that s_t = 2^11·c_t + δ_t.
AttentionHead grid_head(RandomOperands& r, int positions) {
  AttentionHead h = staircase_head(r, positions);
  for (int t = 0; t < positions; ++t) h.k[t] = {r.pick(-1500, 1500), std::array{0, 1, -1}[t % 3], 0, 0, 0, 0, 0, 0};
  return h;
}

// Heads of every kind the block passes meet: random magnitudes, every score at its lowest or highest,
// one dominant position, scores on the anchor's grid and distances on the weights' staircase.
std::vector<AttentionHead> block_pass_heads(RandomOperands& r, int longest) {
  std::vector<AttentionHead> heads;
  for (int n = 0; n < 6; ++n) heads.push_back(random_head(r, r.pick(1, longest), 8, n < 3 ? 8 : 12));
  for (auto [q, k] : {std::pair{-4096, 4095}, {4095, 4095}, {-4096, -4096}, {1, 0}}) {
    AttentionHead h = random_head(r, r.pick(1, longest), 8, 12);
    h.q.assign(8, q);
    for (auto& key : h.k) key.assign(8, k);
    heads.push_back(h);
  }
  AttentionHead dominant = random_head(r, longest, 8, 12);
  dominant.k[longest / 3].assign(8, 4095);
  dominant.q.assign(8, 4095);
  heads.push_back(dominant);
  heads.push_back(grid_head(r, longest));
  heads.push_back(staircase_head(r, longest));
  return heads;
}

TEST(VectorAttention, AnchorPassGivesTheAnchorInSevenStages) {
  RandomOperands r(45);
  AttentionPassMachine m(block_passes(PassKind::kAnchor, block_pass_heads(r, 160)), 8);
  EXPECT_EQ(stages(m.c, m.results()[AttentionPassMachine::result_of(PassKind::kAnchor)]), 7);
  expect_every_case(m);
}

// The level steps where S² reaches BACK(k − 1)·BACK(k).
std::int64_t level_threshold(int k) {
  const std::int64_t product = level_value(k - 1) * level_value(k);
  auto root = static_cast<std::int64_t>(std::sqrt(static_cast<double>(product)));
  while (root * root < product) ++root;
  while ((root - 1) * (root - 1) >= product) --root;
  return root;
}

// A mass pass whose S = BACK(level) + Σ_t W(u_t, 7) is `target`: its positions' scores are 2^11·(A − u_t),
// the u_t chosen greedily, with the anchor at A (a position far below it when none is needed).
AttentionPass mass_pass_summing_to(std::int64_t target, int level) {
  constexpr int kAnchor = 500;
  AttentionPass p;
  p.kind = PassKind::kMass;
  p.head.q = {2048, 1, 0, 0, 0, 0, 0, 0};
  p.anchor = kAnchor;
  p.level = level;
  std::int64_t rest = target - level_value(level);
  auto add_position = [&](int u) {
    p.head.k.push_back({kAnchor - u, 0, 0, 0, 0, 0, 0, 0});
    p.head.v.emplace_back(8, 0);
  };
  for (int u = 0; rest > 0 && u < 100;)
    if (attention_weight(u, 7) <= rest) {
      rest -= attention_weight(u, 7);
      add_position(u);
    } else {
      ++u;
    }
  if (p.head.k.empty()) add_position(100);
  return p;
}

// Mass passes over heads of up to 512 positions (levels from 0 to the highest that equal scores over
// 512 positions reach), and with S on and just below every threshold a block can reach.
TEST(VectorAttention, MassPassGivesTheLevelInSixStages) {
  RandomOperands r(46);
  std::vector<AttentionPass> passes = block_passes(PassKind::kMass, block_pass_heads(r, 512));
  for (int k = 1; level_threshold(k) - level_value(k - 1) < 31 * 128; ++k)
    for (int below : {0, 1})
      for (int level : {k - 1, -1}) {
        const std::int64_t target = level_threshold(k) - below;
        if (target - level_value(level) > 31 * 128) continue;
        const AttentionPass p = mass_pass_summing_to(target, level);
        ASSERT_LE(p.head.k.size(), 32u);
        std::int64_t sum = level_value(level);
        for (std::size_t t = 0; t < p.head.k.size(); ++t)
          sum += attention_weight(eighths_below(p.head, static_cast<int>(t), p.anchor), 7);
        ASSERT_EQ(sum, target) << "threshold " << k;
        passes.push_back(p);
      }
  AttentionPassMachine m(passes, 8);
  EXPECT_EQ(stages(m.c, m.results()[AttentionPassMachine::result_of(PassKind::kMass)]), 6);
  expect_every_case(m);
}

// The largest number of the operation's neurons in one MLP stage.
std::size_t widest_stage(const AttentionPassMachine& m) {
  std::size_t widest = 0;
  for (auto [stage, count] : neurons_by_stage(m.c, VectorMachine::kUnit)) widest = std::max(widest, count);
  return widest;
}

// Passes of every kind through the one unit, whose kinds share the scores (and the sum and element
// passes their weights): each case's kind gives its token and every other kind zero, and no stage
// needs more neurons than one MLP layer of the Qwen3.5-4B base holds.
TEST(VectorAttention, EveryKindOfPassRunsOnSharedStagesWithinTheBaseModelsWidth) {
  RandomOperands r(48);
  const std::vector<AttentionHead> heads = {random_head(r, 70, 8, 12), staircase_head(r, 40)};
  std::vector<AttentionPass> passes = element_passes(heads);
  for (PassKind kind : {PassKind::kAnchor, PassKind::kMass, PassKind::kSum}) {
    const std::vector<AttentionPass> more = block_passes(kind, heads);
    passes.insert(passes.end(), more.begin(), more.end());
  }
  std::shuffle(passes.begin(), passes.end(), std::mt19937(48));
  AttentionPassMachine m(passes, 8);
  expect_every_case(m);
  constexpr std::size_t kBaseMlpWidth = 9216;  // Qwen3.5-4B's intermediate size
  EXPECT_LE(widest_stage(m), kBaseMlpWidth);
}

TEST(VectorAttention, OutputPassGivesTheElementInEightStages) {
  RandomOperands r(47);
  AttentionOutputMachine m(output_cases(r, 300));
  EXPECT_EQ(stages(m.c, m.results()[0]), 8);
  expect_every_case(m);
}

}  // namespace
}  // namespace rvformer::circuit
