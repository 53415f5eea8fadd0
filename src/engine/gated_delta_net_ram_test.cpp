// engine/gated_delta_net_ram_test.cpp — a Gated DeltaNet layer configured as in DESIGN.md §4 is an
// exact addressable RAM: one-hot keys of P = 32 write whole rows, queries read them back bit-exactly
// (after the same token's write), an all-zero key writes nothing, and decay exactly 1 keeps
// everything. Values use the 1-of-4 constant-weight code with V = 181.019348, which the gated norm
// (w = 1/32, z = 32) reads out as exactly 2.
#include <array>
#include <cmath>
#include <optional>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "engine/gated_delta_net.h"

namespace rvformer::engine {
namespace {

constexpr std::size_t lanes = 128;
constexpr std::size_t value_heads = 2;
constexpr float P = 32.0f;
constexpr float V = 181.019348f;
// Input channels of the layer (the normalised residual stream).
constexpr std::size_t constant_channel = 0;
constexpr std::size_t write_address_channels = 1;
constexpr std::size_t read_address_channels = write_address_channels + lanes;
constexpr std::size_t value_channels = read_address_channels + lanes;
constexpr std::size_t hidden = value_channels + value_heads * lanes;

using Pattern = std::vector<bool>;  // one value head's 128 lanes

Config ram_config() {
  Config config;
  config.hidden_size = hidden;
  config.intermediate_size = 1;
  config.vocab_size = 1;
  config.num_hidden_layers = 1;
  config.layer_types = {LayerType::linear_attention};
  config.linear_num_key_heads = 1;
  config.linear_num_value_heads = value_heads;
  config.linear_key_head_dim = lanes;
  config.linear_value_head_dim = lanes;
  config.linear_conv_kernel_dim = 4;
  return config;
}

// Row-major weights, all zero but `value` at the listed (row, column) entries.
std::vector<float> weights_with(std::size_t rows, std::size_t cols, const std::vector<std::array<std::size_t, 2>>& at,
                                float value) {
  std::vector<float> weights(rows * cols, 0.0f);
  for (const auto& [row, col] : at) weights[row * cols + col] = value;
  return weights;
}

DenseMatrix matrix_with(std::size_t rows, std::size_t cols, const std::vector<std::array<std::size_t, 2>>& at,
                        float value) {
  return DenseMatrix(rows, cols, weights_with(rows, cols, at, value));
}

// Decay 1 via A_log = -inf, or via a zero in_proj_a row with dt_bias = -200 (docs §8.1).
GatedDeltaNetWeights ram_weights(bool decay_from_bias) {
  std::vector<std::array<std::size_t, 2>> qkv, z, b, out;
  for (std::size_t m = 0; m < lanes; ++m) {
    qkv.push_back({m, read_address_channels + m});           // query
    qkv.push_back({lanes + m, write_address_channels + m});  // key
  }
  for (std::size_t i = 0; i < value_heads * lanes; ++i) {
    z.push_back({i, constant_channel});
    out.push_back({1 + i, i});
  }
  for (std::size_t h = 0; h < value_heads; ++h) b.push_back({h, constant_channel});
  const std::size_t qkv_rows = 2 * lanes + value_heads * lanes;
  std::vector<float> qkv_weights = weights_with(qkv_rows, hidden, qkv, P);
  for (std::size_t i = 0; i < value_heads * lanes; ++i) {  // v = V * value channel
    qkv_weights[(2 * lanes + i) * hidden + value_channels + i] = V;
  }
  std::vector<float> conv(qkv_rows * 4, 0.0f);
  for (std::size_t c = 0; c < qkv_rows; ++c) conv[c * 4 + 3] = 1.0f;  // pass the current token
  return {
      .in_proj_qkv = DenseMatrix(qkv_rows, hidden, std::move(qkv_weights)),
      .in_proj_z = matrix_with(value_heads * lanes, hidden, z, 32.0f),
      .in_proj_b = matrix_with(value_heads, hidden, b, 32.0f),
      .in_proj_a = matrix_with(value_heads, hidden, {}, 0.0f),
      .conv1d = conv,
      .dt_bias = std::vector<float>(value_heads, decay_from_bias ? -200.0f : 0.7f),
      .A_log = std::vector<float>(value_heads, decay_from_bias ? 0.3f : -INFINITY),
      .norm = std::vector<float>(lanes, 1.0f / 32.0f),
      .out_proj = matrix_with(hidden, value_heads * lanes, out, 1.0f),
  };
}

Pattern random_code(std::uint32_t& seed) {
  Pattern pattern(lanes, false);
  for (std::size_t group = 0; group < lanes / 4; ++group) {
    seed = seed * 1664525u + 1013904223u;
    pattern[group * 4 + (seed >> 30)] = true;
  }
  return pattern;
}

class GatedDeltaNetRam : public ::testing::TestWithParam<bool> {
 protected:
  // One token: write `values` (one pattern per value head) at `write_address` (none: zero key),
  // read `read_address`; returns the layer output's value lanes.
  std::vector<float> step(std::optional<std::size_t> write_address, std::size_t read_address,
                          const std::vector<Pattern>& values) {
    std::vector<float> x(hidden, 0.0f);
    x[constant_channel] = 1.0f;
    if (write_address) x[write_address_channels + *write_address] = 1.0f;
    x[read_address_channels + read_address] = 1.0f;
    for (std::size_t h = 0; h < value_heads; ++h)
      for (std::size_t i = 0; i < lanes; ++i) x[value_channels + h * lanes + i] = values[h][i] ? 1.0f : 0.0f;
    std::vector<float> out(hidden);
    gated_delta_net_step(config_, weights_, state_.gated_delta_net(0), x, out, workers_);
    return std::vector<float>(out.begin() + 1, out.begin() + 1 + value_heads * lanes);
  }

  static void expect_reads(const std::vector<float>& read, const std::vector<Pattern>& expected) {
    for (std::size_t h = 0; h < value_heads; ++h)
      for (std::size_t i = 0; i < lanes; ++i)
        ASSERT_EQ(read[h * lanes + i], expected[h][i] ? 2.0f : 0.0f) << "head " << h << " lane " << i;
  }

  void expect_row(std::size_t address, const std::vector<Pattern>& expected) const {
    for (std::size_t h = 0; h < value_heads; ++h) {
      const auto head = state_.recurrent_head(0, h);
      for (std::size_t i = 0; i < lanes; ++i) ASSERT_EQ(head[address * lanes + i], expected[h][i] ? V : 0.0f);
    }
  }

  Config config_ = ram_config();
  GatedDeltaNetWeights weights_ = ram_weights(GetParam());
  State state_{config_};
  Workers workers_{1};
  std::uint32_t seed_ = 1;
};

TEST_P(GatedDeltaNetRam, WrittenRowsReadBackExactlyIncludingInTheSameToken) {
  const std::vector<Pattern> first{random_code(seed_), random_code(seed_)};
  expect_reads(step(5, 5, first), first);  // read after write
  const std::vector<Pattern> second{random_code(seed_), random_code(seed_)};
  expect_reads(step(9, 5, second), first);
  expect_reads(step(std::nullopt, 9, first), second);
  expect_row(5, first);
  expect_row(9, second);
  const std::vector<Pattern> empty(value_heads, Pattern(lanes, false));
  expect_reads(step(std::nullopt, 77, first), empty);  // an unwritten row reads exactly 0
}

TEST_P(GatedDeltaNetRam, OverwritingReplacesTheWholeRowExactly) {
  const std::vector<Pattern> old{random_code(seed_), random_code(seed_)};
  step(3, 0, old);
  const std::vector<Pattern> replacement{random_code(seed_), random_code(seed_)};
  expect_reads(step(3, 3, replacement), replacement);
  expect_row(3, replacement);
}

TEST_P(GatedDeltaNetRam, AllZeroKeyWritesNothingAndDecayOneKeepsEverything) {
  std::vector<std::vector<Pattern>> stored(lanes);
  for (std::size_t address = 0; address < lanes; ++address) {
    stored[address] = {random_code(seed_), random_code(seed_)};
    step(address, address, stored[address]);
  }
  const std::vector<float> snapshot = state_.gated_delta_net(0).recurrent;
  for (int token = 0; token < 50; ++token) {
    step(std::nullopt, static_cast<std::size_t>(token) % lanes, {random_code(seed_), random_code(seed_)});
  }
  EXPECT_TRUE(state_.gated_delta_net(0).recurrent == snapshot);  // bit-identical: no write, no decay
  for (std::size_t address = 0; address < lanes; ++address) {
    expect_reads(step(std::nullopt, address, stored[0]), stored[address]);
    expect_row(address, stored[address]);
  }
}

INSTANTIATE_TEST_SUITE_P(DecayRoutes, GatedDeltaNetRam, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "ZeroRowAndDtBiasMinus200" : "ALogMinusInfinity"; });

}  // namespace
}  // namespace rvformer::engine
