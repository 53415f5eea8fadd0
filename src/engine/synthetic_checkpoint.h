// engine/synthetic_checkpoint.h — random Qwen3.5 checkpoints in the published Hugging Face layout
// (hf_checkpoint.h), for tests and benchmarks where no real weights can be had: the tiny CI model,
// a narrow model with the 4B's per-layer widths, and the full Qwen3.5-4B shape (~9 GB). Values are
// small and random at the scale of an initialised model (linear weights ~U(−1, 1)/√fan_in), so that
// activations stay in a sane range through every layer. Every value is a function of the seed, the
// tensor's name and the element's index alone, so tensors are generated in chunks while they are
// written: a 4B checkpoint takes a few MB of memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string_view>

#include "engine/config.h"
#include "engine/hf_checkpoint.h"

namespace rvformer::engine {

// splitmix64, as a counter: element i of a stream is a function of (seed, i), identical on every
// platform (unlike std:: distributions).
class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed, std::uint64_t first = 0) : state_(seed + first * increment) {}
  std::uint64_t next();
  // Uniform in [low, high), on a 2^-24 grid of the unit interval.
  float uniform(float low, float high) { return low + (high - low) * static_cast<float>(next() >> 40) * 0x1p-24f; }

 private:
  static constexpr std::uint64_t increment = 0x9e3779b97f4a7c15ull;
  std::uint64_t state_;
};

// The stream seed of the tensor `name` (FNV-1a over the name, from the model seed).
std::uint64_t tensor_seed(std::uint64_t seed, std::string_view name);

// Elements [first, first + out.size()) of the random tensor `name` (canonical text-tower names,
// stored names elsewhere) of `shape`, row-major: linear weights ~U(−1, 1)/√fan_in, embeddings (and an
// untied head) ~U(−b, b) with b = min(1, 8/√hidden), zero-centred RMSNorm weights near 0, the GDN
// gated norm and the vision LayerNorms near 1, biases near 0, A_log = log U(1, 16), dt_bias U(0, 1).
void random_tensor_values(std::string_view name, std::span<const std::size_t> shape, std::uint64_t seed,
                          std::size_t first, std::span<float> out);

struct SyntheticModel {
  Config config;
  VisionConfig vision;
  std::uint64_t seed = 1;
  std::uint64_t max_shard_bytes = std::uint64_t{4} << 30;
};

// Presets: "tiny" (hidden 32, layers linear×3 + full, GDN 2×16 keys and 4×16 values, attention
// 4×16 with 2 KV heads, vocabulary 151,936 — room for the Qwen3 tokenizer's 151,669 ids — tied,
// a 2-block vision tower; about 10 MB in 4 MB shards), "narrow" (Qwen3.5-4B's per-layer widths:
// GDN 16×128 / 32×128, MLP 9216, attention 16×256 / 4 KV; hidden 64, linear×3 + full, the same
// vocabulary, a 2-block vision tower; about 45 MB) and "4b" (Qwen3.5-4B: hidden 2560, 32 layers
// [linear×3, full]×8, vocabulary 248,320, tied, the 24-block vision tower; 4 GB shards). Throws
// rvformer::Error for another name.
SyntheticModel synthetic_preset(std::string_view shape);

// layer_types for `layers` layers with every fourth one full attention, as in Qwen3.5.
std::vector<LayerType> qwen35_layer_types(std::size_t layers);

// A tied text model with Qwen3.5-4B's per-layer widths (GDN 16×128 keys and 32×128 values, conv 4,
// MLP 9216, attention 16×256 with 4 KV heads, rotary 0.25, theta 1e7) and the given hidden size,
// layer count (qwen35_layer_types) and vocabulary.
Config qwen35_shaped_config(std::size_t hidden, std::size_t layers, std::size_t vocab);

struct SyntheticWrite {
  // A directory holding tokenizer.json (its ids must fit the vocabulary; the special tokens of the
  // config files are looked up in it) and optionally tokenizer_config.json and chat_template.jinja,
  // which are copied. Without one, the special ids are Qwen3.5's (vocabulary ≥ 248,320) or Qwen3's.
  std::optional<std::filesystem::path> tokenizer_directory = {};
  std::function<void(std::uint64_t written, std::uint64_t total)> progress = {};
};

// Writes the checkpoint into `directory` (created; it must not exist or be empty): the tokenizer
// files, the shards and their index, generation_config.json and, last, config.json (so that an
// interrupted write never looks like a checkpoint). Throws rvformer::Error.
void write_synthetic_checkpoint(const std::filesystem::path& directory, const SyntheticModel& model,
                                const SyntheticWrite& options = {});

}  // namespace rvformer::engine
