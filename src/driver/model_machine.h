// driver/model_machine.h — a Qwen3.5 model run by the engine, as a TokenMachine: each feed() is
// one forward pass of the dense reference path and its greedy (argmax) next token.
#pragma once

#include "driver/trace_protocol.h"
#include "engine/model.h"

namespace rvformer::driver {

class ModelMachine : public TokenMachine {
 public:
  explicit ModelMachine(const engine::Model& model) : model_(model), state_(model.new_state()) {}
  std::uint32_t feed(std::uint32_t token) override { return model_.decode_argmax(state_, token); }
  const engine::State& state() const { return state_; }

 private:
  const engine::Model& model_;
  engine::State state_;
};

}  // namespace rvformer::driver
