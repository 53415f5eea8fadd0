// cli/model_commands.cpp — `rvformer model info|generate|synth`: inspect and run any Qwen3.5
// checkpoint with the engine's dense fp32 reference path, and write random checkpoints in the
// published Hugging Face layout.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/progress_bar.h"
#include "cli/whole_number_option.h"
#include "engine/checkpoint.h"
#include "engine/model.h"
#include "engine/ops.h"
#include "engine/synthetic_checkpoint.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::cli {

namespace {

namespace engine = rvformer::engine;

inline constexpr std::uint64_t kMostThreads = 1024;
inline constexpr std::uint64_t kBytesPerMb = 1'000'000;

struct InfoOptions {
  std::string directory;
};

struct GenerateOptions {
  std::string directory;
  std::string tokens;
  std::uint64_t steps = 0;
  bool logits = false;
  std::string load_state;
  std::string save_state;
  std::uint64_t threads = 0;
};

struct SynthOptions {
  std::string shape = "tiny";
  std::string directory;
  std::uint64_t seed = 1;
  std::uint64_t hidden = 0;  // 0: the preset's
  std::uint64_t layers = 0;
  std::uint64_t vocab = 0;
  bool untied = false;
  std::uint64_t shard_mb = 0;  // 0: the preset's
  std::string tokenizer_directory;
};

// "linear_attention ×3, full_attention ×1 (LLLF)"
std::string layer_summary(const engine::Config& config) {
  std::string letters;
  for (engine::LayerType type : config.layer_types) letters += type == engine::LayerType::linear_attention ? 'L' : 'F';
  return fmt::format("linear_attention ×{}, full_attention ×{} ({})",
                     config.count_layers(engine::LayerType::linear_attention),
                     config.count_layers(engine::LayerType::full_attention), letters);
}

int run_info(const InfoOptions& options) {
  check_input_directory(options.directory);
  const auto checkpoint = engine::Checkpoint::open(options.directory);
  const engine::Config& config = checkpoint.config();
  std::size_t parameters = 0;
  std::size_t zeros = 0;
  std::map<std::string, std::size_t> tensors_by_dtype;
  for (const auto& tensor : checkpoint.tensors()) {
    parameters += tensor.element_count();
    zeros += engine::count_zero_elements(tensor.dtype, tensor.bytes);
    ++tensors_by_dtype[std::string(engine::dtype_name(tensor.dtype))];
  }
  std::string dtypes;
  for (const auto& [name, count] : tensors_by_dtype) dtypes += fmt::format("{}{} ×{}", dtypes.empty() ? "" : ", ", name, count);

  fmt::print("checkpoint      {}\n", options.directory);
  fmt::print("model           qwen3_5_text: hidden {}, intermediate {}, vocab {}, {} layers\n", config.hidden_size,
             config.intermediate_size, config.vocab_size, config.num_hidden_layers);
  fmt::print("layer types     {}\n", layer_summary(config));
  if (config.count_layers(engine::LayerType::linear_attention) > 0) {
    fmt::print("gated deltanet  {} key heads × {}, {} value heads × {}, conv kernel {}\n", config.linear_num_key_heads,
               config.linear_key_head_dim, config.linear_num_value_heads, config.linear_value_head_dim,
               config.linear_conv_kernel_dim);
  }
  if (config.count_layers(engine::LayerType::full_attention) > 0) {
    fmt::print("attention       {} heads × {}, {} KV heads, rotary {} dims, theta {}\n", config.num_attention_heads,
               config.head_dim, config.num_key_value_heads, config.rotary_dim(), config.rope_theta);
  }
  fmt::print("lm head         {}\n", config.tie_word_embeddings ? "tied to embed_tokens" : "untied (lm_head.weight)");
  fmt::print("parameters      {} in {} tensors ({} tensors outside the text model ignored)\n", parameters,
             checkpoint.tensors().size(), checkpoint.ignored_tensor_count());
  fmt::print("exact zeros     {} ({:.2f}%)\n", zeros, parameters ? 100.0 * static_cast<double>(zeros) / static_cast<double>(parameters) : 0.0);
  fmt::print("dtypes          {}\n", dtypes);
  return 0;
}

// "5,17,3" -> {5, 17, 3}; every id must be a decimal number. Checked before the model loads.
std::vector<std::uint64_t> parse_token_ids(const std::string& text) {
  std::vector<std::uint64_t> tokens;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view field(text.data() + start, end - start);
    std::uint64_t token = 0;
    const auto [rest, error] = std::from_chars(field.data(), field.data() + field.size(), token);
    if (field.empty() || error != std::errc() || rest != field.data() + field.size()) {
      fail("--tokens: '{}' is not a token id (expected comma-separated numbers such as 5,17,3)", field);
    }
    tokens.push_back(token);
    if (end == text.size()) return tokens;
    start = end + 1;
  }
}

// The ids as the model's tokens: each must be below its vocab_size.
std::vector<engine::TokenId> model_tokens(const std::vector<std::uint64_t>& ids, std::size_t vocab_size) {
  std::vector<engine::TokenId> tokens;
  for (std::uint64_t id : ids) {
    if (id >= vocab_size) fail("token id {} is out of range (vocab_size {})", id, vocab_size);
    tokens.push_back(static_cast<engine::TokenId>(id));
  }
  return tokens;
}

// One output line: the greedy token, then (with --logits) every logit as %.9g.
void print_position(const std::vector<float>& logits, bool with_logits, fmt::memory_buffer& line) {
  line.clear();
  fmt::format_to(std::back_inserter(line), "{}", engine::argmax(logits));
  if (with_logits) {
    for (float value : logits) fmt::format_to(std::back_inserter(line), " {:.9g}", value);
  }
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stdout);
}

int run_generate(const GenerateOptions& options) {
  // Everything that can be checked without the model is, before it loads.
  const std::vector<std::uint64_t> ids = parse_token_ids(options.tokens);
  check_input_directory(options.directory);
  if (!options.load_state.empty()) check_input_file(options.load_state);
  if (!options.save_state.empty()) check_output_file(options.save_state);
  const auto model = engine::Model::load(options.directory, {.threads = options.threads});
  const std::vector<engine::TokenId> tokens = model_tokens(ids, model.config().vocab_size);
  engine::State state = model.new_state();
  if (!options.load_state.empty()) state.load(options.load_state);

  fmt::memory_buffer line;
  std::vector<float> logits;
  for (engine::TokenId token : tokens) {
    logits = model.decode(state, token);
    print_position(logits, options.logits, line);
  }
  for (std::uint64_t step = 0; step < options.steps; ++step) {
    logits = model.decode(state, static_cast<engine::TokenId>(engine::argmax(logits)));
    print_position(logits, options.logits, line);
  }
  std::fflush(stdout);
  if (!options.save_state.empty()) state.save(options.save_state);
  return 0;
}

int run_synth(const SynthOptions& options) {
  check_output_directory(options.directory);
  if (!options.tokenizer_directory.empty()) check_input_directory(options.tokenizer_directory);
  engine::SyntheticModel model = engine::synthetic_preset(options.shape);
  model.seed = options.seed;
  if (options.hidden) model.config.hidden_size = options.hidden;
  if (options.layers) {
    model.config.num_hidden_layers = options.layers;
    model.config.layer_types = engine::qwen35_layer_types(options.layers);
  }
  if (options.vocab) model.config.vocab_size = options.vocab;
  if (options.untied) model.config.tie_word_embeddings = false;
  if (options.shard_mb > 0) model.max_shard_bytes = options.shard_mb * kBytesPerMb;
  engine::SyntheticWrite write;
  if (!options.tokenizer_directory.empty()) write.tokenizer_directory = options.tokenizer_directory;
  auto bar = std::make_shared<ProgressBar>("writing " + options.directory);
  write.progress = [bar](std::uint64_t done, std::uint64_t total) { (*bar)(done, total); };
  engine::write_synthetic_checkpoint(options.directory, model, write);
  fmt::print("wrote {}: {}\n", options.directory, model.config.shape_description());
  return 0;
}

}  // namespace

void add_model_commands(CLI::App& app, Action& action) {
  auto* model = app.add_subcommand("model", "Inspect and run a Qwen3.5 checkpoint (config.json + safetensors)");
  model->require_subcommand(1);

  auto info_options = std::make_shared<InfoOptions>();
  auto* info = model->add_subcommand("info", "Print the model's shape, layer types, parameter and exact-zero counts");
  info->add_option("DIR", info_options->directory, "checkpoint directory")->required();
  info->callback([&action, info_options] { action = [info_options] { return run_info(*info_options); }; });

  auto generate_options = std::make_shared<GenerateOptions>();
  auto* generate = model->add_subcommand(
      "generate",
      "Teacher-force the given tokens, then feed back the greedy token N more times; print one line per "
      "forward pass: the argmax token id (and with --logits every logit as %.9g)");
  generate->add_option("DIR", generate_options->directory, "checkpoint directory")->required();
  generate->add_option("--tokens", generate_options->tokens, "comma-separated token ids, e.g. 5,17,3")->required();
  add_whole_number_option(*generate, "--steps", generate_options->steps, "greedy steps after the given tokens (default 0)");
  generate->add_flag("--logits", generate_options->logits, "also print all logits of each position");
  generate->add_option("--load-state", generate_options->load_state, "start from this state file");
  generate->add_option("--save-state", generate_options->save_state, "save the final state to this file");
  add_whole_number_option(*generate, "--threads", generate_options->threads,
                          "threads for matrix products (default 0: every core)", 0, kMostThreads);
  generate->callback([&action, generate_options] {
    action = [generate_options] { return run_generate(*generate_options); };
  });

  auto synth_options = std::make_shared<SynthOptions>();
  auto* synth = model->add_subcommand(
      "synth",
      "Write a random Qwen3.5 checkpoint in the published Hugging Face layout (multimodal config, BF16 "
      "shards and index, vision tower, mtp head) for tests and benchmarks");
  synth->add_option("--shape", synth_options->shape,
                    "tiny (CI, ~10 MB), narrow (the 4B's per-layer widths, hidden 64, ~45 MB) or 4b (Qwen3.5-4B, "
                    "~9.3 GB)")
      ->capture_default_str();
  synth->add_option("-o,--output", synth_options->directory, "new directory to write")->required();
  add_whole_number_option(*synth, "--seed", synth_options->seed, "random seed (default 1)");
  add_whole_number_option(*synth, "--hidden", synth_options->hidden, "hidden size instead of the preset's");
  add_whole_number_option(*synth, "--layers", synth_options->layers,
                          "layer count (every fourth full attention) instead of the preset's");
  add_whole_number_option(*synth, "--vocab", synth_options->vocab, "vocabulary rows instead of the preset's");
  synth->add_flag("--untied", synth_options->untied, "an lm_head.weight of its own instead of the tied embedding");
  add_whole_number_option(*synth, "--shard-mb", synth_options->shard_mb,
                          "shard size limit in whole MB (default 0: the preset's)", 0, kLargestCount / kBytesPerMb);
  synth->add_option("--tokenizer-dir", synth_options->tokenizer_directory,
                    "copy tokenizer.json (and tokenizer_config.json, chat_template.jinja) from here; its special "
                    "tokens give the config's ids");
  synth->callback([&action, synth_options] { action = [synth_options] { return run_synth(*synth_options); }; });
}

}  // namespace rvformer::cli
