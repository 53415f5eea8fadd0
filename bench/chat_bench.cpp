// bench/chat_bench.cpp — chat speed: a two-turn conversation through `rvformer chat`'s path (the
// checkpoint's template, tokenizer and the engine's dense forward pass, greedy), timing the prompt's
// prefill and the generation of each turn.
//
//   chat_bench make SHAPE DIR [--layers N]      a synthetic checkpoint (tiny, narrow or 4b) that can
//                                               be chatted with (Qwen3 tokenizer, Qwen3.5 template)
//   chat_bench run DIR [--tokens N] [--threads 1,2] [--no-thinking]
//
// run prints, per thread count, the prompt tokens fed and the tokens generated in each turn, with
// tokens/s. A reply ends at N tokens or at the end-of-turn token, whichever comes first; the counts
// printed are what was fed and generated. The second turn's prefill includes what the session
// feeds again when the template re-renders the first reply (Qwen3.5 drops its reasoning).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "chat/checkpoint_chat.h"
#include "chat/session.h"
#include "chat/synthetic_chat_model.h"
#include "engine/synthetic_checkpoint.h"
#include "support/error.h"

namespace {

using namespace rvformer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

const char* kSystem = "You are a helpful assistant. Answer briefly and precisely.";
const char* kFirstTurn =
    "Explain in two sentences why a recurrent layer cannot take back a token once it has read it, "
    "and what a chat program must do when the template re-renders earlier turns.";
const char* kSecondTurn = "Thanks. And what does that cost per turn?";

struct TurnFigures {
  std::size_t prompt_tokens = 0;
  double prompt_seconds = 0;
  std::size_t generated = 0;
  double generate_seconds = 0;
};

void print_turn(const std::string& label, const TurnFigures& t) {
  fmt::print("  {}: prefill {} tokens in {:.2f} s ({:.2f} tokens/s); generation {} tokens in {:.2f} s ({:.2f} tokens/s)\n",
             label, t.prompt_tokens, t.prompt_seconds, static_cast<double>(t.prompt_tokens) / t.prompt_seconds, t.generated,
             t.generate_seconds, static_cast<double>(t.generated) / t.generate_seconds);
}

// Times one feed (start or add) and the reply that follows it.
template <typename Feed>
TurnFigures timed_turn(chat::ChatSession& session, Feed feed) {
  TurnFigures t;
  const std::size_t before = session.counts().template_tokens;
  auto start = Clock::now();
  feed();
  t.prompt_seconds = seconds_since(start);
  t.prompt_tokens = session.counts().template_tokens - before;
  start = Clock::now();
  t.generated = session.generate().tokens;
  t.generate_seconds = seconds_since(start);
  return t;
}

int run(const std::string& directory, std::size_t tokens, const std::vector<std::size_t>& thread_counts, bool no_thinking) {
  for (std::size_t threads : thread_counts) {
    auto start = Clock::now();
    chat::CheckpointChat model(directory, {.threads = threads});
    const engine::Config& config = model.model().config();
    fmt::print("{} ({}), {} threads: loaded in {:.2f} s\n", directory, config.shape_description(), model.model().threads(),
               seconds_since(start));
    chat::SessionOptions options;
    options.sampling.vocabulary_limit = model.vocabulary_limit();
    options.max_new_tokens = tokens;
    if (no_thinking) options.enable_thinking = false;
    chat::ChatSession session(model.chat_template(), model.codec(), model.language_model(), options);
    const chat::Conversation first{{chat::Message{"system", kSystem, {}, {}, {}, {}}, chat::Message{"user", kFirstTurn, {}, {}, {}, {}}},
                                   nullptr};
    print_turn("turn 1", timed_turn(session, [&] { session.start(first); }));
    print_turn("turn 2", timed_turn(session, [&] { session.add({chat::Message{"user", kSecondTurn, {}, {}, {}, {}}}); }));
    fmt::print("  going back: {} restores, {} restarts from the initial state\n", session.counts().restores,
               session.counts().resets);
  }
  return 0;
}

int make(const std::string& shape, const std::string& directory, std::size_t layers) {
  engine::SyntheticModel model = engine::synthetic_preset(shape);
  if (layers) {
    model.config.num_hidden_layers = layers;
    model.config.layer_types = engine::qwen35_layer_types(layers);
  }
  const auto start = Clock::now();
  chat::testing::write_synthetic_chat_checkpoint(directory, model);
  fmt::print("wrote {} ({}) in {:.1f} s\n", directory, model.config.shape_description(), seconds_since(start));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Chat speed: prompt prefill and generation tokens/s of a two-turn chat"};
  app.require_subcommand(1);
  std::string shape;
  std::string directory;
  std::size_t layers = 0;
  std::size_t tokens = 16;
  std::vector<std::size_t> threads = {0};
  bool no_thinking = false;
  auto* make_command = app.add_subcommand("make", "write a synthetic checkpoint to chat with");
  make_command->add_option("SHAPE", shape, "tiny, narrow or 4b")->required();
  make_command->add_option("DIR", directory, "new directory")->required();
  make_command->add_option("--layers", layers, "layer count instead of the preset's");
  auto* run_command = app.add_subcommand("run", "chat two turns with a checkpoint and time them");
  run_command->add_option("DIR", directory, "checkpoint directory (e.g. a downloaded Qwen3.5-4B)")->required();
  run_command->add_option("--tokens", tokens, "most tokens per reply (default 16)")->check(CLI::PositiveNumber);
  run_command->add_option("--threads", threads, "thread counts to run, e.g. 1,2 (default 0: every core)")->delimiter(',');
  run_command->add_flag("--no-thinking", no_thinking, "enable_thinking=false");
  CLI11_PARSE(app, argc, argv);
  try {
    return make_command->parsed() ? make(shape, directory, layers) : run(directory, tokens, threads, no_thinking);
  } catch (const rvformer::Error& e) {
    fmt::print(stderr, "chat_bench: error: {}\n", e.what());
    return 2;
  }
}
