// circuit/row_product_testing.h — a circuit running requantised_row_product on a list of cases, one
// token each, and the cases with their expected results from the story program's reference
// (story_requant13), for the evaluator's and the compiled weights' tests.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "circuit/vector_arith.h"

extern "C" {
#include "story_ops.h"
}

namespace rvformer::circuit {

struct RowCase {
  std::vector<int> w;  // int8 weights
  std::vector<int> x;  // activations of x_bits
  int multiplier = 0, shift = 1;
  int expected() const {
    std::int64_t acc = 0;
    for (std::size_t j = 0; j < w.size(); ++j) acc += static_cast<std::int64_t>(w[j]) * x[j];
    return story_requant13(acc, StoryRequant{multiplier, shift});
  }
};

inline constexpr int kRowShifts = 62;  // the shifts a requantisation pair may hold: 1..62

// Edge cases (the largest sums of both signs, zero, rounding ties, every multiplier and shift
// extreme) and random rows whose shift mostly leaves the result unsaturated.
inline std::vector<RowCase> row_cases(int columns, int x_bits, int random_count, unsigned seed) {
  const int x_min = -(1 << (x_bits - 1)), x_max = (1 << (x_bits - 1)) - 1;
  std::vector<RowCase> cases;
  auto uniform = [&](int w, int x, int m, int s) {
    cases.push_back({std::vector<int>(columns, w), std::vector<int>(columns, x), m, s});
  };
  for (int s : {1, 12, 20, 30, 37, 62})
    for (int m : {0, 1, 128, 255}) {
      uniform(-128, x_min, m, s);
      uniform(-128, x_max, m, s);
      uniform(127, x_max, m, s);
      uniform(0, x_max, m, s);
    }
  for (int s = 1; s < std::min(x_bits, 13); ++s)  // ties: m·acc = ±2^(s−1), rounding up and to zero
    for (int sign : {1, -1}) {
      RowCase c{std::vector<int>(columns, 0), std::vector<int>(columns, 0), 1, s};
      c.w[columns - 1] = sign;
      c.x[columns - 1] = 1 << (s - 1);
      cases.push_back(c);
    }
  std::mt19937 random(seed);
  auto pick = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  for (int i = 0; i < random_count; ++i) {
    RowCase c;
    const int span = pick(0, x_bits - 1);  // activations of every magnitude
    for (int j = 0; j < columns; ++j) {
      c.w.push_back(pick(-128, 127));
      c.x.push_back(std::clamp(pick(-(1 << span), (1 << span) - 1), x_min, x_max));
    }
    c.multiplier = pick(0, 255);
    c.shift = 1;
    std::int64_t acc = 0;
    for (int j = 0; j < columns; ++j) acc += static_cast<std::int64_t>(c.w[j]) * c.x[j];
    const int magnitude = std::bit_width(static_cast<std::uint64_t>(std::abs(acc * c.multiplier)));
    c.shift = i % 8 == 0 ? pick(1, kRowShifts) : std::clamp(magnitude - pick(0, 14), 1, kRowShifts);
    cases.push_back(c);
  }
  return cases;
}

// Token CASE(i) feeds case i; the result leaves as one-hots of its bits 0–3, 4–7 and 8–12, so that
// RESULT(v) scores 3 for the right value v and at most 2 for any other. OFF feeds nothing, the
// enable included.
struct RowProductMachine {
  Circuit c;
  std::vector<RowCase> cases;
  RowOperands row;
  SignalId enable = 0;
  Bits out;
  std::vector<std::vector<SignalId>> group_is;

  RowProductMachine(std::vector<RowCase> row_cases, int x_bits) : cases(std::move(row_cases)) {
    const int columns = static_cast<int>(cases.front().w.size());
    auto bits = [&](const std::string& name, int count) {
      Bits b;
      for (int i = 0; i < count; ++i) b.push_back(c.add_input(name + "[" + std::to_string(i) + "]"));
      return b;
    };
    for (int j = 0; j < columns; ++j) {
      row.weights.push_back(bits("w" + std::to_string(j), 8));
      row.activations.push_back(bits("x" + std::to_string(j), x_bits));
    }
    row.multiplier = bits("m", 8);
    row.shift = bits("shift_is", kRowShifts);
    enable = c.add_input("enable");
    Gates g(c, "row");
    out = requantised_row_product(g, row, enable);
    for (auto [low, count] : {std::pair{0, 4}, {4, 4}, {8, 5}}) {
      group_is.push_back(decode_one_hot(g, "group" + std::to_string(low), Bits(out.begin() + low, out.begin() + low + count)));
      for (SignalId s : group_is.back()) c.mark_output(s);
    }
    c.add_token_family({"CASE", static_cast<std::uint32_t>(cases.size()), [this, x_bits](std::uint32_t i, const auto& set) {
                          const RowCase& k = cases[i];
                          for (std::size_t j = 0; j < k.w.size(); ++j) {
                            for (int b = 0; b < 8; ++b) set(row.weights[j][b], (k.w[j] >> b) & 1);
                            for (int b = 0; b < x_bits; ++b) set(row.activations[j][b], (k.x[j] >> b) & 1);
                          }
                          for (int b = 0; b < 8; ++b) set(row.multiplier[b], (k.multiplier >> b) & 1);
                          set(row.shift[k.shift - 1], 1);
                          set(enable, 1);
                        }, nullptr});
    c.add_token_family({"RESULT", 1u << 13, nullptr, [this](std::uint32_t v, const auto& set) {
                          set(group_is[0][v & 15], 1);
                          set(group_is[1][(v >> 4) & 15], 1);
                          set(group_is[2][v >> 8], 1);
                        }});
    c.add_token_family({"OFF", 1, nullptr, nullptr});
  }

  std::uint32_t expected_token(std::uint32_t i) const {
    return c.token_id("RESULT", static_cast<std::uint32_t>(cases[i].expected()) & 0x1FFF);
  }
};

}  // namespace rvformer::circuit
