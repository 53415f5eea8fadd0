// engine/attention.cpp — see attention.h.
#include "engine/attention.h"

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

void attention_step(const Config& config, const AttentionWeights& weights, AttentionCache& cache,
                    std::span<const float> cos, std::span<const float> sin, std::span<const float> x,
                    std::span<float> out, Workers& workers) {
  const std::size_t head_dim = config.head_dim;
  const std::size_t heads = config.num_attention_heads;
  const std::size_t kv_width = config.num_key_value_heads * head_dim;
  const float eps = static_cast<float>(config.rms_norm_eps);

  std::vector<float> projected(2 * heads * head_dim);
  std::vector<float> key(kv_width);
  std::vector<float> value(kv_width);
  weights.q_proj.multiply(x, projected, workers);
  weights.k_proj.multiply(x, key, workers);
  weights.v_proj.multiply(x, value, workers);
  for (std::size_t offset = 0; offset < kv_width; offset += head_dim) {
    normalise_and_rotate(std::span(key).subspan(offset, head_dim), weights.k_norm, eps, cos, sin);
  }
  cache.keys.insert(cache.keys.end(), key.begin(), key.end());
  cache.values.insert(cache.values.end(), value.begin(), value.end());

  const std::size_t positions = cache.keys.size() / kv_width;
  const std::size_t heads_per_kv_head = heads / config.num_key_value_heads;
  const float scale = inverse_sqrt_scale(head_dim);
  std::vector<float> scores(positions);
  std::vector<float> attended(heads * head_dim, 0.0f);
  for (std::size_t head = 0; head < heads; ++head) {
    const auto query = std::span(projected).subspan(2 * head * head_dim, head_dim);
    const auto gate = std::span(projected).subspan(2 * head * head_dim + head_dim, head_dim);
    normalise_and_rotate(query, weights.q_norm, eps, cos, sin);
    const std::size_t kv_offset = head / heads_per_kv_head * head_dim;
    for (std::size_t t = 0; t < positions; ++t) {
      const float* past_key = cache.keys.data() + t * kv_width + kv_offset;
      float dot = 0.0f;
      for (std::size_t d = 0; d < head_dim; ++d) dot += query[d] * past_key[d];
      scores[t] = dot * scale;
    }
    softmax(scores);
    const auto output = std::span(attended).subspan(head * head_dim, head_dim);
    for (std::size_t t = 0; t < positions; ++t) {
      const float* past_value = cache.values.data() + t * kv_width + kv_offset;
      for (std::size_t d = 0; d < head_dim; ++d) output[d] += scores[t] * past_value[d];
    }
    for (std::size_t d = 0; d < head_dim; ++d) output[d] *= sigmoid(gate[d]);
  }
  weights.o_proj.multiply(attended, out, workers);
}

}  // namespace rvformer::engine
