// circuit/evaluator.h — runs a circuit exactly, pass by pass, without any weights.
//
// This is the middle oracle: the golden emulator checks the circuit's behaviour, and the circuit's
// signals, memory rows and next tokens are what the compiled weights must reproduce bit for bit.
// With margin checks on (the default) every pass also verifies the conditions that make the
// weights exact: neuron gates on their quantum, every sum exact in fp32 in any order, one-hot row
// selects, write strengths in {0, 1/2, 1}, signals inside their declared ranges, and a strict winner
// among the next-token scores. A violation throws rvformer::Error naming the signal or unit.
#pragma once

#include <cstdint>
#include <vector>

#include "circuit/circuit.h"
#include "circuit/graph.h"

namespace rvformer::circuit {

class Evaluator {
 public:
  explicit Evaluator(const Circuit& circuit, bool check_margins = true);

  // Runs one forward pass on `token` and returns the next token (the argmax of the output code).
  std::uint32_t step(std::uint32_t token);
  // Clears all memory and delays, as at the start of a sequence.
  void reset();

  double value(SignalId signal) const { return values_[signal]; }
  // Logical contents of one lane of a bank row (0 for never-written rows).
  double lane(int bank, int row, int half, int lane) const;
  std::uint64_t passes() const { return passes_; }

 private:
  struct BankState {
    std::vector<double> lanes;  // rows × halves × kBankLanesPerHalf
    std::vector<std::uint8_t> written;  // rows × halves: dominant lanes present
  };
  struct CodeEntry {
    std::uint32_t token;
    double weight;
  };

  void plan();
  double evaluate(const LinearForm& form, const char* what, const std::string& owner) const;
  // The signal values `ago` passes back (0: this pass), or nullptr before the sequence began.
  const std::vector<double>* values_ago(int ago) const;
  double evaluate_lane(const LinearForm& form, const std::string& owner) const;
  void run_unit(const MlpUnit& unit);
  void run_bank(int index);
  int selected_row(const RowSelect& select, const std::string& bank, int rows, const char* port) const;
  int selected_row_in(const std::vector<double>& values, const RowSelect& select, const std::string& bank, int rows,
                      const char* port) const;
  void check_range(SignalId signal) const;
  std::uint32_t argmax_next_token() const;

  const Circuit& circuit_;
  bool check_;
  CircuitGraph graph_;
  std::vector<BankState> banks_;
  std::vector<double> values_;
  std::vector<std::vector<double>> history_;  // the values of the last passes, most recent first
  std::vector<std::vector<CodeEntry>> code_by_output_;  // per output: tokens that score on it
  std::uint64_t passes_ = 0;
};

}  // namespace rvformer::circuit
