// engine/fast_ops.h — the pieces of ops.h that the fast executor (fast_model.h) evaluates in its own
// way, each bit-identical to ops.h for every input:
//
// * fast_silu skips exp where the result is known. For x ≥ identity_from, exp(−x) is so small that
//   1 + exp(−x) rounds to 1, so silu(x) = x / 1 = x; for finite x ≤ −minus_zero_from, exp(−x)
//   overflows to +∞ and silu(x) = x / ∞ = −0; silu(±0) = ±0 / 2 = ±0. Both bounds are found at start-up
//   by asking the host libm (the one silu() uses), which is monotonic (glibc's expf is correctly
//   rounded), so the predicate holds on the whole range once it holds at the bound.
// * The norm scales from a sum of squares that the caller accumulated over the non-zero entries only
//   (a ±0 entry adds +0 to a sum that never is −0, so the sum is the reference's).
#pragma once

#include <cstddef>

namespace rvformer::engine {

struct SiluShortcuts {
  float identity_from;    // silu(x) = x for every x ≥ this
  float minus_zero_from;  // silu(x) = −0 for every finite x ≤ −this
};
const SiluShortcuts& silu_shortcuts();

float fast_silu(float x);

// RMSNorm's r = 1 / sqrt(sum_of_squares / n + eps), as ops.cpp computes it.
float inverse_rms_from_sum(float sum_of_squares, std::size_t n, float eps);
// l2_normalise's scale 1 / sqrt(sum_of_squares + 1e-6), as ops.cpp computes it.
float l2_scale_from_sum(float sum_of_squares);

}  // namespace rvformer::engine
