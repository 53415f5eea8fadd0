// circuit/evaluator.cpp — see evaluator.h.
#include "circuit/evaluator.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "support/error.h"

namespace rvformer::circuit {
namespace {

// Exponent of the lowest set bit of a non-zero double.
int lowest_bit_exponent(double x) {
  int exponent = 0;
  double mantissa = std::frexp(std::fabs(x), &exponent);
  auto integer = static_cast<std::uint64_t>(std::ldexp(mantissa, 53));
  return exponent - 53 + std::countr_zero(integer);
}

bool is_float(double x) { return static_cast<double>(static_cast<float>(x)) == x; }

// Every partial sum of `terms`, in any order, is exact in fp32 when all terms are floats on a
// common grid 2^e and their absolute sum stays below 2^(24+e).
class ExactSum {
 public:
  void add(double term) {
    if (term == 0) return;
    if (!is_float(term)) ok_ = false;
    min_exponent_ = std::min(min_exponent_, lowest_bit_exponent(term));
    magnitude_ += std::fabs(term);
    sum_ += term;
  }
  double value() const { return sum_; }
  bool exact() const {
    return ok_ && (magnitude_ == 0 || magnitude_ < std::ldexp(1.0, 24 + min_exponent_));
  }

 private:
  double sum_ = 0;
  double magnitude_ = 0;
  int min_exponent_ = std::numeric_limits<int>::max();
  bool ok_ = true;
};

bool is_multiple(double value, double quantum) {
  double ratio = value / quantum;
  return ratio == std::nearbyint(ratio);
}

// The delta rule overwrites a lane holding v with w as v + fl(w − v) in float32 (units of V, whose
// significand is even). That is w exactly when w ≥ v (the rounding of w − v is at most half an ulp
// of w, ties to even), when w = 0, and when v − w is exact: m·2^e with an odd m up to
// kMaxOverwriteStep. Between 64 and 1, say, it is not.
bool exact_overwrite(double old_value, double new_value) {
  if (new_value >= old_value || new_value == 0) return true;
  double step = old_value - new_value;  // its odd part: scaled by powers of two to an odd integer
  while (step != std::floor(step)) step *= 2;
  while (std::fmod(step, 2) == 0) step /= 2;
  return step <= kMaxOverwriteStep;
}

}  // namespace

Evaluator::Evaluator(const Circuit& circuit, bool check_margins) : circuit_(circuit), check_(check_margins) {
  plan();
  reset();
}

void Evaluator::reset() {
  values_.assign(circuit_.signals().size(), 0.0);
  history_.clear();
  banks_.clear();
  for (const Bank& bank : circuit_.banks()) {
    BankState state;
    state.lanes.assign(static_cast<std::size_t>(bank.rows) * kBankHalves * kBankLanesPerHalf, 0.0);
    state.written.assign(static_cast<std::size_t>(bank.rows) * kBankHalves, 0);
    banks_.push_back(std::move(state));
  }
  passes_ = 0;
}

void Evaluator::plan() {
  graph_ = analyze(circuit_);
  const auto& signals = circuit_.signals();
  // LM head columns: for each output signal, the tokens that score on it.
  std::vector<int> output_index(signals.size(), -1);
  for (std::size_t i = 0; i < circuit_.outputs().size(); ++i) output_index[circuit_.outputs()[i]] = static_cast<int>(i);
  code_by_output_.assign(circuit_.outputs().size(), {});
  std::uint32_t token = 0;
  for (const TokenFamily& family : circuit_.token_families()) {
    for (std::uint32_t i = 0; i < family.count; ++i, ++token) {
      if (!family.code) continue;
      family.code(i, [&](SignalId s, double weight) {
        if (output_index[s] < 0) fail("circuit: token {}[{}] scores on {}, which is not an output", family.name, i, signals[s].name);
        code_by_output_[output_index[s]].push_back({token, weight});
      });
    }
  }
}

double Evaluator::evaluate(const LinearForm& form, const char* what, const std::string& owner) const {
  ExactSum sum;
  for (const Term& t : form) {
    if (t.ago != 0) fail("circuit: {} of {} looks back, which only bank lanes may", what, owner);
    sum.add(t.weight * values_[t.signal]);
  }
  if (check_ && !sum.exact()) fail("circuit: {} of {} is not exact in fp32 (value {})", what, owner, sum.value());
  return sum.value();
}

const std::vector<double>* Evaluator::values_ago(int ago) const {
  if (ago == 0) return &values_;
  if (ago > static_cast<int>(history_.size())) return nullptr;
  return &history_[ago - 1];
}

// A lane's terms all look back alike; a lane of stored-levels signals holds 0 or a power of two up to
// the largest its signals declare.
double Evaluator::evaluate_lane(const LinearForm& form, const std::string& owner) const {
  if (form.empty()) return 0;
  int ago = form.front().ago;
  bool levels = circuit_.signal(form.front().signal).stored_levels;
  ExactSum sum;
  double magnitude = 0;
  const std::vector<double>* values = values_ago(ago);
  for (const Term& t : form) {
    if (t.ago != ago) fail("circuit: a lane of bank {} mixes terms of different passes", owner);
    if (circuit_.signal(t.signal).stored_levels != levels)
      fail("circuit: a lane of bank {} mixes stored levels with other signals", owner);
    double term = values ? t.weight * (*values)[t.signal] : 0;
    sum.add(term);
    magnitude += std::fabs(term);
  }
  if (check_ && !sum.exact()) fail("circuit: a lane value of {} is not exact in fp32 (value {})", owner, sum.value());
  if (check_ && !levels && sum.value() == 1 && magnitude > kLaneMagnitudeLimit)
    fail("circuit: a lane of bank {} adds terms of magnitude {}, more than its encoding keeps exact", owner,
         magnitude);
  double value = sum.value();
  if (levels) {
    double highest = 0;
    for (const Term& t : form) highest = std::max(highest, circuit_.signal(t.signal).max);
    const bool power_of_two = value >= 1 && std::exp2(std::floor(std::log2(value))) == value;
    if (check_ && value != 0 && !(power_of_two && value <= highest))
      fail("circuit: bank {} lane gets {}, not 0 or a power of two up to {}", owner, value, highest);
    return value;
  }
  if (check_ && (value > 1 || value != std::floor(value)))
    fail("circuit: bank {} lane gets {}, not an integer at most 1", owner, value);
  return value > 0 ? 1 : 0;
}

void Evaluator::check_range(SignalId s) const {
  const Signal& signal = circuit_.signal(s);
  double v = values_[s];
  if (v < signal.min || v > signal.max || std::isnan(v))
    fail("circuit: signal {} = {} is outside its declared range [{}, {}]", signal.name, v, signal.min, signal.max);
  if (!is_multiple(v, signal.quantum))
    fail("circuit: signal {} = {} is not a multiple of its quantum {}", signal.name, v, signal.quantum);
}

void Evaluator::run_unit(const MlpUnit& unit) {
  const auto& neurons = circuit_.neurons();
  std::vector<ExactSum> sums(unit.outputs.size());
  for (std::uint32_t n : unit.neurons) {
    const Neuron& neuron = neurons[n];
    double gate = evaluate(neuron.gate, "the gate", neuron.unit);
    // The emitter scales gates by 128 / quantum: non-zero gates must reach the quantum in size.
    if (check_ && gate != 0 && std::fabs(gate) < neuron.gate_quantum)
      fail("circuit: a gate of unit {} is {}, inside its dead zone (quantum {})", neuron.unit, gate, neuron.gate_quantum);
    if (gate <= 0) continue;
    double product = gate * evaluate(neuron.up, "the up projection", neuron.unit);
    if (check_ && !is_float(product)) fail("circuit: a product in unit {} is not exact in fp32 ({})", neuron.unit, product);
    for (const Term& t : neuron.down) {
      auto it = std::find(unit.outputs.begin(), unit.outputs.end(), t.signal);
      sums[it - unit.outputs.begin()].add(product * t.weight);
    }
  }
  for (std::size_t i = 0; i < unit.outputs.size(); ++i) {
    SignalId s = unit.outputs[i];
    if (check_ && !sums[i].exact()) fail("circuit: the sum into {} is not exact in fp32", circuit_.signal(s).name);
    if (circuit_.is_output(s)) {
      values_[s] += sums[i].value();  // other units add into it too; checked at the end of the pass
    } else {
      values_[s] = sums[i].value();
      if (check_) check_range(s);
    }
  }
}

int Evaluator::selected_row(const RowSelect& select, const std::string& bank, int rows, const char* port) const {
  const std::vector<double>* values = values_ago(select.ago);
  return values ? selected_row_in(*values, select, bank, rows, port) : -1;
}

int Evaluator::selected_row_in(const std::vector<double>& values, const RowSelect& select, const std::string& bank,
                               int rows, const char* port) const {
  auto evaluate_in = [&](const LinearForm& form) {
    ExactSum sum;
    for (const Term& t : form) sum.add(t.weight * values[t.signal]);
    if (check_ && !sum.exact()) fail("circuit: a row-select condition of {} is not exact in fp32", bank);
    return sum.value();
  };
  for (const Literal& l : select.match) {
    double v = values[l.signal];
    if (check_ && v != 0 && v != 1) fail("circuit: a {} match bit of bank {} is {}", port, bank, v);
    if (v != (l.negated ? 0 : 1)) return -1;
  }
  for (const LinearForm& condition : select.conditions) {
    double v = evaluate_in(condition);
    if (check_ && v != 0 && v != 1) fail("circuit: a {} condition of bank {} is {}, not 0 or 1", port, bank, v);
    if (v != 1) return -1;
  }
  if (!select.binary.empty()) {
    int row = 0;
    for (std::size_t i = 0; i < select.binary.size(); ++i) {
      double v = values[select.binary[i]];
      if (check_ && v != 0 && v != 1) fail("circuit: {} address bit {} of bank {} is {}", port, i, bank, v);
      if (v == 1) row |= 1 << i;
    }
    return row < rows ? row : -1;
  }
  int selected = -1;
  for (int r = 0; r < static_cast<int>(select.one_hot.size()); ++r) {
    double v = values[select.one_hot[r]];
    if (v == 0) continue;
    if (v != 1 || selected >= 0) {
      if (!check_) return -1;
      fail("circuit: the {} row select of bank {} is not one-hot (row {} = {})", port, bank, r, v);
    }
    selected = r;
  }
  return selected;
}

void Evaluator::run_bank(int index) {
  const Bank& bank = circuit_.banks()[index];
  BankState& state = banks_[index];
  auto lane_at = [&](int row, int half, int lane) -> double& {
    return state.lanes[(static_cast<std::size_t>(row) * kBankHalves + half) * kBankLanesPerHalf + lane];
  };
  if (bank.has_write) {
    const BankWrite& w = bank.write;
    int row = selected_row(w.row, bank.name, bank.rows, "write");
    if (row >= w.first_written_row) {
      for (int h = 0; h < kBankHalves; ++h) {
        double beta = evaluate(w.beta[h], "the write strength", bank.name);
        if (check_ && beta != 0 && beta != 0.5 && beta != 1)
          fail("circuit: write strength of bank {} half {} is {}, not 0, 1/2 or 1", bank.name, h, beta);
        if (beta == 0) continue;
        std::uint8_t& written = state.written[static_cast<std::size_t>(row) * kBankHalves + h];
        if (beta != 1 && !written && check_)
          fail("circuit: bank {} row {} half {} is halved before it was ever written", bank.name, row, h);
        written = 1;
        for (int l = 0; l < kBankLanesPerHalf; ++l) {
          double value = l < static_cast<int>(w.lanes[h].size()) ? evaluate_lane(w.lanes[h][l], bank.name) : 0;
          double& cell = lane_at(row, h, l);
          // Halving keeps exact values only for bits and the powers of two they halve into.
          if (check_ && beta != 1 && (value > 1 || cell > 1))
            fail("circuit: bank {} half {} is halved with stored levels above 1", bank.name, h);
          if (check_ && beta == 1 && !exact_overwrite(cell, value))
            fail("circuit: bank {} row {} half {} lane {} is overwritten from {} to {}, a step its encoding does not "
                 "keep exact", bank.name, row, h, l, cell, value);
          cell = beta == 1 ? value : (cell + value) / 2;
        }
      }
    }
  }
  if (bank.has_read) {
    const BankRead& r = bank.read;
    int row = selected_row(r.row, bank.name, bank.rows, "read");
    if (row < 0) return;
    for (int h = 0; h < kBankHalves; ++h)
      for (int l = 0; l < static_cast<int>(r.lanes[h].size()); ++l) {
        double v = lane_at(row, h, l);
        for (const Term& t : r.lanes[h][l]) values_[t.signal] += v * t.weight;
      }
  }
}

std::uint32_t Evaluator::step(std::uint32_t token) {
  std::fill(values_.begin(), values_.end(), 0.0);
  values_[kOne] = 1;
  for (std::size_t i = 0; i < circuit_.outputs().size(); ++i) values_[circuit_.outputs()[i]] = circuit_.output_initials()[i];
  auto [family, index] = circuit_.token_family_of(token);
  if (family->fill) family->fill(index, [&](SignalId s, double v) {
      if (circuit_.signal(s).source != SignalSource::Input) fail("circuit: token family {} sets {}, which is not an input", family->name, circuit_.signal(s).name);
      values_[s] = v;
    });
  const auto& delays = circuit_.delays();
  for (const Delay& d : delays) {
    const std::vector<double>* past = values_ago(d.ago);
    double v = past ? (*past)[d.input] : 0;
    if (check_ && v != 0 && v != 1) fail("circuit: delayed signal {} is {}, not a bit", circuit_.signal(d.input).name, v);
    values_[d.output] = v;
  }

  for (std::uint32_t i : graph_.evaluation_order) {
    const Step& s = graph_.steps[i];
    if (s.kind == Step::Kind::Unit) run_unit(graph_.units[s.index]);
    else if (s.kind == Step::Kind::Bank) run_bank(static_cast<int>(s.index));
  }
  if (check_) {
    double squares = 0;
    for (SignalId s = 0; s < values_.size(); ++s) {
      check_range(s);
      squares += values_[s] * values_[s];
    }
    if (squares >= std::ldexp(1.0, 50)) fail("circuit: residual sum of squares {} is too large for the norm scheme", squares);
  }
  history_.insert(history_.begin(), values_);
  if (history_.size() > static_cast<std::size_t>(kMaxLookBack)) history_.pop_back();
  ++passes_;
  return argmax_next_token();
}

std::uint32_t Evaluator::argmax_next_token() const {
  // Only tokens with a weight on a non-zero output can score; every other token scores exactly 0.
  std::vector<std::pair<std::uint32_t, double>> scored;
  const auto& outputs = circuit_.outputs();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    double v = values_[outputs[i]];
    if (v == 0) continue;
    for (const CodeEntry& e : code_by_output_[i]) scored.emplace_back(e.token, e.weight * v);
  }
  std::sort(scored.begin(), scored.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::uint32_t touched = 0, best_token = 0;
  double best = -std::numeric_limits<double>::infinity(), second = best;
  for (std::size_t i = 0; i < scored.size();) {
    std::uint32_t token = scored[i].first;
    double logit = 0;
    for (; i < scored.size() && scored[i].first == token; ++i) logit += scored[i].second;
    ++touched;
    if (logit > best) {
      second = best;
      best = logit;
      best_token = token;
    } else {
      second = std::max(second, logit);
    }
  }
  if (touched < circuit_.vocab_size()) second = std::max(second, 0.0);
  if (check_) {
    if (!(best > 0)) fail("circuit: no token scores above zero; the next token would be an accident of tie-breaking");
    if (best - second < 0.5) fail("circuit: next-token margin {} is too small (token {} scores {})", best - second, best_token, best);
  }
  return best_token;
}

double Evaluator::lane(int bank, int row, int half, int lane) const {
  return banks_.at(bank).lanes.at((static_cast<std::size_t>(row) * kBankHalves + half) * kBankLanesPerHalf + lane);
}

}  // namespace rvformer::circuit
