// engine/gated_delta_net.cpp — see gated_delta_net.h.
#include "engine/gated_delta_net.h"

#include <algorithm>
#include <cmath>

#include "engine/ops.h"

namespace rvformer::engine {

void causal_conv_step(std::span<const float> weights, std::size_t kernel, std::span<float> window,
                      std::span<float> channels) {
  const std::size_t count = channels.size();
  std::vector<float> sums(count, 0.0f);
  for (std::size_t tap = 0; tap < kernel; ++tap) {
    const float* inputs = tap + 1 < kernel ? window.data() + tap * count : channels.data();
    for (std::size_t c = 0; c < count; ++c) sums[c] += weights[c * kernel + tap] * inputs[c];
  }
  if (kernel > 1) {
    std::copy(window.begin() + static_cast<std::ptrdiff_t>(count), window.end(), window.begin());
    std::copy(channels.begin(), channels.end(), window.end() - static_cast<std::ptrdiff_t>(count));
  }
  for (std::size_t c = 0; c < count; ++c) channels[c] = silu(sums[c]);
}

void delta_rule_step(std::span<float> state, std::span<const float> key, std::span<const float> value,
                     std::span<const float> query, float alpha, float beta, std::span<float> out) {
  const std::size_t value_dim = value.size();
  // Decay, then recall r = Sᵀk into `out` (it is overwritten by the read below).
  std::fill(out.begin(), out.end(), 0.0f);
  for (std::size_t m = 0; m < key.size(); ++m) {
    float* row = state.data() + m * value_dim;
    for (std::size_t i = 0; i < value_dim; ++i) {
      row[i] *= alpha;
      out[i] += row[i] * key[m];
    }
  }
  std::vector<float> delta(value_dim);
  for (std::size_t i = 0; i < value_dim; ++i) delta[i] = (value[i] - out[i]) * beta;
  // Write k δᵀ, then read Sᵀq from the updated state.
  std::fill(out.begin(), out.end(), 0.0f);
  for (std::size_t m = 0; m < key.size(); ++m) {
    float* row = state.data() + m * value_dim;
    for (std::size_t i = 0; i < value_dim; ++i) {
      row[i] += key[m] * delta[i];
      out[i] += row[i] * query[m];
    }
  }
}

namespace {

// The part of a step after the projections, for one sequence: conv, norms, the delta rule per value
// head and the gated RMSNorm, from its projections `mixed` (conv_dim), `z`, `b`, `a` into `gated`
// (value_dim).
void recur(const Config& config, const GatedDeltaNetWeights& weights, GatedDeltaNetState& state, std::span<float> mixed,
           std::span<const float> z, std::span<const float> b, std::span<const float> a, std::span<float> gated) {
  const std::size_t key_heads = config.linear_num_key_heads;
  const std::size_t value_heads = config.linear_num_value_heads;
  const std::size_t key_head_dim = config.linear_key_head_dim;
  const std::size_t value_head_dim = config.linear_value_head_dim;
  const std::size_t key_dim = config.linear_key_dim();
  causal_conv_step(weights.conv1d, config.linear_conv_kernel_dim, state.conv, mixed);

  const std::span<float> queries = mixed.subspan(0, key_dim);
  const std::span<float> keys = mixed.subspan(key_dim, key_dim);
  const std::span<const float> values = mixed.subspan(2 * key_dim, config.linear_value_dim());
  const float query_scale = inverse_sqrt_scale(key_head_dim);
  for (std::size_t head = 0; head < key_heads; ++head) {
    const auto query = queries.subspan(head * key_head_dim, key_head_dim);
    l2_normalise(query);
    for (float& value : query) value *= query_scale;
    l2_normalise(keys.subspan(head * key_head_dim, key_head_dim));
  }

  const float eps = static_cast<float>(config.rms_norm_eps);
  const std::size_t heads_per_key_head = value_heads / key_heads;
  const std::size_t state_size = key_head_dim * value_head_dim;
  std::vector<float> read(value_head_dim);
  for (std::size_t head = 0; head < value_heads; ++head) {
    const std::size_t key_head = head / heads_per_key_head;
    const float beta = sigmoid(b[head]);
    const float g = -std::exp(weights.A_log[head]) * softplus(a[head] + weights.dt_bias[head]);
    delta_rule_step(std::span(state.recurrent).subspan(head * state_size, state_size),
                    keys.subspan(key_head * key_head_dim, key_head_dim),
                    values.subspan(head * value_head_dim, value_head_dim),
                    queries.subspan(key_head * key_head_dim, key_head_dim), std::exp(g), beta, read);
    gated_rms_norm(read, weights.norm, z.subspan(head * value_head_dim, value_head_dim), eps,
                   gated.subspan(head * value_head_dim, value_head_dim));
  }
}

}  // namespace

void gated_delta_net_step(const Config& config, const GatedDeltaNetWeights& weights, GatedDeltaNetState& state,
                          std::span<const float> x, std::span<float> out, Workers& workers) {
  GatedDeltaNetState* const states[] = {&state};
  gated_delta_net_steps(config, weights, states, x, out, workers);
}

void gated_delta_net_steps(const Config& config, const GatedDeltaNetWeights& weights,
                           std::span<GatedDeltaNetState* const> states, std::span<const float> x, std::span<float> out,
                           Workers& workers) {
  const std::size_t count = states.size();
  const std::size_t conv_dim = config.linear_conv_dim();
  const std::size_t value_dim = config.linear_value_dim();
  const std::size_t value_heads = config.linear_num_value_heads;
  std::vector<float> mixed(count * conv_dim);
  std::vector<float> z(count * value_dim);
  std::vector<float> b(count * value_heads);
  std::vector<float> a(count * value_heads);
  weights.in_proj_qkv.multiply_batch(x, mixed, count, workers);
  weights.in_proj_z.multiply_batch(x, z, count, workers);
  weights.in_proj_b.multiply_batch(x, b, count, workers);
  weights.in_proj_a.multiply_batch(x, a, count, workers);
  std::vector<float> gated(count * value_dim);
  for (std::size_t i = 0; i < count; ++i) {
    recur(config, weights, *states[i], std::span(mixed).subspan(i * conv_dim, conv_dim),
          std::span(z).subspan(i * value_dim, value_dim), std::span(b).subspan(i * value_heads, value_heads),
          std::span(a).subspan(i * value_heads, value_heads), std::span(gated).subspan(i * value_dim, value_dim));
  }
  weights.out_proj.multiply_batch(gated, out, count, workers);
}

}  // namespace rvformer::engine
