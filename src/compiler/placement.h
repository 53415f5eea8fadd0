// compiler/placement.h — circuit → layers and residual dimensions.
//
// Time within a pass is counted in slots: the mixer of layer L is slot 2L, its MLP slot 2L+1. A
// signal made in slot s can be read from slot s+1 on. Placement puts every bank in the earliest
// mixer slot after its inputs with a free key head (16 per layer) and packs delays into key heads
// of their own; that fixes the depth. MLP units are then list-scheduled between their earliest and
// latest possible MLP slots, least slack first, under the narrowest width cap that works, because
// the widest MLP sets the width of every layer. Residual dimensions are then allocated like
// registers: a dimension whose signal is dead is cleared by one neuron in an MLP (relu(x)
// subtracted) and handed to a later signal.
#pragma once

#include <cstdint>
#include <vector>

#include "circuit/circuit.h"
#include "circuit/graph.h"

namespace rvformer::compiler {

inline constexpr int kKeyHeads = 16;

struct HeadSlot {
  int layer = -1;
  int head = -1;  // key head within the layer
};

struct DelaySlot {
  HeadSlot head;
  int half = 0;
  int lane = 0;
};

// A neuron added by placement to zero a dead signal's dimension before reuse.
struct Clear {
  circuit::SignalId signal;
  int layer;  // its MLP
};

struct Placement {
  int num_layers = 0;
  int hidden_size = 0;                // the whole residual stream: a base model's dims, then the machine's
  int first_dim = 0;                  // the machine's first dimension (a base model's hidden size)
  int intermediate_size = 0;
  int constant_dims = 0;              // the machine's first dims, holding the large constant
  std::vector<int> unit_layer;        // per graph unit
  std::vector<HeadSlot> bank_head;    // per circuit bank
  std::vector<DelaySlot> delay_slot;  // per circuit delay
  std::vector<int> signal_dim;        // per signal (absolute); kOne maps to the first constant dim
  std::vector<int> signal_ready;      // per signal: slot after which it is complete
  std::vector<Clear> clears;
  std::vector<std::vector<std::uint32_t>> layer_neurons;  // per layer: circuit neuron indices
  std::vector<int> layer_clear_count;
};

// What the machine is compiled for: on its own (base_hidden 0), or to sit in the dimensions after a
// base model's `base_hidden` ones, which are zero on every trace token. The RMSNorm then averages
// over the whole width, so the width is chosen for the total (docs/circuit-encoding.md).
struct PlacementOptions {
  int min_layers = 1;
  int base_hidden = 0;
};

Placement place(const circuit::Circuit& circuit, const circuit::CircuitGraph& graph, const PlacementOptions& options = {});

}  // namespace rvformer::compiler
