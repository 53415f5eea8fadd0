// chat/sampler.h — choosing the next token from the model's logits. Greedy (the highest logit,
// the lowest id on ties) unless a temperature is set; then the logits divided by the temperature
// go through a softmax restricted to the top-k tokens and then to the smallest set, most likely
// first, whose probability reaches top-p, and one token is drawn. The draws come from
// xoshiro256** seeded with SplitMix64 (both fully specified algorithms, no library
// distributions), so a seed gives the same reply on every machine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rvformer::chat {

using TokenId = std::uint32_t;

struct SamplingOptions {
  double temperature = 0;        // 0: greedy
  std::size_t top_k = 0;         // 0: all tokens
  double top_p = 1.0;            // 1: no nucleus cut
  std::uint64_t seed = 0;
  std::size_t vocabulary_limit = 0;  // non-zero: only ids below it (the base model's vocabulary)
};

class Random {
 public:
  explicit Random(std::uint64_t seed);
  std::uint64_t next();
  double uniform();  // in [0, 1), 53 random bits

  std::array<std::uint64_t, 4> state() const { return state_; }
  void set_state(const std::array<std::uint64_t, 4>& state) { state_ = state; }

 private:
  std::array<std::uint64_t, 4> state_;
};

class Sampler {
 public:
  // Throws rvformer::Error for a negative temperature, a top_p outside (0, 1].
  explicit Sampler(const SamplingOptions& options);

  // Throws rvformer::Error when no token is allowed (empty logits or a limit of them all).
  TokenId sample(std::span<const float> logits);

  const SamplingOptions& options() const { return options_; }
  Random& random() { return random_; }
  const Random& random() const { return random_; }

 private:
  TokenId greedy(std::span<const float> logits) const;

  SamplingOptions options_;
  Random random_;
};

}  // namespace rvformer::chat
