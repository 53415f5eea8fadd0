// engine/ops.cpp — see ops.h. Compiled with -ffp-contract=off: no FMA, every operation rounds once.
#include "engine/ops.h"

#include <cmath>

namespace rvformer::engine {

namespace {

constexpr float l2_norm_eps = 1e-6f;

// r = 1 / sqrt(Σx²/n + eps), the statistic both RMSNorm variants share.
float inverse_rms(std::span<const float> x, float eps) {
  const float mean_square = sum_of_squares(x) / static_cast<float>(x.size());
  return 1.0f / std::sqrt(mean_square + eps);
}

}  // namespace

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float silu(float x) { return x / (1.0f + std::exp(-x)); }
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

float sum_of_squares(std::span<const float> x) {
  float sum = 0.0f;
  for (float value : x) sum += value * value;
  return sum;
}

void rms_norm_zero_centred(std::span<const float> x, std::span<const float> weight, float eps,
                           std::span<float> y) {
  const float scale = inverse_rms(x, eps);
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = (x[i] * scale) * (1.0f + weight[i]);
}

void gated_rms_norm(std::span<const float> o, std::span<const float> weight, std::span<const float> z, float eps,
                    std::span<float> y) {
  const float scale = inverse_rms(o, eps);
  for (std::size_t i = 0; i < o.size(); ++i) y[i] = ((o[i] * scale) * weight[i]) * silu(z[i]);
}

void l2_normalise(std::span<float> x) {
  const float scale = 1.0f / std::sqrt(sum_of_squares(x) + l2_norm_eps);
  for (float& value : x) value *= scale;
}

float inverse_sqrt_scale(std::size_t n) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(n))); }

std::vector<float> rope_inverse_frequencies(std::size_t rotary_dim, double theta) {
  const float base = static_cast<float>(theta);
  std::vector<float> inverse_frequencies(rotary_dim / 2);
  for (std::size_t i = 0; i < inverse_frequencies.size(); ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(rotary_dim);
    inverse_frequencies[i] = 1.0f / std::pow(base, exponent);
  }
  return inverse_frequencies;
}

void rope_cos_sin(std::span<const float> inverse_frequencies, std::size_t position, std::span<float> cos,
                  std::span<float> sin) {
  const float p = static_cast<float>(position);
  for (std::size_t i = 0; i < inverse_frequencies.size(); ++i) {
    const float angle = p * inverse_frequencies[i];
    cos[i] = std::cos(angle);
    sin[i] = std::sin(angle);
  }
}

void apply_rope(std::span<float> head, std::span<const float> cos, std::span<const float> sin) {
  const std::size_t half = cos.size();
  for (std::size_t i = 0; i < half; ++i) {
    const float first = head[i];
    const float second = head[i + half];
    head[i] = first * cos[i] - second * sin[i];
    head[i + half] = second * cos[i] + first * sin[i];
  }
}

void softmax(std::span<float> scores) {
  float maximum = -INFINITY;
  for (float score : scores) maximum = std::fmax(maximum, score);
  float sum = 0.0f;
  for (float& score : scores) {
    score = std::exp(score - maximum);
    sum += score;
  }
  for (float& score : scores) score /= sum;
}

std::size_t argmax(std::span<const float> values) {
  std::size_t best = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) return i;
    if (values[i] > values[best]) best = i;
  }
  return best;
}

}  // namespace rvformer::engine
