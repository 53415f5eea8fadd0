// compiler/emit.cpp — see emit.h.
#include "compiler/emit.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "compiler/physical.h"
#include "support/error.h"

namespace rvformer::compiler {
namespace {

using circuit::Circuit;
using circuit::LinearForm;
using circuit::SignalId;

class Matrix {
 public:
  Matrix(EmittedTensor& tensor) : t_(tensor), cols_(tensor.shape.size() > 1 ? tensor.shape[1] : 1) {}  // NOLINT
  float& at(std::size_t row, std::size_t col) { return t_.values[row * cols_ + col]; }

 private:
  EmittedTensor& t_;
  std::size_t cols_;
};

class Emitter {
 public:
  Emitter(const Circuit& circuit, const Placement& placement) : c_(circuit), p_(placement) {}

  EmittedModel run() {
    make_config();
    EmittedTensor& embed = add("embed_tokens.weight", {vocab(), hidden()});
    EmittedTensor& final_norm = add("norm.weight", {hidden()});
    fill_embedding(embed);
    fill_final_norm(final_norm);
    for (int layer = 0; layer < p_.num_layers; ++layer) emit_layer(layer);
    return std::move(model_);
  }

 private:
  std::size_t hidden() const { return p_.hidden_size; }
  std::size_t vocab() const { return c_.vocab_size(); }
  int dim(SignalId s) const { return p_.signal_dim[s]; }

  EmittedTensor& add(const std::string& name, std::vector<std::size_t> shape, float fill = 0.0f) {
    std::size_t count = 1;
    for (std::size_t e : shape) count *= e;
    model_.tensors.push_back({name, std::move(shape), std::vector<float>(count, fill)});
    return model_.tensors.back();
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

  // RMSNorm(h) = h · rsqrt(mean h²) · (1 + w). The constant dims make mean h² = K² / 4^j exactly.
  double norm_scale() const { return std::sqrt(static_cast<double>(hidden()) / p_.constant_dims) / kResidualConstant; }

  // Weights that make the normalised value of every data dimension equal its residual value and
  // the first constant dimension read as 1; `keep` selects which data dimensions pass at all.
  void fill_norm(EmittedTensor& norm, const std::vector<bool>* keep) {
    double scale = norm_scale();
    for (std::size_t d = 0; d < hidden(); ++d) {
      double factor = 0;
      if (d == 0) factor = keep ? 0 : 1 / (kResidualConstant * scale);
      else if (static_cast<int>(d) >= p_.constant_dims && (!keep || (*keep)[d])) factor = 1 / scale;
      norm.values[d] = static_cast<float>(factor - 1);
      if (static_cast<double>(1.0f + norm.values[d]) != factor)
        fail("compiler: norm weight for dimension {} cannot be exact", d);
    }
  }

  void fill_final_norm(EmittedTensor& norm) {
    std::vector<bool> keep(hidden(), false);
    for (SignalId s : c_.outputs()) keep[dim(s)] = true;
    fill_norm(norm, &keep);
  }

  void fill_embedding(EmittedTensor& embed) {
    Matrix e(embed);
    std::uint32_t token = 0;
    for (const circuit::TokenFamily& family : c_.token_families()) {
      for (std::uint32_t i = 0; i < family.count; ++i, ++token) {
        for (int d = 0; d < p_.constant_dims; ++d) e.at(token, d) = static_cast<float>(kResidualConstant);
        if (family.fill) family.fill(i, [&](SignalId s, double v) { e.at(token, dim(s)) = exact(v, "an input value"); });
        if (family.code) family.code(i, [&](SignalId s, double w) {
            if (w < 0 || w != std::floor(w)) fail("compiler: token {}[{}] has output weight {}; tied codes need non-negative integers", family.name, i, w);
            e.at(token, dim(s)) = exact(w, "an output code");
          });
      }
    }
  }

  static float exact(double v, const char* what) {
    auto f = static_cast<float>(v);
    if (static_cast<double>(f) != v) fail("compiler: {} ({}) is not exact in fp32", what, v);
    return f;
  }

  // Adds weight · form to row `row` of a projection (column = signal dimension).
  void add_form(Matrix& m, std::size_t row, const LinearForm& form, double weight) {
    for (const circuit::Term& t : form) m.at(row, dim(t.signal)) += exact(weight * t.weight, "a projection weight");
  }

  double form_constant(const LinearForm& form) const {
    double c = 0;
    for (const circuit::Term& t : form) if (t.signal == circuit::kOne) c += t.weight;
    return c;
  }

  void emit_layer(int layer) {
    std::string prefix = fmt::format("layers.{}.", layer);
    fill_norm(add(prefix + "input_layernorm.weight", {hidden()}), nullptr);
    fill_norm(add(prefix + "post_attention_layernorm.weight", {hidden()}), nullptr);
    emit_linear_attention(layer, prefix + "linear_attn.");
    emit_mlp(layer, prefix + "mlp.");
  }

  struct GdnTensors {
    Matrix qkv, z, b, out;
    EmittedTensor& conv;
  };

  void emit_linear_attention(int layer, const std::string& prefix) {
    const engine::Config& config = model_.config;
    std::size_t conv_dim = config.linear_conv_dim();
    EmittedTensor& qkv = add(prefix + "in_proj_qkv.weight", {conv_dim, hidden()});
    EmittedTensor& z = add(prefix + "in_proj_z.weight", {config.linear_value_dim(), hidden()});
    EmittedTensor& b = add(prefix + "in_proj_b.weight", {config.linear_num_value_heads, hidden()});
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
  void emit_select(Matrix& qkv, std::size_t first_row, int rows, const circuit::RowSelect& select) {
    double conditions = static_cast<double>(select.conditions.size() + select.match.size());
    for (int r = 0; r < rows; ++r) {
      std::size_t lane = first_row + r;
      for (const LinearForm& c : select.conditions) add_form(qkv, lane, c, kSelectGate);
      double bias = -kSelectGate * conditions;
      for (const circuit::Literal& l : select.match) {
        qkv.at(lane, dim(l.signal)) += static_cast<float>(l.negated ? -kSelectGate : kSelectGate);
        if (l.negated) bias += kSelectGate;
      }
      if (!select.one_hot.empty()) {
        qkv.at(lane, dim(select.one_hot[r])) += static_cast<float>(kOneHotLevel);
      } else {
        for (std::size_t i = 0; i < select.binary.size(); ++i) {
          bool one = (r >> i) & 1;
          qkv.at(lane, dim(select.binary[i])) += static_cast<float>(one ? kSelectGate : -kSelectGate);
          bias += one ? 0 : kSelectGate;
        }
        bias -= kSelectGate * static_cast<double>(select.binary.size()) - kOneHotLevel;
      }
      qkv.at(lane, 0) += exact(bias, "a select bias");
    }
  }

  void emit_half_constants(GdnTensors& t, int head, int half) {
    for (int lane = 0; lane < kKeyDim; ++lane) t.z.at(value_column(head, half, lane), 0) = static_cast<float>(kGateZ);
    for (int lane = circuit::kBankLanesPerHalf; lane < kKeyDim; ++lane)
      t.qkv.at(value_row(head, half, lane), 0) = static_cast<float>(kBalanceValue);
  }

  void emit_bank(const circuit::Bank& bank, int head, GdnTensors& t) {
    if (bank.has_write) {
      emit_select(t.qkv, key_row(head, 0), bank.rows, bank.write.row);
      for (int half = 0; half < circuit::kBankHalves; ++half) {
        emit_half_constants(t, head, half);
        // b = 256·β − 128 gives σ(b) exactly 0, 1/2 or 1.
        add_form(t.b, 2 * head + half, bank.write.beta[half], kBetaSlope);
        t.b.at(2 * head + half, 0) -= static_cast<float>(kBetaSlope / 2);
        const auto& lanes = bank.write.lanes[half];
        for (std::size_t lane = 0; lane < lanes.size(); ++lane)
          add_form(t.qkv, value_row(head, half, static_cast<int>(lane)), lanes[lane], kBitValue);
      }
    }
    if (bank.has_read) {
      emit_select(t.qkv, query_row(head, 0), bank.rows, bank.read.row);
      for (int half = 0; half < circuit::kBankHalves; ++half) {
        emit_half_constants(t, head, half);
        const auto& lanes = bank.read.lanes[half];
        for (std::size_t lane = 0; lane < lanes.size(); ++lane)
          for (const circuit::Term& target : lanes[lane])
            t.out.at(dim(target.signal), value_column(head, half, static_cast<int>(lane))) += exact(target.weight, "a read weight");
      }
    }
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
        t.qkv.at(key_row(head, 0), 0) = static_cast<float>(kOneHotLevel);
        t.qkv.at(query_row(head, 0), 0) = static_cast<float>(kOneHotLevel);
        for (int half = 0; half < circuit::kBankHalves; ++half) {
          emit_half_constants(t, head, half);
          t.b.at(2 * head + half, 0) = static_cast<float>(kBetaSlope / 2);  // β = 1
        }
      }
      std::size_t row = value_row(head, slot.half, slot.lane);
      t.qkv.at(row, dim(c_.delays()[d].input)) = static_cast<float>(kBitValue);
      t.conv.values[row * 4 + 3] = 0.0f;
      t.conv.values[row * 4 + 2] = 1.0f;
      t.out.at(dim(c_.delays()[d].output), value_column(head, slot.half, slot.lane)) = 1.0f;
    }
  }

  void emit_mlp(int layer, const std::string& prefix) {
    std::size_t width = p_.intermediate_size;
    Matrix gate = add(prefix + "gate_proj.weight", {width, hidden()});
    Matrix up = add(prefix + "up_proj.weight", {width, hidden()});
    Matrix down = add(prefix + "down_proj.weight", {hidden(), width});
    std::size_t n = 0;
    for (std::uint32_t index : p_.layer_neurons[layer]) {
      const circuit::Neuron& neuron = c_.neurons()[index];
      double a = kGateLevel / neuron.gate_quantum;
      add_form(gate, n, neuron.gate, a);
      add_form(up, n, neuron.up, 1 / a);
      for (const circuit::Term& t : neuron.down) down.at(dim(t.signal), n) += exact(t.weight, "a down weight");
      ++n;
    }
    auto clear = [&](int d, double quantum, double sign) {
      double a = kGateLevel / quantum;
      gate.at(n, d) = exact(sign * a, "a clear gate");
      up.at(n, 0) = exact(1 / a, "a clear up weight");
      down.at(d, n) = static_cast<float>(-sign);
      ++n;
    };
    for (const Clear& c : p_.clears) {
      if (c.layer != layer) continue;
      const circuit::Signal& s = c_.signal(c.signal);
      clear(dim(c.signal), s.quantum, 1);
      if (s.min < 0) clear(dim(c.signal), s.quantum, -1);
    }
    if (layer == 0)
      for (SignalId s : c_.outputs()) clear(dim(s), 1, 1);
  }

  const Circuit& c_;
  const Placement& p_;
  EmittedModel model_;
};

}  // namespace

EmittedModel emit(const Circuit& circuit, const circuit::CircuitGraph&, const Placement& placement) {
  return Emitter(circuit, placement).run();
}

std::vector<engine::TensorToWrite> EmittedModel::tensors_to_write(engine::DType storage) const {
  std::vector<engine::TensorToWrite> out;
  for (const EmittedTensor& t : tensors) {
    bool matrix = t.shape.size() == 2 && !t.name.ends_with("norm.weight");
    out.push_back({t.name, matrix ? storage : engine::DType::F32, t.shape, t.values});
  }
  return out;
}

}  // namespace rvformer::compiler
