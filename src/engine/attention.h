// engine/attention.h — one token through a gated full-attention mixer (docs/qwen35-forward.md §5), in
// fp32: q_proj rows per head are [query | output gate]; per-head zero-centred q/k norms; partial
// half-split RoPE; grouped KV heads (query head h reads KV head h / (heads/kv_heads)); scores
// (q·k)·head_dim^-0.5; causal softmax; output multiplied by sigmoid(gate); o_proj.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "engine/config.h"
#include "engine/dense_matrix.h"
#include "engine/workers.h"
#include "engine/state.h"

namespace rvformer::engine {

struct AttentionWeights {
  DenseMatrix q_proj;          // [2·heads·head_dim, hidden], per head [query | gate]
  DenseMatrix k_proj;          // [kv_heads·head_dim, hidden]
  DenseMatrix v_proj;          // [kv_heads·head_dim, hidden]
  DenseMatrix o_proj;          // [hidden, heads·head_dim]
  std::vector<float> q_norm;    // [head_dim], zero-centred
  std::vector<float> k_norm;    // [head_dim], zero-centred
};

// x: the input_layernorm output; cos/sin: the RoPE table of this token's position in this layer
// (rotary_dim/2 each); the cache gains this token's key and value; out receives o_proj's result.
// The projections' rows are split between the workers.
void attention_step(const Config& config, const AttentionWeights& weights, AttentionCache& cache,
                    std::span<const float> cos, std::span<const float> sin, std::span<const float> x,
                    std::span<float> out, Workers& workers);
// One token of each of several sequences (one cache each, distinct): cos, sin, x and out hold one
// table or vector per cache, in order. The projections read every weight once for all of them; each
// result is bit-identical to attention_step's.
void attention_steps(const Config& config, const AttentionWeights& weights, std::span<AttentionCache* const> caches,
                     std::span<const float> cos, std::span<const float> sin, std::span<const float> x,
                     std::span<float> out, Workers& workers);

}  // namespace rvformer::engine
