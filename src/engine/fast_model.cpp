// engine/fast_model.cpp — see fast_model.h. The decoder-layer loop mirrors Model::final_hidden; the
// Gated DeltaNet mixer lives in fast_gated_delta_net.cpp, the LM head in fast_lm_head.cpp.
#include "engine/fast_model.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <variant>

#include <fmt/format.h>

#include "engine/attention.h"
#include "engine/column_matrix.h"
#include "engine/fast_kernels.h"
#include "engine/leading_column.h"
#include "engine/memo.h"
#include "engine/fast_ops.h"
#include "engine/ops.h"
#include "support/error.h"

namespace rvformer::engine {

namespace {

using Clock = std::chrono::steady_clock;

// A zero-centred RMSNorm weight, with 1 + w precomputed (the reference computes the same fp32 sum
// every time, so precomputing it is exact).
struct NormWeights {
  std::vector<float> weight;
  std::vector<float> one_plus_weight;
  bool finite = true;
  // Equal for norms whose weights are equal bit for bit (a compiled model's layers share one).
  std::size_t content = 0;

  explicit NormWeights(std::vector<float> values)
      : weight(std::move(values)), one_plus_weight(weight.size()) {
    for (std::size_t i = 0; i < weight.size(); ++i) {
      one_plus_weight[i] = 1.0f + weight[i];
      finite = finite && std::isfinite(one_plus_weight[i]);
    }
  }
};

// Numbers the norms' weights by content: equal bits, equal number.
class NormContents {
 public:
  NormWeights number(NormWeights norm) {
    const auto same = [&](const std::vector<float>& seen) {
      return seen.size() == norm.weight.size() &&
             std::memcmp(seen.data(), norm.weight.data(), seen.size() * sizeof(float)) == 0;
    };
    norm.content = static_cast<std::size_t>(std::find_if(seen_.begin(), seen_.end(), same) - seen_.begin());
    if (norm.content == seen_.size()) seen_.push_back(norm.weight);
    return norm;
  }

 private:
  std::vector<std::vector<float>> seen_;
};

// The residual stream: dense values and the increasing indices of those that may be non-zero (a
// compiled model has a few dozen of ~1000), so norms and adds cost only those. Entries outside the
// list are ±0; the sign of such a zero never matters, since every consumer multiplies it by a
// weight and skips or adds the ±0 product.
class Residual {
 public:
  explicit Residual(std::size_t size)
      : values_(size, 0.0f), nonzeros_(size), merged_(size), running_sums_(size) {}

  std::span<const float> values() const { return values_; }
  std::span<const std::uint32_t> nonzeros() const { return {nonzeros_.data(), count_}; }
  // Changes whenever the values may have changed.
  std::uint64_t version() const { return version_; }

  void assign(std::span<const std::uint32_t> indices, std::span<const float> values) {
    for (std::uint32_t i : nonzeros()) values_[i] = 0.0f;
    std::copy(indices.begin(), indices.end(), nonzeros_.begin());
    count_ = indices.size();
    for (std::size_t k = 0; k < indices.size(); ++k) values_[indices[k]] = values[k];
    ++version_;
    summed_ = 0;
  }

  // this += update, over the update's non-zero entries (adding ±0 changes nothing but a zero's
  // sign); entries that cancel to zero leave the list. One merge of the two increasing lists.
  void add(const SparseVector& update) {
    if (update.empty()) return;
    ++version_;
    std::uint32_t* out = merged_.data();
    const std::uint32_t* old = nonzeros_.data();
    const std::uint32_t* old_end = old + count_;
    for (std::size_t k = 0; k < update.size(); ++k) {
      const std::uint32_t i = update.index(k);
      while (old != old_end && *old < i) *out++ = *old++;
      if (k == 0) summed_ = std::min(summed_, static_cast<std::size_t>(out - merged_.data()));
      if (old != old_end && *old == i) ++old;
      values_[i] += update.value(k);
      if (values_[i] != 0.0f) *out++ = i;
    }
    while (old != old_end) *out++ = *old++;
    count_ = static_cast<std::size_t>(out - merged_.data());
    std::swap(nonzeros_, merged_);
  }

  // Σ v_i² over the listed entries in index order (±0 entries would add +0 to a sum that is never
  // −0). The running sum after each entry is kept: an add changes no entry below its first index,
  // so the sum up to there still holds, and only the rest is summed again.
  float sum_of_squares() {
    float sum = summed_ == 0 ? 0.0f : running_sums_[summed_ - 1];
    for (std::size_t k = summed_; k < count_; ++k) {
      const float value = values_[nonzeros_[k]];
      sum += value * value;
      running_sums_[k] = sum;
    }
    summed_ = count_;
    return sum;
  }

 private:
  std::vector<float> values_;
  std::vector<std::uint32_t> nonzeros_;  // the first count_ entries
  std::size_t count_ = 0;
  std::vector<std::uint32_t> merged_;
  std::uint64_t version_ = 0;
  std::vector<float> running_sums_;  // after each listed entry, valid for the first summed_
  std::size_t summed_ = 0;
};

// An MLP, and a memo of its output: for a finite x, down(SiLU(gate(x))·up(x)) depends only on x at
// the columns gate or up have a weight in (elsewhere every product is ±0), so it is remembered by
// those inputs' (index, value bits) pairs, as the (index, value bits) pairs of its non-zero outputs.
//
// Compiled MLPs switch most neurons off (SiLU(gate) = −0) and give each neuron an up row of one
// weight; an up_proj whose rows are that short is also kept by rows, so that up is computed only for
// the neurons that are on.
struct FastMlp {
  // Remembered inputs and outputs of up to this many (index, bits) pairs: the compiled machine's
  // busiest MLPs read up to ~140 inputs, and some write more than 64 outputs.
  static constexpr std::size_t max_memo_inputs = 160;
  static constexpr std::size_t max_memo_outputs = 160;
  static constexpr std::size_t memo_slots_log2 = 10;
  static constexpr std::size_t up_row_max_nonzeros = 4;

  FastMlp(const CheckpointTensor& gate_proj, const CheckpointTensor& up_proj, const CheckpointTensor& down_proj)
      : gate(ColumnMatrix::from_tensor(gate_proj)),
        up(ColumnMatrix::from_tensor(up_proj)),
        down(ColumnMatrix::from_tensor(down_proj)),
        leading(LeadingColumn::of(gate)),
        reads(gate.cols(), 0),
        memo(2 * max_memo_inputs, 2 * max_memo_outputs, memo_slots_log2) {
    for (const ColumnMatrix* matrix : {&gate, &up}) {
      for (std::uint32_t col : matrix->part_columns(0)) reads[col] = 1;
    }
    const SparseRows rows = SparseRows::from_tensor(up_proj);
    if (rows.max_row_nonzeros() <= up_row_max_nonzeros) up_rows.emplace(rows);
  }

  ColumnMatrix gate, up, down;
  std::optional<PaddedRows> up_rows;
  std::optional<LeadingColumn> leading;  // the gate product at the neurons that can be on
  std::vector<std::uint8_t> reads;  // per input column: gate or up has a weight in it
  Memo memo;
};

struct FastLayer {
  NormWeights input_norm;
  NormWeights post_attention_norm;
  std::variant<FastGatedDeltaNet, AttentionWeights> mixer;
  FastMlp mlp;
};

// Full-attention layers are rare in compiled models; they keep dense weights, as the dense path does,
// and run the reference attention_step.
std::variant<FastGatedDeltaNet, AttentionWeights> load_mixer(const Checkpoint& checkpoint, std::size_t layer) {
  const Config& config = checkpoint.config();
  if (config.layer_types[layer] == LayerType::linear_attention) return FastGatedDeltaNet(config, checkpoint, layer);
  const auto tensor = [&](std::string_view name) -> const CheckpointTensor& {
    return checkpoint.tensor(fmt::format("layers.{}.self_attn.{}", layer, name));
  };
  return AttentionWeights{
      .q_proj = DenseMatrix::load(tensor("q_proj.weight"), /*f32_in_place=*/false),
      .k_proj = DenseMatrix::load(tensor("k_proj.weight"), /*f32_in_place=*/false),
      .v_proj = DenseMatrix::load(tensor("v_proj.weight"), /*f32_in_place=*/false),
      .o_proj = DenseMatrix::load(tensor("o_proj.weight"), /*f32_in_place=*/false),
      .q_norm = tensor("q_norm.weight").to_floats(),
      .k_norm = tensor("k_norm.weight").to_floats(),
  };
}

std::uint64_t element_count(const DenseMatrix& matrix) { return matrix.rows() * matrix.cols(); }

std::uint64_t attention_weight_count(const AttentionWeights& weights) {
  return element_count(weights.q_proj) + element_count(weights.k_proj) + element_count(weights.v_proj) +
         element_count(weights.o_proj);
}

// Adds the time since the previous lap to a counter, when timing is on.
class LapTimer {
 public:
  explicit LapTimer(bool enabled) : enabled_(enabled) {
    if (enabled_) last_ = Clock::now();
  }
  void lap(double& seconds) {
    if (!enabled_) return;
    const auto now = Clock::now();
    seconds += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  bool enabled_;
  Clock::time_point last_;
};

}  // namespace

// The residual columns that can be non-zero when only the tokens of `embedding` are fed through the
// first `layer_count` layers: their embedding rows' columns, and the rows every layer's output
// projection can write (MLP down, GDN out, attention o).
std::vector<bool> reachable_columns(const Checkpoint& checkpoint, const SparseRows& embedding, std::size_t layer_count) {
  const Config& config = checkpoint.config();
  std::vector<bool> reachable(config.hidden_size, false);
  for (std::size_t row = 0; row < embedding.rows(); ++row) {
    for (std::uint32_t column : embedding.columns(row)) reachable[column] = true;
  }
  const auto add_rows_of = [&](const std::string& name) {
    const std::vector<bool> rows = nonzero_rows(checkpoint.tensor(name));
    for (std::size_t i = 0; i < rows.size(); ++i) reachable[i] = reachable[i] || rows[i];
  };
  for (std::size_t layer = 0; layer < layer_count; ++layer) {
    add_rows_of(fmt::format("layers.{}.mlp.down_proj.weight", layer));
    add_rows_of(config.layer_types[layer] == LayerType::linear_attention
                    ? fmt::format("layers.{}.linear_attn.out_proj.weight", layer)
                    : fmt::format("layers.{}.self_attn.o_proj.weight", layer));
  }
  return reachable;
}

struct FastModel::Impl {
  Impl(const Checkpoint& checkpoint, const FastModelOptions& options, std::size_t layers_to_load);

  void check_input(const FastState& state, TokenId token, std::size_t layer_count) const;
  // One token through layers [0, layer_count) and the final norm: the result is in normed /
  // normed_nonzeros.
  void run_layers(FastState& state, TokenId token, std::size_t layer_count);
  // With a column-restricted head: fails unless the final hidden state is zero outside its columns.
  void check_head_columns() const;
  // normed = RMSNorm(hidden) over hidden's non-zero entries; normed_nonzeros lists its non-zeros.
  void normalise(const NormWeights& norm);
  // update_nonzeros = the MLP's output (remembered, or computed).
  void mlp_step(FastMlp& mlp);
  // product = SiLU(gate)·up, with up computed by columns or, for the neurons that are on, by rows
  // (only when up is certainly finite). Both return the number of non-zero weights multiplied.
  std::size_t silu_times_up_by_columns(const FastMlp& mlp, bool up_certainly_finite);
  std::size_t silu_times_up_by_rows(const PaddedRows& up_rows);
  SparseInput normed_input() const { return {normed, normed_nonzeros}; }

  Checkpoint checkpoint;  // keeps the mapped files the attention layers read
  Config config;
  std::uint64_t shape_fingerprint;
  float eps;
  TokenId first_fed_token;
  std::size_t fed_token_count;  // 0: any token
  SparseRows embedding;         // rows of tokens first_fed_token, first_fed_token + 1, ...
  // The columns the head holds, with fed_token_count (empty: all): the hidden state is zero in the
  // others, which every step checks.
  std::vector<bool> head_columns;
  FastLmHead lm_head;
  NormWeights final_norm;
  std::vector<FastLayer> layers;
  std::vector<float> rope_inverse_frequencies;
  std::uint64_t weight_count = 0;

  // Working memory of one step.
  Residual hidden;
  float hidden_scale = 0;                                 // RMSNorm's 1/rms of hidden ...
  std::uint64_t scale_version = ~std::uint64_t{0};        // ... at this version of it
  std::vector<float> normed;  // +0 outside normed_nonzeros, unless normed_is_dense
  bool normed_is_dense = false;
  std::uint64_t normed_version = ~std::uint64_t{0};  // normed is of this version of hidden ...
  std::size_t normed_content = 0;                    // ... under norm weights of this content
  BlockVector update, gate, up, product;
  SparseVector normed_nonzeros, update_nonzeros, product_nonzeros;
  std::vector<std::uint32_t> memo_key;  // room for every input column's (index, bits)
  std::vector<std::uint32_t> memo_result;
  std::optional<GatedDeltaNetScratch> gated_delta_net_scratch;
  std::vector<float> cos, sin;
  std::optional<std::size_t> rope_position;  // of the table in cos and sin
  Workers workers{1};                        // attention's products, on the calling thread
  FastCounters counters;
  bool timing = false;
};

FastModel::Impl::Impl(const Checkpoint& checkpoint, const FastModelOptions& options, std::size_t layers_to_load)
    : checkpoint(checkpoint),
      config(checkpoint.config()),
      shape_fingerprint(config.shape_fingerprint()),
      eps(static_cast<float>(config.rms_norm_eps)),
      first_fed_token(options.first_fed_token),
      fed_token_count(options.fed_token_count),
      embedding(fed_token_count == 0
                    ? SparseRows::from_tensor(checkpoint.tensor("embed_tokens.weight"))
                    : SparseRows::from_tensor(checkpoint.tensor("embed_tokens.weight"), first_fed_token, fed_token_count)),
      head_columns(fed_token_count == 0 ? std::vector<bool>{} : reachable_columns(checkpoint, embedding, layers_to_load)),
      lm_head(head_columns.empty()
                  ? FastLmHead(checkpoint.tensor(config.tie_word_embeddings ? "embed_tokens.weight" : "lm_head.weight"))
                  : FastLmHead(checkpoint.tensor(config.tie_word_embeddings ? "embed_tokens.weight" : "lm_head.weight"),
                               head_columns)),
      final_norm(checkpoint.tensor("norm.weight").to_floats()),
      hidden(config.hidden_size),
      normed(config.hidden_size, 0.0f),
      update(config.hidden_size),
      gate(config.intermediate_size),
      up(config.intermediate_size),
      product(config.intermediate_size),
      normed_nonzeros(config.hidden_size),
      update_nonzeros(config.hidden_size),
      product_nonzeros(config.intermediate_size),
      memo_key(2 * config.hidden_size) {
  NormContents norm_contents;
  final_norm = norm_contents.number(std::move(final_norm));
  weight_count = lm_head.nonzero_count();
  if (!config.tie_word_embeddings) weight_count += checkpoint.tensor("embed_tokens.weight").element_count();
  for (std::size_t layer = 0; layer < layers_to_load; ++layer) {
    const auto tensor = [&](std::string_view name) -> const CheckpointTensor& {
      return checkpoint.tensor(fmt::format("layers.{}.{}", layer, name));
    };
    FastLayer fast{
        .input_norm = norm_contents.number(NormWeights(tensor("input_layernorm.weight").to_floats())),
        .post_attention_norm = norm_contents.number(NormWeights(tensor("post_attention_layernorm.weight").to_floats())),
        .mixer = load_mixer(checkpoint, layer),
        .mlp = {tensor("mlp.gate_proj.weight"), tensor("mlp.up_proj.weight"), tensor("mlp.down_proj.weight")},
    };
    weight_count += fast.mlp.gate.nonzero_count() + fast.mlp.up.nonzero_count() + fast.mlp.down.nonzero_count();
    if (const auto* mixer = std::get_if<FastGatedDeltaNet>(&fast.mixer)) {
      weight_count += mixer->weight_count();
    } else {
      weight_count += attention_weight_count(std::get<AttentionWeights>(fast.mixer));
    }
    layers.push_back(std::move(fast));
  }
  if (config.count_layers(LayerType::linear_attention) > 0) gated_delta_net_scratch.emplace(config);
  rope_inverse_frequencies = engine::rope_inverse_frequencies(config.rotary_dim(), config.rope_theta);
  cos.resize(rope_inverse_frequencies.size());
  sin.resize(rope_inverse_frequencies.size());
}

void FastModel::Impl::check_input(const FastState& state, TokenId token, std::size_t layer_count) const {
  if (token >= config.vocab_size) fail("token id {} is out of range (vocab_size {})", token, config.vocab_size);
  if (fed_token_count != 0 && (token < first_fed_token || token - first_fed_token >= fed_token_count)) {
    fail("token id {} is not one this fast model was loaded for ({} to {})", token, first_fed_token,
         first_fed_token + fed_token_count - 1);
  }
  if (layer_count < 1 || layer_count > config.num_hidden_layers) {
    fail("layer count {} is out of range (1 to {})", layer_count, config.num_hidden_layers);
  }
  if (layer_count > layers.size()) {
    fail("layer count {} is more than the {} layers this fast model loaded", layer_count, layers.size());
  }
  if (state.state_.shape_fingerprint() != shape_fingerprint) {
    fail("the state belongs to a model of another shape ({})", state.state_.config().shape_description());
  }
}

// The sum of squares runs over the non-zero entries in index order (a ±0 entry adds +0 to a sum that
// is never −0). With a finite scale r and weight, a zero entry normalises to ±0, which no consumer
// tells from +0 (see Residual), so only the listed entries are normalised. A non-finite r (or
// weight) makes every entry count: the reference norm runs.
//
// A mixer or MLP that adds nothing leaves the hidden state as it was: when the next norm's weights
// equal the last one's, its output is the one already in normed.
void FastModel::Impl::normalise(const NormWeights& norm) {
  if (hidden.version() == normed_version && norm.content == normed_content) {
    ++counters.reused_norms;
    return;
  }
  normed_version = hidden.version();
  normed_content = norm.content;
  const auto values = hidden.values();
  // A mixer or MLP that adds nothing leaves the hidden state, and so its scale, as it was.
  if (hidden.version() != scale_version) {
    hidden_scale = inverse_rms_from_sum(hidden.sum_of_squares(), config.hidden_size, eps);
    scale_version = hidden.version();
  }
  const float scale = hidden_scale;
  if (normed_is_dense) {
    std::fill(normed.begin(), normed.end(), 0.0f);
  } else {
    for (std::uint32_t i : normed_nonzeros.indices()) normed[i] = 0.0f;
  }
  normed_nonzeros.clear();
  normed_is_dense = !(std::isfinite(scale) && norm.finite);
  if (!normed_is_dense) {
    const NonzeroSink sink = normed_nonzeros.sink();
    std::size_t count = 0;
    std::uint32_t largest = 0;  // as magnitude bits, for the products' bounds
    for (std::uint32_t i : hidden.nonzeros()) {
      const float y = (values[i] * scale) * norm.one_plus_weight[i];
      if (y == 0.0f) continue;
      normed[i] = y;
      sink.index[count] = i;
      sink.value[count] = y;
      largest = std::max(largest, SparseVector::magnitude_bits(y));
      ++count;
    }
    normed_nonzeros.set_size(count, std::bit_cast<float>(largest));
    return;
  }
  rms_norm_zero_centred(values, norm.weight, eps, normed);
  for (std::size_t i = 0; i < normed.size(); ++i) {
    if (normed[i] != 0.0f) normed_nonzeros.push(static_cast<std::uint32_t>(i), normed[i]);
  }
  ++counters.reference_norms;
}

void FastModel::Impl::mlp_step(FastMlp& mlp) {
  // The inputs at the columns the MLP reads, kept without branches (which columns are read follows
  // no pattern).
  std::size_t words = 0;
  for (std::size_t k = 0; k < normed_nonzeros.size(); ++k) {
    memo_key[words] = normed_nonzeros.index(k);
    memo_key[words + 1] = std::bit_cast<std::uint32_t>(normed_nonzeros.value(k));
    words += 2 * std::size_t{mlp.reads[normed_nonzeros.index(k)]};
  }
  // A non-finite input makes every product term count, read column or not (+0·∞ = NaN).
  const bool keyed = normed_nonzeros.all_finite();
  const std::span<const std::uint32_t> key(memo_key.data(), words);
  if (const auto output = keyed ? mlp.memo.find(key) : std::nullopt) {
    update_nonzeros.assign_words(*output);
    ++counters.remembered_mlps;
    return;
  }
  // Neurons left out of gate are off, which holds only when up is certainly finite.
  const bool up_certainly_finite = mlp.up.output_certainly_finite(normed_input());
  std::optional<std::size_t> multiplied;
  if (mlp.leading && up_certainly_finite) multiplied = mlp.leading->multiply(mlp.gate, normed_input(), gate);
  counters.leading_column_mlps += multiplied.has_value();
  counters.mlp_weights += multiplied ? *multiplied : mlp.gate.multiply(normed_input(), gate);
  const bool by_rows = mlp.up_rows && up_certainly_finite;
  counters.mlp_weights +=
      by_rows ? silu_times_up_by_rows(*mlp.up_rows) : silu_times_up_by_columns(mlp, up_certainly_finite);
  counters.up_by_rows_mlps += by_rows;
  counters.mlp_weights += mlp.down.multiply({product.values(), product_nonzeros}, update);
  update.gather(update_nonzeros);
  if (!keyed) return;
  memo_result.clear();
  update_nonzeros.append_words(memo_result);
  mlp.memo.remember(key, memo_result);
}

// Outside gate's marked blocks SiLU(gate) is ±0 (gate is +0 there, or, from LeadingColumn, a
// leading term whose SiLU is ±0), so SiLU(gate)·up = ±0 for finite up, which down_proj skips; a
// non-finite up makes every neuron count (LeadingColumn is not used then).
std::size_t FastModel::Impl::silu_times_up_by_columns(const FastMlp& mlp, bool up_certainly_finite) {
  const std::size_t multiplied = mlp.up.multiply(normed_input(), up);
  product.clear();
  if (up_certainly_finite || up.all_finite()) {
    product.mark(gate.blocks());
  } else {
    product.mark_all();
  }
  const auto& blocks = product.blocks();
  product_nonzeros.clear();
  product_nonzeros.set_size(fast_kernels().silu_product(gate.data(), up.data(), blocks.data(), blocks.size(),
                                                        product.data(), product_nonzeros.sink(), silu_shortcuts()));
  return multiplied;
}

// Only for an up that is certainly finite: where SiLU(gate) is ±0 the product is ±0. A row's sum
// runs from +0 in column order over its weights, the reference's terms less those with a zero weight
// (±0, as x is finite).
std::size_t FastModel::Impl::silu_times_up_by_rows(const PaddedRows& up_rows) {
  product.clear();
  product.mark(gate.blocks());
  const auto& blocks = product.blocks();
  product_nonzeros.clear();
  const NonzeroSink on = product_nonzeros.sink();
  const std::size_t on_count =
      fast_kernels().silu(gate.data(), blocks.data(), blocks.size(), product.data(), on, silu_shortcuts());
  std::size_t count = 0;
  float* const values = product.data();
  for (std::size_t k = 0; k < on_count; ++k) {
    const std::uint32_t neuron = on.index[k];
    float sum = 0.0f;
    for (const RowEntry& entry : up_rows.row(neuron)) sum += entry.value * normed[entry.column];
    const float value = on.value[k] * sum;
    values[neuron] = value;
    on.index[count] = neuron;
    on.value[count] = value;
    count += value != 0.0f;
  }
  product_nonzeros.set_size(count);
  return on_count * up_rows.width();
}

void FastModel::Impl::run_layers(FastState& state, TokenId token, std::size_t layer_count) {
  check_input(state, token, layer_count);
  LapTimer timer(timing);
  hidden.assign(embedding.columns(token - first_fed_token), embedding.values(token - first_fed_token));
  timer.lap(counters.embedding_seconds);
  for (std::size_t layer = 0; layer < layer_count; ++layer) {
    FastLayer& weights = layers[layer];
    normalise(weights.input_norm);
    timer.lap(counters.norm_seconds);
    if (const auto* gated_delta_net = std::get_if<FastGatedDeltaNet>(&weights.mixer)) {
      gated_delta_net->step(state.state_.gated_delta_net(layer), state.tracking_[layer], normed_input(),
                            *gated_delta_net_scratch, update, counters.gated_delta_net);
      timer.lap(counters.gated_delta_net_seconds);
    } else {
      const auto& attention = std::get<AttentionWeights>(weights.mixer);
      // Each attention layer counts its own tokens (state.h).
      if (rope_position != state.state_.layer_position(layer)) {
        rope_position = state.state_.layer_position(layer);
        rope_cos_sin(rope_inverse_frequencies, *rope_position, cos, sin);
      }
      update.clear();
      update.mark_all();
      attention_step(config, attention, state.state_.attention(layer), cos, sin, normed, update.values(), workers);
      counters.attention_weights += attention_weight_count(attention);
      timer.lap(counters.attention_seconds);
    }
    update.gather(update_nonzeros);
    hidden.add(update_nonzeros);
    normalise(weights.post_attention_norm);
    timer.lap(counters.norm_seconds);
    mlp_step(weights.mlp);
    hidden.add(update_nonzeros);
    timer.lap(counters.mlp_seconds);
  }
  state.state_.advance(layer_count);
  state.windows_stale_ = true;
  normalise(final_norm);
  timer.lap(counters.norm_seconds);
  ++counters.tokens;
  if (!head_columns.empty()) check_head_columns();
}

void FastModel::Impl::check_head_columns() const {
  const auto outside = [&] {
    if (normed_is_dense) return true;
    for (std::uint32_t column : normed_nonzeros.indices()) {
      if (!head_columns[column]) return true;
    }
    return false;
  };
  if (outside()) fail("the hidden state reached a column this fast model's head does not hold (a non-finite value?)");
}

const State& FastState::state() const {
  if (windows_stale_) {
    for (std::size_t layer = 0; layer < tracking_.size(); ++layer) {
      if (state_.config().layer_types[layer] == LayerType::linear_attention) {
        tracking_[layer].write_window(state_.gated_delta_net(layer).conv);
      }
    }
    windows_stale_ = false;
  }
  return state_;
}

FastModel FastModel::load(const std::filesystem::path& directory, const FastModelOptions& options) {
  return FastModel(Checkpoint::open(directory), options);
}

FastModel::FastModel(const Checkpoint& checkpoint, const FastModelOptions& options) {
  const std::size_t layer_total = checkpoint.config().num_hidden_layers;
  if (options.layers > layer_total) {
    fail("cannot load {} layers of a model with {}", options.layers, layer_total);
  }
  if (options.fed_token_count != 0 && options.first_fed_token + options.fed_token_count > checkpoint.config().vocab_size) {
    fail("cannot feed tokens {} to {} of a vocabulary of {}", options.first_fed_token,
         options.first_fed_token + options.fed_token_count - 1, checkpoint.config().vocab_size);
  }
  impl_ = std::make_unique<Impl>(checkpoint, options, options.layers == 0 ? layer_total : options.layers);
}

std::size_t FastModel::loaded_layers() const { return impl_->layers.size(); }

FastModel::FastModel(FastModel&&) noexcept = default;
FastModel& FastModel::operator=(FastModel&&) noexcept = default;
FastModel::~FastModel() = default;

const Config& FastModel::config() const { return impl_->config; }

std::uint64_t FastModel::weight_count() const { return impl_->weight_count; }

FastState FastModel::new_state() const { return adopt(State(impl_->config)); }

FastState FastModel::adopt(State state) const {
  if (state.shape_fingerprint() != impl_->shape_fingerprint) {
    fail("the state belongs to a model of another shape ({})", state.config().shape_description());
  }
  std::vector<GatedDeltaNetTracking> tracking(impl_->layers.size());
  for (std::size_t layer = 0; layer < impl_->layers.size(); ++layer) {
    if (const auto* mixer = std::get_if<FastGatedDeltaNet>(&impl_->layers[layer].mixer)) {
      tracking[layer] = mixer->track(state.gated_delta_net(layer));
    }
  }
  return FastState(std::move(state), std::move(tracking));
}

std::vector<float> FastModel::decode(FastState& state, TokenId token) {
  return decode(state, token, impl_->layers.size());
}

std::vector<float> FastModel::decode(FastState& state, TokenId token, std::size_t layer_count) {
  impl_->run_layers(state, token, layer_count);
  LapTimer timer(impl_->timing);
  auto logits = impl_->lm_head.logits(impl_->normed_input(), impl_->counters.lm_head.weights);
  timer.lap(impl_->counters.lm_head_seconds);
  return logits;
}

TokenId FastModel::decode_argmax(FastState& state, TokenId token) {
  return decode_argmax(state, token, impl_->layers.size());
}

TokenId FastModel::decode_argmax(FastState& state, TokenId token, std::size_t layer_count) {
  impl_->run_layers(state, token, layer_count);
  LapTimer timer(impl_->timing);
  const TokenId next = impl_->lm_head.argmax(impl_->normed_input(), impl_->counters.lm_head);
  timer.lap(impl_->counters.lm_head_seconds);
  return next;
}

std::vector<float> FastModel::prefill(FastState& state, std::span<const TokenId> tokens) {
  if (tokens.empty()) fail("prefill needs at least one token");
  const std::size_t layer_count = impl_->layers.size();
  for (TokenId token : tokens) impl_->check_input(state, token, layer_count);  // before the state changes
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) impl_->run_layers(state, tokens[i], layer_count);
  return decode(state, tokens.back(), layer_count);
}

const FastCounters& FastModel::counters() const { return impl_->counters; }

void FastModel::reset_counters() { impl_->counters = {}; }

void FastModel::set_timing(bool timing) { impl_->timing = timing; }

}  // namespace rvformer::engine
