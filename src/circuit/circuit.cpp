// circuit/circuit.cpp — see circuit.h.
#include "circuit/circuit.h"

#include <algorithm>
#include <cmath>

#include "support/error.h"

namespace rvformer::circuit {

Circuit::Circuit() { add_signal("one", SignalSource::Constant, 1, 1); }

SignalId Circuit::add_signal(std::string name, SignalSource source, double min, double max) {
  if (min > max) fail("circuit: signal {} has an empty range [{}, {}]", name, min, max);
  signals_.push_back(Signal{std::move(name), source, min, max});
  return static_cast<SignalId>(signals_.size() - 1);
}

SignalId Circuit::add_input(std::string name, double min, double max) {
  return add_signal(std::move(name), SignalSource::Input, min, max);
}

SignalId Circuit::add_neuron_signal(std::string name, double min, double max) {
  return add_signal(std::move(name), SignalSource::Neurons, min, max);
}

SignalId Circuit::add_read_signal(std::string name, double min, double max, double quantum) {
  SignalId id = add_signal(std::move(name), SignalSource::BankRead, min, max);
  signals_[id].quantum = quantum;
  return id;
}

void Circuit::add_neuron(Neuron neuron) {
  for (const Term& term : neuron.down) {
    if (signals_.at(term.signal).source != SignalSource::Neurons)
      fail("circuit: neuron of unit {} writes {}, which is not a neuron signal", neuron.unit,
           signals_[term.signal].name);
  }
  neurons_.push_back(std::move(neuron));
}

int Circuit::add_bank(Bank bank) {
  if (bank.rows < 1 || bank.rows > kBankRows) fail("circuit: bank {} has {} rows", bank.name, bank.rows);
  banks_.push_back(std::move(bank));
  return static_cast<int>(banks_.size() - 1);
}

SignalId Circuit::add_delay(SignalId input, std::string name, int ago) {
  const Signal& in = signals_.at(input);
  if (in.min < 0 || in.max > 1) fail("circuit: delay of {} needs a bit, its range is [{}, {}]", in.name, in.min, in.max);
  if (ago < 1 || ago > kMaxLookBack) fail("circuit: delay {} looks {} passes back (1 to {})", name, ago, kMaxLookBack);
  SignalId output = add_signal(std::move(name), SignalSource::Delay, 0, 1);
  delays_.push_back(Delay{input, output, ago});
  return output;
}

SignalId Circuit::add_stored_levels_signal(std::string name, double max_level) {
  if (max_level < 4 || max_level > kMaxStoredLevel || std::exp2(std::round(std::log2(max_level))) != max_level)
    fail("circuit: stored levels of {} go up to {}, not a power of two from 4 to {}", name, max_level, kMaxStoredLevel);
  SignalId id = add_signal(std::move(name), SignalSource::Neurons, 0, max_level);
  signals_[id].stored_levels = true;
  return id;
}

void Circuit::add_token_family(TokenFamily family) {
  for (const TokenFamily& existing : families_)
    if (existing.name == family.name) fail("circuit: token family {} declared twice", family.name);
  families_.push_back(std::move(family));
}

void Circuit::mark_output(SignalId signal, double initial) {
  outputs_.push_back(signal);
  output_initials_.push_back(initial);
}

bool Circuit::is_output(SignalId signal) const {
  return std::find(outputs_.begin(), outputs_.end(), signal) != outputs_.end();
}

std::uint32_t Circuit::vocab_size() const {
  std::uint32_t total = 0;
  for (const TokenFamily& family : families_) total += family.count;
  return total;
}

std::uint32_t Circuit::token_id(const std::string& family, std::uint32_t index) const {
  std::uint32_t first = 0;
  for (const TokenFamily& f : families_) {
    if (f.name == family) {
      if (index >= f.count) fail("circuit: token {}[{}] out of range (family has {})", family, index, f.count);
      return first + index;
    }
    first += f.count;
  }
  fail("circuit: unknown token family {}", family);
}

std::pair<const TokenFamily*, std::uint32_t> Circuit::token_family_of(std::uint32_t token) const {
  std::uint32_t first = 0;
  for (const TokenFamily& f : families_) {
    if (token < first + f.count) return {&f, token - first};
    first += f.count;
  }
  fail("circuit: token id {} is outside the vocabulary of {}", token, first);
}

namespace {

// FNV-1a over the bytes of the values fed to it.
class Hasher {
 public:
  template <typename T>
  void add(const T& value) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
    for (std::size_t i = 0; i < sizeof(T); ++i) state_ = (state_ ^ bytes[i]) * 0x100000001b3ull;
  }
  void add(const std::string& text) {
    add(text.size());
    for (char ch : text) add(ch);
  }
  void add(const LinearForm& form) {
    add(form.size());
    for (const Term& t : form) add(t.signal), add(t.weight), add(t.ago);
  }
  void add(const RowSelect& select) {
    add(select.one_hot.size());
    for (SignalId s : select.one_hot) add(s);
    add(select.binary.size());
    for (SignalId s : select.binary) add(s);
    add(select.match.size());
    for (const Literal& l : select.match) add(l.signal), add(l.negated);
    add(select.conditions.size());
    for (const LinearForm& f : select.conditions) add(f);
    add(select.ago);
  }
  std::uint64_t value() const { return state_; }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ull;
};

}  // namespace

std::uint64_t Circuit::fingerprint() const {
  Hasher h;
  for (const Signal& s : signals_)
    h.add(s.name), h.add(s.source), h.add(s.min), h.add(s.max), h.add(s.quantum), h.add(s.stored_levels);
  for (const Neuron& n : neurons_) {
    h.add(n.gate), h.add(n.up), h.add(n.gate_quantum);
    h.add(n.down.size());
    for (const Term& t : n.down) h.add(t.signal), h.add(t.weight);
  }
  for (const Bank& b : banks_) {
    h.add(b.name), h.add(b.rows), h.add(b.has_write), h.add(b.has_read);
    h.add(b.write.row), h.add(b.read.row), h.add(b.write.first_written_row);
    for (int half = 0; half < kBankHalves; ++half) {
      h.add(b.write.beta[half]);
      h.add(b.write.lanes[half].size());
      for (const LinearForm& lane : b.write.lanes[half]) h.add(lane);
      h.add(b.read.lanes[half].size());
      for (const auto& targets : b.read.lanes[half]) {
        h.add(targets.size());
        for (const Term& t : targets) h.add(t.signal), h.add(t.weight);
      }
    }
  }
  for (const Delay& d : delays_) h.add(d.input), h.add(d.output), h.add(d.ago);
  for (SignalId s : outputs_) h.add(s);
  for (double initial : output_initials_) h.add(initial);
  // Token families: every token's input values and output code.
  for (const TokenFamily& f : families_) {
    h.add(f.name), h.add(f.count);
    for (std::uint32_t i = 0; i < f.count; ++i) {
      auto add_pair = [&](SignalId s, double v) { h.add(s), h.add(v); };
      if (f.fill) f.fill(i, add_pair);
      if (f.code) f.code(i, add_pair);
    }
  }
  return h.value();
}

}  // namespace rvformer::circuit
