// circuit/graph.cpp — see graph.h.
#include "circuit/graph.h"

#include <numeric>

#include "support/error.h"

namespace rvformer::circuit {
namespace {

void append_inputs(const LinearForm& form, std::vector<SignalId>& out) {
  for (const Term& t : form) out.push_back(t.signal);
}

std::vector<MlpUnit> group_units(const Circuit& circuit) {
  const auto& signals = circuit.signals();
  const auto& neurons = circuit.neurons();
  std::vector<SignalId> parent(signals.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](SignalId s) {
    while (parent[s] != s) s = parent[s] = parent[parent[s]];
    return s;
  };
  for (const Neuron& neuron : neurons) {
    if (neuron.down.empty()) fail("circuit: a neuron of unit {} writes nothing", neuron.unit);
    for (const Term& term : neuron.down) parent[find(term.signal)] = find(neuron.down.front().signal);
  }
  std::vector<int> unit_of_root(signals.size(), -1);
  std::vector<MlpUnit> units;
  for (std::uint32_t n = 0; n < neurons.size(); ++n) {
    SignalId root = find(neurons[n].down.front().signal);
    if (unit_of_root[root] < 0) {
      unit_of_root[root] = static_cast<int>(units.size());
      units.emplace_back();
    }
    units[unit_of_root[root]].neurons.push_back(n);
  }
  for (SignalId s = 0; s < signals.size(); ++s) {
    if (signals[s].source != SignalSource::Neurons) continue;
    int unit = unit_of_root[find(s)];
    if (unit < 0) fail("circuit: signal {} has no neuron writing it", signals[s].name);
    units[unit].outputs.push_back(s);
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
std::vector<std::uint32_t> order_steps(const Circuit& circuit, const CircuitGraph& graph, bool delay_inputs) {
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
  std::vector<std::uint32_t> ready, order;
  auto complete = [&](SignalId s) {
    for (std::uint32_t w : waiting[s])
      if (--missing[w] == 0) ready.push_back(w);
  };
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    if (missing[i] == 0) ready.push_back(i);
  for (SignalId s = 0; s < signals.size(); ++s)
    if (pending[s] == 0) complete(s);
  while (!ready.empty()) {
    std::uint32_t i = ready.back();
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
  graph.evaluation_order = order_steps(circuit, graph, false);
  graph.placement_order = order_steps(circuit, graph, true);
  return graph;
}

}  // namespace rvformer::circuit
