// compiler/emit.cpp — see emit.h.
#include "compiler/emit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "compiler/physical.h"
#include "support/error.h"

namespace rvformer::compiler {
namespace {

using circuit::Circuit;
using circuit::LinearForm;
using circuit::SignalId;

// A projection matrix [rows, hidden] being filled in logical units. Weights on data dimensions are
// scaled by what the RMSNorm does to the residual; constant terms of a row are summed and, when the
// matrix is finished, split into bf16 pieces over the constant dimensions (all of which read the
// same power of two).
class Projection {
 public:
  Projection(EmittedTensor& tensor, const Placement& placement, int first_column, double data_scale, double constant_scale)
      : t_(tensor), cols_(tensor.shape[1]), p_(placement), first_column_(first_column), data_scale_(data_scale),
        constant_scale_(constant_scale) {}
  Projection(const Projection&) = delete;
  Projection& operator=(const Projection&) = delete;

  void add(std::size_t row, int dim, double logical_weight) { at(row, dim) += static_cast<float>(logical_weight * data_scale_); }
  void add_constant(std::size_t row, double value) {
    if (value != 0) constants_[row] += value;
  }
  // Adds weight · form (the constant term, if any, to the row's constant).
  void add_form(std::size_t row, const LinearForm& form, double weight) {
    for (const circuit::Term& t : form) {
      if (t.signal == circuit::kOne) add_constant(row, weight * t.weight);
      else add(row, p_.signal_dim[t.signal], weight * t.weight);
    }
  }
  // Writes the constant terms; call once the matrix is complete.
  void finish() {
    for (auto [row, value] : constants_) {
      std::vector<double> pieces = bf16_pieces(value);
      if (static_cast<int>(pieces.size()) > p_.constant_dims)
        fail("compiler: constant {} of {} row {} needs {} bf16 pieces, more than the {} constant dimensions",
             value, t_.name, row, pieces.size(), p_.constant_dims);
      for (std::size_t i = 0; i < pieces.size(); ++i)
        at(row, p_.first_dim + static_cast<int>(i)) += static_cast<float>(pieces[i] * constant_scale_);
    }
    constants_.clear();
  }

 private:
  float& at(std::size_t row, int dim) { return t_.values[row * cols_ + static_cast<std::size_t>(dim - first_column_)]; }

  EmittedTensor& t_;
  std::size_t cols_;
  const Placement& p_;
  int first_column_;
  double data_scale_, constant_scale_;
  std::map<std::size_t, double> constants_;
};

class Emitter {
 public:
  Emitter(const Circuit& circuit, const Placement& placement, const EmitOptions& options)
      : c_(circuit), p_(placement), first_column_(options.machine_dims_only ? placement.first_dim : 0) {
    // mean(h²) = d·K²/H with H/d = 4^j, so the RMSNorm multiplies every dimension by 2^j/K: a
    // constant dimension reads 2^j, a data dimension holding x reads x·2^j/K.
    double power = std::sqrt(static_cast<double>(p_.hidden_size) / p_.constant_dims);
    constant_read_ = power;
    data_scale_ = kResidualConstant / power;
  }

  EmittedModel run() {
    make_config();
    EmittedTensor& embed = add("embed_tokens.weight", {vocab(), hidden()});
    EmittedTensor& final_norm = add("norm.weight", {hidden()});
    fill_embedding(embed);
    fill_final_norm(final_norm);
    for (int layer = 0; layer < p_.num_layers; ++layer) emit_layer(layer);
    check_bf16();
    return std::move(model_);
  }

 private:
  // The residual dimensions the tensors hold (all, or the machine's own).
  std::size_t hidden() const { return static_cast<std::size_t>(p_.hidden_size - first_column_); }
  // A residual dimension's column (or row of an output projection) in the tensors.
  std::size_t column(int dim) const { return static_cast<std::size_t>(dim - first_column_); }
  std::size_t vocab() const { return c_.vocab_size(); }
  int dim(SignalId s) const { return p_.signal_dim[s]; }

  EmittedTensor& add(const std::string& name, std::vector<std::size_t> shape, float fill = 0.0f) {
    std::size_t count = 1;
    for (std::size_t e : shape) count *= e;
    model_.tensors.push_back({name, std::move(shape), std::vector<float>(count, fill)});
    return model_.tensors.back();
  }
  Projection projection(EmittedTensor& tensor) {
    return Projection(tensor, p_, first_column_, data_scale_, 1 / constant_read_);
  }

  void make_config() {
    engine::Config& config = model_.config;
    config.hidden_size = hidden();
    config.intermediate_size = p_.intermediate_size;
    config.num_hidden_layers = p_.num_layers;
    config.vocab_size = vocab();
    config.layer_types.assign(p_.num_layers, engine::LayerType::linear_attention);
    config.tie_word_embeddings = true;
    config.rms_norm_eps = 1e-6;
    engine::validate_config(config, "compiled model");
    model_.tensors.reserve(3 + 16 * static_cast<std::size_t>(p_.num_layers));  // references stay valid
  }

  // Every RMSNorm keeps its scale (1 + w = 1): the projections absorb it. The final norm keeps only
  // the output dimensions.
  void fill_final_norm(EmittedTensor& norm) {
    std::fill(norm.values.begin(), norm.values.end(), -1.0f);
    for (SignalId s : c_.outputs()) norm.values[column(dim(s))] = 0.0f;
  }

  void fill_embedding(EmittedTensor& embed) {
    std::size_t cols = hidden();
    auto at = [&](std::uint32_t token, int d) -> float& { return embed.values[token * cols + column(d)]; };
    std::uint32_t token = 0;
    for (const circuit::TokenFamily& family : c_.token_families()) {
      for (std::uint32_t i = 0; i < family.count; ++i, ++token) {
        for (int d = 0; d < p_.constant_dims; ++d) at(token, p_.first_dim + d) = static_cast<float>(kResidualConstant);
        if (family.fill) family.fill(i, [&](SignalId s, double v) { at(token, dim(s)) = exact(v, "an input value"); });
        if (family.code) family.code(i, [&](SignalId s, double w) {
            if (w < 0) fail("compiler: token {}[{}] has output weight {}; tied codes need non-negative weights", family.name, i, w);
            at(token, dim(s)) = exact(w, "an output code");
          });
      }
    }
  }

  static float exact(double v, const char* what) {
    auto f = static_cast<float>(v);
    if (static_cast<double>(f) != v) fail("compiler: {} ({}) is not exact in fp32", what, v);
    return f;
  }

  // Every weight must be a bf16 number, so that the checkpoint stored in bf16 computes what the
  // fp32 one does.
  void check_bf16() const {
    for (const EmittedTensor& t : model_.tensors)
      for (std::size_t i = 0; i < t.values.size(); ++i)
        if (!is_bf16(t.values[i]))
          fail("compiler: {}[{}] = {} is not exactly a bf16 number", t.name, i, static_cast<double>(t.values[i]));
  }

  void emit_layer(int layer) {
    std::string prefix = fmt::format("layers.{}.", layer);
    add(prefix + "input_layernorm.weight", {hidden()});
    add(prefix + "post_attention_layernorm.weight", {hidden()});
    emit_linear_attention(layer, prefix + "linear_attn.");
    emit_mlp(layer, prefix + "mlp.");
  }

  struct GdnTensors {
    Projection &qkv, &z, &b;
    EmittedTensor& out;
    EmittedTensor& conv;
  };

  void emit_linear_attention(int layer, const std::string& prefix) {
    const engine::Config& config = model_.config;
    std::size_t conv_dim = config.linear_conv_dim();
    Projection qkv = projection(add(prefix + "in_proj_qkv.weight", {conv_dim, hidden()}));
    Projection z = projection(add(prefix + "in_proj_z.weight", {config.linear_value_dim(), hidden()}));
    Projection b = projection(add(prefix + "in_proj_b.weight", {config.linear_num_value_heads, hidden()}));
    add(prefix + "in_proj_a.weight", {config.linear_num_value_heads, hidden()});
    EmittedTensor& conv = add(prefix + "conv1d.weight", {conv_dim, 1, config.linear_conv_kernel_dim});
    add(prefix + "dt_bias", {config.linear_num_value_heads});
    add(prefix + "A_log", {config.linear_num_value_heads}, -std::numeric_limits<float>::infinity());
    EmittedTensor& norm = add(prefix + "norm.weight", {config.linear_value_head_dim});
    EmittedTensor& out = add(prefix + "out_proj.weight", {hidden(), config.linear_value_dim()});
    for (int lane = 0; lane < circuit::kBankLanesPerHalf; ++lane) norm.values[lane] = static_cast<float>(kReadNormWeight);
    // The current token passes through the conv unchanged (tap 3 is the current token).
    for (std::size_t ch = 0; ch < conv_dim; ++ch) conv.values[ch * 4 + 3] = 1.0f;

    GdnTensors t{qkv, z, b, out, conv};
    for (std::size_t i = 0; i < c_.banks().size(); ++i)
      if (p_.bank_head[i].layer == layer) emit_bank(c_.banks()[i], p_.bank_head[i].head, t);
    emit_delays(layer, t);
    for (Projection* p : {&qkv, &z, &b}) p->finish();
  }

  static std::size_t query_row(int head, int row) { return static_cast<std::size_t>(head) * kKeyDim + row; }
  static std::size_t key_row(int head, int row) { return kKeyHeadsTotal * kKeyDim + query_row(head, row); }
  static std::size_t value_row(int head, int half, int lane) {
    return 2 * kKeyHeadsTotal * kKeyDim + static_cast<std::size_t>(2 * head + half) * kKeyDim + lane;
  }
  static std::size_t value_column(int head, int half, int lane) {
    return static_cast<std::size_t>(2 * head + half) * kKeyDim + lane;
  }

  // Key or query lanes of a row select. Every true condition or match literal adds 128, and the
  // bias takes 128 per condition back, so any false one pushes the lane to ≤ −96, where SiLU is
  // exactly −0. One-hot: plus 32·[row r]. Binary: plus 128 per address bit matching r, minus
  // 128·bits − 32: exactly 32 when everything matches. No neuron decodes the address.
  void emit_select(GdnTensors& t, std::size_t first_row, int rows, const circuit::RowSelect& select, int skipped_rows = 0) {
    Projection& qkv = t.qkv;
    double conditions = static_cast<double>(select.conditions.size() + select.match.size());
    for (int r = skipped_rows; r < rows; ++r) {
      std::size_t lane = first_row + r;
      take_from_tap(t, lane, select.ago);
      for (const LinearForm& c : select.conditions) qkv.add_form(lane, c, kSelectGate);
      double bias = -kSelectGate * conditions;
      for (const circuit::Literal& l : select.match) {
        qkv.add(lane, dim(l.signal), l.negated ? -kSelectGate : kSelectGate);
        if (l.negated) bias += kSelectGate;
      }
      if (!select.one_hot.empty()) {
        qkv.add_form(lane, {{select.one_hot[r], 1}}, kOneHotLevel);
      } else {
        for (std::size_t i = 0; i < select.binary.size(); ++i) {
          bool one = (r >> i) & 1;
          qkv.add(lane, dim(select.binary[i]), one ? kSelectGate : -kSelectGate);
          bias += one ? 0 : kSelectGate;
        }
        bias -= kSelectGate * static_cast<double>(select.binary.size()) - kOneHotLevel;
      }
      qkv.add_constant(lane, bias);
    }
  }

  // The conv passes the channel's projection from `ago` tokens back (tap 3 is the current token).
  static void take_from_tap(GdnTensors& t, std::size_t channel, int ago) {
    for (int tap = 0; tap < 4; ++tap) t.conv.values[channel * 4 + tap] = tap == 3 - ago ? 1.0f : 0.0f;
  }

  // The balancing lanes and the gate z of a written half, both scaled by the half's balance factor
  // (physical.h) so that a stored unit still reads out as 1.
  void emit_half_constants(GdnTensors& t, int head, int half, double factor) {
    for (int lane = 0; lane < kKeyDim; ++lane) t.z.add_constant(value_column(head, half, lane), kGateZ * factor);
    for (int lane = circuit::kBankLanesPerHalf; lane < kKeyDim; ++lane)
      t.qkv.add_constant(value_row(head, half, lane), kBalanceValue * factor);
  }

  // The largest value a half's lanes can hold: 1 for bits, a stored-levels signal's maximum.
  double largest_stored_level(const std::vector<LinearForm>& lanes) const {
    double largest = 1;
    for (const LinearForm& form : lanes)
      for (const circuit::Term& term : form)
        if (c_.signal(term.signal).stored_levels) largest = std::max(largest, c_.signal(term.signal).max);
    return largest;
  }

  // A stored bit: Y·form − (Y − V), which is V for a 1 and exactly −0 after SiLU for a 0. A form
  // of stored-levels signals already holds its value in stored units (V each).
  void emit_lane_value(GdnTensors& t, std::size_t row, const LinearForm& form) {
    if (form.empty()) return;
    take_from_tap(t, row, form.front().ago);
    if (c_.signal(form.front().signal).stored_levels) {
      t.qkv.add_form(row, form, 1);
      return;
    }
    t.qkv.add_form(row, form, kLaneGate);
    t.qkv.add_constant(row, kBitValue - kLaneGate);
  }

  void emit_bank(const circuit::Bank& bank, int head, GdnTensors& t) {
    if (bank.has_write) {
      emit_select(t, key_row(head, 0), bank.rows, bank.write.row, bank.write.first_written_row);
      for (int half = 0; half < circuit::kBankHalves; ++half) {
        emit_half_constants(t, head, half, balance_factor(largest_stored_level(bank.write.lanes[half])));
        // b = 256·β − 128 gives σ(b) exactly 0, 1/2 or 1.
        t.b.add_form(2 * head + half, bank.write.beta[half], kBetaSlope);
        t.b.add_constant(2 * head + half, -kBetaSlope / 2);
        const auto& lanes = bank.write.lanes[half];
        for (std::size_t lane = 0; lane < lanes.size(); ++lane)
          emit_lane_value(t, value_row(head, half, static_cast<int>(lane)), lanes[lane]);
      }
    }
    if (bank.has_read) {
      emit_select(t, query_row(head, 0), bank.rows, bank.read.row);
      for (int half = 0; half < circuit::kBankHalves; ++half) {
        emit_half_constants(t, head, half, balance_factor(largest_stored_level(bank.write.lanes[half])));
        const auto& lanes = bank.read.lanes[half];
        for (std::size_t lane = 0; lane < lanes.size(); ++lane)
          for (const circuit::Term& target : lanes[lane])
            out_at(t, dim(target.signal), value_column(head, half, static_cast<int>(lane))) += exact(target.weight, "a read weight");
      }
    }
  }

  float& out_at(GdnTensors& t, int row, std::size_t column) {
    return t.out.values[this->column(row) * model_.config.linear_value_dim() + column];
  }

  // A delay head writes row 0 with the previous token's values (conv tap 2) and reads it back.
  void emit_delays(int layer, GdnTensors& t) {
    std::vector<int> heads;
    for (std::size_t d = 0; d < c_.delays().size(); ++d) {
      const DelaySlot& slot = p_.delay_slot[d];
      if (slot.head.layer != layer) continue;
      int head = slot.head.head;
      if (std::find(heads.begin(), heads.end(), head) == heads.end()) {
        heads.push_back(head);
        t.qkv.add_constant(key_row(head, 0), kOneHotLevel);
        t.qkv.add_constant(query_row(head, 0), kOneHotLevel);
        for (int half = 0; half < circuit::kBankHalves; ++half) {
          emit_half_constants(t, head, half, 1);  // delays hold bits
          t.b.add_constant(2 * head + half, kBetaSlope / 2);  // β = 1
        }
      }
      const circuit::Delay& delay = c_.delays()[d];
      emit_lane_value(t, value_row(head, slot.half, slot.lane),
                      {{delay.input, 1, static_cast<std::uint8_t>(delay.ago)}});
      out_at(t, dim(c_.delays()[d].output), value_column(head, slot.half, slot.lane)) = 1.0f;
    }
  }

  void emit_mlp(int layer, const std::string& prefix) {
    std::size_t width = p_.intermediate_size;
    Projection gate = projection(add(prefix + "gate_proj.weight", {width, hidden()}));
    Projection up = projection(add(prefix + "up_proj.weight", {width, hidden()}));
    EmittedTensor& down = add(prefix + "down_proj.weight", {hidden(), width});
    auto down_at = [&](int d, std::size_t n) -> float& { return down.values[column(d) * width + n]; };
    std::size_t n = 0;
    for (std::uint32_t index : p_.layer_neurons[layer]) {
      const circuit::Neuron& neuron = c_.neurons()[index];
      double a = kGateLevel / neuron.gate_quantum;
      gate.add_form(n, neuron.gate, a);
      // A neuron writing stored levels scales its (constant) up projection by the stored unit V.
      double stored = c_.signal(neuron.down.front().signal).stored_levels ? kBitValue : 1;
      for (const circuit::Term& t : neuron.down)
        if ((c_.signal(t.signal).stored_levels ? kBitValue : 1) != stored)
          fail("compiler: a neuron of unit {} writes stored levels and other signals", neuron.unit);
      if (stored != 1)
        for (const circuit::Term& t : neuron.up)
          if (t.signal != circuit::kOne) fail("compiler: a neuron of unit {} writing stored levels has a variable up projection", neuron.unit);
      up.add_form(n, neuron.up, stored / a);
      for (const circuit::Term& t : neuron.down) down_at(dim(t.signal), n) += exact(t.weight, "a down weight");
      ++n;
    }
    // relu(A·x)·(1/A) = x, subtracted; stored levels are at least V > 17 already, so A = 1.
    auto clear = [&](int d, double quantum, double sign, bool stored) {
      double a = stored ? 1 : kGateLevel / quantum;
      gate.add(n, d, sign * a);
      up.add_constant(n, 1 / a);
      down_at(d, n) = static_cast<float>(-sign);
      ++n;
    };
    for (const Clear& c : p_.clears) {
      if (c.layer != layer) continue;
      const circuit::Signal& s = c_.signal(c.signal);
      clear(dim(c.signal), s.quantum, 1, s.stored_levels);
      if (s.min < 0) clear(dim(c.signal), s.quantum, -1, s.stored_levels);
    }
    if (layer == 0)
      for (SignalId s : c_.outputs()) clear(dim(s), 1, 1, false);
    // An output that starts from a non-zero value gets it in the MLP of its first writer.
    for (std::size_t i = 0; i < c_.outputs().size(); ++i) {
      if (p_.output_init_layer[i] != layer) continue;
      gate.add_constant(n, kGateLevel);
      up.add_constant(n, c_.output_initials()[i] / kGateLevel);
      down_at(dim(c_.outputs()[i]), n) = 1.0f;
      ++n;
    }
    gate.finish();
    up.finish();
  }

  const Circuit& c_;
  const Placement& p_;
  int first_column_;
  double constant_read_ = 1, data_scale_ = 1;
  EmittedModel model_;
};

}  // namespace

bool is_bf16(double value) {
  auto f = static_cast<float>(value);
  if (static_cast<double>(f) != value) return false;
  return (std::bit_cast<std::uint32_t>(f) & 0xFFFFu) == 0;
}

std::vector<double> bf16_pieces(double value) {
  std::vector<double> pieces;
  double rest = value;
  while (rest != 0) {
    // The top 8 significant bits of what is left, truncated toward zero.
    int exponent = 0;
    double mantissa = std::frexp(rest, &exponent);
    double piece = std::ldexp(std::trunc(std::ldexp(mantissa, 8)), exponent - 8);
    pieces.push_back(piece);
    rest -= piece;
  }
  return pieces;
}

EmittedModel emit(const Circuit& circuit, const circuit::CircuitGraph&, const Placement& placement,
                  const EmitOptions& options) {
  return Emitter(circuit, placement, options).run();
}

std::vector<engine::TensorToWrite> EmittedModel::tensors_to_write(engine::DType storage) const {
  std::vector<engine::TensorToWrite> out;
  // A_log stays F32, as in Qwen3.5's published checkpoints; every other tensor is stored as asked.
  for (const EmittedTensor& t : tensors)
    out.push_back({t.name, t.name.ends_with(".A_log") ? engine::DType::F32 : storage, t.shape, t.values});
  return out;
}

}  // namespace rvformer::compiler
