// driver/model_machine.h — a Qwen3.5 model run by the engine, as a TokenMachine: each feed() is one
// forward pass and its greedy (argmax) next token, on the dense reference path (Model) or the fast
// exact executor (FastModel), which gives the same tokens and the same state bit for bit.
#pragma once

#include "driver/trace_protocol.h"
#include "engine/fast_model.h"
#include "engine/model.h"

namespace rvformer::driver {

// A token machine whose model state can be inspected after each pass (for verification).
class StatefulTokenMachine : public TokenMachine {
 public:
  virtual const engine::State& state() const = 0;
  // The GDN recurrent states alone, which hold the machine's memory; cheaper than state() on the
  // fast path, so verification reads this after every pass.
  virtual const engine::RecurrentStateView& recurrent_state() const = 0;
};

class ModelMachine : public StatefulTokenMachine {
 public:
  explicit ModelMachine(const engine::Model& model) : model_(model), state_(model.new_state()) {}
  ModelMachine(const engine::Model& model, engine::State state) : model_(model), state_(std::move(state)) {}
  std::uint32_t feed(std::uint32_t token) override { return model_.decode_argmax(state_, token); }
  const engine::State& state() const override { return state_; }
  const engine::RecurrentStateView& recurrent_state() const override { return state_; }

 private:
  const engine::Model& model_;
  engine::State state_;
};

class FastModelMachine : public StatefulTokenMachine {
 public:
  explicit FastModelMachine(engine::FastModel& model) : model_(model), state_(model.new_state()) {}
  FastModelMachine(engine::FastModel& model, engine::State state) : model_(model), state_(model.adopt(std::move(state))) {}
  std::uint32_t feed(std::uint32_t token) override { return model_.decode_argmax(state_, token); }
  const engine::State& state() const override { return state_.state(); }
  const engine::RecurrentStateView& recurrent_state() const override { return state_; }

 private:
  engine::FastModel& model_;
  engine::FastState state_;
};

}  // namespace rvformer::driver
