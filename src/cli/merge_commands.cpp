// cli/merge_commands.cpp — `rvformer merge`: the computer merged into a downloaded Qwen3.5 checkpoint.
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/progress_bar.h"
#include "cpu/machine.h"
#include "driver/compiled_machine.h"
#include "engine/config.h"
#include "merge/merge.h"
#include "support/error.h"

namespace rvformer::cli {

namespace {

struct MergeOptions {
  std::string base;
  std::string output;
  std::string machine;
  double shard_mb = 0;
};

int run_merge(const MergeOptions& options) {
  const engine::Config base = engine::load_config(std::filesystem::path(options.base) / "config.json");
  std::filesystem::path machine = options.machine;
  if (options.machine.empty()) {
    const auto progress = [](const std::string& m) { fmt::print(stderr, "rvformer: {}\n", m); };
    machine = driver::machine_checkpoint(*cpu::build_machine(), std::nullopt, progress,
                                         static_cast<int>(base.hidden_size));
  }
  merge::MergeOptions merge_options;
  if (options.shard_mb < 0) fail("--shard-mb must be positive");
  if (options.shard_mb > 0) merge_options.max_shard_bytes = static_cast<std::uint64_t>(options.shard_mb * 1e6);
  auto bar = std::make_shared<ProgressBar>("writing " + options.output);
  merge_options.progress = [bar](std::uint64_t done, std::uint64_t total) { (*bar)(done, total); };
  const merge::MergeInfo info = merge::merge_checkpoints(options.base, machine, options.output, merge_options);
  fmt::print("{}: {} compiled layers + {} base layers, hidden {} + {}, trace tokens {}..{}, {} parameters "
             "({:.2f} GB)\n",
             options.output, info.machine_layers, info.base_layers, info.machine_first_dim, info.machine_hidden,
             info.base_vocab, info.base_vocab + info.trace_tokens - 1, info.parameters,
             static_cast<double>(info.bytes) / 1e9);
  return 0;
}

}  // namespace

void add_merge_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<MergeOptions>();
  auto* merge = app.add_subcommand(
      "merge",
      "Merge the computer into a Qwen3.5 checkpoint (Hugging Face layout): the compiled layers first, the base's "
      "own after them, unchanged, in a residual stream widened by the machine's dimensions");
  merge->add_option("--base", options->base, "the Qwen3.5 checkpoint directory")->required();
  merge->add_option("-o,--output", options->output, "new directory for the merged checkpoint")->required();
  merge->add_option("--machine", options->machine,
                    "a machine compiled with `rvformer compile --base-hidden H` (default: compile it for the base, "
                    "or take it from the cache)");
  merge->add_option("--shard-mb", options->shard_mb, "shard size limit in MB (default 4 GiB)");
  merge->callback([&action, options] { action = [options] { return run_merge(*options); }; });
}

}  // namespace rvformer::cli
