// bench/engine_decode_bench.cpp — decode speed of the engine's dense reference path.
//
//   engine_decode_bench make tiny|gdn4b DIR [--layers N] [--dtype F32|BF16] [--zeros]
//                                         write a random checkpoint (--zeros: all weights zero but the
//                                         norms, to time writing a mostly-zero checkpoint)
//   engine_decode_bench run DIR [--tokens N]                                  print decode tokens/s
//
// "gdn4b" has Qwen3.5-4B's layer dimensions (hidden 2560, intermediate 9216, GDN 16×128 keys and
// 32×128 values, conv 4, attention 16×256 with 4 KV heads) with a small vocabulary (8192) and a few
// layers (every fourth one full attention, as in the 4B).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "engine/checkpoint.h"
#include "engine/model.h"
#include "engine/random_model.h"
#include "support/error.h"

namespace {

using namespace rvformer::engine;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Config gdn4b_config(std::size_t layers) {
  Config config;
  config.hidden_size = 2560;
  config.intermediate_size = 9216;
  config.vocab_size = 8192;
  config.num_hidden_layers = layers;
  for (std::size_t i = 0; i < layers; ++i) {
    config.layer_types.push_back((i + 1) % 4 == 0 ? LayerType::full_attention : LayerType::linear_attention);
  }
  config.linear_num_key_heads = 16;
  config.linear_num_value_heads = 32;
  config.linear_key_head_dim = 128;
  config.linear_value_head_dim = 128;
  config.linear_conv_kernel_dim = 4;
  config.num_attention_heads = 16;
  config.num_key_value_heads = 4;
  config.head_dim = 256;
  config.rope_theta = 1e7;
  config.partial_rotary_factor = 0.25;
  config.tie_word_embeddings = true;
  return config;
}

int make(const std::string& preset, const std::string& directory, std::size_t layers, const std::string& dtype_text,
         bool zeros) {
  const auto dtype = parse_dtype(dtype_text);
  if (!dtype || !is_weight_dtype(*dtype)) rvformer::fail("--dtype must be F32, BF16 or F16");
  if (preset != "tiny" && preset != "gdn4b") rvformer::fail("unknown preset '{}' (tiny, gdn4b)", preset);
  const Config config = preset == "tiny" ? tiny_test_config() : gdn4b_config(layers);
  auto tensors = random_model_tensors(config, 1);
  if (zeros) {
    for (auto& tensor : tensors) {
      if (!tensor.name.ends_with("norm.weight")) std::fill(tensor.values.begin(), tensor.values.end(), 0.0f);
    }
  }
  const auto start = Clock::now();
  write_checkpoint(directory, config, tensors_to_write(tensors, *dtype));
  fmt::print("wrote {} ({}) in {:.2f} s\n", directory, config.shape_description(), seconds_since(start));
  return 0;
}

int run(const std::string& directory, std::size_t tokens, std::size_t threads) {
  auto start = Clock::now();
  const Model model = Model::load(directory, {.threads = threads});
  fmt::print("loaded {} in {:.2f} s: {}\n", directory, seconds_since(start), model.config().shape_description());
  State state = model.new_state();
  const auto vocab = static_cast<TokenId>(model.config().vocab_size);
  TokenId token = 1;
  for (int warmup = 0; warmup < 2; ++warmup) token = model.decode_argmax(state, token);
  start = Clock::now();
  for (std::size_t i = 0; i < tokens; ++i) token = model.decode_argmax(state, (token + static_cast<TokenId>(i)) % vocab);
  const double elapsed = seconds_since(start);
  fmt::print("decode: {} tokens in {:.3f} s = {:.1f} tokens/s ({:.3f} ms/token, positions 2..{})\n", tokens, elapsed,
             static_cast<double>(tokens) / elapsed, 1e3 * elapsed / static_cast<double>(tokens), tokens + 1);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Decode speed of the rvformer engine's dense reference path"};
  app.require_subcommand(1);
  std::string preset, directory, dtype = "F32";
  std::size_t layers = 4, tokens = 100, threads = 1;
  bool zeros = false;
  auto* make_command = app.add_subcommand("make", "write a random checkpoint");
  make_command->add_option("PRESET", preset, "tiny or gdn4b")->required();
  make_command->add_option("DIR", directory)->required();
  make_command->add_option("--layers", layers, "layers of the gdn4b preset (default 4)");
  make_command->add_option("--dtype", dtype, "F32 (default), BF16 or F16");
  make_command->add_flag("--zeros", zeros, "zero every weight except the norms");
  auto* run_command = app.add_subcommand("run", "measure decode tokens/s");
  run_command->add_option("DIR", directory)->required();
  run_command->add_option("--tokens", tokens, "tokens to time (default 100)");
  run_command->add_option("--threads", threads, "threads (default 1; 0: every core)");
  CLI11_PARSE(app, argc, argv);
  try {
    return make_command->parsed() ? make(preset, directory, layers, dtype, zeros) : run(directory, tokens, threads);
  } catch (const rvformer::Error& e) {
    fmt::print(stderr, "engine_decode_bench: error: {}\n", e.what());
    return 2;
  }
}
