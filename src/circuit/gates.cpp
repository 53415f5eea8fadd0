// circuit/gates.cpp — see gates.h.
#include "circuit/gates.h"

#include <algorithm>
#include <cmath>

namespace rvformer::circuit {

Form& Form::operator+=(const Form& other) {
  for (const Term& t : other.terms_) {
    auto it = std::find_if(terms_.begin(), terms_.end(), [&](const Term& x) { return x.signal == t.signal; });
    if (it == terms_.end()) {
      terms_.push_back(t);
    } else {
      it->weight += t.weight;
      if (it->weight == 0) terms_.erase(it);
    }
  }
  return *this;
}

Form& Form::operator*=(double k) {
  if (k == 0) terms_.clear();
  for (Term& t : terms_) t.weight *= k;
  return *this;
}

Form sum_of(const std::vector<SignalId>& signals) {
  Form f;
  for (SignalId s : signals) f += F(s);
  return f;
}

std::string indexed(const std::string& name, int i) { return name + "[" + std::to_string(i) + "]"; }

std::vector<Term> spelling_change(const Bits& bits, std::uint32_t from, std::uint32_t to) {
  std::vector<Term> terms;
  for (std::size_t b = 0; b < bits.size(); ++b) {
    const int delta = static_cast<int>((to >> b) & 1) - static_cast<int>((from >> b) & 1);
    if (delta != 0) terms.push_back({bits[b], static_cast<double>(delta)});
  }
  return terms;
}

std::vector<Literal> match_bits(const Bits& bits, int low, int width, std::uint32_t value) {
  std::vector<Literal> literals;
  for (int i = 0; i < width; ++i) literals.push_back((value >> i) & 1 ? lit(bits[low + i]) : nlit(bits[low + i]));
  return literals;
}

std::vector<Literal> join(std::vector<Literal> a, const std::vector<Literal>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Form binary_value(const std::vector<SignalId>& bits) {
  Form f;
  double weight = 1;
  for (SignalId b : bits) {
    f += F(b) * weight;
    weight *= 2;
  }
  return f;
}

Form signed_value(const std::vector<SignalId>& bits) {
  const std::vector<SignalId> low(bits.begin(), bits.end() - 1);
  return binary_value(low) - F(bits.back()) * std::ldexp(1.0, static_cast<int>(low.size()));
}

Form one_hot_at_least(const std::vector<SignalId>& one_hot, std::size_t k) {
  Form sum;
  for (std::size_t j = k; j < one_hot.size(); ++j) sum += F(one_hot[j]);
  return sum;
}

namespace {
Form literal_sum(const std::vector<Literal>& literals) {
  Form f;
  for (const Literal& l : literals) f += l.negated ? Form(1.0) - F(l.signal) : F(l.signal);
  return f;
}
}  // namespace

Form Enable::on() const {
  Form f = literal_sum(literals_);
  return f - static_cast<double>(literals_.size() - 1);
}

std::vector<Literal> Enable::with(std::vector<Literal> more) const {
  more.insert(more.begin(), literals_.begin(), literals_.end());
  return more;
}

SignalId Gates::signal(const std::string& name, double min, double max) {
  return c_.add_neuron_signal(unit_ + "." + name, min, max);
}

Bits Gates::signals(const std::string& name, int count) {
  Bits bits;
  for (int i = 0; i < count; ++i) bits.push_back(signal(indexed(name, i)));
  return bits;
}

void Gates::add_relu(SignalId out, const Form& gate, double weight, const Form& up, double quantum) {
  c_.add_neuron(Neuron{gate.terms(), up.terms(), {{out, weight}}, quantum, unit_});
}

SignalId Gates::relu(const std::string& name, const Form& t, double max) {
  SignalId out = signal(name, 0, max);
  add_relu(out, t);
  return out;
}

void Gates::add_all(SignalId out, const std::vector<Literal>& literals, const Form& condition, double weight) {
  double needed = static_cast<double>(literals.size()) + (condition.terms().empty() ? 0 : 1);
  add_relu(out, literal_sum(literals) + condition - (needed - 1), weight);
}

void Gates::add_all(const std::vector<Term>& down, const std::vector<Literal>& literals) {
  Form gate = literal_sum(literals) - (static_cast<double>(literals.size()) - 1);
  c_.add_neuron(Neuron{gate.terms(), Form(1.0).terms(), down, 1, unit_});
}

SignalId Gates::all(const std::string& name, const std::vector<Literal>& literals) {
  SignalId out = signal(name);
  add_all(out, literals);
  return out;
}

SignalId Gates::all(const std::string& name, const std::vector<Literal>& literals, const Form& condition) {
  SignalId out = signal(name);
  add_all(out, literals, condition);
  return out;
}

void Gates::add_step(SignalId out, const Form& t, double threshold, double weight) {
  add_relu(out, t - (threshold - 1), weight);
  add_relu(out, t - threshold, -weight);
}

void Gates::add_step(const std::vector<Term>& down, const Form& t, double threshold) {
  if (down.empty()) return;
  std::vector<Term> negated = down;
  for (Term& term : negated) term.weight = -term.weight;
  c_.add_neuron(Neuron{(t - (threshold - 1)).terms(), Form(1.0).terms(), down, 1, unit_});
  c_.add_neuron(Neuron{(t - threshold).terms(), Form(1.0).terms(), negated, 1, unit_});
}

SignalId Gates::at_least(const std::string& name, const Form& t, double threshold) {
  SignalId out = signal(name);
  add_step(out, t, threshold);
  return out;
}

SignalId Gates::any(const std::string& name, const Form& count) { return at_least(name, count, 1); }

SignalId Gates::any(const std::string& name, const std::vector<SignalId>& bits) {
  return any(name, sum_of(bits));
}

SignalId Gates::equals(const std::string& name, const Form& t, double value) {
  SignalId out = signal(name);
  add_relu(out, t - (value - 1), 1);
  add_relu(out, t - value, -2);
  add_relu(out, t - (value + 1), 1);
  return out;
}

SignalId Gates::exclusive_or(const std::string& name, SignalId a, SignalId b) {
  SignalId out = signal(name);
  add_relu(out, F(a) + F(b), 1);
  add_relu(out, F(a) + F(b) - 1, -2);
  return out;
}

SignalId Gates::copy(const std::string& name, const Form& bit) { return relu(name, bit, 1); }

SignalId Gates::gated(const std::string& name, SignalId bit, const Form& x, double max) {
  SignalId out = signal(name, 0, max);
  add_relu(out, x - max * (Form(1.0) - F(bit)));
  return out;
}

std::vector<SignalId> Gates::counter_one_hot(const std::string& name, SignalId counter, int levels) {
  // [n ≤ k] = [x ≥ 2^-k] = relu(2^(k+1)·x − 1) − relu(2^(k+1)·x − 2): 1 for n ≤ k, 0 for n > k, and
  // every non-zero gate is at least 1/2 from zero. Then [n = k] = [n ≤ k] − [n ≤ k − 1].
  auto add_at_most = [&](SignalId out, int k, double weight) {
    double s = std::ldexp(1.0, k + 1);
    add_relu(out, F(counter) * s - 1, weight, Form(1.0), 0.5);
    add_relu(out, F(counter) * s - 2, -weight, Form(1.0), 0.5);
  };
  std::vector<SignalId> one_hot(levels);
  for (int k = 0; k < levels; ++k) {
    one_hot[k] = signal(name + ".is" + std::to_string(k));
    add_at_most(one_hot[k], k, 1);
    if (k > 0) add_at_most(one_hot[k], k - 1, -1);
  }
  return one_hot;
}

}  // namespace rvformer::circuit
