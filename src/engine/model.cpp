// engine/model.cpp — see model.h.
#include "engine/model.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "engine/ops.h"
#include "support/error.h"

namespace rvformer::engine {

namespace {

// Looks tensors up by their name within one layer.
class LayerTensors {
 public:
  LayerTensors(const Checkpoint& checkpoint, std::size_t layer, bool f32_in_place)
      : checkpoint_(checkpoint), prefix_(fmt::format("layers.{}.", layer)), f32_in_place_(f32_in_place) {}
  DenseMatrix matrix(std::string_view name) const { return DenseMatrix::load(tensor(name), f32_in_place_); }
  std::vector<float> vector(std::string_view name) const { return tensor(name).to_floats(); }

 private:
  const CheckpointTensor& tensor(std::string_view name) const { return checkpoint_.tensor(prefix_ + std::string(name)); }
  const Checkpoint& checkpoint_;
  std::string prefix_;
  bool f32_in_place_;
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

// The MLP for `count` inputs (x and out: count × hidden values).
void mlp_steps(const MlpWeights& weights, std::span<const float> x, std::span<float> out, std::size_t count,
               Workers& workers) {
  std::vector<float> gate(count * weights.gate_proj.rows());
  std::vector<float> up(count * weights.up_proj.rows());
  weights.gate_proj.multiply_batch(x, gate, count, workers);
  weights.up_proj.multiply_batch(x, up, count, workers);
  for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = silu(gate[i]) * up[i];
  weights.down_proj.multiply_batch(gate, out, count, workers);
}

// Vector i of `count` equal-width vectors held one after another.
template <typename T>
std::span<T> part(std::span<T> values, std::size_t i, std::size_t width) {
  return values.subspan(i * width, width);
}
template <typename T>
std::span<T> part(std::vector<T>& values, std::size_t i, std::size_t width) {
  return part(std::span<T>(values), i, width);
}

}  // namespace

Model Model::load(const std::filesystem::path& directory, const ModelOptions& options) {
  return Model(Checkpoint::open(directory), options);
}

Model::Model(const Checkpoint& checkpoint, const ModelOptions& options)
    : checkpoint_(checkpoint),
      config_(checkpoint.config()),
      shape_fingerprint_(config_.shape_fingerprint()),
      workers_(std::make_unique<Workers>(options.threads == 0 ? Workers::available_cores() : options.threads,
                                         options.min_parallel_work)) {
  embed_tokens_ = DenseMatrix::load(checkpoint_.tensor("embed_tokens.weight"), options.f32_in_place);
  norm_ = checkpoint_.tensor("norm.weight").to_floats();
  if (!config_.tie_word_embeddings) {
    lm_head_ = DenseMatrix::load(checkpoint_.tensor("lm_head.weight"), options.f32_in_place);
  }
  for (std::size_t layer = 0; layer < config_.num_hidden_layers; ++layer) {
    const LayerTensors tensors(checkpoint_, layer, options.f32_in_place);
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

void Model::check_input(const State& state, TokenId token, std::size_t layer_count) const {
  if (token >= config_.vocab_size) fail("token id {} is out of range (vocab_size {})", token, config_.vocab_size);
  if (layer_count < 1 || layer_count > config_.num_hidden_layers) {
    fail("layer count {} is out of range (1 to {})", layer_count, config_.num_hidden_layers);
  }
  if (state.shape_fingerprint() != shape_fingerprint_) {
    fail("the state belongs to a model of another shape ({})", state.config().shape_description());
  }
}

std::vector<float> Model::final_hidden(std::span<State* const> states, std::span<const TokenId> tokens,
                                       std::size_t layer_count) const {
  const std::size_t count = states.size();
  if (count == 0 || tokens.size() != count) throw std::logic_error("Model: one token per state is needed");
  for (std::size_t i = 0; i < count; ++i) {
    check_input(*states[i], tokens[i], layer_count);
    if (std::find(states.begin(), states.begin() + static_cast<std::ptrdiff_t>(i), states[i]) != states.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw std::logic_error("Model: a batch holds the same state twice");
    }
  }
  const std::size_t hidden_size = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  std::vector<float> hidden(count * hidden_size);
  std::vector<float> normed(count * hidden_size);
  std::vector<float> update(count * hidden_size);
  for (std::size_t i = 0; i < count; ++i) embed_tokens_.copy_row(tokens[i], part(hidden, i, hidden_size));
  auto norm_each = [&](std::span<const float> weight) {
    for (std::size_t i = 0; i < count; ++i) {
      rms_norm_zero_centred(part(hidden, i, hidden_size), weight, eps, part(normed, i, hidden_size));
    }
  };
  auto add_update = [&](std::size_t layer, bool after_mlp) {
    add_in_place(hidden, update);
    if (!observer_) return;
    for (std::size_t i = 0; i < count; ++i) observer_(layer, after_mlp, part(hidden, i, hidden_size));
  };

  // Each sequence's RoPE table of the position `rope_positions[i]` (each attention layer counts its own tokens).
  const std::size_t half = rope_inverse_frequencies_.size();
  std::vector<float> cos(count * half);
  std::vector<float> sin(count * half);
  std::vector<std::optional<std::size_t>> rope_positions(count);
  std::vector<GatedDeltaNetState*> recurrent_states(count);
  std::vector<AttentionCache*> caches(count);

  Workers& workers = *workers_;
  for (std::size_t layer = 0; layer < layer_count; ++layer) {
    const DecoderLayerWeights& weights = layers_[layer];
    norm_each(weights.input_layernorm);
    if (const auto* gdn = std::get_if<GatedDeltaNetWeights>(&weights.mixer)) {
      for (std::size_t i = 0; i < count; ++i) recurrent_states[i] = &states[i]->gated_delta_net(layer);
      gated_delta_net_steps(config_, *gdn, recurrent_states, normed, update, workers);
    } else {
      for (std::size_t i = 0; i < count; ++i) {
        if (rope_positions[i] != states[i]->layer_position(layer)) {
          rope_positions[i] = states[i]->layer_position(layer);
          rope_cos_sin(rope_inverse_frequencies_, *rope_positions[i], part(cos, i, half), part(sin, i, half));
        }
        caches[i] = &states[i]->attention(layer);
      }
      attention_steps(config_, std::get<AttentionWeights>(weights.mixer), caches, cos, sin, normed, update, workers);
    }
    add_update(layer, false);
    norm_each(weights.post_attention_layernorm);
    mlp_steps(weights.mlp, normed, update, count, workers);
    add_update(layer, true);
  }
  for (State* state : states) state->advance(layer_count);
  norm_each(norm_);
  return normed;
}

std::vector<float> Model::logits(std::span<const float> hidden, std::size_t count) const {
  const DenseMatrix& head = config_.tie_word_embeddings ? embed_tokens_ : lm_head_;
  std::vector<float> result(count * config_.vocab_size);
  head.multiply_batch(hidden, result, count, *workers_);
  return result;
}

std::vector<float> Model::final_hidden(State& state, TokenId token, std::size_t layer_count) const {
  State* const states[] = {&state};
  return final_hidden(states, std::span(&token, 1), layer_count);
}

std::vector<float> Model::decode_batch(std::span<State* const> states, std::span<const TokenId> tokens) const {
  return logits(final_hidden(states, tokens, config_.num_hidden_layers), states.size());
}

std::vector<float> Model::decode(State& state, TokenId token) const {
  return decode(state, token, config_.num_hidden_layers);
}

std::vector<float> Model::decode(State& state, TokenId token, std::size_t layer_count) const {
  return logits(final_hidden(state, token, layer_count), 1);
}

TokenId Model::decode_argmax(State& state, TokenId token) const {
  return decode_argmax(state, token, config_.num_hidden_layers);
}

TokenId Model::decode_argmax(State& state, TokenId token, std::size_t layer_count) const {
  return static_cast<TokenId>(argmax(decode(state, token, layer_count)));
}

std::vector<float> Model::prefill(State& state, std::span<const TokenId> tokens) const {
  return prefill(state, tokens, config_.num_hidden_layers);
}

std::vector<float> Model::prefill(State& state, std::span<const TokenId> tokens, std::size_t layer_count) const {
  if (tokens.empty()) fail("prefill needs at least one token");
  for (TokenId token : tokens) check_input(state, token, layer_count);  // before the state changes
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) final_hidden(state, tokens[i], layer_count);
  return decode(state, tokens.back(), layer_count);
}

}  // namespace rvformer::engine
