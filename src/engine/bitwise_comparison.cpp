// engine/bitwise_comparison.cpp — see bitwise_comparison.h.
#include "engine/bitwise_comparison.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace rvformer::engine {

namespace {

std::uint32_t comparable_bits(float value) {
  return std::isnan(value) ? 0x7fc00000u : std::bit_cast<std::uint32_t>(value);
}

}  // namespace

std::optional<std::string> first_difference(std::span<const float> actual, std::span<const float> expected) {
  if (actual.size() != expected.size()) return fmt::format("sizes {} and {}", actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (comparable_bits(actual[i]) != comparable_bits(expected[i])) {
      return fmt::format("index {}: {} (0x{:08x}) instead of {} (0x{:08x})", i, actual[i],
                         std::bit_cast<std::uint32_t>(actual[i]), expected[i], std::bit_cast<std::uint32_t>(expected[i]));
    }
  }
  return std::nullopt;
}

std::optional<std::string> first_difference(const State& actual, const State& expected) {
  if (actual.position() != expected.position()) {
    return fmt::format("position {} instead of {}", actual.position(), expected.position());
  }
  for (std::size_t layer = 0; layer < expected.config().num_hidden_layers; ++layer) {
    if (actual.layer_position(layer) != expected.layer_position(layer)) {
      return fmt::format("layer {} has seen {} tokens instead of {}", layer, actual.layer_position(layer),
                         expected.layer_position(layer));
    }
    std::vector<std::pair<const char*, std::pair<std::span<const float>, std::span<const float>>>> arrays;
    if (expected.config().layer_types[layer] == LayerType::linear_attention) {
      arrays = {{"conv window", {actual.gated_delta_net(layer).conv, expected.gated_delta_net(layer).conv}},
                {"recurrent state", {actual.gated_delta_net(layer).recurrent, expected.gated_delta_net(layer).recurrent}}};
    } else {
      arrays = {{"keys", {actual.attention(layer).keys, expected.attention(layer).keys}},
                {"values", {actual.attention(layer).values, expected.attention(layer).values}}};
    }
    for (const auto& [what, pair] : arrays) {
      if (auto difference = first_difference(pair.first, pair.second)) {
        return fmt::format("layer {} {}: {}", layer, what, *difference);
      }
    }
  }
  return std::nullopt;
}

}  // namespace rvformer::engine
