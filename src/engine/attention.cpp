// engine/attention.cpp — see attention.h.
#include "engine/attention.h"

#include <algorithm>

#include "engine/ops.h"

namespace rvformer::engine {

namespace {

// Zero-centred RMSNorm of one head in place, then RoPE on its leading rotary dims.
void normalise_and_rotate(std::span<float> head, std::span<const float> norm, float eps, std::span<const float> cos,
                          std::span<const float> sin) {
  rms_norm_zero_centred(head, norm, eps, head);
  apply_rope(head, cos, sin);
}

}  // namespace

namespace {

// The part of a step after the projections, for one sequence: norms and RoPE, the cache, the causal
// softmax over it and the output gate, from `projected` (per head [query | gate]), `key` and `value`
// into `attended` (heads · head_dim).
void attend(const Config& config, const AttentionWeights& weights, AttentionCache& cache, std::span<const float> cos,
            std::span<const float> sin, std::span<float> projected, std::span<float> key, std::span<const float> value,
            std::span<float> attended) {
  const std::size_t head_dim = config.head_dim;
  const std::size_t heads = config.num_attention_heads;
  const std::size_t kv_width = config.num_key_value_heads * head_dim;
  const float eps = static_cast<float>(config.rms_norm_eps);
  for (std::size_t offset = 0; offset < kv_width; offset += head_dim) {
    normalise_and_rotate(key.subspan(offset, head_dim), weights.k_norm, eps, cos, sin);
  }
  cache.keys.insert(cache.keys.end(), key.begin(), key.end());
  cache.values.insert(cache.values.end(), value.begin(), value.end());

  const std::size_t positions = cache.keys.size() / kv_width;
  const std::size_t heads_per_kv_head = heads / config.num_key_value_heads;
  const float scale = inverse_sqrt_scale(head_dim);
  std::vector<float> scores(positions);
  std::fill(attended.begin(), attended.end(), 0.0f);
  for (std::size_t head = 0; head < heads; ++head) {
    const auto query = projected.subspan(2 * head * head_dim, head_dim);
    const auto gate = projected.subspan(2 * head * head_dim + head_dim, head_dim);
    normalise_and_rotate(query, weights.q_norm, eps, cos, sin);
    const std::size_t kv_offset = head / heads_per_kv_head * head_dim;
    for (std::size_t t = 0; t < positions; ++t) {
      const float* past_key = cache.keys.data() + t * kv_width + kv_offset;
      float dot = 0.0f;
      for (std::size_t d = 0; d < head_dim; ++d) dot += query[d] * past_key[d];
      scores[t] = dot * scale;
    }
    softmax(scores);
    const auto output = attended.subspan(head * head_dim, head_dim);
    for (std::size_t t = 0; t < positions; ++t) {
      const float* past_value = cache.values.data() + t * kv_width + kv_offset;
      for (std::size_t d = 0; d < head_dim; ++d) output[d] += scores[t] * past_value[d];
    }
    for (std::size_t d = 0; d < head_dim; ++d) output[d] *= sigmoid(gate[d]);
  }
}

}  // namespace

void attention_step(const Config& config, const AttentionWeights& weights, AttentionCache& cache,
                    std::span<const float> cos, std::span<const float> sin, std::span<const float> x,
                    std::span<float> out, Workers& workers) {
  AttentionCache* const caches[] = {&cache};
  attention_steps(config, weights, caches, cos, sin, x, out, workers);
}

void attention_steps(const Config& config, const AttentionWeights& weights, std::span<AttentionCache* const> caches,
                     std::span<const float> cos, std::span<const float> sin, std::span<const float> x,
                     std::span<float> out, Workers& workers) {
  const std::size_t count = caches.size();
  const std::size_t width = config.num_attention_heads * config.head_dim;
  const std::size_t kv_width = config.num_key_value_heads * config.head_dim;
  const std::size_t half = cos.size() / count;
  std::vector<float> projected(count * 2 * width);
  std::vector<float> keys(count * kv_width);
  std::vector<float> values(count * kv_width);
  weights.q_proj.multiply_batch(x, projected, count, workers);
  weights.k_proj.multiply_batch(x, keys, count, workers);
  weights.v_proj.multiply_batch(x, values, count, workers);
  std::vector<float> attended(count * width);
  for (std::size_t i = 0; i < count; ++i) {
    attend(config, weights, *caches[i], cos.subspan(i * half, half), sin.subspan(i * half, half),
           std::span(projected).subspan(i * 2 * width, 2 * width), std::span(keys).subspan(i * kv_width, kv_width),
           std::span(values).subspan(i * kv_width, kv_width), std::span(attended).subspan(i * width, width));
  }
  weights.o_proj.multiply_batch(attended, out, count, workers);
}

}  // namespace rvformer::engine
