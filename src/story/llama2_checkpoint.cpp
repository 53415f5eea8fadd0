// story/llama2_checkpoint.cpp — see llama2_checkpoint.h.
#include "story/llama2_checkpoint.h"

#include <cstring>

#include "support/error.h"
#include "support/file.h"

namespace rvformer::story {
namespace {

// Reads little-endian values from a file's bytes, failing with the file's name past the end.
class ByteReader {
 public:
  explicit ByteReader(const std::filesystem::path& path) : path_(path), bytes_(read_file_bytes(path)) {}

  std::int32_t int32() { return static_cast<std::int32_t>(word()); }
  float float32() {
    std::uint32_t bits = word();
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  std::vector<float> floats(std::size_t count) {
    need(count * 4);
    std::vector<float> values(count);
    for (float& value : values) value = float32();
    return values;
  }
  std::string text(std::size_t length) {
    need(length);
    std::string value(reinterpret_cast<const char*>(bytes_.data() + at_), length);
    at_ += length;
    return value;
  }
  std::size_t remaining() const { return bytes_.size() - at_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void need(std::size_t count) {
    if (remaining() < count) fail("{}: truncated ({} bytes)", path_.string(), bytes_.size());
  }
  std::uint32_t word() {
    need(4);
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) value |= std::uint32_t{bytes_[at_ + i]} << (8 * i);
    at_ += 4;
    return value;
  }

  std::filesystem::path path_;
  std::vector<std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

Llama2Config read_config(ByteReader& in) {
  Llama2Config c{in.int32(), in.int32(), in.int32(), in.int32(), in.int32(), in.int32(), in.int32()};
  c.shared_classifier = c.vocab_size > 0;
  if (!c.shared_classifier) c.vocab_size = -c.vocab_size;
  if (c.dim <= 0 || c.hidden_dim <= 0 || c.n_layers <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 || c.seq_len <= 0 ||
      c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0 || c.dim > (1 << 16) || c.hidden_dim > (1 << 16) ||
      c.n_layers > 1024 || c.vocab_size > (1 << 20) || c.seq_len > (1 << 20))
    fail("{}: not a llama2.c checkpoint (bad header)", in.path().string());
  return c;
}

// One stacked tensor [n_layers, per_layer] cut into the layers' `member`.
void read_stacked(ByteReader& in, std::vector<Llama2Layer>& layers, std::vector<float> Llama2Layer::*member,
                  std::size_t per_layer) {
  for (Llama2Layer& layer : layers) layer.*member = in.floats(per_layer);
}

}  // namespace

Llama2Checkpoint read_llama2_checkpoint(const std::filesystem::path& path) {
  ByteReader in(path);
  Llama2Checkpoint model;
  model.config = read_config(in);
  const Llama2Config& c = model.config;
  const std::size_t dim = c.dim, hidden = c.hidden_dim, kv = c.kv_dim();
  model.token_embedding = in.floats(std::size_t(c.vocab_size) * dim);
  model.layers.resize(c.n_layers);
  read_stacked(in, model.layers, &Llama2Layer::rms_att, dim);
  read_stacked(in, model.layers, &Llama2Layer::wq, dim * dim);
  read_stacked(in, model.layers, &Llama2Layer::wk, kv * dim);
  read_stacked(in, model.layers, &Llama2Layer::wv, kv * dim);
  read_stacked(in, model.layers, &Llama2Layer::wo, dim * dim);
  read_stacked(in, model.layers, &Llama2Layer::rms_ffn, dim);
  read_stacked(in, model.layers, &Llama2Layer::w1, hidden * dim);
  read_stacked(in, model.layers, &Llama2Layer::w2, dim * hidden);
  read_stacked(in, model.layers, &Llama2Layer::w3, hidden * dim);
  model.rms_final = in.floats(dim);
  in.floats(std::size_t(c.seq_len) * c.head_size());  // the unused RoPE tables (real and imaginary halves)
  model.classifier = c.shared_classifier ? model.token_embedding : in.floats(std::size_t(c.vocab_size) * dim);
  if (in.remaining() != 0) fail("{}: {} bytes after the checkpoint's tensors", path.string(), in.remaining());
  return model;
}

Llama2Vocabulary read_llama2_vocabulary(const std::filesystem::path& path, int vocab_size) {
  ByteReader in(path);
  Llama2Vocabulary vocabulary;
  std::int32_t max_token_length = in.int32();
  for (int i = 0; i < vocab_size; ++i) {
    vocabulary.scores.push_back(in.float32());
    std::int32_t length = in.int32();
    if (length < 0 || length > max_token_length)
      fail("{}: token {} has length {} (max_token_length {})", path.string(), i, length, max_token_length);
    vocabulary.pieces.push_back(in.text(length));
  }
  if (in.remaining() != 0) fail("{}: {} bytes after the {} tokens", path.string(), in.remaining(), vocab_size);
  return vocabulary;
}

}  // namespace rvformer::story
