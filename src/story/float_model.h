// story/float_model.h — llama2.c's fp32 forward pass of a Llama2Checkpoint (RMSNorm, RoPE,
// grouped-query attention over a KV cache, SwiGLU), the yardstick for the quantised model: its
// greedy ids and its logit margins tell where quantisation changes the story and by how much.
#pragma once

#include <span>
#include <vector>

#include "story/llama2_checkpoint.h"

namespace rvformer::story {

class FloatModel {
 public:
  explicit FloatModel(const Llama2Checkpoint& checkpoint);

  // Feeds `token` at position `pos` (positions in order from 0) and returns the logits.
  std::span<const float> forward(int token, int pos);

 private:
  void attention(int layer, int pos);
  void feed_forward(int layer);

  const Llama2Checkpoint& model_;
  std::vector<float> x_, xb_, xb2_, q_, hb_, hb2_, scores_, logits_;
  std::vector<float> key_cache_, value_cache_;  // [layer][pos][kv_dim]
};

// The gap between the largest and the second largest logit.
float logit_margin(std::span<const float> logits);

// Greedy ids from BOS, as llama2.c's run -t 0 -n steps prints them (stopping before BOS).
std::vector<int> float_greedy_ids(const Llama2Checkpoint& checkpoint, int steps);

}  // namespace rvformer::story
