// compiler/emit.h — placed circuit → the tensors of a standard Qwen3.5 checkpoint.
//
// The emitter turns logical values into physical ones (docs/circuit-encoding.md):
//   * the residual carries a constant K = 2^40 in a few dimensions, so every RMSNorm sees the same
//     mean square whatever the data, and its (1 + w) weights undo the scale exactly;
//   * a neuron relu(g)·u becomes SiLU(A·g)·(u/A) with A = 128 / quantum, exact because SiLU is the
//     identity above 17 and exactly −0 below −88.7;
//   * a bank row is a GDN key (32 at the selected row, ≤ −96 elsewhere when disabled), its bits are
//     values V = 181.019348 (V·128^−½ rounds to exactly 16), and two balancing lanes of V·2^16 make
//     the gated RMSNorm of the read-out a fixed power of two; β = σ(256·β − 128) is exactly 0, ½, 1;
//   * decay is exactly 1 (A_log = −∞); the conv passes the current token, or the previous one for
//     delayed values; the LM head is tied to the embedding.
#pragma once

#include <string>
#include <vector>

#include "circuit/circuit.h"
#include "circuit/graph.h"
#include "compiler/placement.h"
#include "engine/config.h"
#include "engine/safetensors.h"

namespace rvformer::compiler {

struct EmittedTensor {
  std::string name;  // canonical engine name, e.g. "layers.3.mlp.up_proj.weight"
  std::vector<std::size_t> shape;
  std::vector<float> values;
};

struct EmittedModel {
  engine::Config config;
  std::vector<EmittedTensor> tensors;

  // Views for engine::write_checkpoint, stored as `storage` (F32 or BF16; every value is a bf16
  // number, so both hold the same weights).
  std::vector<engine::TensorToWrite> tensors_to_write(engine::DType storage) const;
};

struct EmitOptions {
  // Only the machine's own dimensions [first_dim, hidden_size) become columns (and rows of the
  // output projections): the tensors a merge pads with the base model's first_dim zeros. The
  // RMSNorm scales stay those of the whole width, so the checkpoint is right only once padded.
  bool machine_dims_only = false;
};

EmittedModel emit(const circuit::Circuit& circuit, const circuit::CircuitGraph& graph, const Placement& placement,
                  const EmitOptions& options = {});

}  // namespace rvformer::compiler
