// circuit/graph.cpp — see graph.h.
#include "circuit/graph.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>

#include "support/error.h"

namespace rvformer::circuit {
namespace {

void append_inputs(const LinearForm& form, std::vector<SignalId>& out) {
  for (const Term& t : form) out.push_back(t.signal);
}

// Neurons that write a common signal share a unit. Output signals do not join units: several
// units (in different layers) may add into one, so a neuron that writes only outputs belongs to
// the unit of its name.
std::vector<MlpUnit> group_units(const Circuit& circuit) {
  const auto& signals = circuit.signals();
  const auto& neurons = circuit.neurons();
  std::vector<bool> output(signals.size(), false);
  for (SignalId s : circuit.outputs()) output[s] = true;
  std::vector<SignalId> parent(signals.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](SignalId s) {
    while (parent[s] != s) s = parent[s] = parent[parent[s]];
    return s;
  };
  auto first_internal = [&](const Neuron& neuron) -> std::optional<SignalId> {
    for (const Term& term : neuron.down)
      if (!output[term.signal]) return term.signal;
    return std::nullopt;
  };
  for (const Neuron& neuron : neurons) {
    if (neuron.down.empty()) fail("circuit: a neuron of unit {} writes nothing", neuron.unit);
    std::optional<SignalId> anchor = first_internal(neuron);
    if (!anchor) continue;
    for (const Term& term : neuron.down)
      if (!output[term.signal]) parent[find(term.signal)] = find(*anchor);
  }
  std::map<SignalId, std::size_t> unit_of_root;
  std::map<std::string, std::size_t> unit_of_name;
  std::vector<MlpUnit> units;
  auto unit_index = [&](auto& map, const auto& key) {
    auto [it, inserted] = map.try_emplace(key, units.size());
    if (inserted) units.emplace_back();
    return it->second;
  };
  for (std::uint32_t n = 0; n < neurons.size(); ++n) {
    std::optional<SignalId> anchor = first_internal(neurons[n]);
    std::size_t unit = anchor ? unit_index(unit_of_root, find(*anchor)) : unit_index(unit_of_name, neurons[n].unit);
    units[unit].neurons.push_back(n);
    for (const Term& term : neurons[n].down)
      if (output[term.signal] && std::find(units[unit].outputs.begin(), units[unit].outputs.end(), term.signal) == units[unit].outputs.end())
        units[unit].outputs.push_back(term.signal);
  }
  for (SignalId s = 0; s < signals.size(); ++s) {
    if (signals[s].source != SignalSource::Neurons) continue;
    if (output[s]) continue;
    auto it = unit_of_root.find(find(s));
    if (it == unit_of_root.end()) fail("circuit: signal {} has no neuron writing it", signals[s].name);
    units[it->second].outputs.push_back(s);
  }
  for (SignalId s : circuit.outputs()) {
    if (signals[s].source != SignalSource::Neurons) continue;
    bool written = false;
    for (const MlpUnit& unit : units) written |= std::find(unit.outputs.begin(), unit.outputs.end(), s) != unit.outputs.end();
    if (!written) fail("circuit: signal {} has no neuron writing it", signals[s].name);
  }
  return units;
}

void append_select(const Bank& bank, const RowSelect& select, const char* port, std::vector<SignalId>& out) {
  bool one_hot = !select.one_hot.empty();
  if (one_hot == !select.binary.empty())
    fail("circuit: the {} row select of bank {} needs either a one-hot or a binary row", port, bank.name);
  if (one_hot && static_cast<int>(select.one_hot.size()) != bank.rows)
    fail("circuit: bank {} {} row select has {} signals for {} rows", bank.name, port, select.one_hot.size(), bank.rows);
  if (!one_hot && (1 << select.binary.size()) < bank.rows)
    fail("circuit: bank {} {} row address of {} bits cannot reach {} rows", bank.name, port, select.binary.size(), bank.rows);
  out.insert(out.end(), select.one_hot.begin(), select.one_hot.end());
  out.insert(out.end(), select.binary.begin(), select.binary.end());
  for (const Literal& l : select.match) out.push_back(l.signal);
  for (const LinearForm& c : select.conditions) append_inputs(c, out);
}

Step bank_step(const Circuit& circuit, std::uint32_t b) {
  const Bank& bank = circuit.banks()[b];
  Step step{Step::Kind::Bank, b, {}, {}};
  if (bank.has_write) {
    const BankWrite& w = bank.write;
    append_select(bank, w.row, "write", step.inputs);
    for (int h = 0; h < kBankHalves; ++h) {
      if (static_cast<int>(w.lanes[h].size()) > kBankLanesPerHalf)
        fail("circuit: bank {} half {} has {} lanes (at most {})", bank.name, h, w.lanes[h].size(), kBankLanesPerHalf);
      append_inputs(w.beta[h], step.inputs);
      for (const LinearForm& lane : w.lanes[h]) append_inputs(lane, step.inputs);
    }
  }
  if (bank.has_read) {
    const BankRead& r = bank.read;
    append_select(bank, r.row, "read", step.inputs);
    for (int h = 0; h < kBankHalves; ++h) {
      if (static_cast<int>(r.lanes[h].size()) > kBankLanesPerHalf)
        fail("circuit: bank {} reads {} lanes of half {}", bank.name, r.lanes[h].size(), h);
      for (const auto& targets : r.lanes[h])
        for (const Term& t : targets) {
          if (circuit.signal(t.signal).source != SignalSource::BankRead)
            fail("circuit: bank {} reads into {}, which is not a read signal", bank.name, circuit.signal(t.signal).name);
          step.outputs.push_back(t.signal);
        }
    }
  }
  return step;
}

// Kahn's algorithm over steps; `delay_inputs` decides whether delays wait for their input.
// The longest chain of steps (within a pass) that reads each step's outputs, the step included.
std::vector<int> chain_lengths(const CircuitGraph& graph, const std::vector<std::uint32_t>& order) {
  std::vector<int> chain(graph.steps.size(), 1);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Step& step = graph.steps[*it];
    if (step.kind == Step::Kind::Delay) continue;  // its readers are in the next pass
    for (SignalId s : step.outputs)
      for (std::uint32_t reader : graph.readers[s]) chain[*it] = std::max(chain[*it], chain[reader] + 1);
  }
  return chain;
}

std::vector<std::uint32_t> order_steps(const Circuit& circuit, const CircuitGraph& graph, bool delay_inputs, const std::vector<int>& chain) {
  const auto& signals = circuit.signals();
  std::vector<int> pending(signals.size(), 0);  // producers not yet run
  for (const Step& step : graph.steps)
    for (SignalId s : step.outputs) ++pending[s];
  std::vector<int> missing(graph.steps.size(), 0);
  std::vector<std::vector<std::uint32_t>> waiting(signals.size());
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i) {
    const Step& step = graph.steps[i];
    if (step.kind == Step::Kind::Delay && !delay_inputs) continue;
    for (SignalId s : step.inputs) {
      waiting[s].push_back(i);
      ++missing[i];
    }
  }
  // Among the steps whose inputs are complete, the one with the longest chain after it goes first
  // (ties: the last one made ready), so that placement gives the scarce key heads of early layers
  // to the banks on the longest paths.
  std::vector<std::pair<int, std::uint32_t>> ready;  // (chain, arrival) heap
  std::vector<std::uint32_t> arrival_step, order;
  auto push = [&](std::uint32_t step) {
    ready.emplace_back(chain[step], static_cast<std::uint32_t>(arrival_step.size()));
    arrival_step.push_back(step);
    std::push_heap(ready.begin(), ready.end());
  };
  auto complete = [&](SignalId s) {
    for (std::uint32_t w : waiting[s])
      if (--missing[w] == 0) push(w);
  };
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    if (missing[i] == 0) push(i);
  for (SignalId s = 0; s < signals.size(); ++s)
    if (pending[s] == 0) complete(s);
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end());
    std::uint32_t i = arrival_step[ready.back().second];
    ready.pop_back();
    order.push_back(i);
    for (SignalId s : graph.steps[i].outputs)
      if (--pending[s] == 0) complete(s);
  }
  if (order.size() != graph.steps.size()) {
    for (SignalId s = 0; s < signals.size(); ++s)
      if (pending[s] > 0)
        fail("circuit: {} {}", signals[s].name,
             delay_inputs ? "is needed through a delay before it is computed in the same pass"
                          : "depends on itself within one pass");
    fail("circuit: the steps of a pass form a cycle");
  }
  return order;
}

}  // namespace

CircuitGraph analyze(const Circuit& circuit) {
  CircuitGraph graph;
  graph.units = group_units(circuit);
  const auto& neurons = circuit.neurons();
  for (std::uint32_t u = 0; u < graph.units.size(); ++u) {
    Step step{Step::Kind::Unit, u, {}, graph.units[u].outputs};
    for (std::uint32_t n : graph.units[u].neurons) {
      append_inputs(neurons[n].gate, step.inputs);
      append_inputs(neurons[n].up, step.inputs);
    }
    graph.steps.push_back(std::move(step));
  }
  for (std::uint32_t b = 0; b < circuit.banks().size(); ++b) graph.steps.push_back(bank_step(circuit, b));
  for (std::uint32_t d = 0; d < circuit.delays().size(); ++d) {
    const Delay& delay = circuit.delays()[d];
    graph.steps.push_back(Step{Step::Kind::Delay, d, {delay.input}, {delay.output}});
  }
  std::vector<bool> filled(circuit.signals().size(), false);
  for (const Step& step : graph.steps)
    for (SignalId out : step.outputs) filled[out] = true;
  for (SignalId s = 0; s < circuit.signals().size(); ++s)
    if (circuit.signal(s).source == SignalSource::BankRead && !filled[s])
      fail("circuit: read signal {} is filled by no bank", circuit.signal(s).name);
  graph.readers.assign(circuit.signals().size(), {});
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    for (SignalId s : graph.steps[i].inputs) graph.readers[s].push_back(i);
  std::vector<int> no_priority(graph.steps.size(), 0);
  graph.evaluation_order = order_steps(circuit, graph, false, no_priority);
  graph.placement_order = order_steps(circuit, graph, true, chain_lengths(graph, graph.evaluation_order));
  return graph;
}

std::vector<int> mlp_stages(const Circuit& circuit, const CircuitGraph& graph) {
  std::vector<int> stage(circuit.signals().size(), 0);
  for (std::uint32_t index : graph.placement_order) {
    const Step& step = graph.steps[index];
    int ready = 0;
    for (SignalId s : step.inputs) ready = std::max(ready, stage[s]);
    const int done = ready + (step.kind == Step::Kind::Unit ? 1 : 0);
    for (SignalId s : step.outputs) stage[s] = std::max(stage[s], done);
  }
  return stage;
}

std::map<int, std::size_t> neurons_by_stage(const Circuit& circuit, const std::string& unit) {
  const CircuitGraph graph = analyze(circuit);
  const std::vector<int> stage = mlp_stages(circuit, graph);
  auto counted = [&](const std::string& name) {
    return unit.empty() || name == unit || name.rfind(unit + ".", 0) == 0;
  };
  std::map<int, std::size_t> neurons;
  for (const Step& step : graph.steps) {
    if (step.kind != Step::Kind::Unit) continue;
    for (std::uint32_t n : graph.units[step.index].neurons)
      if (counted(circuit.neurons()[n].unit)) ++neurons[stage[step.outputs.front()]];
  }
  return neurons;
}

}  // namespace rvformer::circuit
