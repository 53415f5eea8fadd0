// engine/ops_test.cpp — known-answer tests of the numerical building blocks. Expected values come
// from plain loops written here (no code shared with the engine) or from the constants of
// docs/qwen35-forward.md §8; the saturation facts the weight compiler relies on are pinned down.
#include "engine/ops.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "engine/gated_delta_net.h"

namespace rvformer::engine {
namespace {

std::uint32_t bits(float value) { return std::bit_cast<std::uint32_t>(value); }

// Deterministic pseudo-random floats in [-scale, scale).
std::vector<float> random_values(std::size_t count, std::uint32_t seed, float scale = 1.0f) {
  std::vector<float> values(count);
  std::uint32_t x = seed * 2654435761u + 1;
  for (float& value : values) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    value = scale * (static_cast<float>(x >> 8) * 0x1p-23f - 1.0f);
  }
  return values;
}

void expect_bit_equal(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) EXPECT_EQ(bits(actual[i]), bits(expected[i])) << "index " << i;
}

TEST(Activations, SigmoidSaturatesToExactlyOneFromTheDocumentedThreshold) {
  const float threshold = std::bit_cast<float>(0x41851592u);  // 16.6355324
  EXPECT_EQ(sigmoid(threshold), 1.0f);
  EXPECT_LT(sigmoid(std::nextafter(threshold, 0.0f)), 1.0f);
  EXPECT_EQ(sigmoid(16.64f), 1.0f);
  EXPECT_EQ(sigmoid(32.0f), 1.0f);
  EXPECT_EQ(sigmoid(1e30f), 1.0f);
}

TEST(Activations, SigmoidOfZeroIsExactlyOneHalfAndOfVeryNegativeIsZero) {
  EXPECT_EQ(sigmoid(0.0f), 0.5f);
  EXPECT_EQ(sigmoid(-0.0f), 0.5f);
  EXPECT_EQ(sigmoid(-88.73f), 0.0f);
  EXPECT_GT(sigmoid(-88.0f), 0.0f);
}

TEST(Activations, SiluIsTheIdentityFrom17AndExactlyZeroAtZero) {
  EXPECT_EQ(silu(17.0f), 17.0f);
  EXPECT_NE(silu(16.0f), 16.0f);  // 15.9999981
  for (float x : {17.0f, 20.0f, 32.0f, 90.5096741f, 181.019348f, 362.038696f, 1e6f}) EXPECT_EQ(silu(x), x) << x;
  EXPECT_EQ(bits(silu(0.0f)), bits(0.0f));
}

TEST(Activations, SiluIsNegativeZeroOnceExpOverflows) {
  for (float x : {-88.73f, -89.0f, -100.0f, -1e30f}) {
    const float y = silu(x);
    EXPECT_EQ(y, 0.0f) << x;
    EXPECT_TRUE(std::signbit(y)) << x;
  }
  EXPECT_NE(silu(-80.0f), 0.0f);  // a tiny negative, not zero
}

TEST(Activations, SoftplusFollowsTorchThresholdAndUnderflowsToZero) {
  EXPECT_EQ(softplus(25.0f), 25.0f);
  EXPECT_EQ(softplus(20.5f), 20.5f);
  EXPECT_EQ(softplus(20.0f), std::log1p(std::exp(20.0f)));
  EXPECT_EQ(softplus(-104.0f), 0.0f);
  EXPECT_EQ(softplus(-200.0f), 0.0f);
  EXPECT_GT(softplus(-30.0f), 0.0f);  // 9.4e-14: not enough for decay 1
}

TEST(Activations, DecayIsExactlyOneForMinusInfinityALog) {
  const float g = -std::exp(-INFINITY) * softplus(0.7f);
  EXPECT_EQ(g, 0.0f);
  EXPECT_EQ(std::exp(g), 1.0f);
  const float g_from_bias = -std::exp(0.5f) * softplus(0.0f + -200.0f);
  EXPECT_EQ(std::exp(g_from_bias), 1.0f);
}

TEST(Scales, QueryScaleForHeadDim128HasTheDocumentedBits) {
  EXPECT_EQ(bits(inverse_sqrt_scale(128)), 0x3db504f3u);
  EXPECT_EQ(bits(1.0f / std::sqrt(128.0f)), 0x3db504f3u);  // the fp32 formula agrees
  EXPECT_EQ(inverse_sqrt_scale(256), 0.0625f);
  EXPECT_EQ(inverse_sqrt_scale(64), 0.125f);
}

TEST(Scales, InverseSquareRootOfPowersOfFourIsExact) {
  for (int m = -20; m <= 20; ++m) {
    const float x = std::ldexp(1.0f, 2 * m);
    EXPECT_EQ(1.0f / std::sqrt(x), std::ldexp(1.0f, -m)) << m;
  }
}

TEST(Norms, ZeroCentredRmsNormMatchesPlainLoop) {
  const auto x = random_values(37, 1, 3.0f);
  const auto w = random_values(37, 2, 0.2f);
  std::vector<float> expected(37);
  float sum = 0.0f;
  for (std::size_t i = 0; i < 37; ++i) sum = sum + x[i] * x[i];
  const float mean = sum / 37.0f;
  const float r = 1.0f / std::sqrt(mean + 1e-6f);
  for (std::size_t i = 0; i < 37; ++i) expected[i] = (x[i] * r) * (1.0f + w[i]);
  std::vector<float> actual(37);
  rms_norm_zero_centred(x, w, 1e-6f, actual);
  expect_bit_equal(actual, expected);
}

TEST(Norms, ZeroCentredRmsNormWithZeroWeightIsIdentityScale) {
  std::vector<float> x{2.0f, -2.0f, 2.0f, -2.0f};
  std::vector<float> w(4, 0.0f);
  std::vector<float> y(4);
  rms_norm_zero_centred(x, w, 0.0f, y);
  expect_bit_equal(y, {1.0f, -1.0f, 1.0f, -1.0f});
}

TEST(Norms, GatedRmsNormMatchesPlainLoop) {
  const auto o = random_values(16, 3, 5.0f);
  const auto w = random_values(16, 4, 1.0f);
  const auto z = random_values(16, 5, 4.0f);
  std::vector<float> expected(16);
  float sum = 0.0f;
  for (std::size_t i = 0; i < 16; ++i) sum = sum + o[i] * o[i];
  const float r = 1.0f / std::sqrt(sum / 16.0f + 1e-6f);
  for (std::size_t i = 0; i < 16; ++i) {
    const float gate = z[i] / (1.0f + std::exp(-z[i]));
    expected[i] = ((o[i] * r) * w[i]) * gate;
  }
  std::vector<float> actual(16);
  gated_rms_norm(o, w, z, 1e-6f, actual);
  expect_bit_equal(actual, expected);
}

TEST(Norms, GatedNormReadsConstantWeightCodeBackAsExactlyTwo) {
  // DESIGN.md §4: 32 of 128 lanes at X = 16 (V = 181.019348 times the query scale), w = 1/32,
  // z = 32: active lanes read exactly 2, the others exactly 0.
  const float x = 181.019348f * inverse_sqrt_scale(128);
  EXPECT_EQ(x, 16.0f);
  std::vector<float> o(128, 0.0f);
  for (std::size_t i = 0; i < 128; i += 4) o[i] = x;
  std::vector<float> w(128, 1.0f / 32.0f);
  std::vector<float> z(128, 32.0f);
  std::vector<float> y(128);
  gated_rms_norm(o, w, z, 1e-6f, y);
  for (std::size_t i = 0; i < 128; ++i) EXPECT_EQ(y[i], i % 4 == 0 ? 2.0f : 0.0f) << i;
}

TEST(Norms, L2NormPutsEpsInsideTheRootOverTheSum) {
  auto x = random_values(16, 6, 2.0f);
  std::vector<float> expected(16);
  float sum = 0.0f;
  for (float v : x) sum = sum + v * v;
  const float r = 1.0f / std::sqrt(sum + 1e-6f);
  for (std::size_t i = 0; i < 16; ++i) expected[i] = x[i] * r;
  l2_normalise(x);
  expect_bit_equal(x, expected);
}

TEST(Norms, L2NormOfOneHotIsExactlyOneForPowersOfTwoFrom4) {
  for (float p : {4.0f, 8.0f, 16.0f, 32.0f, 64.0f}) {
    std::vector<float> x(128, 0.0f);
    x[5] = p;
    l2_normalise(x);
    EXPECT_EQ(x[5], 1.0f) << p;
    EXPECT_EQ(x[6], 0.0f);
  }
  std::vector<float> one(128, 0.0f);
  one[0] = 1.0f;
  l2_normalise(one);
  EXPECT_NE(one[0], 1.0f);  // 0.999999523
  std::vector<float> zeros(128, 0.0f);
  l2_normalise(zeros);
  for (float v : zeros) EXPECT_EQ(bits(v), 0u);
}

TEST(Rope, InverseFrequenciesMatchTheSpecForTheta1e7) {
  const auto inv = rope_inverse_frequencies(64, 10000000.0);
  ASSERT_EQ(inv.size(), 32u);
  EXPECT_EQ(inv[0], 1.0f);
  EXPECT_FLOAT_EQ(inv[1], 0.604296386f);
  EXPECT_NEAR(inv[31], 1.6548e-7f, 1e-11f);
  for (std::size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(bits(inv[i]), bits(1.0f / std::pow(1e7f, static_cast<float>(2 * i) / 64.0f))) << i;
  }
}

TEST(Rope, HalfSplitRotationMatchesPlainFormula) {
  const auto inv = rope_inverse_frequencies(8, 10000.0);
  std::vector<float> cos(4), sin(4);
  rope_cos_sin(inv, 7, cos, sin);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(bits(cos[i]), bits(std::cos(7.0f * inv[i])));
    EXPECT_EQ(bits(sin[i]), bits(std::sin(7.0f * inv[i])));
  }
  auto head = random_values(12, 7);
  const auto original = head;
  apply_rope(head, cos, sin);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(bits(head[i]), bits(original[i] * cos[i] - original[i + 4] * sin[i]));
    EXPECT_EQ(bits(head[i + 4]), bits(original[i + 4] * cos[i] + original[i] * sin[i]));
  }
  for (std::size_t i = 8; i < 12; ++i) EXPECT_EQ(bits(head[i]), bits(original[i]));  // not rotated
}

TEST(Rope, PositionZeroIsTheIdentity) {
  const auto inv = rope_inverse_frequencies(8, 10000.0);
  std::vector<float> cos(4), sin(4);
  rope_cos_sin(inv, 0, cos, sin);
  auto head = random_values(8, 8);
  const auto original = head;
  apply_rope(head, cos, sin);
  expect_bit_equal(head, original);
}

TEST(Softmax, MatchesPlainLoopAndIsExactForADominantScore) {
  auto scores = random_values(9, 9, 4.0f);
  std::vector<float> expected(9);
  float maximum = scores[0];
  for (float s : scores) maximum = s > maximum ? s : maximum;
  float sum = 0.0f;
  for (std::size_t i = 0; i < 9; ++i) {
    expected[i] = std::exp(scores[i] - maximum);
    sum = sum + expected[i];
  }
  for (float& e : expected) e = e / sum;
  softmax(scores);
  expect_bit_equal(scores, expected);

  std::vector<float> hard{0.0f, 200.0f, -5.0f};
  softmax(hard);
  expect_bit_equal(hard, {0.0f, 1.0f, 0.0f});
}

TEST(Argmax, TiesGoToTheLowestIndexAndNanWins) {
  EXPECT_EQ(argmax(std::vector<float>{1.0f, 3.0f, 3.0f, 2.0f}), 1u);
  EXPECT_EQ(argmax(std::vector<float>{-0.0f, 0.0f}), 0u);
  EXPECT_EQ(argmax(std::vector<float>{1.0f, NAN, 5.0f, NAN}), 1u);
  EXPECT_EQ(argmax(std::vector<float>{-INFINITY, -INFINITY}), 0u);
}

TEST(CausalConv, MatchesPlainConvolutionOverHistory) {
  const std::size_t channels = 5, kernel = 4;
  const auto w = random_values(channels * kernel, 10);
  std::vector<std::vector<float>> inputs;
  std::vector<float> window((kernel - 1) * channels, 0.0f);
  for (std::uint32_t t = 0; t < 6; ++t) {
    inputs.push_back(random_values(channels, 20 + t, 3.0f));
    std::vector<float> expected(channels);
    for (std::size_t c = 0; c < channels; ++c) {
      float u = 0.0f;
      for (std::size_t j = 0; j < kernel; ++j) {
        const long time = static_cast<long>(t) - static_cast<long>(kernel - 1) + static_cast<long>(j);
        const float input = time < 0 ? 0.0f : inputs[static_cast<std::size_t>(time)][c];
        u = u + w[c * kernel + j] * input;
      }
      expected[c] = u / (1.0f + std::exp(-u));
    }
    auto actual = inputs.back();
    causal_conv_step(w, kernel, window, actual);
    expect_bit_equal(actual, expected);
  }
}

TEST(CausalConv, KernelOfOneKeepsNoWindow) {
  std::vector<float> window;
  std::vector<float> channels{2.0f, -1.0f};
  causal_conv_step(std::vector<float>{0.5f, 3.0f}, 1, window, channels);
  EXPECT_EQ(channels[0], 1.0f / (1.0f + std::exp(-1.0f)));
  EXPECT_EQ(channels[1], -3.0f / (1.0f + std::exp(3.0f)));
}

TEST(DeltaRule, MatchesPlainRecurrenceAndReadsAfterWrite) {
  const std::size_t dk = 6, dv = 5;
  auto state = random_values(dk * dv, 30);
  auto expected_state = state;
  const auto k = random_values(dk, 31);
  const auto v = random_values(dv, 32);
  const auto q = random_values(dk, 33);
  const float alpha = 0.9f, beta = 0.7f;
  for (float& s : expected_state) s = s * alpha;
  std::vector<float> delta(dv), expected_out(dv);
  for (std::size_t i = 0; i < dv; ++i) {
    float recall = 0.0f;
    for (std::size_t m = 0; m < dk; ++m) recall = recall + expected_state[m * dv + i] * k[m];
    delta[i] = (v[i] - recall) * beta;
  }
  for (std::size_t m = 0; m < dk; ++m)
    for (std::size_t i = 0; i < dv; ++i) expected_state[m * dv + i] = expected_state[m * dv + i] + k[m] * delta[i];
  for (std::size_t i = 0; i < dv; ++i) {
    float read = 0.0f;
    for (std::size_t m = 0; m < dk; ++m) read = read + expected_state[m * dv + i] * q[m];
    expected_out[i] = read;
  }
  std::vector<float> out(dv);
  delta_rule_step(state, k, v, q, alpha, beta, out);
  expect_bit_equal(state, expected_state);
  expect_bit_equal(out, expected_out);
}

}  // namespace
}  // namespace rvformer::engine
