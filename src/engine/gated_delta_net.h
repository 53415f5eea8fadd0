// engine/gated_delta_net.h — one token through a Gated DeltaNet ("linear_attention") mixer, the
// recurrent form of docs/qwen35-forward.md §3, entirely in fp32:
//   projections → causal depthwise conv (tap kernel-1 on the current token) → SiLU → split q|k|v →
//   per key head L2 norm (query also scaled by 1/sqrt(key_head_dim)) → β = sigmoid(b),
//   g = −exp(A_log)·softplus(a + dt_bias), α = exp(g) → delta rule per value head (value head h uses
//   key head h / (value_heads/key_heads)) → gated RMSNorm with a plain weight → out_proj.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "engine/config.h"
#include "engine/dense_matrix.h"
#include "engine/workers.h"
#include "engine/state.h"

namespace rvformer::engine {

struct GatedDeltaNetWeights {
  DenseMatrix in_proj_qkv;      // [conv_dim, hidden]: q (key heads), k (key heads), v (value heads)
  DenseMatrix in_proj_z;        // [value_dim, hidden]
  DenseMatrix in_proj_b;        // [value_heads, hidden]
  DenseMatrix in_proj_a;        // [value_heads, hidden]
  std::vector<float> conv1d;     // [conv_dim][kernel]
  std::vector<float> dt_bias;    // [value_heads]
  std::vector<float> A_log;      // [value_heads]
  std::vector<float> norm;       // [value_head_dim], plain weight
  DenseMatrix out_proj;         // [hidden, value_dim]
};

// x: the input_layernorm output (hidden values); out: the mixer output (hidden values). The
// projections' rows are split between the workers.
void gated_delta_net_step(const Config& config, const GatedDeltaNetWeights& weights, GatedDeltaNetState& state,
                          std::span<const float> x, std::span<float> out, Workers& workers);
// One token of each of several sequences (one state each, distinct): x and out hold one hidden
// vector per state, in order. The projections read every weight once for all of them; each result
// is bit-identical to gated_delta_net_step's.
void gated_delta_net_steps(const Config& config, const GatedDeltaNetWeights& weights,
                           std::span<GatedDeltaNetState* const> states, std::span<const float> x, std::span<float> out,
                           Workers& workers);

// The causal depthwise convolution for one token, then SiLU, in place on `channels` (conv_dim):
// u_c = Σ_{j=0..kernel-1} w[c][j]·in_j summed from +0 in order j = 0, 1, ..., where in_0..in_{kernel-2}
// are the window (oldest first) and in_{kernel-1} is the current input. The window then shifts in
// the current (pre-convolution) input.
void causal_conv_step(std::span<const float> weights, std::size_t kernel, std::span<float> window,
                      std::span<float> channels);

// The delta rule for one value head with state S[m][i] ([key_dim][value_dim]):
//   S ← α·S;  r_i = Σ_m S[m][i]·k_m;  δ_i = (v_i − r_i)·β;  S[m][i] ← S[m][i] + k_m·δ_i;
//   out_i = Σ_m S[m][i]·q_m  (read after write; sums over m from +0 in index order).
void delta_rule_step(std::span<float> state, std::span<const float> key, std::span<const float> value,
                     std::span<const float> query, float alpha, float beta, std::span<float> out);

}  // namespace rvformer::engine
