// story/quantiser.cpp — see quantiser.h.
#include "story/quantiser.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <span>

extern "C" {
#include "story_model.h"
}
#include "support/error.h"
#include "toolchain/source_tree.h"

namespace rvformer::story {
namespace {

// Appends little-endian words and bytes, each part padded to a multiple of 4 bytes; `origin` is the
// blob offset of its first byte.
class BlobWriter {
 public:
  explicit BlobWriter(std::size_t origin = 0) : origin_(origin) {}
  void u32(std::uint32_t value) {
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  }
  void i32(std::int32_t value) { u32(static_cast<std::uint32_t>(value)); }
  void i16s(std::span<const std::int16_t> values) {
    for (std::int16_t v : values)
      for (int i = 0; i < 2; ++i) bytes_.push_back(static_cast<std::uint8_t>(static_cast<std::uint16_t>(v) >> (8 * i)));
    pad();
  }
  void raw(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
    pad();
  }
  void zeros(std::size_t count) { bytes_.resize(bytes_.size() + count, 0); }
  // Zeros up to the next multiple of `alignment` bytes of the blob.
  void align(std::size_t alignment) { zeros((alignment - (origin_ + size()) % alignment) % alignment); }
  std::size_t size() const { return bytes_.size(); }
  std::vector<std::uint8_t>& bytes() { return bytes_; }

 private:
  void pad() {
    while (bytes_.size() % 4 != 0) bytes_.push_back(0);
  }
  std::size_t origin_;
  std::vector<std::uint8_t> bytes_;
};

// out = round_shift(acc * multiplier, shift) with multiplier in [128, 255] approximates acc * scale.
StoryRequant requant_for(double scale) {
  if (!(scale > 0)) return {128, 62};  // an all-zero row: any valid parameters give zeros
  int shift = 7 - static_cast<int>(std::floor(std::log2(scale)));
  double multiplier = std::round(std::ldexp(scale, shift));
  if (multiplier >= 256.0) {
    multiplier /= 2;
    --shift;
  }
  if (shift < 1 || shift > 62) fail("story quantiser: a row scale of {} is out of the requantisation range", scale);
  return {static_cast<std::int32_t>(multiplier), shift};
}

// How one float matrix becomes int8 rows: column gains and a row factor folded in, and the fixed-point
// formats of its input and output.
struct MatrixPlan {
  std::span<const float> weights;  // [rows, cols]
  int rows, cols;
  std::span<const float> column_gain;  // empty: 1
  double row_factor = 1.0;
  int input_fraction_bits, output_fraction_bits;
};

// The pairs, then from the next multiple of STORY_LINE_BYTES of the blob the rows, each padded to
// STORY_ROW_STRIDE(cols).
void write_matrix(BlobWriter& out, const MatrixPlan& plan) {
  std::vector<StoryRequant> requant(plan.rows);
  const std::size_t stride = STORY_ROW_STRIDE(plan.cols);
  std::vector<std::int8_t> q(std::size_t(plan.rows) * stride);
  std::vector<double> row(plan.cols);
  for (int i = 0; i < plan.rows; ++i) {
    double largest = 0;
    for (int j = 0; j < plan.cols; ++j) {
      double gain = plan.column_gain.empty() ? 1.0 : plan.column_gain[j];
      row[j] = double(plan.weights[std::size_t(i) * plan.cols + j]) * gain * plan.row_factor;
      largest = std::max(largest, std::abs(row[j]));
    }
    double scale = largest / 127;
    for (int j = 0; j < plan.cols; ++j)
      q[std::size_t(i) * stride + j] = static_cast<std::int8_t>(scale > 0 ? std::round(row[j] / scale) : 0);
    requant[i] = requant_for(std::ldexp(scale, plan.output_fraction_bits - plan.input_fraction_bits));
  }
  for (const StoryRequant& r : requant) {
    out.i32(r.multiplier);
    out.i32(r.shift);
  }
  out.align(STORY_LINE_BYTES);
  out.raw(q.data(), q.size());
}

// The smallest s with n <= 2^s, as story_rmsnorm computes it.
int norm_shift(int n) {
  int s = 0;
  while ((1 << s) < n) ++s;
  return s;
}

// story_rmsnorm normalises to x / rms * sqrt(n / 2^s): the gain takes the inverse of that factor.
std::vector<float> norm_gain(std::span<const float> gain) {
  const int n = static_cast<int>(gain.size());
  const double correction = std::sqrt(std::ldexp(1.0, norm_shift(n)) / n);
  std::vector<float> folded(gain.begin(), gain.end());
  for (float& g : folded) g = static_cast<float>(g * correction);
  return folded;
}

void write_layer(BlobWriter& out, const Llama2Config& c, const Llama2Layer& layer) {
  const std::vector<float> attention_gain = norm_gain(layer.rms_att), ffn_gain = norm_gain(layer.rms_ffn);
  // Scores in base 2: log2(e) / sqrt(head_size) in wq.
  const double query_factor = std::log2(std::exp(1.0)) / std::sqrt(static_cast<double>(c.head_size()));
  const int dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  write_matrix(out, {layer.wq, dim, dim, attention_gain, query_factor, STORY_FRAC_NORM, STORY_FRAC_Q});
  write_matrix(out, {layer.wk, kv, dim, attention_gain, 1.0, STORY_FRAC_NORM, STORY_FRAC_Q});
  write_matrix(out, {layer.wv, kv, dim, attention_gain, 1.0, STORY_FRAC_NORM, STORY_FRAC_V});
  write_matrix(out, {layer.wo, dim, dim, {}, 1.0, STORY_FRAC_V, STORY_FRAC_X});
  write_matrix(out, {layer.w1, hidden, dim, ffn_gain, 1.0, STORY_FRAC_NORM, STORY_FRAC_H});
  write_matrix(out, {layer.w3, hidden, dim, ffn_gain, 1.0, STORY_FRAC_NORM, STORY_FRAC_H});
  write_matrix(out, {layer.w2, dim, hidden, {}, 1.0, STORY_FRAC_GATED, STORY_FRAC_X});
}

// Per position, the cosines of pos * 10000^(-2j / head_size) for the STORY_ROPE_PAIRS pairs of a
// line (j = the pair's index modulo head_size / 2), then their sines, in Q14; from a multiple of
// STORY_ROPE_ALIGN bytes of the blob.
void write_rope_table(BlobWriter& out, const Llama2Config& c) {
  out.align(STORY_ROPE_ALIGN);
  const int half = c.head_size() / 2;
  std::vector<std::int16_t> table;
  for (int pos = 0; pos < c.seq_len; ++pos)
    for (const bool sine : {false, true})
      for (int p = 0; p < STORY_ROPE_PAIRS; ++p) {
        const double angle = pos * std::pow(10000.0, -2.0 * (p % half) / c.head_size());
        const double value = sine ? std::sin(angle) : std::cos(angle);
        table.push_back(static_cast<std::int16_t>(std::lround(std::ldexp(value, STORY_FRAC_ROPE))));
      }
  out.i16s(table);
}

// An int32 whose order is the float scores' order (negative zero counts as zero).
std::int32_t score_key(float score) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(score == 0.0f ? 0.0f : score);
  return static_cast<std::int32_t>(bits & 0x8000'0000u ? bits ^ 0x7FFF'FFFFu : bits);
}

void write_vocabulary(BlobWriter& out, const Llama2Vocabulary& vocabulary) {
  BlobWriter records;
  std::vector<std::uint32_t> offsets;
  const std::uint32_t table_bytes = static_cast<std::uint32_t>(4 * vocabulary.pieces.size());
  for (std::size_t i = 0; i < vocabulary.pieces.size(); ++i) {
    offsets.push_back(table_bytes + static_cast<std::uint32_t>(records.size()));
    records.i32(score_key(vocabulary.scores[i]));
    records.u32(static_cast<std::uint32_t>(vocabulary.pieces[i].size()));
    records.raw(vocabulary.pieces[i].data(), vocabulary.pieces[i].size());
  }
  for (std::uint32_t offset : offsets) out.u32(offset);
  out.raw(records.bytes().data(), records.size());
}

std::uint32_t fnv1a(std::span<const std::uint8_t> bytes) {
  std::uint32_t hash = 2166136261u;
  for (std::uint8_t b : bytes) hash = (hash ^ b) * 16777619u;
  return hash;
}

void check_limits(const Llama2Config& c) {
  if (c.dim > STORY_MAX_DOT || c.hidden_dim > STORY_MAX_DOT || c.n_layers > STORY_MAX_LAYERS ||
      c.seq_len > STORY_MAX_SEQ_LEN || c.head_size() % 2 != 0 || (2 * STORY_ROPE_PAIRS) % c.head_size() != 0 ||
      c.vocab_size > 65536)
    fail("story quantiser: the model (dim {}, hidden {}, {} layers, seq_len {}, head size {}) exceeds the story "
         "program's limits (dim and hidden at most {}, {} layers, seq_len {}, a head size of 2, 4, 8 or 16)",
         c.dim, c.hidden_dim, c.n_layers, c.seq_len, c.head_size(), STORY_MAX_DOT, STORY_MAX_LAYERS, STORY_MAX_SEQ_LEN);
}

}  // namespace

std::vector<std::uint8_t> quantise_story(const Llama2Checkpoint& checkpoint, const Llama2Vocabulary& vocabulary) {
  const Llama2Config& c = checkpoint.config;
  check_limits(c);
  BlobWriter payload(STORY_HEADER_BYTES);
  write_matrix(payload, {checkpoint.token_embedding, c.vocab_size, c.dim, {}, 1.0, 0, STORY_FRAC_X});
  for (const Llama2Layer& layer : checkpoint.layers) write_layer(payload, c, layer);
  const std::vector<float> final_gain = norm_gain(checkpoint.rms_final);
  write_matrix(payload, {checkpoint.classifier, c.vocab_size, c.dim, final_gain, 1.0, STORY_FRAC_NORM, STORY_FRAC_LOGIT});
  write_rope_table(payload, c);
  write_vocabulary(payload, vocabulary);

  const double eps_term = std::ldexp(1e-5 * c.dim, 2 * STORY_FRAC_X - norm_shift(c.dim));
  BlobWriter blob;
  blob.u32(STORY_MAGIC);
  for (int value : {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len})
    blob.u32(static_cast<std::uint32_t>(value));
  blob.u32(static_cast<std::uint32_t>(std::lround(eps_term)));
  blob.u32(static_cast<std::uint32_t>(payload.size()));
  blob.raw(payload.bytes().data(), payload.size());
  blob.u32(fnv1a(blob.bytes()));
  return std::move(blob.bytes());
}

std::vector<std::uint8_t> quantise_story_files(const std::filesystem::path& checkpoint,
                                               const std::filesystem::path& tokenizer) {
  Llama2Checkpoint model = read_llama2_checkpoint(checkpoint);
  return quantise_story(model, read_llama2_vocabulary(tokenizer, model.config.vocab_size));
}

std::filesystem::path stories260k_checkpoint() {
  return toolchain::source_tree() / "models" / "stories260K" / "stories260K.bin";
}

std::filesystem::path stories260k_tokenizer() { return toolchain::source_tree() / "models" / "stories260K" / "tok512.bin"; }

}  // namespace rvformer::story
