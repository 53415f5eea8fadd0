// story/float_model.cpp — see float_model.h. The arithmetic follows llama2.c's run.c step by step
// (the same operations in the same order), so that its greedy ids come out.
#include "story/float_model.h"

#include <algorithm>
#include <cmath>

namespace rvformer::story {
namespace {

void rmsnorm(float* out, const float* x, const float* weight, int n) {
  float ss = 0;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  ss = 1.0f / std::sqrt(ss / n + 1e-5f);
  for (int i = 0; i < n; ++i) out[i] = weight[i] * (ss * x[i]);
}

void matmul(float* out, const float* x, const float* w, int n, int d) {
  for (int i = 0; i < d; ++i) {
    float sum = 0;
    for (int j = 0; j < n; ++j) sum += w[std::size_t(i) * n + j] * x[j];
    out[i] = sum;
  }
}

void softmax(float* x, int n) {
  float max = *std::max_element(x, x + n);
  float sum = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  for (int i = 0; i < n; ++i) x[i] /= sum;
}

// Rotates the pairs of q (dim) and k (kv_dim) by pos * 10000^(-head_index / head_size).
void rope(float* q, float* k, int dim, int kv_dim, int head_size, int pos) {
  for (int i = 0; i < dim; i += 2) {
    float frequency = 1.0f / std::pow(10000.0f, static_cast<float>(i % head_size) / static_cast<float>(head_size));
    float angle = pos * frequency;
    float c = std::cos(angle), s = std::sin(angle);
    for (float* v : {q, k}) {
      if (v == k && i >= kv_dim) continue;
      float a = v[i], b = v[i + 1];
      v[i] = a * c - b * s;
      v[i + 1] = a * s + b * c;
    }
  }
}

}  // namespace

FloatModel::FloatModel(const Llama2Checkpoint& checkpoint) : model_(checkpoint) {
  const Llama2Config& c = checkpoint.config;
  for (auto* buffer : {&x_, &xb_, &xb2_, &q_}) buffer->resize(c.dim);
  hb_.resize(c.hidden_dim);
  hb2_.resize(c.hidden_dim);
  scores_.resize(c.seq_len);
  logits_.resize(c.vocab_size);
  key_cache_.resize(std::size_t(c.n_layers) * c.seq_len * c.kv_dim());
  value_cache_.resize(key_cache_.size());
}

void FloatModel::attention(int l, int pos) {
  const Llama2Config& c = model_.config;
  const Llama2Layer& layer = model_.layers[l];
  const int head_size = c.head_size(), kv_dim = c.kv_dim(), group = c.n_heads / c.n_kv_heads;
  const std::size_t layer_offset = std::size_t(l) * c.seq_len * kv_dim;
  float* key = &key_cache_[layer_offset + std::size_t(pos) * kv_dim];
  float* value = &value_cache_[layer_offset + std::size_t(pos) * kv_dim];
  rmsnorm(xb_.data(), x_.data(), layer.rms_att.data(), c.dim);
  matmul(q_.data(), xb_.data(), layer.wq.data(), c.dim, c.dim);
  matmul(key, xb_.data(), layer.wk.data(), c.dim, kv_dim);
  matmul(value, xb_.data(), layer.wv.data(), c.dim, kv_dim);
  rope(q_.data(), key, c.dim, kv_dim, head_size, pos);
  for (int h = 0; h < c.n_heads; ++h) {
    const float* q = &q_[std::size_t(h) * head_size];
    const std::size_t kv_head = std::size_t(h / group) * head_size;
    for (int t = 0; t <= pos; ++t) {
      const float* k = &key_cache_[layer_offset + std::size_t(t) * kv_dim + kv_head];
      float score = 0;
      for (int i = 0; i < head_size; ++i) score += q[i] * k[i];
      scores_[t] = score / std::sqrt(static_cast<float>(head_size));
    }
    softmax(scores_.data(), pos + 1);
    float* out = &xb_[std::size_t(h) * head_size];
    std::fill(out, out + head_size, 0.0f);
    for (int t = 0; t <= pos; ++t) {
      const float* v = &value_cache_[layer_offset + std::size_t(t) * kv_dim + kv_head];
      for (int i = 0; i < head_size; ++i) out[i] += scores_[t] * v[i];
    }
  }
  matmul(xb2_.data(), xb_.data(), layer.wo.data(), c.dim, c.dim);
  for (int i = 0; i < c.dim; ++i) x_[i] += xb2_[i];
}

void FloatModel::feed_forward(int l) {
  const Llama2Config& c = model_.config;
  const Llama2Layer& layer = model_.layers[l];
  rmsnorm(xb_.data(), x_.data(), layer.rms_ffn.data(), c.dim);
  matmul(hb_.data(), xb_.data(), layer.w1.data(), c.dim, c.hidden_dim);
  matmul(hb2_.data(), xb_.data(), layer.w3.data(), c.dim, c.hidden_dim);
  for (int i = 0; i < c.hidden_dim; ++i) {
    float v = hb_[i];
    hb_[i] = v * (1.0f / (1.0f + std::exp(-v))) * hb2_[i];
  }
  matmul(xb_.data(), hb_.data(), layer.w2.data(), c.hidden_dim, c.dim);
  for (int i = 0; i < c.dim; ++i) x_[i] += xb_[i];
}

std::span<const float> FloatModel::forward(int token, int pos) {
  const Llama2Config& c = model_.config;
  std::copy_n(&model_.token_embedding[std::size_t(token) * c.dim], c.dim, x_.begin());
  for (int l = 0; l < c.n_layers; ++l) {
    attention(l, pos);
    feed_forward(l);
  }
  rmsnorm(x_.data(), x_.data(), model_.rms_final.data(), c.dim);
  matmul(logits_.data(), x_.data(), model_.classifier.data(), c.dim, c.vocab_size);
  return logits_;
}

float logit_margin(std::span<const float> logits) {
  std::vector<float> sorted(logits.begin(), logits.end());
  std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
  return sorted[0] - sorted[1];
}

std::vector<int> float_greedy_ids(const Llama2Checkpoint& checkpoint, int steps) {
  FloatModel model(checkpoint);
  std::vector<int> ids;
  int token = 1;  // BOS
  for (int pos = 0; pos < steps; ++pos) {
    std::span<const float> logits = model.forward(token, pos);
    token = static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    if (token == 1) break;
    ids.push_back(token);
  }
  return ids;
}

}  // namespace rvformer::story
