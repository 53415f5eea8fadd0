// engine/fast_gated_delta_net.cpp — see fast_gated_delta_net.h. Each shortcut's exactness argument
// sits next to it; docs/engine.md collects them.
#include "engine/fast_gated_delta_net.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "engine/fast_ops.h"
#include "engine/gated_delta_net.h"
#include "engine/ops.h"
#include "support/error.h"

namespace rvformer::engine {

namespace {

bool all_finite(std::span<const float> values) { return engine::all_finite(values.data(), values.size()); }

// Only finite values and no −0: then S + (±0) = S and S·(±0) = ±0 for every entry.
bool is_clean(std::span<const float> state) {
  return std::none_of(state.begin(), state.end(), [](float value) {
    return !std::isfinite(value) || std::bit_cast<std::uint32_t>(value) == 0x80000000u;
  });
}

}  // namespace

GatedDeltaNetScratch::GatedDeltaNetScratch(const Config& config)
    : raw(config.linear_conv_dim()),
      part_done(2 * config.linear_num_key_heads + config.linear_num_value_heads),
      part_projected(2 * config.linear_num_key_heads + config.linear_num_value_heads),
      part_convolved(2 * config.linear_num_key_heads + config.linear_num_value_heads),
      memo_key(2 * config.hidden_size),
      mixed(config.linear_conv_dim()),
      mixed_nonzeros(config.linear_conv_dim()),
      part_nonzeros(config.linear_key_head_dim),
      value_nonzeros(config.linear_conv_dim()),
      value_ready(config.linear_num_value_heads),
      z(config.linear_value_dim()),
      b(config.linear_num_value_heads),
      a(config.linear_num_value_heads),
      gated(config.linear_value_dim()),
      gated_nonzeros(config.linear_value_dim()),
      key_heads(config.linear_num_key_heads, KeyHeadInput(config.linear_key_head_dim)),
      active_blocks(block_count(config.linear_conv_dim())),
      tap_inputs(config.linear_conv_kernel_dim),

      recall(config.linear_value_head_dim),
      delta(config.linear_value_head_dim),
      read(block_count(config.linear_value_head_dim) * block_lanes),
      dense_key(config.linear_key_head_dim),
      dense_query(config.linear_key_head_dim),
      read_nonzeros(config.linear_value_head_dim) {
  for (std::uint32_t block = 0; block < block_count(config.linear_value_head_dim); ++block) read_blocks.push_back(block);
  for (std::uint32_t row = 0; row < config.linear_key_head_dim; ++row) every_key_row.push_back(row);
}

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
  by_head_ = key_head_dim_ % block_lanes == 0 && value_head_dim_ % block_lanes == 0;
  std::vector<std::size_t> qkv_starts;
  std::vector<std::size_t> z_starts;
  for (std::size_t part = 1; by_head_ && part < 2 * key_heads_ + value_heads_; ++part) {
    qkv_starts.push_back(part <= 2 * key_heads_ ? part * key_head_dim_
                                                : 2 * key_heads_ * key_head_dim_ + (part - 2 * key_heads_) * value_head_dim_);
  }
  for (std::size_t head = 1; by_head_ && head < value_heads_; ++head) z_starts.push_back(head * value_head_dim_);
  qkv_ = std::make_shared<const ColumnMatrix>(ColumnMatrix::from_tensor(tensor("in_proj_qkv.weight"), qkv_starts));
  z_ = ColumnMatrix::from_tensor(tensor("in_proj_z.weight"), z_starts);
  b_ = ColumnMatrix::from_tensor(tensor("in_proj_b.weight"));
  a_ = ColumnMatrix::from_tensor(tensor("in_proj_a.weight"));
  out_ = ColumnMatrix::from_tensor(tensor("out_proj.weight"));
  const std::vector<float> conv = tensor("conv1d.weight").to_floats();  // [conv_dim][kernel]
  const std::size_t padded = block_count(conv_dim_) * block_lanes;
  conv_taps_.assign(kernel_ * padded, 0.0f);
  // Tap masks are 32-bit (Qwen3.5 uses 4 taps).
  if (kernel_ > 32) fail("layer {}: the fast executor supports conv kernels of up to 32 taps (got {})", layer, kernel_);
  block_taps_.assign(block_count(conv_dim_), 0);
  current_tap_ = 1u << (kernel_ - 1);
  for (std::size_t c = 0; c < conv_dim_; ++c) {
    double gain = 0;
    for (std::size_t tap = 0; tap < kernel_; ++tap) {
      conv_taps_[tap * padded + c] = conv[c * kernel_ + tap];
      if (conv[c * kernel_ + tap] != 0.0f) block_taps_[c / block_lanes] |= 1u << tap;
      gain += std::fabs(static_cast<double>(conv[c * kernel_ + tap]));
    }
    conv_gain_ = std::max(conv_gain_, gain);
  }
  conv_finite_ = all_finite(conv_taps_);
  if (!conv_finite_) conv_gain_ = INFINITY;
  for (std::size_t part = 0; by_head_ && part < qkv_->parts(); ++part) {
    for (std::size_t block = qkv_->part_begin(part) / block_lanes; block < qkv_->part_end(part) / block_lanes; ++block) {
      if ((block_taps_[block] & ~current_tap_) != 0) {
        window_parts_.push_back(part);
        break;
      }
    }
  }
  replayable_ = conv_finite_ && !qkv_->has_nonfinite_weights();
  group_key_parts();
  dt_bias_ = tensor("dt_bias").to_floats();
  A_log_ = tensor("A_log").to_floats();
  norm_ = tensor("norm.weight").to_floats();
  norm_finite_ = all_finite(norm_);
  for (std::size_t head = 0; head < value_heads_; ++head) {
    alpha_at_zero_.push_back(std::exp(-std::exp(A_log_[head]) * softplus(0.0f + dt_bias_[head])));
    unit_decay_at_zero_.push_back(alpha_at_zero_.back() == 1.0f);
  }
  // An all-zero read-out o gives ((o·r)·w)·SiLU(z) = ±0 when r = 1/sqrt(0 + eps), w and SiLU(z) are finite.
  zero_reads_vanish_ = std::isfinite(inverse_rms_from_sum(0.0f, value_head_dim_, eps_)) && norm_finite_;
  bool key_weights = false;
  for (std::size_t part = 0; by_head_ && part < 2 * key_heads_; ++part) key_weights |= !qkv_->part_columns(part).empty();
  silent_ = by_head_ && !key_weights && a_.nonzero_count() == 0 && window_parts_.empty() && zero_reads_vanish_ &&
            std::ranges::all_of(unit_decay_at_zero_, [](std::uint8_t unit) { return unit != 0; });
}

// With finite x, the query and key projections are +0 (no weights) and so is their conv over the
// current token and over replayable window slots (projections of earlier finite inputs by the same
// weights); a = +0 gives α = 1. β and z provably finite, every value-head state clean and every conv
// output provably finite (conv_bound) are the idle path's remaining conditions (step).
bool FastGatedDeltaNet::all_heads_idle(const GatedDeltaNetTracking& tracking, const SparseInput& x,
                                       double raw_bound) const {
  return x.nonzeros.all_finite() && b_.output_certainly_finite(x) && z_.output_certainly_finite(x) &&
         conv_bound(tracking, raw_bound) < static_cast<double>(std::numeric_limits<float>::max()) &&
         std::ranges::all_of(tracking.window, [](const WindowSlot& slot) { return slot.replayable; }) &&
         std::ranges::all_of(tracking.clean_heads, [](std::uint8_t clean) { return clean != 0; });
}

// Memo groups for the query and key parts whose conv reads only the current token and that read at
// most max_columns input columns; a group's result is its parts' (few) non-zero outputs as
// (channel, value bits) pairs.
void FastGatedDeltaNet::group_key_parts() {
  constexpr std::size_t memo_slots_log2 = 8;
  constexpr std::size_t max_columns = 256;
  constexpr std::size_t max_outputs_per_part = 8;
  std::vector<std::vector<std::uint32_t>> group_parts;
  for (std::size_t part = 0; by_head_ && part < 2 * key_heads_; ++part) {
    const auto columns = qkv_->part_columns(part);
    if (std::find(window_parts_.begin(), window_parts_.end(), part) != window_parts_.end() ||
        columns.size() > max_columns) {
      computed_key_parts_.push_back(static_cast<std::uint32_t>(part));
      continue;
    }
    const auto same_columns = [&](const std::vector<std::uint32_t>& parts) {
      return std::ranges::equal(qkv_->part_columns(parts.front()), columns);
    };
    const auto group = std::find_if(group_parts.begin(), group_parts.end(), same_columns);
    if (group == group_parts.end()) {
      group_parts.push_back({static_cast<std::uint32_t>(part)});
    } else {
      group->push_back(static_cast<std::uint32_t>(part));
    }
  }
  for (auto& parts : group_parts) {
    const auto columns = qkv_->part_columns(parts.front());
    key_groups_.push_back({.parts = parts,
                           .columns = {columns.begin(), columns.end()},
                           .memo = Memo(2 * columns.size(), 2 * max_outputs_per_part * parts.size(), memo_slots_log2)});
  }
}

std::uint64_t FastGatedDeltaNet::weight_count() const {
  return qkv_->nonzero_count() + z_.nonzero_count() + b_.nonzero_count() + a_.nonzero_count() + out_.nonzero_count();
}

GatedDeltaNetTracking FastGatedDeltaNet::track(const GatedDeltaNetState& state) const {
  GatedDeltaNetTracking tracking;
  const std::size_t state_size = key_head_dim_ * value_head_dim_;
  for (std::size_t head = 0; head < value_heads_; ++head) {
    tracking.clean_heads.push_back(is_clean(std::span(state.recurrent).subspan(head * state_size, state_size)));
  }
  tracking.qkv = qkv_;
  for (std::size_t slot = 0; slot + 1 < kernel_; ++slot) {
    // A state from elsewhere: its window slots are kept whole until they leave the window.
    WindowSlot& window = tracking.window.emplace_back();
    window.input = SparseVector(qkv_->cols());
    window.kept = BlockVector(conv_dim_);
    const float* conv = state.conv.data() + slot * conv_dim_;
    for (std::size_t block = 0; block < block_count(conv_dim_); ++block) {
      const std::size_t first = block * block_lanes;
      if (!any_bits_set(conv + first, window.kept.lanes(block))) continue;
      window.kept.mark(static_cast<std::uint32_t>(block));
      std::copy(conv + first, conv + first + window.kept.lanes(block), window.kept.data() + first);
    }
    window.bound = window.kept.largest_magnitude();
  }
  return tracking;
}

void GatedDeltaNetTracking::write_window(std::vector<float>& conv) const {
  if (window.empty()) return;
  BlockVector replayed(qkv->rows());
  std::vector<float> input(qkv->cols());
  for (std::size_t slot = 0; slot < window.size(); ++slot) {
    const WindowSlot& source = window[(oldest + slot) % window.size()];
    if (source.replayable) {
      std::fill(input.begin(), input.end(), 0.0f);
      for (std::size_t k = 0; k < source.input.size(); ++k) input[source.input.index(k)] = source.input.value(k);
      qkv->multiply({input, source.input}, replayed);
    }
    const auto values = source.replayable ? replayed.values() : source.kept.values();
    std::copy(values.begin(), values.end(), conv.begin() + static_cast<std::ptrdiff_t>(slot * values.size()));
  }
}

void FastGatedDeltaNet::step(GatedDeltaNetState& state, GatedDeltaNetTracking& tracking, const SparseInput& x,
                             GatedDeltaNetScratch& s, BlockVector& out, GatedDeltaNetCounters& counters) const {
  double raw_bound = qkv_->output_bound(x);
  if (silent_ && all_heads_idle(tracking, x, raw_bound)) {
    out.clear();
    counters.idle_heads += value_heads_;
    ++counters.silent_layers;
    // The new slot is replayable (conv_bound proved the projection finite) and no earlier tap reads
    // a value channel, so it keeps only its input.
    push_window(tracking, x, raw_bound, /*lazy=*/true, s);
    return;
  }
  counters.weights += a_.multiply(x, s.a);
  // β is read only by heads that write or run the reference: b is projected when the first such head
  // comes, unless its finiteness (which every head's path depends on) has to be seen first.
  s.b_ready = !b_.output_certainly_finite(x);
  if (s.b_ready) counters.weights += b_.multiply(x, s.b);
  for (std::uint32_t part : s.raw_parts) {
    std::fill(s.raw.data() + qkv_->part_begin(part), s.raw.data() + qkv_->part_end(part), 0.0f);
    s.part_done[part] = 0;
  }
  s.raw_parts.clear();
  s.raw.clear();
  s.mixed.clear();
  s.mixed_nonzeros.clear();
  std::fill(s.value_ready.begin(), s.value_ready.end(), 0);
  std::fill(s.part_convolved.begin(), s.part_convolved.end(), 0);
  // Channels are projected head by head, as needed, when every conv output is provably finite.
  const bool lazy = by_head_ && conv_bound(tracking, raw_bound) < static_cast<double>(std::numeric_limits<float>::max());
  if (lazy) {
    project_keys(tracking, x, s, counters);
  } else {
    project_all(tracking, x, s, counters, raw_bound);
    select_key_heads(s);
  }
  normalise_key_heads(s);

  // The sparse paths assume finite q, k, v and β (so that δ = (v − r)·β is finite for a zero key).
  const bool inputs_finite = s.mixed_finite && (!s.b_ready || s.b.all_finite());
  // z is computed head by head where it is read, if it is sure to be finite everywhere; else whole.
  const bool z_by_head = by_head_ && z_.output_certainly_finite(x);
  if (z_by_head) {
    s.z.clear();
  } else {
    counters.weights += z_.multiply(x, s.z);
  }
  const bool z_finite = z_by_head || s.z.all_finite();
  s.gated.clear();
  // What the sparse path does with a head whose key and query are zero, α = 1 (from a = ±0) and a
  // clean state, given finite inputs and z: nothing (no write, a ±0 read-out that the gated norm
  // keeps ±0 and out_proj skips). Such heads are only counted.
  const bool idle_heads_vanish = inputs_finite && z_finite && zero_reads_vanish_;
  const std::size_t heads_per_key = value_heads_ / key_heads_;
  for (std::size_t key_head = 0; key_head < key_heads_; ++key_head) {
    const KeyHeadInput& input = s.key_heads[key_head];
    const bool quiet = idle_heads_vanish && input.key.empty() && input.query.empty();
    for (std::size_t head = key_head * heads_per_key; head < (key_head + 1) * heads_per_key; ++head) {
      std::uint8_t& clean = tracking.clean_heads[head];
      if (quiet && clean && unit_decay_at_zero_[head] && s.a.data()[head] == 0.0f) {
        ++counters.idle_heads;
        continue;
      }
      if (!s.b_ready) {
        counters.weights += b_.multiply(x, s.b);
        s.b_ready = true;
      }
      const std::span<float> head_state = this->head_state(state, head);
      const float alpha = decay(head, s.a.data()[head]);
      // α = 1 exactly makes the decay S·α = S for every S, so skipping it is exact.
      const bool sparse = clean && alpha == 1.0f && inputs_finite;
      if (lazy && !(sparse && input.key.empty())) project_value_head(head, tracking, x, s, counters);
      bool read_is_zero = false;
      if (sparse && sparse_head(head, input, head_state, clean, s, read_is_zero)) {
        ++(input.key.empty() && input.query.empty() ? counters.idle_heads : counters.sparse_heads);
      } else {
        reference_head(head, alpha, head_state, tracking, x, s, counters);
        clean = is_clean(head_state);
        ++counters.reference_heads;
      }
      gate_head(head, read_is_zero, z_finite, z_by_head, x, s, counters);
    }
  }
  s.gated.gather(s.gated_nonzeros);
  counters.weights += out_.multiply({s.gated.values(), s.gated_nonzeros}, out);
  push_window(tracking, x, raw_bound, lazy, s);
}

void FastGatedDeltaNet::project_all(const GatedDeltaNetTracking& tracking, const SparseInput& x,
                                    GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters, double& raw_bound) const {
  counters.weights += qkv_->multiply(x, s.raw);
  if (!(raw_bound < static_cast<double>(std::numeric_limits<float>::max()))) raw_bound = s.raw.largest_magnitude();
  const bool raw_finite = raw_bound < INFINITY;
  const std::uint32_t every_block = every_block_taps(tracking, raw_finite);
  const std::size_t slots = tracking.window.size();
  s.active_blocks.clear();
  for (std::size_t tap = 0; tap < kernel_; ++tap) {
    const BlockVector& input = tap == slots ? s.raw : tracking.window[(tracking.oldest + tap) % slots].kept;
    for (std::uint32_t block : input.blocks()) {
      if (((block_taps_[block] | every_block) >> tap) & 1) s.active_blocks.insert(block);
    }
  }
  s.active_blocks.list(s.active_list);
  s.mixed_finite = convolve(tracking, s.active_list, raw_finite, s, s.mixed_nonzeros);
  std::fill(s.value_ready.begin(), s.value_ready.end(), 1);
  std::fill(s.part_convolved.begin(), s.part_convolved.end(), 1);
}

void FastGatedDeltaNet::project_keys(const GatedDeltaNetTracking& tracking, const SparseInput& x,
                                     GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const {
  for (std::size_t part : window_parts_) project_part(part, x, s, counters);
  for (KeyHeadInput& head : s.key_heads) {
    head.query.clear();
    head.key.clear();
  }
  for (std::size_t part : computed_key_parts_) compute_key_part(part, tracking, x, s, counters);
  for (std::size_t group = 0; group < key_groups_.size(); ++group) recall_key_group(group, tracking, x, s, counters);
  s.mixed_finite = true;  // conv_bound proved it
}

SparseVector& FastGatedDeltaNet::key_part_outputs(GatedDeltaNetScratch& s, std::size_t part) const {
  return part < key_heads_ ? s.key_heads[part].query : s.key_heads[part - key_heads_].key;
}

void FastGatedDeltaNet::compute_key_part(std::size_t part, const GatedDeltaNetTracking& tracking, const SparseInput& x,
                                         GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const {
  s.part_nonzeros.clear();
  convolve_part(part, project_part(part, x, s, counters), tracking, s, s.part_nonzeros);
  s.part_convolved[part] = 1;
  SparseVector& outputs = key_part_outputs(s, part);
  const auto offset = static_cast<std::uint32_t>(qkv_->part_begin(part));
  for (std::size_t k = 0; k < s.part_nonzeros.size(); ++k) outputs.push(s.part_nonzeros.index(k) - offset, s.part_nonzeros.value(k));
}

// The key: the input's non-zero (column, bits) pairs at the group's columns; the other inputs are ±0,
// whose products every sum skips alike, so equal keys give equal outputs. An empty key means no
// input reaches the parts: their projection is +0, and so is their conv (of the current token only).
void FastGatedDeltaNet::recall_key_group(std::size_t group_index, const GatedDeltaNetTracking& tracking,
                                         const SparseInput& x, GatedDeltaNetScratch& s,
                                         GatedDeltaNetCounters& counters) const {
  KeyPartGroup& group = key_groups_[group_index];
  // Kept without branches: which inputs are zero follows no pattern.
  std::size_t words = 0;
  for (std::uint32_t col : group.columns) {
    const float value = x.values[col];
    s.memo_key[words] = col;
    s.memo_key[words + 1] = std::bit_cast<std::uint32_t>(value);
    words += value != 0.0f ? 2 : 0;
  }
  const std::span<const std::uint32_t> key(s.memo_key.data(), words);
  if (key.empty()) {
    for (std::uint32_t part : group.parts) s.part_convolved[part] = 1;
    return;
  }
  if (const auto outputs = group.memo.find(key)) {
    // Pairs of (channel, value bits); query and key parts are key_head_dim channels each.
    for (std::size_t k = 0; k < outputs->size(); k += 2) {
      const std::uint32_t channel = (*outputs)[k];
      key_part_outputs(s, channel / key_head_dim_)
          .push(static_cast<std::uint32_t>(channel % key_head_dim_), std::bit_cast<float>((*outputs)[k + 1]));
    }
    counters.remembered_heads += group.parts.size();
    return;
  }
  s.memo_result.clear();
  for (std::uint32_t part : group.parts) {
    compute_key_part(part, tracking, x, s, counters);
    const SparseVector& outputs = key_part_outputs(s, part);
    const auto offset = static_cast<std::uint32_t>(qkv_->part_begin(part));
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      s.memo_result.insert(s.memo_result.end(), {offset + outputs.index(k), std::bit_cast<std::uint32_t>(outputs.value(k))});
    }
  }
  counters.computed_heads += group.parts.size();
  group.memo.remember(key, s.memo_result);
}

void FastGatedDeltaNet::ensure_convolved(std::size_t part, const GatedDeltaNetTracking& tracking, const SparseInput& x,
                                         GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const {
  if (s.part_convolved[part]) return;
  s.part_convolved[part] = 1;
  s.value_nonzeros.clear();
  convolve_part(part, project_part(part, x, s, counters), tracking, s, s.value_nonzeros);
}

bool FastGatedDeltaNet::project_part(std::size_t part, const SparseInput& x, GatedDeltaNetScratch& s,
                                     GatedDeltaNetCounters& counters) const {
  if (!s.part_done[part]) {
    s.part_done[part] = 1;
    s.raw_parts.push_back(static_cast<std::uint32_t>(part));
    const std::size_t weights = qkv_->accumulate_part(x, part, s.raw.data() + qkv_->part_begin(part), nullptr);
    counters.weights += weights;
    s.part_projected[part] = weights != 0;
  }
  return s.part_projected[part];
}

void FastGatedDeltaNet::convolve_part(std::size_t part, bool projected, const GatedDeltaNetTracking& tracking,
                                      GatedDeltaNetScratch& s, SparseVector& nonzeros) const {
  // Where the part's projection is +0 and only the current tap has weights, the conv sums ±0 products.
  const std::uint32_t taps = projected ? ~0u : ~current_tap_;
  s.active_list.clear();
  for (std::size_t block = qkv_->part_begin(part) / block_lanes; block < qkv_->part_end(part) / block_lanes; ++block) {
    if ((block_taps_[block] & taps) != 0) s.active_list.push_back(static_cast<std::uint32_t>(block));
  }
  if (!s.active_list.empty()) convolve(tracking, s.active_list, true, s, nonzeros);
}

void FastGatedDeltaNet::project_value_head(std::size_t head, const GatedDeltaNetTracking& tracking,
                                           const SparseInput& x, GatedDeltaNetScratch& s,
                                           GatedDeltaNetCounters& counters) const {
  if (s.value_ready[head]) return;
  s.value_ready[head] = 1;
  s.value_nonzeros.clear();
  convolve_part(value_part(head), project_part(value_part(head), x, s, counters), tracking, s, s.value_nonzeros);
}

std::uint32_t FastGatedDeltaNet::every_block_taps(const GatedDeltaNetTracking& tracking, bool raw_finite) const {
  if (!conv_finite_) return ~0u;
  std::uint32_t taps = raw_finite ? 0 : current_tap_;
  const std::size_t slots = tracking.window.size();
  for (std::size_t tap = 0; tap < slots; ++tap) {
    if (!(tracking.window[(tracking.oldest + tap) % slots].bound < INFINITY)) taps |= 1u << tap;
  }
  return taps;
}

// u_c = Σ_j w[c][j]·in_j from +0 in tap order, then SiLU. With finite weights and inputs, a tap whose
// weights are all zero in a block adds only ±0 there, and a block where every tap with a weight sees
// +0 inputs sums to +0, SiLU(+0) = +0: such taps and blocks are skipped. A tap whose input may not be
// finite counts in every block (0·∞ = NaN).
bool FastGatedDeltaNet::convolve(const GatedDeltaNetTracking& tracking, std::span<const std::uint32_t> blocks,
                                 bool raw_finite, GatedDeltaNetScratch& s, SparseVector& nonzeros) const {
  const std::size_t slots = tracking.window.size();
  for (std::size_t tap = 0; tap < kernel_; ++tap) {
    s.tap_inputs[tap] = tap == slots ? s.raw.data() : tracking.window[(tracking.oldest + tap) % slots].kept.data();
  }
  s.mixed.mark(blocks);
  const ConvolveResult result = fast_kernels().convolve({
      .blocks = blocks.data(),
      .block_count = blocks.size(),
      .tap_inputs = s.tap_inputs.data(),
      .tap_weights = conv_taps_.data(),
      .tap_stride = block_count(conv_dim_) * block_lanes,
      .block_taps = block_taps_.data(),
      .extra_taps = every_block_taps(tracking, raw_finite),
      .out = s.mixed.data(),
      .nonzeros = nonzeros.sink(),
      .silu = silu_shortcuts(),
  });
  nonzeros.set_size(nonzeros.size() + result.nonzeros);
  return result.finite;
}

// |u_c| ≤ Σ_j |w[c][j]|·|in_j| ≤ conv_gain·max bound, and the rounded sum stays within twice that.
double FastGatedDeltaNet::conv_bound(const GatedDeltaNetTracking& tracking, double raw_bound) const {
  double inputs = raw_bound;
  for (const WindowSlot& slot : tracking.window) inputs = std::max(inputs, slot.bound);
  return 2.0 * conv_gain_ * inputs;
}

// A slot of a replayable layer with finite values keeps its input and only the blocks the earlier
// taps read; any other is kept whole (a tap then reads a non-finite slot in every block).
void FastGatedDeltaNet::push_window(GatedDeltaNetTracking& tracking, const SparseInput& x, double raw_bound, bool lazy,
                                    GatedDeltaNetScratch& s) const {
  if (tracking.window.empty()) return;
  WindowSlot& slot = tracking.window[tracking.oldest];
  tracking.oldest = (tracking.oldest + 1) % tracking.window.size();
  slot.bound = raw_bound;
  slot.replayable = replayable_ && raw_bound < INFINITY;
  if (!slot.replayable) {
    std::swap(slot.kept, s.raw);  // raw was projected whole (not lazily: that needs finite bounds)
    return;
  }
  slot.input.assign(x.nonzeros);
  slot.kept.clear();
  const auto copy = [&](std::size_t block) {
    if ((block_taps_[block] & ~current_tap_) == 0) return;
    slot.kept.mark(static_cast<std::uint32_t>(block));
    std::copy_n(s.raw.data() + block * block_lanes, block_lanes, slot.kept.data() + block * block_lanes);
  };
  if (lazy) {
    for (std::size_t part : window_parts_) {
      for (std::size_t block = qkv_->part_begin(part) / block_lanes; block < qkv_->part_end(part) / block_lanes; ++block) copy(block);
    }
  } else {
    for (std::uint32_t block : s.raw.blocks()) copy(block);
  }
}

// Each key head's query and key: the non-zero conv outputs of its channels (indices within the head).
void FastGatedDeltaNet::select_key_heads(GatedDeltaNetScratch& s) const {
  const SparseVector& nonzeros = s.mixed_nonzeros;
  std::size_t k = 0;
  for (std::size_t part = 0; part < 2 * key_heads_; ++part) {
    SparseVector& out = key_part_outputs(s, part);
    const std::size_t begin = part * key_head_dim_;
    out.clear();
    while (k < nonzeros.size() && nonzeros.index(k) < begin) ++k;
    for (; k < nonzeros.size() && nonzeros.index(k) < begin + key_head_dim_; ++k) {
      out.push(static_cast<std::uint32_t>(nonzeros.index(k) - begin), nonzeros.value(k));
    }
  }
}

// l2-normalised over the non-zero entries: the sum of squares over them in index order is the
// reference's (zeros add +0), and the zero entries' signs do not matter for clean states. Heads that
// run the reference normalise their own dense copies (reference_head). An empty head stays empty.
void FastGatedDeltaNet::normalise_key_heads(GatedDeltaNetScratch& s) const {
  const auto normalise = [](SparseVector& entries) {
    if (entries.empty()) return false;
    float sum = 0.0f;
    for (float value : std::as_const(entries).values()) sum += value * value;
    const float scale = l2_scale_from_sum(sum);
    for (float& value : entries.values()) value *= scale;
    return true;
  };
  for (KeyHeadInput& head : s.key_heads) {
    if (normalise(head.query)) {
      for (float& value : head.query.values()) value *= query_scale_;
    }
    normalise(head.key);
  }
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
bool FastGatedDeltaNet::sparse_head(std::size_t head, const KeyHeadInput& input, std::span<float> state,
                                    std::uint8_t& clean, GatedDeltaNetScratch& s, bool& read_is_zero) const {
  const std::size_t dim = value_head_dim_;
  const FastKernels& kernels = fast_kernels();
  if (!input.key.empty()) {
    const auto rows = input.key.indices().data();
    const auto factors = input.key.values().data();
    kernels.sum_scaled_rows(state.data(), dim, rows, factors, input.key.size(), s.recall.data());
    // key·δ, the reference's operand order (multiplication is commutative in IEEE arithmetic anyway).
    const DeltaRuleWrite write = kernels.delta_rule_write(state.data(), dim, rows, factors, input.key.size(),
                                                          head_value(s, head), s.recall.data(),
                                                          sigmoid(s.b.data()[head]), s.delta.data());
    if (!write.delta_finite) return false;
    if (!write.rows_finite) clean = 0;
  }
  read_is_zero = input.query.empty() && clean;
  if (read_is_zero) return true;
  if (clean) {
    kernels.sum_scaled_rows(state.data(), dim, input.query.indices().data(), input.query.values().data(),
                            input.query.size(), s.read.data());
  } else {
    std::fill(s.dense_query.begin(), s.dense_query.end(), 0.0f);
    for (std::size_t k = 0; k < input.query.size(); ++k) s.dense_query[input.query.index(k)] = input.query.value(k);
    kernels.sum_scaled_rows(state.data(), dim, s.every_key_row.data(), s.dense_query.data(), key_head_dim_,
                            s.read.data());
  }
  return true;
}

void FastGatedDeltaNet::reference_head(std::size_t head, float alpha, std::span<float> state,
                                       const GatedDeltaNetTracking& tracking, const SparseInput& x,
                                       GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const {
  const std::size_t key_head = head / (value_heads_ / key_heads_);
  if (by_head_) {
    ensure_convolved(key_head, tracking, x, s, counters);
    ensure_convolved(key_heads_ + key_head, tracking, x, s, counters);
  }
  const float* query = s.mixed.data() + key_head * key_head_dim_;
  const float* key = s.mixed.data() + key_heads_ * key_head_dim_ + key_head * key_head_dim_;
  std::copy(query, query + key_head_dim_, s.dense_query.begin());
  std::copy(key, key + key_head_dim_, s.dense_key.begin());
  l2_normalise(s.dense_query);
  for (float& value : s.dense_query) value *= query_scale_;
  l2_normalise(s.dense_key);
  delta_rule_step(state, s.dense_key, std::span(head_value(s, head), value_head_dim_), s.dense_query, alpha,
                  sigmoid(s.b.data()[head]), std::span(s.read).first(value_head_dim_));
}

// Lanes whose read-out is ±0 give ((±0·r)·w)·SiLU(z) = ±0 when r, w and z are finite; out_proj skips
// them, so only the other lanes are written. Otherwise the reference gated_rms_norm runs.
void FastGatedDeltaNet::gate_head(std::size_t head, bool read_is_zero, bool z_finite, bool z_by_head,
                                  const SparseInput& x, GatedDeltaNetScratch& s, GatedDeltaNetCounters& counters) const {
  if (read_is_zero && zero_reads_vanish_ && z_finite) return;
  if (read_is_zero) std::fill(s.read.begin(), s.read.end(), 0.0f);
  const std::size_t offset = head * value_head_dim_;
  s.gated.mark_range(offset, offset + value_head_dim_);
  float* z = s.z.data() + offset;
  if (z_by_head) counters.weights += z_.accumulate_part(x, head, z, nullptr);
  float* out = s.gated.data() + offset;
  // The lanes whose read-out is not ±0: the sum of squares runs over them in order (the others add +0).
  SparseVector& read = s.read_nonzeros;
  read.clear();
  read.set_size(fast_kernels().gather(s.read.data(), s.read_blocks.data(), s.read_blocks.size(), read.sink()));
  float sum = 0.0f;
  for (float value : std::as_const(read).values()) sum += value * value;
  const float scale = inverse_rms_from_sum(sum, value_head_dim_, eps_);
  if (std::isfinite(scale) && norm_finite_ && z_finite) {
    for (std::size_t k = 0; k < read.size(); ++k) {
      const std::size_t i = read.index(k);
      out[i] = ((read.value(k) * scale) * norm_[i]) * fast_silu(z[i]);
    }
  } else {
    gated_rms_norm(std::span(s.read).first(value_head_dim_), norm_, std::span(z, value_head_dim_), eps_,
                   std::span(out, value_head_dim_));
  }
  if (z_by_head) std::fill(z, z + value_head_dim_, 0.0f);
}

}  // namespace rvformer::engine
