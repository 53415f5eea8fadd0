// bench/engine_decode_bench.cpp — decode speed of the engine's dense reference path.
//
//   engine_decode_bench make tiny|gdn4b DIR [--layers N] [--dtype F32|BF16] [--zeros]
//                                         write a random checkpoint (--zeros: all weights zero but the
//                                         norms, to time writing a mostly-zero checkpoint)
//   engine_decode_bench run DIR [--tokens N] [--threads 1,2] [--rounds R] [--f32-in-place]
//                                         print decode tokens/s per thread count (alternating rounds),
//                                         CPU time and resident memory
//
// "gdn4b" has Qwen3.5-4B's layer dimensions (hidden 2560, intermediate 9216, GDN 16×128 keys and
// 32×128 values, conv 4, attention 16×256 with 4 KV heads) with a small vocabulary (8192) and a few
// layers (every fourth one full attention, as in the 4B).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "engine/checkpoint.h"
#include "engine/model.h"
#include "engine/random_model.h"
#include "engine/synthetic_checkpoint.h"
#include "support/error.h"

namespace {

using namespace rvformer::engine;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int make(const std::string& preset, const std::string& directory, std::size_t layers, const std::string& dtype_text,
         bool zeros) {
  const auto dtype = parse_dtype(dtype_text);
  if (!dtype || !is_weight_dtype(*dtype)) rvformer::fail("--dtype must be F32, BF16 or F16");
  if (preset != "tiny" && preset != "gdn4b") rvformer::fail("unknown preset '{}' (tiny, gdn4b)", preset);
  const Config config = preset == "tiny" ? tiny_test_config() : qwen35_shaped_config(2560, layers, 8192);
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

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// "VmHWM: 1234 kB" lines of /proc/self/status, in MB.
void print_memory() {
  std::ifstream status("/proc/self/status");
  std::string line;
  fmt::print("memory:");
  while (std::getline(status, line)) {
    for (const char* key : {"VmHWM:", "VmRSS:", "RssAnon:", "RssFile:"}) {
      if (line.starts_with(key)) fmt::print(" {} {:.0f} MB", key, std::stod(line.substr(std::strlen(key))) / 1024.0);
    }
  }
  fmt::print("\n");
}

// One model per thread count, all reading the same mapping of the checkpoint, each with its own state.
struct Contender {
  std::size_t threads;
  Model model;
  State state;
  std::vector<TokenId> greedy;
  double wall = 0;
  double cpu = 0;
};

// Every contender decodes the same token stream; the rounds alternate between them so that a change
// in the host's load touches all alike.
int run(const std::string& directory, std::size_t tokens, const std::vector<std::size_t>& thread_counts,
        std::size_t rounds, bool f32_in_place) {
  if (thread_counts.empty() || rounds == 0 || tokens < rounds) rvformer::fail("need thread counts, rounds ≥ 1 and tokens ≥ rounds");
  auto start = Clock::now();
  const Checkpoint checkpoint = Checkpoint::open(directory);
  std::vector<Contender> contenders;
  for (std::size_t threads : thread_counts) {
    Model model(checkpoint, {.threads = threads, .f32_in_place = f32_in_place});
    State state = model.new_state();
    contenders.push_back({model.threads(), std::move(model), std::move(state), {}, 0, 0});
  }
  const Config& config = contenders.front().model.config();
  fmt::print("loaded {} in {:.2f} s: {}\n", directory, seconds_since(start), config.shape_description());
  const auto token_at = [&](std::size_t i) { return static_cast<TokenId>((i * 7919 + 1) % config.vocab_size); };
  for (Contender& contender : contenders) {  // first touch of every page
    for (std::size_t i = 0; i < 2; ++i) contender.model.decode_argmax(contender.state, token_at(i));
  }
  std::size_t fed = 2;
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::size_t count = tokens / rounds + (round < tokens % rounds ? 1 : 0);
    for (Contender& contender : contenders) {
      const auto wall_start = Clock::now();
      const double cpu_start = process_cpu_seconds();
      for (std::size_t i = 0; i < count; ++i) {
        contender.greedy.push_back(contender.model.decode_argmax(contender.state, token_at(fed + i)));
      }
      contender.wall += seconds_since(wall_start);
      contender.cpu += process_cpu_seconds() - cpu_start;
    }
    fed += count;
  }
  fmt::print("decode, positions 2..{}, {} alternating rounds:\n", fed - 1, rounds);
  fmt::print("  threads  tokens/s  ms/token  CPU s/token\n");
  for (const Contender& contender : contenders) {
    const double n = static_cast<double>(tokens);
    fmt::print("  {:7}  {:8.2f}  {:8.1f}  {:11.3f}\n", contender.threads, n / contender.wall, 1e3 * contender.wall / n,
               contender.cpu / n);
  }
  bool identical = true;
  for (const Contender& contender : contenders) identical = identical && contender.greedy == contenders.front().greedy;
  fmt::print("greedy tokens identical for every thread count: {}\n", identical ? "yes" : "NO");
  print_memory();
  return identical ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Decode speed of the rvformer engine's dense reference path"};
  app.require_subcommand(1);
  std::string preset, directory, dtype = "F32";
  std::size_t layers = 4, tokens = 100, rounds = 1;
  std::vector<std::size_t> threads{1};
  bool zeros = false, f32_in_place = false;
  auto* make_command = app.add_subcommand("make", "write a random checkpoint");
  make_command->add_option("PRESET", preset, "tiny or gdn4b")->required();
  make_command->add_option("DIR", directory)->required();
  make_command->add_option("--layers", layers, "layers of the gdn4b preset (default 4)");
  make_command->add_option("--dtype", dtype, "F32 (default), BF16 or F16");
  make_command->add_flag("--zeros", zeros, "zero every weight except the norms");
  auto* run_command = app.add_subcommand("run", "measure decode tokens/s");
  run_command->add_option("DIR", directory)->required();
  run_command->add_option("--tokens", tokens, "tokens to time (default 100)");
  run_command->add_option("--threads", threads, "thread counts, e.g. 1,2 (default 1; 0: every core)")->delimiter(',');
  run_command->add_option("--rounds", rounds, "alternate between the thread counts in this many rounds (default 1)");
  run_command->add_flag("--f32-in-place", f32_in_place, "read F32 weights in place instead of copying them into panels");
  CLI11_PARSE(app, argc, argv);
  try {
    return make_command->parsed() ? make(preset, directory, layers, dtype, zeros) : run(directory, tokens, threads, rounds, f32_in_place);
  } catch (const rvformer::Error& e) {
    fmt::print(stderr, "engine_decode_bench: error: {}\n", e.what());
    return 2;
  }
}
