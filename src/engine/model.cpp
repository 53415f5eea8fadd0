// engine/model.cpp — see model.h.
#include "engine/model.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/ops.h"
#include "support/error.h"

namespace rvformer::engine {

namespace {

PackedMatrix load_matrix(const CheckpointTensor& tensor) {
  const std::size_t rows = tensor.shape.front();
  const std::size_t cols = rows == 0 ? 0 : tensor.element_count() / rows;
  const std::size_t row_bytes = cols * dtype_size(tensor.dtype);
  PackedMatrix matrix(rows, cols);
  std::vector<float> panel(PackedMatrix::panel_rows * cols);
  for (std::size_t first = 0; first < rows; first += PackedMatrix::panel_rows) {
    const std::size_t count = std::min(PackedMatrix::panel_rows, rows - first);
    const auto values = std::span(panel).first(count * cols);
    decode_floats(tensor.dtype, tensor.bytes.subspan(first * row_bytes, count * row_bytes), values);
    matrix.set_panel_rows(first, values);
  }
  return matrix;
}

// Looks tensors up by their name within one layer.
class LayerTensors {
 public:
  LayerTensors(const Checkpoint& checkpoint, std::size_t layer)
      : checkpoint_(checkpoint), prefix_(fmt::format("layers.{}.", layer)) {}
  PackedMatrix matrix(std::string_view name) const { return load_matrix(tensor(name)); }
  std::vector<float> vector(std::string_view name) const { return tensor(name).to_floats(); }

 private:
  const CheckpointTensor& tensor(std::string_view name) const { return checkpoint_.tensor(prefix_ + std::string(name)); }
  const Checkpoint& checkpoint_;
  std::string prefix_;
};

GatedDeltaNetWeights load_gated_delta_net(const LayerTensors& tensors) {
  return {
      .in_proj_qkv = tensors.matrix("linear_attn.in_proj_qkv.weight"),
      .in_proj_z = tensors.matrix("linear_attn.in_proj_z.weight"),
      .in_proj_b = tensors.matrix("linear_attn.in_proj_b.weight"),
      .in_proj_a = tensors.matrix("linear_attn.in_proj_a.weight"),
      .conv1d = tensors.vector("linear_attn.conv1d.weight"),
      .dt_bias = tensors.vector("linear_attn.dt_bias"),
      .A_log = tensors.vector("linear_attn.A_log"),
      .norm = tensors.vector("linear_attn.norm.weight"),
      .out_proj = tensors.matrix("linear_attn.out_proj.weight"),
  };
}

AttentionWeights load_attention(const LayerTensors& tensors) {
  return {
      .q_proj = tensors.matrix("self_attn.q_proj.weight"),
      .k_proj = tensors.matrix("self_attn.k_proj.weight"),
      .v_proj = tensors.matrix("self_attn.v_proj.weight"),
      .o_proj = tensors.matrix("self_attn.o_proj.weight"),
      .q_norm = tensors.vector("self_attn.q_norm.weight"),
      .k_norm = tensors.vector("self_attn.k_norm.weight"),
  };
}

void add_in_place(std::span<float> residual, std::span<const float> update) {
  for (std::size_t i = 0; i < residual.size(); ++i) residual[i] += update[i];
}

void mlp_step(const MlpWeights& weights, std::span<const float> x, std::span<float> out) {
  std::vector<float> gate(weights.gate_proj.rows());
  std::vector<float> up(weights.up_proj.rows());
  weights.gate_proj.multiply(x, gate);
  weights.up_proj.multiply(x, up);
  for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = silu(gate[i]) * up[i];
  weights.down_proj.multiply(gate, out);
}

}  // namespace

Model Model::load(const std::filesystem::path& directory) { return Model(Checkpoint::open(directory)); }

Model::Model(const Checkpoint& checkpoint)
    : config_(checkpoint.config()), shape_fingerprint_(config_.shape_fingerprint()) {
  embed_tokens_ = load_matrix(checkpoint.tensor("embed_tokens.weight"));
  norm_ = checkpoint.tensor("norm.weight").to_floats();
  if (!config_.tie_word_embeddings) lm_head_ = load_matrix(checkpoint.tensor("lm_head.weight"));
  for (std::size_t layer = 0; layer < config_.num_hidden_layers; ++layer) {
    const LayerTensors tensors(checkpoint, layer);
    DecoderLayerWeights weights{
        .input_layernorm = tensors.vector("input_layernorm.weight"),
        .post_attention_layernorm = tensors.vector("post_attention_layernorm.weight"),
        .mixer = {},
        .mlp = {tensors.matrix("mlp.gate_proj.weight"), tensors.matrix("mlp.up_proj.weight"),
                tensors.matrix("mlp.down_proj.weight")},
    };
    if (config_.layer_types[layer] == LayerType::linear_attention) {
      weights.mixer = load_gated_delta_net(tensors);
    } else {
      weights.mixer = load_attention(tensors);
    }
    layers_.push_back(std::move(weights));
  }
  rope_inverse_frequencies_ = rope_inverse_frequencies(config_.rotary_dim(), config_.rope_theta);
}

void Model::check_input(const State& state, TokenId token) const {
  if (token >= config_.vocab_size) fail("token id {} is out of range (vocab_size {})", token, config_.vocab_size);
  if (state.shape_fingerprint() != shape_fingerprint_) {
    fail("the state belongs to a model of another shape ({})", state.config().shape_description());
  }
}

std::vector<float> Model::final_hidden(State& state, TokenId token) const {
  check_input(state, token);
  const std::size_t hidden_size = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  std::vector<float> hidden(hidden_size);
  std::vector<float> normed(hidden_size);
  std::vector<float> update(hidden_size);
  embed_tokens_.copy_row(token, hidden);

  std::vector<float> cos(rope_inverse_frequencies_.size());
  std::vector<float> sin(rope_inverse_frequencies_.size());
  rope_cos_sin(rope_inverse_frequencies_, state.position(), cos, sin);

  for (std::size_t layer = 0; layer < layers_.size(); ++layer) {
    const DecoderLayerWeights& weights = layers_[layer];
    rms_norm_zero_centred(hidden, weights.input_layernorm, eps, normed);
    if (const auto* gdn = std::get_if<GatedDeltaNetWeights>(&weights.mixer)) {
      gated_delta_net_step(config_, *gdn, state.gated_delta_net(layer), normed, update);
    } else {
      attention_step(config_, std::get<AttentionWeights>(weights.mixer), state.attention(layer), cos, sin, normed,
                     update);
    }
    add_in_place(hidden, update);
    if (observer_) observer_(layer, false, hidden);
    rms_norm_zero_centred(hidden, weights.post_attention_layernorm, eps, normed);
    mlp_step(weights.mlp, normed, update);
    add_in_place(hidden, update);
    if (observer_) observer_(layer, true, hidden);
  }
  state.advance();
  rms_norm_zero_centred(hidden, norm_, eps, normed);
  return normed;
}

std::vector<float> Model::logits(std::span<const float> hidden) const {
  const PackedMatrix& head = config_.tie_word_embeddings ? embed_tokens_ : lm_head_;
  std::vector<float> result(config_.vocab_size);
  head.multiply(hidden, result);
  return result;
}

std::vector<float> Model::decode(State& state, TokenId token) const { return logits(final_hidden(state, token)); }

TokenId Model::decode_argmax(State& state, TokenId token) const {
  return static_cast<TokenId>(argmax(decode(state, token)));
}

std::vector<float> Model::prefill(State& state, std::span<const TokenId> tokens) const {
  if (tokens.empty()) fail("prefill needs at least one token");
  for (TokenId token : tokens) check_input(state, token);  // before the state changes
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) final_hidden(state, tokens[i]);
  return decode(state, tokens.back());
}

}  // namespace rvformer::engine
