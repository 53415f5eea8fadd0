// engine/fast_ops.cpp — see fast_ops.h. Compiled with -ffp-contract=off like ops.cpp.
#include "engine/fast_ops.h"

#include <bit>
#include <cmath>
#include <cstdint>

#include "engine/ops.h"

namespace rvformer::engine {

namespace {

// The smallest positive float in [low, high] for which `holds` is true, given that it is false at
// low, true at high and monotonic in between (positive floats are ordered like their bit patterns).
template <typename Predicate>
float first_positive_where(float low, float high, Predicate holds) {
  std::uint32_t false_bits = std::bit_cast<std::uint32_t>(low);
  std::uint32_t true_bits = std::bit_cast<std::uint32_t>(high);
  while (true_bits - false_bits > 1) {
    const std::uint32_t middle = false_bits + (true_bits - false_bits) / 2;
    if (holds(std::bit_cast<float>(middle))) {
      true_bits = middle;
    } else {
      false_bits = middle;
    }
  }
  return std::bit_cast<float>(true_bits);
}

SiluShortcuts find_silu_shortcuts() {
  return {
      .identity_from = first_positive_where(1.0f, 1000.0f, [](float x) { return 1.0f + std::exp(-x) == 1.0f; }),
      .minus_zero_from = first_positive_where(1.0f, 1000.0f, [](float x) { return std::isinf(std::exp(x)); }),
  };
}

}  // namespace

const SiluShortcuts& silu_shortcuts() {
  static const SiluShortcuts shortcuts = find_silu_shortcuts();
  return shortcuts;
}

float fast_silu(float x) {
  static const SiluShortcuts& shortcuts = silu_shortcuts();
  if (x >= shortcuts.identity_from || x == 0.0f) return x;
  if (x <= -shortcuts.minus_zero_from && x != -INFINITY) return -0.0f;
  return silu(x);
}

float inverse_rms_from_sum(float sum_of_squares, std::size_t n, float eps) {
  const float mean_square = sum_of_squares / static_cast<float>(n);
  return 1.0f / std::sqrt(mean_square + eps);
}

float l2_scale_from_sum(float sum_of_squares) { return 1.0f / std::sqrt(sum_of_squares + 1e-6f); }

}  // namespace rvformer::engine
