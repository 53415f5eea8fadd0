// engine/ops.h — the element-wise and per-vector operations of the Qwen3.5 forward pass, all in
// fp32 with a fixed operation order (docs/engine.md): the reference every faster path must match
// bit for bit. Sums run sequentially from +0 in index order.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace rvformer::engine {

// torch's fp32 formulas: sigmoid(x) = 1 / (1 + exp(-x)); silu(x) = x / (1 + exp(-x));
// softplus(x) = x when x > 20, else log1p(exp(x)) (F.softplus with beta 1, threshold 20).
float sigmoid(float x);
float silu(float x);
float softplus(float x);

// Σ x_i², sequentially from +0.
float sum_of_squares(std::span<const float> x);

// Zero-centred RMSNorm (input, post-attention, final, q and k norms):
// y_i = (x_i · r) · (1 + w_i) with r = 1 / sqrt(Σx²/n + eps).
void rms_norm_zero_centred(std::span<const float> x, std::span<const float> weight, float eps,
                           std::span<float> y);

// Gated RMSNorm of a Gated DeltaNet value head, with a plain weight:
// y_i = ((o_i · r) · w_i) · silu(z_i) with r = 1 / sqrt(Σo²/n + eps).
void gated_rms_norm(std::span<const float> o, std::span<const float> weight, std::span<const float> z, float eps,
                    std::span<float> y);

// Gated DeltaNet key/query normalisation, in place: x_i · (1 / sqrt(Σx² + 1e-6)); eps inside the
// root, over the sum.
void l2_normalise(std::span<float> x);

// 1/sqrt(n) rounded once to fp32 (as torch scales by the Python float `1 / n ** 0.5`):
// 128 gives 0.0883883461 (bits 0x3db504f3), 256 gives 0.0625.
float inverse_sqrt_scale(std::size_t n);

// RoPE: inv_freq_i = 1 / theta^((2i) / rotary_dim) in fp32 for i < rotary_dim/2 (theta rounded to
// fp32 first); angle_i = position · inv_freq_i; cos and sin in fp32.
std::vector<float> rope_inverse_frequencies(std::size_t rotary_dim, double theta);
void rope_cos_sin(std::span<const float> inverse_frequencies, std::size_t position, std::span<float> cos,
                  std::span<float> sin);
// Rotates the first 2·cos.size() dims of one head, half-split (rotate_half) layout:
// x_i ← x_i cos_i − x_{i+h} sin_i and x_{i+h} ← x_{i+h} cos_i + x_i sin_i for i < h.
void apply_rope(std::span<float> head, std::span<const float> cos, std::span<const float> sin);

// In place: p_i = exp(s_i − max) / Σ_j exp(s_j − max), the sum sequential from +0.
void softmax(std::span<float> scores);

// The index of the largest value, the lowest index on ties; a NaN counts as the largest (the first
// NaN wins), like torch.argmax.
std::size_t argmax(std::span<const float> values);

}  // namespace rvformer::engine
