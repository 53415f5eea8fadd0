// compiler/placement.cpp — see placement.h.
#include "compiler/placement.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>

#include "compiler/physical.h"
#include "support/error.h"

namespace rvformer::compiler {
namespace {

using circuit::SignalId;
using circuit::SignalSource;
using circuit::MlpUnit;
using circuit::Step;

constexpr int kNever = std::numeric_limits<int>::max();

int next_with_parity(int slot, int parity) { return (slot % 2 == parity) ? slot : slot + 1; }

// Key-head usage per layer while placing banks and delay heads.
class HeadAllocator {
 public:
  bool full(int layer) const { return layer < static_cast<int>(used_.size()) && used_[layer] == kKeyHeads; }
  HeadSlot take(int layer) {
    if (layer >= static_cast<int>(used_.size())) used_.resize(layer + 1, 0);
    return {layer, used_[layer]++};
  }

 private:
  std::vector<int> used_;
};

// Packs delays into key heads: each head's two halves hold up to 2 × 126 delayed bits.
class DelayPacker {
 public:
  explicit DelayPacker(HeadAllocator& heads) : heads_(heads) {}
  bool full(int layer) const { return heads_.full(layer) && open(layer) == open_.size(); }
  DelaySlot take(int layer) {
    if (std::size_t i = open(layer); i < open_.size()) {
      int lane = open_[i].used++;
      return {open_[i].head, lane / circuit::kBankLanesPerHalf, lane % circuit::kBankLanesPerHalf};
    }
    open_.push_back({heads_.take(layer), 1});
    return {open_.back().head, 0, 0};
  }

 private:
  struct Open {
    HeadSlot head;
    int used;
  };
  // The head of `layer` with room for another delay (open_.size(): none).
  std::size_t open(int layer) const {
    for (std::size_t i = 0; i < open_.size(); ++i)
      if (open_[i].head.layer == layer && open_[i].used < 2 * circuit::kBankLanesPerHalf) return i;
    return open_.size();
  }
  HeadAllocator& heads_;
  std::vector<Open> open_;
};

struct Lifetimes {
  std::vector<int> first_write;  // slot that first writes the signal (banks of a read may span layers)
  std::vector<int> ready;        // slot that completes it (-1: before the first layer)
  std::vector<int> death;        // last slot that reads it (kNever for outputs)
};

// Per step, the slots its results still need within a pass: a mixer step feeds an MLP one slot
// later and another mixer two, an MLP unit a mixer one slot later and another MLP two.
std::vector<int> slots_after(const circuit::CircuitGraph& graph) {
  std::vector<int> after(graph.steps.size(), 0);
  auto in_mlp = [&](std::uint32_t i) { return graph.steps[i].kind == Step::Kind::Unit; };
  for (auto it = graph.placement_order.rbegin(); it != graph.placement_order.rend(); ++it) {
    if (graph.steps[*it].kind == Step::Kind::Delay) continue;  // its readers are in the next pass
    for (SignalId s : graph.steps[*it].outputs)
      for (std::uint32_t reader : graph.readers[s])
        after[*it] = std::max(after[*it], after[reader] + (in_mlp(reader) == in_mlp(*it) ? 2 : 1));
  }
  return after;
}

// List scheduling of banks and delays, layer by layer: of those whose inputs are complete before a
// layer's mixer, the ones with the most slots still to go after them take its key heads first, so
// that a bank early on a long path is not pushed back by banks that have time to spare. MLP units
// go in the first MLP after their inputs. Returns every step's slot.
std::vector<int> place_layer_by_layer(const circuit::CircuitGraph& graph, Placement& p) {
  const std::vector<int> after = slots_after(graph);
  const std::size_t signals = graph.readers.size(), steps = graph.steps.size();
  std::vector<int> ready(signals, -1), producers(signals, 0), missing(steps, 0), slot(steps, -1);
  for (const Step& step : graph.steps)
    for (SignalId s : step.outputs) ++producers[s];
  std::vector<std::uint32_t> units, fixed;  // complete inputs, not yet placed
  for (std::uint32_t i = 0; i < steps; ++i) {
    for (SignalId s : graph.steps[i].inputs) missing[i] += producers[s] > 0;  // as graph.readers counts them
    if (!missing[i]) (graph.steps[i].kind == Step::Kind::Unit ? units : fixed).push_back(i);
  }
  auto earliest = [&](std::uint32_t i) {
    int e = 0;
    for (SignalId s : graph.steps[i].inputs) e = std::max(e, ready[s] + 1);
    return e;
  };
  auto place = [&](std::uint32_t i, int at) {
    slot[i] = at;
    for (SignalId s : graph.steps[i].outputs) {
      ready[s] = std::max(ready[s], at);
      if (--producers[s]) continue;
      for (std::uint32_t reader : graph.readers[s])
        if (--missing[reader] == 0) (graph.steps[reader].kind == Step::Kind::Unit ? units : fixed).push_back(reader);
    }
  };
  HeadAllocator heads;
  DelayPacker delays(heads);
  std::size_t placed = 0;
  for (int layer = 0; placed < steps; ++layer) {
    for (; !units.empty(); ++placed) {
      std::uint32_t u = units.back();
      units.pop_back();
      place(u, next_with_parity(earliest(u), 1));
    }
    std::vector<std::uint32_t> now;
    for (std::uint32_t i : fixed)
      if (next_with_parity(earliest(i), 0) / 2 <= layer) now.push_back(i);
    std::stable_sort(now.begin(), now.end(), [&](auto a, auto b) { return after[a] > after[b]; });
    for (std::uint32_t i : now) {
      const Step& step = graph.steps[i];
      if (step.kind == Step::Kind::Bank) {
        if (heads.full(layer)) continue;
        p.bank_head[step.index] = heads.take(layer);
      } else {
        if (delays.full(layer)) continue;
        p.delay_slot[step.index] = delays.take(layer);
      }
      fixed.erase(std::find(fixed.begin(), fixed.end(), i));
      place(i, 2 * layer);
      ++placed;
    }
    if (layer > 4 * static_cast<int>(steps) + 64) fail("compiler: the circuit's steps cannot be placed");
  }
  return slot;
}

// The latest MLP slot of each unit such that every reader can still be as late as it may be:
// banks and delays keep their slots, outputs may be computed by the last MLP.
std::vector<int> latest_unit_slots(const circuit::CircuitGraph& graph, const std::vector<int>& slot, int last_mlp_slot) {
  std::vector<int> latest(graph.steps.size(), 0);
  for (auto it = graph.placement_order.rbegin(); it != graph.placement_order.rend(); ++it) {
    const Step& step = graph.steps[*it];
    if (step.kind != Step::Kind::Unit) {
      latest[*it] = slot[*it];
      continue;
    }
    // A unit may move as late as its readers allow; one that no unit reads (it adds into outputs,
    // or nothing reads it) as late as the last MLP.
    int bound = last_mlp_slot + 1;
    for (SignalId s : step.outputs)
      for (std::uint32_t reader : graph.readers[s]) bound = std::min(bound, latest[reader]);
    latest[*it] = bound - 1 - (bound % 2 == 0 ? 0 : 1);
  }
  return latest;
}

// List scheduling of the MLP units under a width cap: slot by slot, the ready units with the least
// slack go first; a unit that reaches its latest slot is placed whatever the cap, and so is one that
// no unit reads (it adds into outputs, or nothing reads it), as soon as it is ready, so that its
// inputs die early. Returns the widest MLP it produced.
int schedule_units(const circuit::Circuit& circuit, const circuit::CircuitGraph& graph, const std::vector<int>& latest,
                   int cap, std::vector<int>& slot, int last_mlp_slot) {
  auto unread = [&](std::uint32_t u) {
    return std::ranges::all_of(graph.steps[u].outputs, [&](SignalId s) { return graph.readers[s].empty(); });
  };
  std::vector<int> ready(circuit.signals().size(), -1);
  std::vector<int> missing(graph.steps.size(), 0);
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    if (graph.steps[i].kind == Step::Kind::Unit) missing[i] = 1;
  // Fixed steps first: their outputs are ready at their slots.
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    if (!missing[i])
      for (SignalId s : graph.steps[i].outputs) ready[s] = std::max(ready[s], slot[i]);
  std::vector<int> producers_unplaced(circuit.signals().size(), 0);
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    if (missing[i])
      for (SignalId s : graph.steps[i].outputs) ++producers_unplaced[s];
  std::vector<std::uint32_t> waiting;
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    if (missing[i]) waiting.push_back(i);
  int widest = 0;
  for (int t = 1; t <= last_mlp_slot && !waiting.empty(); t += 2) {
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t u : waiting) {
      bool inputs_ready = true;
      for (SignalId s : graph.steps[u].inputs) inputs_ready &= producers_unplaced[s] == 0 && ready[s] < t;
      if (inputs_ready) candidates.push_back(u);
    }
    std::sort(candidates.begin(), candidates.end(), [&](auto a, auto b) { return latest[a] < latest[b]; });
    int load = 0;
    std::vector<std::uint32_t> placed;
    for (std::uint32_t u : candidates) {
      int size = static_cast<int>(graph.units[graph.steps[u].index].neurons.size());
      if (latest[u] > t && load + size > cap && !unread(u)) continue;
      slot[u] = t;
      load += size;
      placed.push_back(u);
    }
    for (std::uint32_t u : placed) {
      for (SignalId s : graph.steps[u].outputs) --producers_unplaced[s], ready[s] = std::max(ready[s], t);
      waiting.erase(std::find(waiting.begin(), waiting.end(), u));
    }
    widest = std::max(widest, load);
  }
  if (!waiting.empty()) fail("compiler: MLP units could not be scheduled within {} layers", (last_mlp_slot + 1) / 2);
  return widest;
}

Lifetimes lifetimes_at(const circuit::Circuit& circuit, const circuit::CircuitGraph& graph, const std::vector<int>& slot);
void allocate_dims(const circuit::Circuit& circuit, Placement& p, const Lifetimes& life, int constant_dims);

// A clear subtracts relu(x), and a signal that may be negative also adds relu(−x).
int clear_neurons(const circuit::Circuit& circuit, const Clear& clear) { return circuit.signal(clear.signal).min < 0 ? 2 : 1; }

// What the steps at `slot` take: residual dimensions (before the constant dimensions' padding), and
// the widest MLP with the clears that hand dimensions on.
struct ScheduleShape {
  int residual_dims = 0, mlp_width = 0;
};

ScheduleShape schedule_shape(const circuit::Circuit& circuit, const circuit::CircuitGraph& graph, const std::vector<int>& slot) {
  Placement scratch;
  allocate_dims(circuit, scratch, lifetimes_at(circuit, graph, slot), kMinConstantDims);
  std::vector<int> load;
  auto add = [&](int layer, int neurons) {
    if (layer >= static_cast<int>(load.size())) load.resize(layer + 1, 0);
    load[layer] += neurons;
  };
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    if (graph.steps[i].kind == Step::Kind::Unit) add(slot[i] / 2, static_cast<int>(graph.units[graph.steps[i].index].neurons.size()));
  for (const Clear& c : scratch.clears) add(c.layer, clear_neurons(circuit, c));
  return {scratch.hidden_size, load.empty() ? 0 : *std::ranges::max_element(load)};
}

// Schedules the MLP units, whose widest MLP sets the MLP width of every layer and whose lifetimes
// set the residual's: ASAP placement crowds units into the first MLPs after their inputs, although
// most have slack before their first reader, and the narrowest MLPs keep values alive longer. Of
// the schedules under a range of width caps, the one with the narrowest residual among those within
// kMlpWidth (then the narrowest MLP), or else the narrowest MLP, each MLP counted with its clears.
void balance_units(const circuit::Circuit& circuit, const circuit::CircuitGraph& graph, std::vector<int>& slot,
                   int last_mlp_slot) {
  std::vector<int> latest = latest_unit_slots(graph, slot, last_mlp_slot);
  int total = 0, widest_unit = 0;
  for (const MlpUnit& unit : graph.units) {
    total += static_cast<int>(unit.neurons.size());
    widest_unit = std::max(widest_unit, static_cast<int>(unit.neurons.size()));
  }
  std::vector<int> best = slot, trial = slot;
  auto cost = [&](const std::vector<int>& slots) {
    const ScheduleShape shape = schedule_shape(circuit, graph, slots);
    return shape.mlp_width <= kMlpWidth ? std::pair{0, shape.residual_dims * 65536 + shape.mlp_width}
                                        : std::pair{1, shape.mlp_width};
  };
  const int widest = schedule_units(circuit, graph, latest, std::numeric_limits<int>::max(), best, last_mlp_slot);
  std::pair<int, int> best_cost = cost(best);
  for (int cap = std::max(widest_unit, total / ((last_mlp_slot + 1) / 2)); cap < widest; cap += std::max(1, cap / 20)) {
    schedule_units(circuit, graph, latest, cap, trial, last_mlp_slot);
    if (std::pair<int, int> c = cost(trial); c < best_cost) best_cost = c, best = trial;
  }
  slot = best;
}

void place_steps(const circuit::Circuit& circuit, const circuit::CircuitGraph& graph, Placement& p, Lifetimes& life) {
  p.unit_layer.assign(graph.units.size(), -1);
  p.bank_head.assign(circuit.banks().size(), {});
  p.delay_slot.assign(circuit.delays().size(), {});
  std::vector<int> step_slot = place_layer_by_layer(graph, p);
  int last_slot = 1;
  for (int slot : step_slot) last_slot = std::max(last_slot, slot);
  p.num_layers = last_slot / 2 + 1;
  balance_units(circuit, graph, step_slot, 2 * p.num_layers - 1);
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    if (graph.steps[i].kind == Step::Kind::Unit) p.unit_layer[graph.steps[i].index] = step_slot[i] / 2;
  life = lifetimes_at(circuit, graph, step_slot);
}

Lifetimes lifetimes_at(const circuit::Circuit& circuit, const circuit::CircuitGraph& graph, const std::vector<int>& slot) {
  const std::size_t signals = circuit.signals().size();
  Lifetimes life;
  life.ready.assign(signals, -1);
  life.first_write.assign(signals, kNever);
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    for (SignalId s : graph.steps[i].outputs) {
      life.ready[s] = std::max(life.ready[s], slot[i]);
      life.first_write[s] = std::min(life.first_write[s], slot[i]);
    }
  for (SignalId s = 0; s < signals; ++s)
    if (life.first_write[s] == kNever) life.first_write[s] = life.ready[s];
  life.death = life.ready;
  for (std::uint32_t i = 0; i < graph.steps.size(); ++i)
    for (SignalId s : graph.steps[i].inputs) life.death[s] = std::max(life.death[s], slot[i]);
  for (SignalId s : circuit.outputs()) life.death[s] = kNever;
  return life;
}

// Register allocation of residual dimensions. Dimensions [0, constant_dims) hold the big constant.
// An output signal owns a fixed dimension, because the tied LM-head row of the token fed in doubles
// as its embedding there: the dimension starts with that code, the first MLP clears it, and until
// the output is computed other signals may borrow it. Any dimension is handed to a new signal once
// its previous signal is dead; that signal is then cleared by one neuron in an MLP at or after its
// last reader (in the same MLP as the new signal's neurons, if need be: the MLP adds new − old).
void allocate_dims(const circuit::Circuit& circuit, Placement& p, const Lifetimes& life, int constant_dims) {
  const auto& signals = circuit.signals();
  p.signal_dim.assign(signals.size(), -1);
  p.signal_dim[circuit::kOne] = p.first_dim;
  struct Free {
    int dim;
    int available_from;  // the MLP slot that clears the previous signal (or the output code)
    int lend_until;      // the latest slot a borrower may be cleared in (kNever: not an output's)
    SignalId previous;   // signal to clear when the dimension is reused (0: none)
  };
  std::vector<Free> free;
  int next_dim = p.first_dim + constant_dims;
  for (SignalId s : circuit.outputs()) {
    if (p.signal_dim[s] >= 0) fail("compiler: signal {} is marked as an output twice", signals[s].name);
    if (signals[s].source != SignalSource::Neurons && signals[s].source != SignalSource::BankRead)
      fail("compiler: output {} must be computed (its dimension starts with the token's own code)", signals[s].name);
    p.signal_dim[s] = next_dim++;
    int birth = life.first_write[s];
    free.push_back({p.signal_dim[s], 1, signals[s].source == SignalSource::Neurons ? birth : birth - 1, 0});
  }

  std::vector<SignalId> order;
  for (SignalId s = 1; s < signals.size(); ++s)
    if (p.signal_dim[s] < 0) order.push_back(s);
  std::stable_sort(order.begin(), order.end(),
                   [&](SignalId a, SignalId b) { return life.first_write[a] < life.first_write[b]; });

  for (SignalId s : order) {
    int birth = life.first_write[s];
    // A neuron signal may take a dimension cleared in its own MLP; a mixer output needs the clear
    // in an earlier MLP. Its own clear must come before the dimension's owner needs it back.
    int latest_clear = signals[s].source == SignalSource::Neurons ? birth : birth - 1;
    int clear = life.death[s] == kNever ? kNever : next_with_parity(std::max(life.death[s], life.ready[s] + 1), 1);
    auto fits = [&](const Free& f) { return f.available_from <= latest_clear && clear <= f.lend_until; };
    // Prefer the dimension that is lent for the shortest time, to keep long ones for long signals.
    auto best = free.end();
    for (auto it = free.begin(); it != free.end(); ++it)
      if (fits(*it) && (best == free.end() || it->lend_until < best->lend_until)) best = it;
    int dim, lend_until = kNever;
    if (best != free.end()) {
      dim = best->dim;
      lend_until = best->lend_until;
      if (best->previous) p.clears.push_back({best->previous, best->available_from / 2});
      free.erase(best);
    } else {
      dim = next_dim++;
    }
    p.signal_dim[s] = dim;
    if (clear != kNever) free.push_back({dim, clear, lend_until, s});
  }
  // A borrowed output dimension goes back to its output: the last borrower must be cleared.
  for (const Free& f : free)
    if (f.lend_until != kNever && f.previous) p.clears.push_back({f.previous, f.available_from / 2});
  p.hidden_size = next_dim;
}

// The machine's narrowest width: at least `needed` data dimensions plus its constant dimensions
// (at least kMinConstantDims, as many as it takes), such that the whole residual (base + machine)
// divided by the number of constant dimensions is a power of four; then the RMSNorm scale of every
// layer is an exact power of two (docs/circuit-encoding.md).
int padded_width(int needed, int base, int& constant_dims) {
  for (int width = needed + kMinConstantDims;; ++width) {
    for (int dims = kMinConstantDims; needed + dims <= width; ++dims) {
      int total = base + width;
      if (total % dims) continue;
      int quotient = total / dims;
      while (quotient % 4 == 0) quotient /= 4;
      if (quotient == 1) {
        constant_dims = dims;
        return width;
      }
    }
  }
}

}  // namespace

Placement place(const circuit::Circuit& circuit, const circuit::CircuitGraph& graph, const PlacementOptions& options) {
  Placement p;
  Lifetimes life;
  place_steps(circuit, graph, p, life);
  p.num_layers = std::max(p.num_layers, options.min_layers);

  // The constant dimensions come first. Their count depends on the width they must balance, which
  // depends on the number of data dimensions alone, so one allocation tells it; a second places the
  // data after the right number of constant dimensions.
  p.first_dim = options.base_hidden;
  allocate_dims(circuit, p, life, kMinConstantDims);
  const int data_dims = p.hidden_size - p.first_dim - kMinConstantDims;
  int constant_dims = kMinConstantDims;
  int width = padded_width(data_dims, p.first_dim, constant_dims);
  if (constant_dims != kMinConstantDims) {
    p.clears.clear();
    allocate_dims(circuit, p, life, constant_dims);
    // The width was chosen for the first allocation's data: a residual that the second one does not
    // fill exactly would leave its constants unbalanced.
    if (p.hidden_size - p.first_dim - constant_dims != data_dims)
      fail("compiler: the residual's data took {} dimensions after {} constant dimensions but {} after {}",
           p.hidden_size - p.first_dim - constant_dims, constant_dims, data_dims, kMinConstantDims);
  }
  p.hidden_size = p.first_dim + width;
  p.constant_dims = constant_dims;
  p.signal_ready = life.ready;

  p.layer_neurons.assign(p.num_layers, {});
  p.layer_clear_count.assign(p.num_layers, 0);
  for (std::uint32_t u = 0; u < graph.units.size(); ++u)
    for (std::uint32_t n : graph.units[u].neurons) p.layer_neurons[p.unit_layer[u]].push_back(n);
  for (const Clear& c : p.clears) {
    if (c.layer >= p.num_layers) fail("compiler: a clear lands after the last layer");
    p.layer_clear_count[c.layer] += clear_neurons(circuit, c);
  }
  // The first MLP also clears the output dimensions, which start with the token's own code; an
  // output with a non-zero initial value gets it with its first writer.
  p.layer_clear_count[0] += static_cast<int>(circuit.outputs().size());
  p.output_init_layer.assign(circuit.outputs().size(), -1);
  for (std::size_t i = 0; i < circuit.outputs().size(); ++i) {
    if (circuit.output_initials()[i] == 0) continue;
    SignalId s = circuit.outputs()[i];
    if (circuit.signal(s).source != SignalSource::Neurons)
      fail("compiler: output {} has an initial value but is not computed by neurons", circuit.signal(s).name);
    p.output_init_layer[i] = life.first_write[s] / 2;
    ++p.layer_clear_count[p.output_init_layer[i]];
  }
  for (int layer = 0; layer < p.num_layers; ++layer)
    p.intermediate_size = std::max<int>(p.intermediate_size, p.layer_neurons[layer].size() + p.layer_clear_count[layer]);
  p.intermediate_size = std::max(p.intermediate_size, 1);
  return p;
}

}  // namespace rvformer::compiler
