// circuit/graph.h — the dependency structure of a circuit within one pass.
//
// Neurons that write a common signal form one MLP unit (they must share a layer). Units, banks and
// delays are the steps of a pass; a step may run once every signal it reads is complete. Delays are
// special: their output is last pass's value, so for evaluation it is ready at the start of a pass,
// while for placement into layers the delay must sit after its input and before its readers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "circuit/circuit.h"

namespace rvformer::circuit {

struct MlpUnit {
  std::vector<std::uint32_t> neurons;
  std::vector<SignalId> outputs;
};

struct Step {
  enum class Kind : std::uint8_t { Unit, Bank, Delay };
  Kind kind;
  std::uint32_t index;             // into units, banks or delays
  std::vector<SignalId> inputs;    // signals read
  std::vector<SignalId> outputs;   // signals written (a read signal may have several banks)
};

struct CircuitGraph {
  std::vector<MlpUnit> units;
  std::vector<Step> steps;
  std::vector<std::uint32_t> evaluation_order;  // delay outputs ready at pass start
  std::vector<std::uint32_t> placement_order;   // delays after their inputs
  std::vector<std::vector<std::uint32_t>> readers;  // per signal: steps that read it
};

// Builds and validates the graph; throws rvformer::Error for malformed circuits or cycles.
CircuitGraph analyze(const Circuit& circuit);

// Per signal, the MLP units on the longest path from the inputs to it (0 for inputs; banks and
// delays add none): the MLP layers its computation needs at least.
std::vector<int> mlp_stages(const Circuit& circuit, const CircuitGraph& graph);

// Per MLP stage, how many neurons of `unit` (and of its sub-units "unit.…"; every neuron when it is
// empty) the stage holds: the width the stages ask of the layers they land in.
std::map<int, std::size_t> neurons_by_stage(const Circuit& circuit, const std::string& unit = "");

}  // namespace rvformer::circuit
