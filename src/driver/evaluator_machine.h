// driver/evaluator_machine.h — the machine circuit run by the exact evaluator, as a TokenMachine.
// Used to check the circuit itself (no weights involved) and as the middle oracle in tests.
#pragma once

#include <memory>

#include "circuit/evaluator.h"
#include "cpu/machine.h"
#include "driver/trace_protocol.h"

namespace rvformer::driver {

class EvaluatorMachine : public TokenMachine {
 public:
  explicit EvaluatorMachine(const cpu::Machine& machine, bool check_margins = true)
      : evaluator_(machine.circuit, check_margins) {}
  std::uint32_t feed(std::uint32_t token) override { return evaluator_.step(token); }
  const circuit::Evaluator& evaluator() const { return evaluator_; }

 private:
  circuit::Evaluator evaluator_;
};

}  // namespace rvformer::driver
