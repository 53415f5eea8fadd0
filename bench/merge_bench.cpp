// bench/merge_bench.cpp — figures of the merge (docs/merge.md).
//
//   merge_bench size BASE [--machine DIR]
//       the merged checkpoint's parameters and bf16 GB, by part, planned from the base and the
//       machine exactly as `rvformer merge` writes them (nothing is written)
//   merge_bench merge BASE OUT [--machine DIR]
//       merges, printing seconds, peak resident memory of the merge and the bytes written
//   merge_bench text BASE MERGED [--prompts N] [--tokens M] [--threads T] [--seed S] [--batch B]
//       N random prompts of 8 text tokens, M greedy tokens each, on the base and on the merged model,
//       B sequences decoded together: identical continuations, the largest logit difference over the
//       base's text vocabulary, tokens/s of both
//
// Without --machine, the machine is compiled for the base's hidden size (or taken from the cache).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sys/stat.h>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cpu/machine.h"
#include "driver/compiled_machine.h"
#include "engine/checkpoint.h"
#include "engine/model.h"
#include "engine/ops.h"
#include "merge/merge.h"
#include "support/error.h"
#include "support/file.h"

namespace {

namespace fs = std::filesystem;
using namespace rvformer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

fs::path machine_for(const fs::path& base, const std::string& machine) {
  if (!machine.empty()) return machine;
  const engine::Config config = engine::load_config(base / "config.json");
  return driver::machine_checkpoint(*cpu::build_machine(), std::nullopt,
                                    [](const std::string& m) { fmt::print(stderr, "merge_bench: {}\n", m); },
                                    static_cast<int>(config.hidden_size));
}

double gb(std::uint64_t bytes) { return static_cast<double>(bytes) / 1e9; }

std::uint64_t parameters_of(const engine::Checkpoint& checkpoint) {
  std::uint64_t count = 0;
  for (const auto& t : checkpoint.tensors()) count += t.element_count();
  for (const auto& t : checkpoint.other_tensors()) count += t.element_count();
  return count;
}

int size(const fs::path& base_dir, const std::string& machine_option) {
  const fs::path machine_dir = machine_for(base_dir, machine_option);
  const engine::Checkpoint base = engine::Checkpoint::open(base_dir);
  const engine::Checkpoint machine = engine::Checkpoint::open(machine_dir);
  const auto base_json = nlohmann::ordered_json::parse(read_file_text(base_dir / "config.json"));
  const merge::MergePlan plan =
      merge::plan_merge(base, base_json, machine, nlohmann::json::parse(read_file_text(machine_dir / "rvformer-machine.json")));
  const merge::MergeInfo& info = plan.info;
  std::uint64_t compiled = 0, vision = 0, vocabulary = 0;
  const std::string first_base_layer = fmt::format("layers.{}.", info.machine_layers);
  for (const merge::MergedTensor& t : plan.tensors) {
    const std::string& name = t.layout.name;
    if (name.starts_with("model.visual.")) vision += t.layout.element_count();
    else if (name.ends_with("embed_tokens.weight") || name == "lm_head.weight") vocabulary += t.layout.element_count();
    else if (name.find(".layers.") != std::string::npos &&
             std::stoul(name.substr(name.find(".layers.") + 8)) < info.machine_layers)
      compiled += t.layout.element_count();
  }
  const std::uint64_t base_parameters = parameters_of(base);
  fmt::print("base {}: {} parameters ({:.2f} GB in bf16), hidden {}, {} layers, vocabulary {}\n", base_dir.string(),
             base_parameters, gb(2 * base_parameters), info.machine_first_dim, info.base_layers, info.base_vocab);
  fmt::print("machine {}: {} layers, {} dimensions after the base's, {} trace tokens\n", machine_dir.string(),
             info.machine_layers, info.machine_hidden, info.trace_tokens);
  fmt::print("merged: hidden {}, {} layers, vocabulary {}\n", plan.config.hidden_size, plan.config.num_hidden_layers,
             plan.config.vocab_size);
  fmt::print("  compiled layers   {:>14} parameters\n", compiled);
  fmt::print("  embedding + head  {:>14} parameters\n", vocabulary);
  fmt::print("  vision tower      {:>14} parameters\n", vision);
  fmt::print("  everything else   {:>14} parameters (the base's layers and norms)\n",
             info.parameters - compiled - vocabulary - vision);
  fmt::print("merged parameters {} = {:.2f} GB in bf16 ({:.2f} GB as written, F32 norms and A_log), {:.2f}× the base\n",
             info.parameters, gb(2 * info.parameters), gb(info.bytes),
             static_cast<double>(info.parameters) / static_cast<double>(base_parameters));
  return 0;
}

// Peak resident memory (VmHWM) since the last reset_peak_memory().
std::uint64_t peak_memory_kb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmHWM:")) return std::stoull(line.substr(6));
  return 0;
}

void reset_peak_memory() { std::ofstream("/proc/self/clear_refs") << "5"; }

std::uint64_t disk_bytes(const fs::path& dir, bool allocated) {
  std::uint64_t total = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    if (!allocated) {
      total += entry.file_size();
      continue;
    }
    struct stat info {};
    if (::stat(entry.path().c_str(), &info) == 0) total += static_cast<std::uint64_t>(info.st_blocks) * 512;
  }
  return total;
}

int merge_command(const fs::path& base, const fs::path& output, const std::string& machine_option) {
  const fs::path machine = machine_for(base, machine_option);
  reset_peak_memory();
  const auto start = Clock::now();
  int shown = -1;
  const merge::MergeInfo info = merge::merge_checkpoints(base, machine, output, {.progress = [&](auto done, auto total) {
    const int percent = static_cast<int>(100 * done / std::max<std::uint64_t>(total, 1));
    if (percent / 10 != shown / 10) fmt::print(stderr, "merge_bench: {}%\n", percent);
    shown = percent;
  }});
  fmt::print("merged {} + {} into {} in {:.1f} s; peak resident memory {:.2f} GB\n", base.string(), machine.string(),
             output.string(), seconds_since(start), static_cast<double>(peak_memory_kb()) / 1e6);
  fmt::print("{} parameters, {:.2f} GB of tensors; files {:.2f} GB ({:.2f} GB allocated on disk: zero blocks are holes)\n",
             info.parameters, gb(info.bytes), gb(disk_bytes(output, false)), gb(disk_bytes(output, true)));
  return 0;
}

struct TextOptions {
  std::size_t prompts = 10, tokens = 16, threads = 0, batch = 50;
  std::uint64_t seed = 1;
};

// One model's greedy run of a batch of prompts, every sequence a step at a time together
// (Model::decode_batch, bit-identical to decoding each alone). `logits(step, text_logits, tokens)`
// receives each generated token's logits over the text vocabulary (prompts × text_vocab values) and
// the continuations so far, that step's tokens included.
struct GreedyRun {
  std::vector<std::vector<engine::TokenId>> tokens;  // per prompt: its greedy continuation
  double seconds = 0;
};

GreedyRun greedy_run(const engine::Model& model, const std::string& name,
                     const std::vector<std::vector<engine::TokenId>>& prompts, std::size_t generated,
                     std::size_t text_vocab,
                     const std::function<void(std::size_t, std::vector<float>,
                                              const std::vector<std::vector<engine::TokenId>>&)>& logits) {
  const std::size_t count = prompts.size(), vocab = model.config().vocab_size;
  std::vector<engine::State> states;
  for (std::size_t i = 0; i < count; ++i) states.push_back(model.new_state());
  std::vector<engine::State*> pointers;
  for (engine::State& state : states) pointers.push_back(&state);
  GreedyRun run;
  run.tokens.resize(count);
  const std::size_t prompt_length = prompts.front().size();
  const std::size_t steps = prompt_length + generated - 1;
  const auto start = Clock::now();
  std::vector<engine::TokenId> fed(count);
  for (std::size_t step = 0; step < steps; ++step) {
    for (std::size_t i = 0; i < count; ++i) fed[i] = step < prompt_length ? prompts[i][step] : run.tokens[i].back();
    const std::vector<float> all = model.decode_batch(pointers, fed);
    if (step + 1 >= prompt_length) {
      std::vector<float> text_logits(count * text_vocab);
      for (std::size_t i = 0; i < count; ++i) {
        const auto own = std::span(all).subspan(i * vocab, text_vocab);
        std::copy(own.begin(), own.end(), text_logits.begin() + static_cast<std::ptrdiff_t>(i * text_vocab));
        run.tokens[i].push_back(static_cast<engine::TokenId>(engine::argmax(own)));
      }
      logits(step + 1 - prompt_length, std::move(text_logits), run.tokens);
    }
    fmt::print(stderr, "merge_bench: {} step {}/{} ({:.0f} s)\n", name, step + 1, steps, seconds_since(start));
  }
  run.seconds = seconds_since(start);
  return run;
}

// The best logit's lead over the second best.
float top_two_margin(std::span<const float> logits) {
  float best = -INFINITY, second = -INFINITY;
  for (float value : logits) {
    if (value > best) {
      second = best;
      best = value;
    } else if (value > second) {
      second = value;
    }
  }
  return best - second;
}

int text(const fs::path& base_dir, const fs::path& merged_dir, const TextOptions& options) {
  const engine::Model base = engine::Model::load(base_dir, {.threads = options.threads});
  const engine::Model merged = engine::Model::load(merged_dir, {.threads = options.threads});
  const merge::MergeInfo info = merge::read_merge_info(merged_dir);
  const std::size_t vocab = info.base_vocab;
  // Prompts drawn from the tokens below the first added one in a Qwen tokenizer.
  const auto text_tokens = static_cast<std::uint32_t>(std::min<std::size_t>(vocab, 151643));
  std::mt19937_64 random(options.seed);
  std::vector<std::vector<engine::TokenId>> prompts(options.prompts, std::vector<engine::TokenId>(8));
  for (auto& prompt : prompts)
    for (auto& t : prompt) t = static_cast<engine::TokenId>(random() % text_tokens);
  std::size_t identical = 0;
  float largest = 0, largest_logit = 0;
  double base_seconds = 0, merged_seconds = 0;
  // A batch at a time, the base's whole run before the merged model's, so that each model's weights
  // are read from the page cache for all its steps (both together need more memory than this host has).
  for (std::size_t first = 0; first < prompts.size(); first += options.batch) {
    const std::vector<std::vector<engine::TokenId>> batch(
        prompts.begin() + static_cast<std::ptrdiff_t>(first),
        prompts.begin() + static_cast<std::ptrdiff_t>(std::min(prompts.size(), first + options.batch)));
    std::vector<std::vector<float>> base_logits;
    const GreedyRun expected = greedy_run(base, "base", batch, options.tokens, vocab,
                                          [&](std::size_t, std::vector<float> logits, const auto&) {
                                            base_logits.push_back(std::move(logits));
                                          });
    const GreedyRun got = greedy_run(
        merged, "merged", batch, options.tokens, vocab,
        [&](std::size_t step, const std::vector<float>& logits, const std::vector<std::vector<engine::TokenId>>& tokens) {
          for (std::size_t i = 0; i < batch.size(); ++i) {
            // Only where both models have been fed the same tokens: after a continuation parts, its
            // logits answer different texts.
            const auto& own = base_logits[step];
            if (!std::equal(tokens[i].begin(), tokens[i].begin() + static_cast<std::ptrdiff_t>(step),
                            expected.tokens[i].begin())) {
              continue;
            }
            const auto reference = std::span(own).subspan(i * vocab, vocab);
            const auto merged_logits = std::span(logits).subspan(i * vocab, vocab);
            for (std::size_t t = 0; t < vocab; ++t) {
              largest = std::max(largest, std::fabs(merged_logits[t] - reference[t]));
              largest_logit = std::max(largest_logit, std::fabs(reference[t]));
            }
            const engine::TokenId base_token = expected.tokens[i][step];
            if (tokens[i][step] != base_token) {
              fmt::print("prompt {} parts at generated token {}: base {} (margin over its runner-up {:.3g}), "
                         "merged {} (the base's token {:.3g} below it)\n",
                         first + i, step, base_token, top_two_margin(reference), tokens[i][step],
                         merged_logits[tokens[i][step]] - merged_logits[base_token]);
            }
          }
        });
    base_seconds += expected.seconds;
    merged_seconds += got.seconds;
    for (std::size_t i = 0; i < batch.size(); ++i) identical += expected.tokens[i] == got.tokens[i];
  }
  const double passes = static_cast<double>(options.prompts * (8 + options.tokens - 1));
  fmt::print("{} prompts × {} greedy tokens: {} identical continuations; largest logit difference {:.3g} "
             "(largest |logit| {:.3g}), wherever both models had been fed the same tokens\n",
             options.prompts, options.tokens, identical, largest, largest_logit);
  fmt::print("tokens/s, batches of {} sequences decoded together: base {:.2f}, merged {:.2f} ({} threads)\n",
             std::min(options.batch, options.prompts), passes / base_seconds, passes / merged_seconds, base.threads());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Figures of the merge: size, memory and time, text behaviour");
  app.require_subcommand(1);
  std::string base, output, merged, machine;
  TextOptions text_options;
  auto* size_command = app.add_subcommand("size", "merged parameters and bf16 GB, planned");
  size_command->add_option("BASE", base)->required();
  size_command->add_option("--machine", machine);
  auto* merge_cmd = app.add_subcommand("merge", "merge, with time and peak memory");
  merge_cmd->add_option("BASE", base)->required();
  merge_cmd->add_option("OUT", output)->required();
  merge_cmd->add_option("--machine", machine);
  auto* text_command = app.add_subcommand("text", "text behaviour of a merged model against its base");
  text_command->add_option("BASE", base)->required();
  text_command->add_option("MERGED", merged)->required();
  text_command->add_option("--prompts", text_options.prompts);
  text_command->add_option("--tokens", text_options.tokens);
  text_command->add_option("--threads", text_options.threads);
  text_command->add_option("--seed", text_options.seed);
  text_command->add_option("--batch", text_options.batch, "sequences decoded together (each bit-identical to alone)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    if (*size_command) return size(base, machine);
    if (*merge_cmd) return merge_command(base, output, machine);
    return text(base, merged, text_options);
  } catch (const rvformer::Error& e) {
    fmt::print(stderr, "merge_bench: error: {}\n", e.what());
    return 1;
  }
}
