// row_product_cost — what one element of vu.matvec16 costs in the circuit: the MLP stages and the
// neurons of each stage of circuit::requantised_row_product for rows of N columns (docs/vector-unit.md,
// "The arithmetic, built").
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <map>

#include "circuit/graph.h"
#include "circuit/vector_arith.h"

namespace {

using namespace rvformer;

circuit::Bits inputs(circuit::Circuit& c, const std::string& name, int count) {
  circuit::Bits bits;
  for (int i = 0; i < count; ++i) bits.push_back(c.add_input(name + "[" + std::to_string(i) + "]"));
  return bits;
}

void report(int columns, int activation_bits) {
  circuit::Circuit c;
  circuit::RowOperands row;
  for (int j = 0; j < columns; ++j) {
    row.weights.push_back(inputs(c, "w" + std::to_string(j), 8));
    row.activations.push_back(inputs(c, "x" + std::to_string(j), activation_bits));
  }
  row.multiplier = inputs(c, "m", 8);
  row.shift = inputs(c, "shift_is", 62);
  const circuit::SignalId enable = c.add_input("enable");
  for (circuit::SignalId bit : circuit::requantised_row_product(circuit::Gates(c, "row"), row, enable)) c.mark_output(bit);

  const circuit::CircuitGraph graph = circuit::analyze(c);
  const std::vector<int> stage = circuit::mlp_stages(c, graph);
  std::map<int, std::size_t> neurons;
  for (const circuit::Step& step : graph.steps)
    if (step.kind == circuit::Step::Kind::Unit) neurons[stage[step.outputs.front()]] += graph.units[step.index].neurons.size();
  fmt::print("{} columns of {}-bit activations: {} stages, {} neurons\n", columns, activation_bits, neurons.rbegin()->first,
             c.neurons().size());
  for (auto [s, count] : neurons) fmt::print("  stage {:2}: {:6} neurons\n", s, count);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Stages and neurons of one requantised row product in the circuit"};
  std::vector<int> columns{8, 64, 172};
  int activation_bits = 13;
  app.add_option("--columns", columns, "row lengths (default 8 64 172)")->check(CLI::Range(1, 512));
  app.add_option("--activation-bits", activation_bits, "bits of an activation (default 13)")->check(CLI::Range(2, 16));
  CLI11_PARSE(app, argc, argv);
  for (int n : columns) report(n, activation_bits);
  return 0;
}
