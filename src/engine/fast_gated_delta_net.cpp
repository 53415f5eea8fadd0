// engine/fast_gated_delta_net.cpp — see fast_gated_delta_net.h. Each shortcut's exactness argument
// sits next to it; docs/engine.md collects them.
#include "engine/fast_gated_delta_net.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "engine/fast_ops.h"
#include "engine/gated_delta_net.h"
#include "engine/ops.h"

namespace rvformer::engine {

namespace {

bool all_finite(std::span<const float> values) { return engine::all_finite(values.data(), values.size()); }

// Only finite values and no −0: then S + (±0) = S and S·(±0) = ±0 for every entry.
bool is_clean(std::span<const float> state) {
  return std::none_of(state.begin(), state.end(), [](float value) {
    return !std::isfinite(value) || std::bit_cast<std::uint32_t>(value) == 0x80000000u;
  });
}

// acc[i] += row[i]·factor for i < count (the recall, the write and the read of the delta rule).
void add_scaled(float* __restrict acc, const float* __restrict row, float factor, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) acc[i] += row[i] * factor;
}

}  // namespace

GatedDeltaNetScratch::GatedDeltaNetScratch(const Config& config)
    : raw(config.linear_conv_dim()),
      mixed(config.linear_conv_dim()),
      mixed_nonzeros(config.linear_conv_dim()),
      z(config.linear_value_dim()),
      b(config.linear_num_value_heads),
      a(config.linear_num_value_heads),
      gated(config.linear_value_dim()),
      gated_nonzeros(config.linear_value_dim()),
      key_heads(config.linear_num_key_heads, KeyHeadInput(config.linear_key_head_dim)),
      active_blocks(block_count(config.linear_conv_dim())),
      tap_inputs(config.linear_conv_kernel_dim),
      tap_block_words(config.linear_conv_kernel_dim),
      recall(config.linear_value_head_dim),
      delta(config.linear_value_head_dim),
      read(config.linear_value_head_dim),
      dense_key(config.linear_key_head_dim),
      dense_query(config.linear_key_head_dim) {}

FastGatedDeltaNet::FastGatedDeltaNet(const Config& config, const Checkpoint& checkpoint, std::size_t layer)
    : key_heads_(config.linear_num_key_heads),
      value_heads_(config.linear_num_value_heads),
      key_head_dim_(config.linear_key_head_dim),
      value_head_dim_(config.linear_value_head_dim),
      kernel_(config.linear_conv_kernel_dim),
      conv_dim_(config.linear_conv_dim()),
      eps_(static_cast<float>(config.rms_norm_eps)),
      query_scale_(inverse_sqrt_scale(config.linear_key_head_dim)) {
  const auto tensor = [&](std::string_view name) -> const CheckpointTensor& {
    return checkpoint.tensor(fmt::format("layers.{}.linear_attn.{}", layer, name));
  };
  qkv_ = ColumnMatrix::from_tensor(tensor("in_proj_qkv.weight"));
  z_ = ColumnMatrix::from_tensor(tensor("in_proj_z.weight"));
  b_ = ColumnMatrix::from_tensor(tensor("in_proj_b.weight"));
  a_ = ColumnMatrix::from_tensor(tensor("in_proj_a.weight"));
  out_ = ColumnMatrix::from_tensor(tensor("out_proj.weight"));
  const std::vector<float> conv = tensor("conv1d.weight").to_floats();  // [conv_dim][kernel]
  const std::size_t padded = block_count(conv_dim_) * block_lanes;
  conv_taps_.assign(kernel_ * padded, 0.0f);
  tap_blocks_.assign(kernel_, BlockSet(block_count(conv_dim_)));
  for (std::size_t c = 0; c < conv_dim_; ++c) {
    for (std::size_t tap = 0; tap < kernel_; ++tap) {
      conv_taps_[tap * padded + c] = conv[c * kernel_ + tap];
      if (conv[c * kernel_ + tap] != 0.0f) tap_blocks_[tap].insert(c / block_lanes);
    }
  }

  conv_finite_ = all_finite(conv_taps_);
  dt_bias_ = tensor("dt_bias").to_floats();
  A_log_ = tensor("A_log").to_floats();
  norm_ = tensor("norm.weight").to_floats();
  norm_finite_ = all_finite(norm_);
  for (std::size_t head = 0; head < value_heads_; ++head) {
    alpha_at_zero_.push_back(std::exp(-std::exp(A_log_[head]) * softplus(0.0f + dt_bias_[head])));
  }
  // An all-zero read-out o gives ((o·r)·w)·SiLU(z) = ±0 when r = 1/sqrt(0 + eps), w and SiLU(z) are finite.
  zero_reads_vanish_ = std::isfinite(inverse_rms_from_sum(0.0f, value_head_dim_, eps_)) && norm_finite_;
}

std::uint64_t FastGatedDeltaNet::weight_count() const {
  return qkv_.nonzero_count() + z_.nonzero_count() + b_.nonzero_count() + a_.nonzero_count() + out_.nonzero_count();
}

GatedDeltaNetTracking FastGatedDeltaNet::track(const GatedDeltaNetState& state) const {
  GatedDeltaNetTracking tracking;
  const std::size_t state_size = key_head_dim_ * value_head_dim_;
  for (std::size_t head = 0; head < value_heads_; ++head) {
    tracking.clean_heads.push_back(is_clean(std::span(state.recurrent).subspan(head * state_size, state_size)));
  }
  for (std::size_t slot = 0; slot + 1 < kernel_; ++slot) {
    BlockVector inputs(conv_dim_);
    const float* conv = state.conv.data() + slot * conv_dim_;
    for (std::size_t block = 0; block < block_count(conv_dim_); ++block) {
      const std::size_t first = block * block_lanes;
      if (!any_bits_set(conv + first, inputs.lanes(block))) continue;
      inputs.mark(static_cast<std::uint32_t>(block));
      std::copy(conv + first, conv + first + inputs.lanes(block), inputs.data() + first);
    }
    tracking.window_finite.push_back(all_finite(std::span(conv, conv_dim_)));
    tracking.window.push_back(std::move(inputs));
  }
  return tracking;
}

void GatedDeltaNetTracking::write_window(std::vector<float>& conv) const {
  if (window.empty()) return;
  const std::size_t conv_dim = window.front().size();
  for (std::size_t slot = 0; slot < window.size(); ++slot) {
    const auto values = window[(oldest + slot) % window.size()].values();
    std::copy(values.begin(), values.end(), conv.begin() + static_cast<std::ptrdiff_t>(slot * conv_dim));
  }
}

void FastGatedDeltaNet::step(GatedDeltaNetState& state, GatedDeltaNetTracking& tracking, const SparseInput& x,
                             GatedDeltaNetScratch& s, BlockVector& out, GatedDeltaNetCounters& counters) const {
  counters.weights += qkv_.multiply(x, s.raw) + z_.multiply(x, s.z) + b_.multiply(x, s.b) + a_.multiply(x, s.a);
  const bool raw_finite = qkv_.output_certainly_finite(x) || s.raw.all_finite();
  convolve(tracking, raw_finite, s);
  if (!tracking.window.empty()) {
    std::swap(s.raw, tracking.window[tracking.oldest]);
    tracking.window_finite[tracking.oldest] = raw_finite;
    tracking.oldest = (tracking.oldest + 1) % tracking.window.size();
  }
  select_key_heads(s);

  // The sparse paths assume finite q, k, v and β (so that δ = (v − r)·β is finite for a zero key).
  const bool inputs_finite = s.mixed_finite && s.b.all_finite();
  const bool z_finite = z_.output_certainly_finite(x) || s.z.all_finite();
  s.gated.clear();
  for (std::size_t head = 0; head < value_heads_; ++head) {
    const std::span<float> head_state = this->head_state(state, head);
    const float alpha = decay(head, s.a.data()[head]);
    std::uint8_t& clean = tracking.clean_heads[head];
    bool read_is_zero = false;
    // α = 1 exactly makes the decay S·α = S for every S, so skipping it is exact.
    if (clean && alpha == 1.0f && inputs_finite && sparse_head(head, head_state, clean, s, read_is_zero)) {
      const auto& input = s.key_heads[head / (value_heads_ / key_heads_)];
      ++(input.key.empty() && input.query.empty() ? counters.idle_heads : counters.sparse_heads);
    } else {
      reference_head(head, alpha, head_state, s);
      clean = is_clean(head_state);
      ++counters.reference_heads;
    }
    gate_head(head, read_is_zero, z_finite, s);
  }
  s.gated.gather(s.gated_nonzeros);
  counters.weights += out_.multiply({s.gated.values(), s.gated_nonzeros}, out);
}

// u_c = Σ_j w[c][j]·in_j from +0 in tap order, then SiLU. With finite weights and inputs, a tap whose
// weights are all zero in a block adds only ±0 there, and a block where every tap with a weight sees
// +0 inputs sums to +0, SiLU(+0) = +0: such taps and blocks are skipped. Otherwise every tap of every
// block is summed.
void FastGatedDeltaNet::convolve(const GatedDeltaNetTracking& tracking, bool raw_finite, GatedDeltaNetScratch& s) const {
  const std::size_t slots = tracking.window.size();
  const bool every_tap = !conv_finite_ || !raw_finite ||
                         std::find(tracking.window_finite.begin(), tracking.window_finite.end(), 0) != tracking.window_finite.end();
  s.active_blocks.clear();
  for (std::size_t tap = 0; tap < kernel_; ++tap) {
    const BlockVector& input = tap < slots ? tracking.window[(tracking.oldest + tap) % slots] : s.raw;
    s.tap_inputs[tap] = input.data();
    s.tap_block_words[tap] = tap_blocks_[tap].words().data();
    for (std::uint32_t block : input.blocks()) {
      if (every_tap || tap_blocks_[tap].contains(block)) s.active_blocks.insert(block);
    }
  }
  s.active_blocks.list(s.active_list);
  s.mixed.clear();
  s.mixed.mark(s.active_list);
  const ConvolveResult result = fast_kernels().convolve({
      .blocks = s.active_list.data(),
      .block_count = s.active_list.size(),
      .kernel = kernel_,
      .tap_inputs = s.tap_inputs.data(),
      .tap_weights = conv_taps_.data(),
      .tap_stride = block_count(conv_dim_) * block_lanes,
      .tap_blocks = every_tap ? nullptr : s.tap_block_words.data(),
      .out = s.mixed.data(),
      .nonzeros = s.mixed_nonzeros.sink(),
      .silu = silu_shortcuts(),
  });
  s.mixed_nonzeros.set_size(result.nonzeros);
  s.mixed_finite = result.finite;
}

// The non-zero entries of each key head's query and key, l2-normalised: the sum of squares over the
// non-zero entries is the reference's (zeros add +0), and the zero entries' signs do not matter for
// clean states. Heads that run the reference normalise their own dense copies (reference_head).
void FastGatedDeltaNet::select_key_heads(GatedDeltaNetScratch& s) const {
  const std::size_t key_dim = key_heads_ * key_head_dim_;
  const SparseVector& nonzeros = s.mixed_nonzeros;
  std::size_t k = 0;
  const auto gather_normalised = [&](std::size_t begin, SparseVector& out) {
    out.clear();
    while (k < nonzeros.size() && nonzeros.index(k) < begin) ++k;
    float sum = 0.0f;
    for (; k < nonzeros.size() && nonzeros.index(k) < begin + key_head_dim_; ++k) {
      out.push(static_cast<std::uint32_t>(nonzeros.index(k) - begin), nonzeros.value(k));
      sum += nonzeros.value(k) * nonzeros.value(k);
    }
    const float scale = l2_scale_from_sum(sum);
    for (float& value : out.values()) value *= scale;
  };
  for (std::size_t head = 0; head < key_heads_; ++head) {
    gather_normalised(head * key_head_dim_, s.key_heads[head].query);
    for (float& value : s.key_heads[head].query.values()) value *= query_scale_;
  }
  for (std::size_t head = 0; head < key_heads_; ++head) gather_normalised(key_dim + head * key_head_dim_, s.key_heads[head].key);
}

float FastGatedDeltaNet::decay(std::size_t head, float a) const {
  if (a == 0.0f) return alpha_at_zero_[head];
  return std::exp(-std::exp(A_log_[head]) * softplus(a + dt_bias_[head]));
}

std::span<float> FastGatedDeltaNet::head_state(GatedDeltaNetState& state, std::size_t head) const {
  const std::size_t size = key_head_dim_ * value_head_dim_;
  return std::span(state.recurrent).subspan(head * size, size);
}

const float* FastGatedDeltaNet::head_value(const GatedDeltaNetScratch& s, std::size_t head) const {
  return s.mixed.data() + 2 * key_heads_ * key_head_dim_ + head * value_head_dim_;
}

// The delta rule with α = 1 on a clean state. Recall r = Σ over the key's non-zero rows (the other
// terms are S·(±0) = ±0); with finite δ the write changes only those rows (elsewhere S + (±0) = S, as S
// holds no −0); the read sums over the query's non-zero rows, or over every row once the write has
// left a non-finite value (then S·(±0) may be NaN). A zero key writes nothing: δ = v·β is finite.
bool FastGatedDeltaNet::sparse_head(std::size_t head, std::span<float> state, std::uint8_t& clean,
                                    GatedDeltaNetScratch& s, bool& read_is_zero) const {
  const KeyHeadInput& input = s.key_heads[head / (value_heads_ / key_heads_)];
  const std::size_t dim = value_head_dim_;
  if (!input.key.empty()) {
    const float beta = sigmoid(s.b.data()[head]);
    const float* value = head_value(s, head);
    std::fill(s.recall.begin(), s.recall.end(), 0.0f);
    for (std::size_t k = 0; k < input.key.size(); ++k) {
      add_scaled(s.recall.data(), state.data() + input.key.index(k) * dim, input.key.value(k), dim);
    }
    for (std::size_t i = 0; i < dim; ++i) s.delta[i] = (value[i] - s.recall[i]) * beta;
    if (!all_finite(s.delta)) return false;
    for (std::size_t k = 0; k < input.key.size(); ++k) {
      float* row = state.data() + input.key.index(k) * dim;
      // key·δ, the reference's operand order (multiplication is commutative in IEEE arithmetic anyway).
      for (std::size_t i = 0; i < dim; ++i) row[i] += input.key.value(k) * s.delta[i];
      if (!engine::all_finite(row, dim)) clean = 0;
    }
  }
  read_is_zero = input.query.empty() && clean;
  if (read_is_zero) return true;
  std::fill(s.read.begin(), s.read.end(), 0.0f);
  if (clean) {
    for (std::size_t k = 0; k < input.query.size(); ++k) {
      add_scaled(s.read.data(), state.data() + input.query.index(k) * dim, input.query.value(k), dim);
    }
  } else {
    std::fill(s.dense_query.begin(), s.dense_query.end(), 0.0f);
    for (std::size_t k = 0; k < input.query.size(); ++k) s.dense_query[input.query.index(k)] = input.query.value(k);
    for (std::size_t m = 0; m < key_head_dim_; ++m) add_scaled(s.read.data(), state.data() + m * dim, s.dense_query[m], dim);
  }
  return true;
}

void FastGatedDeltaNet::reference_head(std::size_t head, float alpha, std::span<float> state,
                                       GatedDeltaNetScratch& s) const {
  const std::size_t key_head = head / (value_heads_ / key_heads_);
  const float* query = s.mixed.data() + key_head * key_head_dim_;
  const float* key = s.mixed.data() + key_heads_ * key_head_dim_ + key_head * key_head_dim_;
  std::copy(query, query + key_head_dim_, s.dense_query.begin());
  std::copy(key, key + key_head_dim_, s.dense_key.begin());
  l2_normalise(s.dense_query);
  for (float& value : s.dense_query) value *= query_scale_;
  l2_normalise(s.dense_key);
  delta_rule_step(state, s.dense_key, std::span(head_value(s, head), value_head_dim_), s.dense_query, alpha,
                  sigmoid(s.b.data()[head]), s.read);
}

// Lanes whose read-out is ±0 give ((±0·r)·w)·SiLU(z) = ±0 when r, w and z are finite; out_proj skips
// them, so only the other lanes are written. Otherwise the reference gated_rms_norm runs.
void FastGatedDeltaNet::gate_head(std::size_t head, bool read_is_zero, bool z_finite, GatedDeltaNetScratch& s) const {
  if (read_is_zero && zero_reads_vanish_ && z_finite) return;
  if (read_is_zero) std::fill(s.read.begin(), s.read.end(), 0.0f);
  const std::size_t offset = head * value_head_dim_;
  s.gated.mark_range(offset, offset + value_head_dim_);
  const float* z = s.z.data() + offset;
  float* out = s.gated.data() + offset;
  float sum = 0.0f;
  for (float value : s.read) {
    if (value != 0.0f) sum += value * value;
  }
  const float scale = inverse_rms_from_sum(sum, value_head_dim_, eps_);
  if (std::isfinite(scale) && norm_finite_ && z_finite) {
    for (std::size_t i = 0; i < value_head_dim_; ++i) {
      if (s.read[i] != 0.0f) out[i] = ((s.read[i] * scale) * norm_[i]) * fast_silu(z[i]);
    }
  } else {
    gated_rms_norm(s.read, norm_, std::span(z, value_head_dim_), eps_, std::span(out, value_head_dim_));
  }
}

}  // namespace rvformer::engine
