// vector_arith_cost — what one element of each vector unit operation (or one pass of a reduction) costs
// in the circuit: the MLP stages and the neurons of each stage (docs/vector-unit.md, "The arithmetic, built").
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <functional>
#include <map>

#include "circuit/graph.h"
#include "circuit/vector_arith.h"
#include "circuit/vector_attention.h"
#include "circuit/vector_elementwise.h"
#include "circuit/vector_reduce.h"

extern "C" {
#include "story_ops.h"
}

namespace {

using namespace rvformer;
using circuit::Bits;

Bits inputs(circuit::Circuit& c, const std::string& name, int count) {
  Bits bits;
  for (int i = 0; i < count; ++i) bits.push_back(c.add_input(circuit::indexed(name, i)));
  return bits;
}

// Builds one operation into a circuit of its own (its operands inputs) and prints its cost.
void report(const std::string& name, const std::function<std::vector<Bits>(circuit::Circuit&, circuit::Gates&, circuit::SignalId)>& build) {
  circuit::Circuit c;
  const circuit::SignalId enable = c.add_input("enable");
  circuit::Gates g(c, "op");
  for (const Bits& result : build(c, g, enable))
    for (circuit::SignalId bit : result) c.mark_output(bit);
  const std::map<int, std::size_t> neurons = circuit::neurons_by_stage(c);
  fmt::print("{}: {} stages, {} neurons\n", name, neurons.rbegin()->first, c.neurons().size());
  for (auto [s, count] : neurons) fmt::print("  stage {:2}: {:6} neurons\n", s, count);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Stages and neurons of one element of each vector unit operation in the circuit"};
  std::vector<int> columns{8, 64, 172};
  app.add_option("--columns", columns, "the row product's row lengths (default 8 64 172)")->check(CLI::Range(1, 512));
  CLI11_PARSE(app, argc, argv);

  for (int n : columns)
    report(fmt::format("vu.matvec16 element, {} columns of 13-bit activations", n), [n](auto& c, auto& g, auto enable) {
      circuit::RowOperands row;
      for (int j = 0; j < n; ++j) {
        row.weights.push_back(inputs(c, circuit::indexed("w", j), 8));
        row.activations.push_back(inputs(c, circuit::indexed("x", j), 13));
      }
      row.multiplier = inputs(c, "m", 8);
      row.shift = inputs(c, "shift", 6);
      return std::vector<Bits>{circuit::requantised_row_product(g, row, enable)};
    });
  report("vu.matvec16 element, 64 columns from AM's lanes (as the machine reads them)", [](auto& c, auto& g, auto enable) {
    circuit::RowOperands row;
    for (int j = 0; j < 64; ++j) {
      row.weights.push_back(inputs(c, circuit::indexed("w", j), 8));
      row.activation_lanes.push_back(inputs(c, circuit::indexed("x", j), 7));
    }
    row.multiplier = inputs(c, "m", 8);
    row.shift = inputs(c, "shift", 6);
    return std::vector<Bits>{circuit::requantised_row_product(g, row, enable)};
  });
  report("vu.add16 element", [](auto& c, auto& g, auto enable) {
    return std::vector<Bits>{circuit::add16_element(g, inputs(c, "x", 13), inputs(c, "y", 13), enable)};
  });
  report("vu.mul16 element", [](auto& c, auto& g, auto enable) {
    return std::vector<Bits>{circuit::mul16_element(g, inputs(c, "a", 13), inputs(c, "b", 13), inputs(c, "shift", 5), enable)};
  });
  report("vu.silu element", [](auto& c, auto& g, auto enable) {
    const std::vector<int> table(STORY_SILU, STORY_SILU + STORY_SILU_POINTS);
    return std::vector<Bits>{circuit::silu_element(g, inputs(c, "h", 13), table, enable)};
  });
  report("vu.rmsnorm element, given the scale", [](auto& c, auto& g, auto enable) {
    const std::vector<int> table(STORY_RSQRT, STORY_RSQRT + STORY_RSQRT_ENTRIES);
    return std::vector<Bits>{
        circuit::rmsnorm_element(g, inputs(c, "x", 13), inputs(c, "entry", 8), inputs(c, "half_e", 4), table, enable)};
  });
  report("vu.rmsnorm scale, 64 elements of 13 bits", [](auto& c, auto& g, auto enable) {
    circuit::NormScaleOperands x;
    for (int i = 0; i < 64; ++i) x.elements.push_back(inputs(c, circuit::indexed("x", i), 13));
    x.log2_length = inputs(c, "log2_length_is", 10);
    x.epsilon = inputs(c, "epsilon", 32);
    return std::vector<Bits>{circuit::rmsnorm_scale(g, x, enable)};
  });
  const auto argmax_line = [](auto& c) {
    circuit::ArgmaxLine line;
    for (int a = 0; a < 32; ++a) line.values.push_back(inputs(c, circuit::indexed("x", a), 13));
    line.count = inputs(c, "count_is", 32);
    return line;
  };
  report("vu.argmax, a pass of the running maximum over a line of 32", [&](auto& c, auto& g, auto enable) {
    return std::vector<Bits>{circuit::running_maximum(g, argmax_line(c), inputs(c, "previous", 13), enable)};
  });
  report("vu.argmax, a pass of the first index over a line of 32", [&](auto& c, auto& g, auto enable) {
    return std::vector<Bits>{circuit::first_index_of(g, argmax_line(c), inputs(c, "maximum", 13), inputs(c, "before", 13),
                                                     inputs(c, "number", 7), enable)};
  });
  report("vu.attend, the passes over a block of 32 positions of a head of 8 (anchor, mass, sum, element)",
         [&](auto& c, auto& g, auto enable) {
    circuit::AttentionBlock block;
    for (int i = 0; i < 8; ++i) block.query.push_back(inputs(c, circuit::indexed("q", i), 13));
    circuit::AttentionPassOperands in;
    for (int t = 0; t < 32; ++t) {
      block.keys.emplace_back();
      for (int i = 0; i < 8; ++i) block.keys.back().push_back(inputs(c, circuit::indexed(circuit::indexed("k", t), i), 13));
      in.values.push_back(inputs(c, circuit::indexed("v", t), 13));
    }
    block.count = inputs(c, "count_is", 32);
    in.anchor = inputs(c, "anchor", 12), in.level = inputs(c, "level", 7), in.before = inputs(c, "before", 13);
    in.first_block = inputs(c, "first_block", 1)[0];
    const Bits kind = inputs(c, "kind_is", 4);
    std::vector<int> weights, mass_weights;
    for (int k = 0; story_pow2_eighths(80 - k) > 0; ++k) weights.push_back(static_cast<int>(story_pow2_eighths(80 - k)));
    for (int k = 0; story_pow2_eighths(56 - k) > 0; ++k) mass_weights.push_back(static_cast<int>(story_pow2_eighths(56 - k)));
    std::vector<std::int64_t> back;
    for (int m = 0; m < 128; ++m) back.push_back(story_pow2_eighths(56 + m));
    const circuit::AttentionPassResults r = circuit::attention_block_passes(
        g, block, in, {weights, mass_weights, back}, {kind[0], kind[1], kind[2], kind[3]}, enable);
    return std::vector<Bits>{r.anchor, r.level, r.sum, r.element};
  });
  report("vu.attend, an output pass", [](auto& c, auto& g, auto enable) {
    const std::vector<int> reciprocals(std::begin(STORY_RECIP), std::end(STORY_RECIP));
    return std::vector<Bits>{circuit::attention_output(g, inputs(c, "running", 13), inputs(c, "sum", 13), reciprocals, enable)};
  });
  report("vu.rope pair", [](auto& c, auto& g, auto enable) {
    const circuit::RopeOperands x{inputs(c, "a", 13), inputs(c, "b", 13), inputs(c, "cos", 16), inputs(c, "sin", 16)};
    const std::array<Bits, 2> pair = circuit::rope_pair(g, x, enable);
    return std::vector<Bits>{pair[0], pair[1]};
  });
  return 0;
}
