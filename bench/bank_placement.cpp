// bank_placement — how deep a machine gets when a unit adds memory banks ahead of the CPU's: the
// default machine plus N banks, each written and read at a row whose address comes from the token
// (as a unit's addresses latched in layer 0 would), holding stored levels up to L, whose reads feed a
// chain of D MLP steps (the unit's arithmetic). Prints the layers placement needs and the banks of
// each layer (docs/vector-unit.md, "In the weights").
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <map>

#include "circuit/gates.h"
#include "circuit/graph.h"
#include "compiler/placement.h"
#include "cpu/machine.h"

namespace {

using namespace rvformer;
using circuit::F;

// Adds `banks` banks at token-given rows and a chain of `depth` steps after their reads.
void add_unit(circuit::Circuit& c, int banks, int depth, double level) {
  std::vector<circuit::SignalId> row;
  for (int i = 0; i < 7; ++i) row.push_back(c.add_input("unit.row" + std::to_string(i)));
  const circuit::SignalId writing = c.add_input("unit.write"), reading = c.add_input("unit.read");
  circuit::Gates g(c, "unit");
  const circuit::SignalId stored = c.add_stored_levels_signal("unit.level", level);
  g.add_relu(stored, F(writing), level);
  circuit::Form reads;
  for (int b = 0; b < banks; ++b) {
    circuit::Bank bank("unit.bank" + std::to_string(b), circuit::kBankRows);
    bank.has_write = bank.has_read = true;
    bank.write.row = {.one_hot = {}, .binary = row, .match = {}, .conditions = {F(writing)}};
    bank.write.beta[0] = F(writing);
    bank.write.lanes[0] = {F(stored)};
    bank.read.row = {.one_hot = {}, .binary = row, .match = {}, .conditions = {F(reading)}};
    const circuit::SignalId read = c.add_read_signal("unit.read" + std::to_string(b), 0, level);
    bank.read.lanes[0] = {{{read, 1}}};
    c.add_bank(std::move(bank));
    reads += F(read);
  }
  circuit::SignalId step = g.relu("step0", reads, banks * level);
  for (int d = 1; d < depth; ++d) step = g.relu("step" + std::to_string(d), F(step), banks * level);
  c.mark_output(step);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Layers the default machine needs with a unit's banks read ahead of its own"};
  int banks = 42, depth = 10;
  double level = 16384;
  app.add_option("--banks", banks, "the unit's banks (default 42)")->check(CLI::Range(0, 240));
  app.add_option("--depth", depth, "MLP steps after their reads (default 10)")->check(CLI::Range(1, 30));
  app.add_option("--level", level, "largest stored level a lane holds: 4, 64 or 16384 for two, three or four bits")
      ->check(CLI::IsMember({4.0, 64.0, 16384.0}));
  CLI11_PARSE(app, argc, argv);

  auto machine = cpu::build_machine();
  circuit::Circuit& c = machine->circuit;
  const std::size_t cpu_banks = c.banks().size();
  add_unit(c, banks, depth, level);
  const compiler::Placement placement = compiler::place(c, circuit::analyze(c));
  std::map<int, int> cpu_per_layer, unit_per_layer;
  for (std::size_t i = 0; i < c.banks().size(); ++i)
    (i < cpu_banks ? cpu_per_layer : unit_per_layer)[placement.bank_head[i].layer]++;
  fmt::print("{} banks of stored levels up to {}, {} steps after them: {} layers (MLP width {})\n", banks, level,
             depth, placement.num_layers, placement.intermediate_size);
  for (int layer = 0; layer < placement.num_layers; ++layer)
    fmt::print("  layer {:2}: {:2} CPU banks, {:2} unit banks\n", layer, cpu_per_layer[layer], unit_per_layer[layer]);
}
