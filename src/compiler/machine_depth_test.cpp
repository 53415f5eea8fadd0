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

TEST(MachineDepth, TheComputerWithTheVectorUnitPlacesIntoAtMost16Layers) {
  EXPECT_LE(layers_of(program::kVectorMachine), 16);
}

}  // namespace
}  // namespace rvformer::compiler
