// chat/sampler.cpp — see sampler.h.
#include "chat/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "support/error.h"

namespace rvformer::chat {

namespace {

std::uint64_t rotate_left(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t split_mix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// NaN logits never win.
float usable(float logit) { return std::isnan(logit) ? -std::numeric_limits<float>::infinity() : logit; }

}  // namespace

Random::Random(std::uint64_t seed) {
  for (std::uint64_t& word : state_) word = split_mix(seed);
}

std::uint64_t Random::next() {
  const std::uint64_t result = rotate_left(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotate_left(state_[3], 45);
  return result;
}

double Random::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

Sampler::Sampler(const SamplingOptions& options) : options_(options), random_(options.seed) {
  if (!(options.temperature >= 0)) fail("the temperature must be 0 (greedy) or positive, not {}", options.temperature);
  if (!(options.top_p > 0 && options.top_p <= 1)) fail("top-p must be in (0, 1], not {}", options.top_p);
}

TokenId Sampler::greedy(std::span<const float> logits) const {
  std::size_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i) {
    if (usable(logits[i]) > usable(logits[best])) best = i;
  }
  return static_cast<TokenId>(best);
}

TokenId Sampler::sample(std::span<const float> logits) {
  if (options_.vocabulary_limit != 0) logits = logits.first(std::min(logits.size(), options_.vocabulary_limit));
  if (logits.empty()) fail("no token to choose from: the model returned no logits, or the vocabulary limit allows none");
  if (options_.temperature == 0) return greedy(logits);

  // Most likely first; ties by id, so the order does not depend on the sort.
  std::vector<TokenId> order(logits.size());
  std::iota(order.begin(), order.end(), TokenId{0});
  auto more_likely = [&](TokenId a, TokenId b) {
    const float x = usable(logits[a]);
    const float y = usable(logits[b]);
    return x > y || (x == y && a < b);
  };
  const std::size_t keep = options_.top_k ? std::min(options_.top_k, order.size()) : order.size();
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(), more_likely);
  order.resize(keep);

  const double top = usable(logits[order.front()]);
  if (!std::isfinite(top)) return order.front();
  std::vector<double> weights;
  double total = 0;
  for (TokenId id : order) {
    weights.push_back(std::exp((usable(logits[id]) - top) / options_.temperature));
    total += weights.back();
  }
  if (options_.top_p < 1) {
    double cumulative = 0;
    std::size_t n = 0;
    while (n < weights.size() && cumulative < options_.top_p * total) cumulative += weights[n++];
    weights.resize(std::max<std::size_t>(n, 1));
    total = std::accumulate(weights.begin(), weights.end(), 0.0);
  }
  const double u = random_.uniform() * total;
  double cumulative = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    cumulative += weights[i];
    if (u < cumulative) return order[i];
  }
  return order[weights.size() - 1];
}

}  // namespace rvformer::chat
