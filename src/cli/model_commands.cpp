// cli/model_commands.cpp — `rvformer model info|generate`: inspect and run any Qwen3.5 checkpoint
// with the engine's dense fp32 reference path.
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
#include "cli/whole_number_option.h"
#include "engine/checkpoint.h"
#include "engine/model.h"
#include "engine/ops.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::cli {

namespace {

namespace engine = rvformer::engine;

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
  const auto model = engine::Model::load(options.directory);
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
  generate->callback([&action, generate_options] {
    action = [generate_options] { return run_generate(*generate_options); };
  });
}

}  // namespace rvformer::cli
