// bench/engine_fast_bench.cpp — speed of the engine's fast exact executor against the dense path.
//
//   engine_fast_bench make DIR [--layers 40] [--hidden 832] [--intermediate 2500] [--vocab 197130]
//       writes a random sparse model of the compiled CPU's size (Gated DeltaNet layers only, the
//       Qwen3.5-4B GDN geometry, a tied embedding with 3–20 non-zeros per row)
//   engine_fast_bench run DIR [--tokens FILE] [--count N] [--dense-count N]
//       decodes a token stream (FILE: one token id per line, fed as they are; without it the model's
//       own greedy tokens, every third one replaced by a pseudo-random token) with the fast path
//       and, on a prefix of --dense-count tokens, with the dense path, which must emit the same
//       tokens. Prints tokens/s of both, the weights multiplied per token against the weights
//       stored, where the time goes (a second, timed pass) and what the GDN heads did.
#include <chrono>
#include <ctime>
#include <fstream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "engine/checkpoint.h"
#include "engine/fast_model.h"
#include "engine/model.h"
#include "engine/random_model.h"
#include "engine/synthetic_checkpoint.h"
#include "support/error.h"

namespace {

using namespace rvformer::engine;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// CPU time of this thread: on a shared machine it leaves out the time other work held the core.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

Config compiled_cpu_size_config(std::size_t layers, std::size_t hidden, std::size_t intermediate, std::size_t vocab) {
  Config config = qwen35_shaped_config(hidden, layers, vocab);
  config.intermediate_size = intermediate;
  config.layer_types.assign(layers, LayerType::linear_attention);
  return config;
}

int make(const std::string& directory, std::size_t layers, std::size_t hidden, std::size_t intermediate,
         std::size_t vocab) {
  const Config config = compiled_cpu_size_config(layers, hidden, intermediate, vocab);
  const auto start = Clock::now();
  write_random_sparse_model(directory, config, 1);
  fmt::print("wrote {} ({}) in {:.1f} s\n", directory, config.shape_description(), seconds_since(start));
  return 0;
}

std::vector<TokenId> read_tokens(const std::string& path) {
  std::ifstream file(path);
  if (!file) rvformer::fail("cannot read {}", path);
  std::vector<TokenId> tokens;
  for (TokenId token; file >> token;) tokens.push_back(token);
  return tokens;
}

// Feeds `count` tokens: the stream's, or (without one) the previous greedy token, every third
// replaced by a pseudo-random one. Returns the greedy tokens.
template <typename Decode>
std::vector<TokenId> feed(const std::vector<TokenId>& stream, std::size_t count, std::size_t vocab, Decode decode) {
  std::vector<TokenId> outputs;
  TokenId token = 1;
  std::uint64_t random = 88172645463325252ull;
  for (std::size_t i = 0; i < count; ++i) {
    if (!stream.empty()) {
      token = stream[i % stream.size()];
    } else if (i % 3 == 0) {
      random ^= random << 13, random ^= random >> 7, random ^= random << 17;
      token = static_cast<TokenId>(random % vocab);
    }
    token = decode(token);
    outputs.push_back(token);
  }
  return outputs;
}

double per_token(double total, std::size_t tokens) { return total / static_cast<double>(tokens); }

void print_counters(const FastCounters& c, std::uint64_t stored, std::size_t tokens) {
  const auto per = [&](double value) { return per_token(value, tokens); };
  fmt::print("weights multiplied per token: {:.0f} of {} stored ({:.4f}%): GDN {:.0f}, attention {:.0f}, MLP {:.0f}, LM head {:.0f}\n",
             per(c.weights()), stored, 100.0 * per(c.weights()) / static_cast<double>(stored),
             per(c.gated_delta_net.weights), per(c.attention_weights), per(c.mlp_weights), per(c.lm_head.weights));
  fmt::print("GDN value heads per token: {:.1f} idle, {:.1f} sparse, {:.1f} reference; query/key heads: {:.1f} recalled, "
             "{:.1f} computed; silent GDN layers: {:.1f}; MLPs recalled: {:.1f}, computed with up by rows: {:.1f}, "
             "with gate only where neurons can be on: {:.1f}; norms reused: {:.1f}; reference norms: {}; greedy tokens "
             "recalled: {:.2f}, from the pivot column's parts: {:.2f}\n",
             per(c.gated_delta_net.idle_heads), per(c.gated_delta_net.sparse_heads),
             per(c.gated_delta_net.reference_heads), per(c.gated_delta_net.remembered_heads),
             per(c.gated_delta_net.computed_heads), per(c.gated_delta_net.silent_layers), per(c.remembered_mlps),
             per(c.up_by_rows_mlps), per(c.leading_column_mlps), per(c.reused_norms), c.reference_norms,
             per(c.lm_head.remembered), per(c.lm_head.from_pivot));
}

void print_timing(const FastCounters& c, std::size_t tokens) {
  const auto us = [&](double seconds) { return 1e6 * per_token(seconds, tokens); };
  fmt::print("time per token (timed pass): embedding {:.2f} us, norms {:.2f} us, GDN mixers {:.2f} us, attention "
             "{:.2f} us, MLPs {:.2f} us, LM head {:.2f} us\n",
             us(c.embedding_seconds), us(c.norm_seconds), us(c.gated_delta_net_seconds), us(c.attention_seconds),
             us(c.mlp_seconds), us(c.lm_head_seconds));
}

int run(const std::string& directory, const std::string& token_file, std::size_t count, std::size_t dense_count) {
  const std::vector<TokenId> stream = token_file.empty() ? std::vector<TokenId>{} : read_tokens(token_file);
  auto start = Clock::now();
  const Checkpoint checkpoint = Checkpoint::open(directory);
  FastModel fast(checkpoint);
  fmt::print("fast model loaded in {:.1f} s: {}\n", seconds_since(start), fast.config().shape_description());
  const std::size_t vocab = fast.config().vocab_size;
  if (count == 0) count = stream.empty() ? 20000 : stream.size();

  FastState state = fast.new_state();
  start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  const auto fast_tokens = feed(stream, count, vocab, [&](TokenId token) { return fast.decode_argmax(state, token); });
  const double fast_seconds = seconds_since(start);
  const double fast_cpu_seconds = thread_cpu_seconds() - cpu_start;
  fmt::print("fast:  {} tokens in {:.3f} s = {:.0f} tokens/s ({:.1f} us/token); CPU time {:.3f} s = {:.0f} tokens/s\n",
             count, fast_seconds, static_cast<double>(count) / fast_seconds, 1e6 * per_token(fast_seconds, count),
             fast_cpu_seconds, static_cast<double>(count) / fast_cpu_seconds);
  print_counters(fast.counters(), fast.weight_count(), count);

  fast.reset_counters();
  fast.set_timing(true);
  state = fast.new_state();
  feed(stream, count, vocab, [&](TokenId token) { return fast.decode_argmax(state, token); });
  print_timing(fast.counters(), count);

  if (dense_count == 0) return 0;
  start = Clock::now();
  const Model model(checkpoint);
  fmt::print("dense model loaded in {:.1f} s\n", seconds_since(start));
  State reference = model.new_state();
  dense_count = std::min(dense_count, count);
  start = Clock::now();
  const auto dense_tokens =
      feed(stream, dense_count, vocab, [&](TokenId token) { return model.decode_argmax(reference, token); });
  const double dense_seconds = seconds_since(start);
  const bool same = std::equal(dense_tokens.begin(), dense_tokens.end(), fast_tokens.begin());
  fmt::print("dense: {} tokens in {:.3f} s = {:.1f} tokens/s; fast/dense = {:.0f}x; greedy tokens {}\n", dense_count,
             dense_seconds, static_cast<double>(dense_count) / dense_seconds,
             per_token(dense_seconds, dense_count) / per_token(fast_seconds, count), same ? "identical" : "DIFFER");
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Speed of the rvformer engine's fast exact executor against the dense path"};
  app.require_subcommand(1);
  std::string directory, token_file;
  std::size_t layers = 40, hidden = 832, intermediate = 2500, vocab = 197130, count = 0, dense_count = 20;
  auto* make_command = app.add_subcommand("make", "write a random sparse model of the compiled CPU's size");
  make_command->add_option("DIR", directory)->required();
  make_command->add_option("--layers", layers, "GDN layers (default 40)");
  make_command->add_option("--hidden", hidden, "hidden size (default 832)");
  make_command->add_option("--intermediate", intermediate, "MLP width (default 2500)");
  make_command->add_option("--vocab", vocab, "vocabulary (default 197130)");
  auto* run_command = app.add_subcommand("run", "measure tokens/s");
  run_command->add_option("DIR", directory)->required();
  run_command->add_option("--tokens", token_file, "token stream, one id per line (default: greedy feedback)");
  run_command->add_option("--count", count, "tokens to decode (default: the stream, or 20000)");
  run_command->add_option("--dense-count", dense_count, "tokens for the dense path (default 20; 0: skip)");
  CLI11_PARSE(app, argc, argv);
  try {
    return make_command->parsed() ? make(directory, layers, hidden, intermediate, vocab)
                                  : run(directory, token_file, count, dense_count);
  } catch (const rvformer::Error& e) {
    fmt::print(stderr, "engine_fast_bench: error: {}\n", e.what());
    return 2;
  }
}
