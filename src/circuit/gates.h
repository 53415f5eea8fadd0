// circuit/gates.h — exact logic built from SwiGLU neurons.
//
// Every gate here is a few neurons of the form relu(t) · u with an integer-valued t, so the
// compiled MLP computes it exactly (docs/circuit-encoding.md explains the scaling). Bits are 0/1
// signals; counts and small integers are plain integer signals.
#pragma once

#include <string>
#include <vector>

#include "circuit/circuit.h"

namespace rvformer::circuit {

// A linear form with arithmetic operators, so circuit code reads like the formula it computes.
class Form {
 public:
  Form() = default;
  Form(double constant) { if (constant != 0) terms_.push_back({kOne, constant}); }  // NOLINT
  static Form of(SignalId s, double weight = 1) {
    Form f;
    f.terms_.push_back({s, weight});
    return f;
  }
  const LinearForm& terms() const { return terms_; }
  operator const LinearForm&() const { return terms_; }  // NOLINT

  Form& operator+=(const Form& other);
  Form& operator-=(const Form& other) { return *this += other * -1.0; }
  Form& operator*=(double k);
  friend Form operator+(Form a, const Form& b) { return a += b; }
  friend Form operator-(Form a, const Form& b) { return a -= b; }
  friend Form operator*(Form a, double k) { return a *= k; }
  friend Form operator*(double k, Form a) { return a *= k; }
  friend Form operator-(Form a) { return a *= -1.0; }

 private:
  LinearForm terms_;
};

inline Form F(SignalId s) { return Form::of(s); }

// A little-endian vector of bit signals: bits[0] is the least significant.
using Bits = std::vector<SignalId>;
// Sum of the given bits (or integers), each with weight 1.
Form sum_of(const std::vector<SignalId>& signals);
// Σ 2^i · bits[i]: the unsigned integer spelled by little-endian bits.
Form binary_value(const std::vector<SignalId>& bits);
// The same bits read in two's complement: the top bit weighs −2^(n−1).
Form signed_value(const std::vector<SignalId>& bits);
// Σ one_hot[j] for j ≥ k: 1 when the value a one-hot spells is at least k (value j at one_hot[j]).
Form one_hot_at_least(const std::vector<SignalId>& one_hot, std::size_t k);

inline Literal operator~(Literal l) { return {l.signal, !l.negated}; }
inline Literal lit(SignalId s) { return {s, false}; }
inline Literal nlit(SignalId s) { return {s, true}; }
// The terms that turn `bits` spelling `from` into spelling `to` (their low bits): +1 on a bit `to`
// sets and `from` does not, −1 the other way. A step that adds them moves a value in binary from one
// number to the next; from 0, they spell `to`.
std::vector<Term> spelling_change(const Bits& bits, std::uint32_t from, std::uint32_t to);
// "name[i]": the name of the i-th signal of a family.
std::string indexed(const std::string& name, int i);
// Literals requiring bits [low, low + width) of `bits` to spell `value`.
std::vector<Literal> match_bits(const Bits& bits, int low, int width, std::uint32_t value);
std::vector<Literal> join(std::vector<Literal> a, const std::vector<Literal>& b);

// What switches a unit on: an AND of literals (a bit signal, or raw instruction bits and a
// machine-state bit). Every neuron of the unit includes it, so a switched-off unit's neurons are
// all off.
class Enable {
 public:
  Enable(SignalId bit) : literals_{lit(bit)} {}  // NOLINT
  Enable(std::vector<Literal> literals) : literals_(std::move(literals)) {}  // NOLINT
  const std::vector<Literal>& literals() const { return literals_; }
  // 1 when every literal holds and at most 0 otherwise.
  Form on() const;
  // 0 when every literal holds and at least 1 otherwise (1 − on()).
  Form off() const { return Form(1.0) - on(); }
  // The literals followed by `more`.
  std::vector<Literal> with(std::vector<Literal> more) const;

 private:
  std::vector<Literal> literals_;
};

// Emits gates into a circuit, naming signals "<unit>.<name>" and tagging neurons with the unit.
class Gates {
 public:
  Gates(Circuit& circuit, std::string unit) : c_(circuit), unit_(std::move(unit)) {}
  Circuit& circuit() { return c_; }
  const std::string& unit() const { return unit_; }
  Gates sub(const std::string& name) const { return Gates(c_, unit_ + "." + name); }

  // A new neuron signal; add terms to it with add_relu.
  SignalId signal(const std::string& name, double min = 0, double max = 1);
  // `count` new 0/1 neuron signals, name[0], name[1], ...
  Bits signals(const std::string& name, int count);
  // Adds weight · relu(gate) · up to `out` (up defaults to 1).
  void add_relu(SignalId out, const Form& gate, double weight = 1, const Form& up = Form(1.0), double quantum = 1);

  // relu(t) for an integer form t.
  SignalId relu(const std::string& name, const Form& t, double max);
  // AND of literals: relu(Σ literals − (n − 1)). One neuron.
  SignalId all(const std::string& name, const std::vector<Literal>& literals);
  // AND of a condition form that is 0 or 1 with extra literals.
  SignalId all(const std::string& name, const std::vector<Literal>& literals, const Form& condition);
  // OR of bits (or, generally, [Σ ≥ 1] for a non-negative integer sum). Two neurons.
  SignalId any(const std::string& name, const std::vector<SignalId>& bits);
  SignalId any(const std::string& name, const Form& count);
  // [t ≥ threshold] for an integer form t. Two neurons.
  SignalId at_least(const std::string& name, const Form& t, double threshold);
  // [t == value] for an integer form t. Three neurons.
  SignalId equals(const std::string& name, const Form& t, double value);
  // XOR of two bits. Two neurons.
  SignalId exclusive_or(const std::string& name, SignalId a, SignalId b);
  // A copy of a 0/1 form (a new signal in a new dimension). One neuron.
  SignalId copy(const std::string& name, const Form& bit);
  // bit ? x : 0 for an integer form x with 0 ≤ x ≤ max. One neuron (relu(x − max·(1−bit))).
  SignalId gated(const std::string& name, SignalId bit, const Form& x, double max);

  // One-hot of n ∈ [0, levels) from a halving counter that reads 2^-n (a bank lane written with 1
  // and then halved once per step). Two neurons per level.
  std::vector<SignalId> counter_one_hot(const std::string& name, SignalId counter, int levels);

  // Adds `weight · [t ≥ threshold]` to `out` (two neurons), for building sums of steps.
  void add_step(SignalId out, const Form& t, double threshold, double weight = 1);
  // Adds [t ≥ threshold] times each term's weight to its signal (two neurons).
  void add_step(const std::vector<Term>& down, const Form& t, double threshold);
  // Adds `weight · AND(literals, condition)` to `out` (one neuron; the condition is a 0/1 form).
  void add_all(SignalId out, const std::vector<Literal>& literals, const Form& condition = Form(), double weight = 1);
  // Adds AND(literals) times each term's weight to its signal (one neuron).
  void add_all(const std::vector<Term>& down, const std::vector<Literal>& literals);

 private:
  Circuit& c_;
  std::string unit_;
};

}  // namespace rvformer::circuit
