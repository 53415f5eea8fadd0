// Tests of vu.attend as passes: composed, the passes give story_attention_head for heads of every
// length and magnitude; the element pass's circuit, in the exact evaluator with its exactness checks
// on, gives each pass's running sum (and zeros with every neuron off when disabled).
#include <gtest/gtest.h>

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
  AttentionPassMachine m(AttentionPassMachine::Kind::kElement, element_passes(heads), 8);
  EXPECT_EQ(stages(m.c, m.results()[0]), 12);
  expect_every_case(m);
}

// Sum passes of heads whose weights spread (the cap at 4095 reached when level and anchor leave
// many weights near 2^10) or concentrate, in eight stages.
TEST(VectorAttention, SumPassGivesTheWeightsSumInEightStages) {
  RandomOperands r(44);
  std::vector<AttentionHead> heads;
  for (int n = 0; n < 8; ++n) heads.push_back(random_head(r, r.pick(1, 512), 8, n < 4 ? 6 : 12));
  heads.push_back(staircase_head(r, 300));
  std::vector<AttentionPass> passes = sum_passes(heads);
  for (AttentionPass p : sum_passes({random_head(r, 64, 8, 2)})) {  // equal-ish scores: a sum near the cap
    p.level = 0;
    passes.push_back(p);
  }
  AttentionPassMachine m(AttentionPassMachine::Kind::kSum, passes, 8);
  EXPECT_EQ(stages(m.c, m.results()[0]), 8);
  expect_every_case(m);
}

}  // namespace
}  // namespace rvformer::circuit
