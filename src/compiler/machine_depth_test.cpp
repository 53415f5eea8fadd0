// The compiled machines' depth against their layer budgets: every compiled layer is one more that a
// merged chat model runs for each text token, so the computer is to take at most 12 and the
// computer with the vector unit at most 16 (docs/vector-unit.md, "What the plan has to respect").
#include <gtest/gtest.h>

#include "circuit/graph.h"
#include "compiler/placement.h"
#include "cpu/machine.h"

namespace rvformer::compiler {
namespace {

int layers_of(const program::MachineSpec& spec) {
  auto machine = cpu::build_machine(spec);
  return place(machine->circuit, circuit::analyze(machine->circuit)).num_layers;
}

TEST(MachineDepth, TheComputerPlacesIntoAtMost12Layers) { EXPECT_LE(layers_of(program::kDefaultMachine), 12); }

// The goal is 16 layers: the matrix product's eleven stages after its weights' read in layer 6 and
// the gate that puts its output in the token take it to 19, until its operands are read before the
// code ROM (docs/vector-unit.md, "Decisions still open").
TEST(MachineDepth, TheComputerWithTheVectorUnitPlacesIntoAtMost19Layers) {
  EXPECT_LE(layers_of(program::kVectorMachine), 19);
}

}  // namespace
}  // namespace rvformer::compiler
