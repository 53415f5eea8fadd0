// circuit/circuit.h — the circuit IR: what a compiled machine computes in one forward pass.
//
// A circuit is written in *logical* values: every signal is an exact number (a bit, a small integer,
// a power of two) held in one residual-stream dimension. Its parts map one to one onto Qwen3.5
// components, which the compiler later places into layers and turns into weights:
//   * inputs        — values the token embedding puts into the residual stream;
//   * neurons       — SwiGLU MLP units computing relu(gate) * up exactly;
//   * banks         — Gated DeltaNet key heads used as addressable memory (one write and one read
//                     port per pass, the read seeing this pass's write);
//   * delays        — a signal's value one to three passes back (a GDN head whose values come
//                     through one of the causal conv's earlier taps);
//   * output code   — the LM head rows that turn output signals into the next token.
// The exact evaluator (evaluator.h) runs a circuit directly; it is the oracle between the golden
// emulator and the compiled weights.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rvformer::circuit {

using SignalId = std::uint32_t;

// Signal 0 is the constant 1: a LinearForm term on it is a bias.
inline constexpr SignalId kOne = 0;

// A bank's key, query and value forms may look back: the causal conv gives each channel the
// projections of the last kMaxLookBack tokens besides the current one.
inline constexpr int kMaxLookBack = 3;

struct Term {
  SignalId signal;
  double weight;
  // Passes back (0: this pass). Only bank lane values use it here (every term of a lane alike);
  // a row select looks back as a whole (RowSelect::ago), a delay through Delay::ago.
  std::uint8_t ago = 0;
};

// Σ weight · signal. Exactness is checked by the evaluator, not assumed.
using LinearForm = std::vector<Term>;

// A bit or its complement.
struct Literal {
  SignalId signal;
  bool negated = false;
};

enum class SignalSource : std::uint8_t { Constant, Input, Neurons, BankRead, Delay };

struct Signal {
  std::string name;
  SignalSource source;
  double min;  // declared value range, checked by the evaluator
  double max;
  double quantum = 1;  // every value is a multiple of it (a power of two)
  // Stored levels: a neuron signal with values 0 or a power of two up to `max` that only bank lanes
  // read, held in the residual as that many stored units (V each), so that a lane keeps several
  // bits: {0, 1, 2, 4} are two, up to 64 three, up to 2^14 four.
  bool stored_levels = false;
};

// A SwiGLU unit: contributes relu(gate) · up · weight to each `down` signal. `gate` takes values
// that are multiples of `gate_quantum` (a power of two); the emitter scales it so SiLU is exactly
// relu there (0 stays 0, the smallest positive value maps to >= 128, negative values to <= -128).
struct Neuron {
  LinearForm gate;
  LinearForm up;
  std::vector<Term> down;
  double gate_quantum = 1.0;
  std::string unit;  // the functional unit that emitted it, for reports and ablation
};

// Logical contents of a bank lane: bits, or halving counters (exact powers of two).
inline constexpr int kBankRows = 128;        // key head dimension
inline constexpr int kBankHalves = 2;        // value heads per key head
inline constexpr int kBankLanesPerHalf = 126;  // 128 value lanes minus two norm-balancing lanes
// A lane of bits is compiled as Y·form − (Y − V) with V's low bits far below Y (compiler/physical.h):
// where it stores a 1, its terms' absolute values, constant included, may add up to at most 3.
// (A 0 lands at V − Y or below, far under SiLU's zero point, so rounding there cannot matter.)
inline constexpr double kLaneMagnitudeLimit = 3;
// The largest stored level a lane may hold (four bits a lane: 0 and the powers 2^0 .. 2^14).
inline constexpr double kMaxStoredLevel = 16384;
// A write replaces a lane's value v by w as v + (w − v) in float32: exact when w ≥ v or w = 0, and
// otherwise when v − w is m·2^e with an odd m at most 5 (V has 22 significant bits): true between
// bits and between the levels 0, 1, 2, 4, not from 64 down to 1. Lanes of wider levels are cleared
// (written 0) before they are written lower.
inline constexpr double kMaxOverwriteStep = 5;

// Which row a port addresses: a one-hot select over the rows, or the row's number in binary. The
// port is active only when every match literal and every condition (a 0/1 form) is 1; otherwise it selects nothing (a
// write does nothing and a read gives zeros). The emitter turns this into one linear form per key
// or query lane — 32 at the selected row, at most −96 elsewhere — so binary addresses and
// conditions cost no neurons at all (docs/circuit-encoding.md).
struct RowSelect {
  std::vector<SignalId> one_hot;  // size rows; or
  std::vector<SignalId> binary;   // little-endian row number (rows ≤ 2^binary.size())
  std::vector<Literal> match;     // bits that must be 1 (or 0 when negated), e.g. a bank number
  std::vector<LinearForm> conditions;
  // Passes back every part of the select is taken (its signals' values `ago` passes ago); within
  // the first `ago` passes of a sequence such a select selects nothing.
  int ago = 0;
};

// A Gated DeltaNet key head used as memory: `rows` addressable rows, each holding two halves (one
// value head each) of up to 126 lanes. The emitter adds two large constant lanes to every written
// half so the gated RMSNorm on the read-out is data-independent (docs/circuit-encoding.md).
struct BankWrite {
  RowSelect row;
  // Per half: the write strength β as a logical form of this pass's signals with values in
  // {0, 1/2, 1}: 0 keeps the row, 1 overwrites it, 1/2 moves every lane half-way to the new value.
  LinearForm beta[kBankHalves];
  // New lane values: a bit form — an integer form at most 1, stored as its positive part, so
  // Σ literals − (n − 1) stores their AND — or a form of stored-levels signals (0 or a power of two).
  std::vector<LinearForm> lanes[kBankHalves];
  // Rows below it are never written (their key lanes stay zero): x0 of a register file.
  int first_written_row = 0;
};

struct BankRead {
  RowSelect row;
  // Per half and lane: where the lane's read-out value goes.
  std::vector<std::vector<Term>> lanes[kBankHalves];
};

struct Bank {
  Bank(std::string bank_name, int bank_rows) : name(std::move(bank_name)), rows(bank_rows) {}
  std::string name;
  int rows = kBankRows;
  bool has_write = false;
  bool has_read = false;
  BankWrite write;
  BankRead read;
};

struct Delay {
  SignalId input;
  SignalId output;
  int ago = 1;  // passes back, 1 to kMaxLookBack
};

// A family of tokens sharing one meaning, e.g. "VAL" with a 16-bit payload. `fill` gives the
// input-signal values of token `index` of the family; `code` gives its LM-head weights on output
// signals. Token ids are assigned family by family in declaration order.
struct TokenFamily {
  std::string name;
  std::uint32_t count;
  std::function<void(std::uint32_t index, const std::function<void(SignalId, double)>& set)> fill;
  std::function<void(std::uint32_t index, const std::function<void(SignalId, double)>& set)> code;
};

class Circuit {
 public:
  Circuit();

  // --- construction -------------------------------------------------------------------------
  SignalId add_input(std::string name, double min = 0, double max = 1);
  // A signal defined as the sum of neuron contributions (neurons added with add_neuron).
  SignalId add_neuron_signal(std::string name, double min = 0, double max = 1);
  void add_neuron(Neuron neuron);
  // A signal filled by bank read-outs (several banks may add into it when at most one reads).
  SignalId add_read_signal(std::string name, double min = 0, double max = 1, double quantum = 1);
  int add_bank(Bank bank);
  Bank& bank(int index) { return banks_[index]; }
  SignalId add_delay(SignalId input, std::string name, int ago = 1);
  // A neuron signal holding stored levels (Signal::stored_levels): 0 or a power of two up to
  // max_level, itself a power of two from 4 to kMaxStoredLevel.
  SignalId add_stored_levels_signal(std::string name, double max_level = 4);
  void add_token_family(TokenFamily family);
  // Output signals are the ones the LM head reads; they must hold their final value at pass end.
  // An output neuron signal may be written by several units in different layers (their
  // contributions add up), and starts every pass at `initial`.
  void mark_output(SignalId signal, double initial = 0);

  // --- inspection ----------------------------------------------------------------------------
  const std::vector<Signal>& signals() const { return signals_; }
  const Signal& signal(SignalId id) const { return signals_[id]; }
  const std::vector<Neuron>& neurons() const { return neurons_; }
  const std::vector<Bank>& banks() const { return banks_; }
  const std::vector<Delay>& delays() const { return delays_; }
  const std::vector<TokenFamily>& token_families() const { return families_; }
  const std::vector<SignalId>& outputs() const { return outputs_; }
  const std::vector<double>& output_initials() const { return output_initials_; }  // per output
  bool is_output(SignalId signal) const;
  std::uint32_t vocab_size() const;
  // Token id of `index` within family `name`; throws for unknown families or indices.
  std::uint32_t token_id(const std::string& family, std::uint32_t index = 0) const;
  // Which family a token id belongs to, and its index there.
  std::pair<const TokenFamily*, std::uint32_t> token_family_of(std::uint32_t token) const;
  // A hash of everything that determines the compiled weights (signals, neurons, banks, delays,
  // outputs, the token table); two circuits with equal fingerprints compile to the same model.
  std::uint64_t fingerprint() const;

 private:
  SignalId add_signal(std::string name, SignalSource source, double min, double max);

  std::vector<Signal> signals_;
  std::vector<Neuron> neurons_;
  std::vector<Bank> banks_;
  std::vector<Delay> delays_;
  std::vector<TokenFamily> families_;
  std::vector<SignalId> outputs_;
  std::vector<double> output_initials_;
};

}  // namespace rvformer::circuit
