// engine/hf_checkpoint.cpp — see hf_checkpoint.h. Key order and values follow the released
// Qwen3.5 config files; shapes follow transformers' and vLLM's Qwen3.5 modules.
#include "engine/hf_checkpoint.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "engine/checkpoint.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::engine {

namespace {

using nlohmann::ordered_json;

constexpr const char* transformers_version = "4.57.0.dev0";

// layer_types as the interval rule would give them (full attention where i + 1 is a multiple), or 4,
// the published value, when no interval gives them (transformers reads layer_types first anyway).
std::size_t full_attention_interval(const Config& config) {
  for (std::size_t interval = 1; interval <= config.num_hidden_layers; ++interval) {
    bool matches = true;
    for (std::size_t i = 0; i < config.num_hidden_layers; ++i) {
      const bool full = (i + 1) % interval == 0;
      matches = matches && full == (config.layer_types[i] == LayerType::full_attention);
    }
    if (matches) return interval;
  }
  return 4;
}

// A whole number as an integer (the published files write rope_theta as 10000000).
ordered_json number(double value) {
  if (value == std::floor(value) && std::fabs(value) < 9e15) return static_cast<std::int64_t>(value);
  return value;
}

// The rotary frequencies split between the temporal, height and width position rows, in the 4B's
// proportions 11 : 11 : 10 of 32 (text-only input uses one position for all three).
ordered_json mrope_section(const Config& config) {
  const std::size_t frequencies = config.rotary_dim() / 2;
  const auto first = static_cast<std::size_t>(std::lround(static_cast<double>(frequencies) * 11.0 / 32.0));
  return ordered_json::array({first, first, frequencies - 2 * first});
}

// The tensors of one full-attention decoder layer, named as layer 0 of a text model.
std::vector<TensorSpec> attention_layer_specs(const Config& config) {
  Config one = config;
  one.num_hidden_layers = 1;
  one.layer_types = {LayerType::full_attention};
  std::vector<TensorSpec> specs;
  for (TensorSpec& spec : checkpoint_tensor_specs(one)) {
    if (spec.name.starts_with("layers.0.")) specs.push_back(std::move(spec));
  }
  return specs;
}

void add_mtp_layouts(const Config& config, std::vector<TensorLayout>& layouts) {
  const std::size_t hidden = config.hidden_size;
  const auto add = [&](std::string name, std::vector<std::size_t> shape) {
    layouts.push_back({"mtp." + std::move(name), DType::BF16, std::move(shape)});
  };
  add("fc.weight", {hidden, 2 * hidden});
  for (TensorSpec& spec : attention_layer_specs(config)) add(std::move(spec.name), std::move(spec.shape));
  add("norm.weight", {hidden});
  add("pre_fc_norm_embedding.weight", {hidden});
  add("pre_fc_norm_hidden.weight", {hidden});
}

void add_vision_layouts(const Config& config, const VisionConfig& vision, std::vector<TensorLayout>& layouts) {
  const std::size_t width = vision.hidden_size;
  const std::size_t merged = width * vision.spatial_merge_size * vision.spatial_merge_size;
  const auto add = [&](const std::string& name, std::vector<std::size_t> shape) {
    layouts.push_back({"model.visual." + name, DType::BF16, std::move(shape)});
  };
  const auto linear = [&](const std::string& name, std::size_t out, std::size_t in) {
    add(name + ".weight", {out, in});
    add(name + ".bias", {out});
  };
  const auto layer_norm = [&](const std::string& name) {
    add(name + ".weight", {width});
    add(name + ".bias", {width});
  };
  add("patch_embed.proj.weight",
      {width, vision.in_channels, vision.temporal_patch_size, vision.patch_size, vision.patch_size});
  add("patch_embed.proj.bias", {width});
  add("pos_embed.weight", {vision.num_position_embeddings, width});
  for (std::size_t block = 0; block < vision.depth; ++block) {
    const std::string prefix = fmt::format("blocks.{}.", block);
    layer_norm(prefix + "norm1");
    layer_norm(prefix + "norm2");
    linear(prefix + "attn.qkv", 3 * width, width);
    linear(prefix + "attn.proj", width, width);
    linear(prefix + "mlp.linear_fc1", vision.intermediate_size, width);
    linear(prefix + "mlp.linear_fc2", width, vision.intermediate_size);
  }
  layer_norm("merger.norm");
  linear("merger.linear_fc1", merged, merged);
  linear("merger.linear_fc2", config.hidden_size, merged);
}

}  // namespace

SpecialTokens qwen3_special_tokens() {
  return {.end_of_text = 151643,
          .im_end = 151645,
          .vision_start = 151652,
          .vision_end = 151653,
          .image = 151655,
          .video = 151656};
}

ordered_json text_config_json(const Config& config, const SpecialTokens& tokens) {
  ordered_json layer_types = ordered_json::array();
  for (LayerType type : config.layer_types) layer_types.push_back(layer_type_name(type));
  ordered_json text;
  text["attention_bias"] = false;
  text["attention_dropout"] = 0.0;
  text["attn_output_gate"] = true;
  text["dtype"] = "bfloat16";
  text["eos_token_id"] = tokens.end_of_text;
  text["full_attention_interval"] = full_attention_interval(config);
  text["head_dim"] = config.head_dim;
  text["hidden_act"] = "silu";
  text["hidden_size"] = config.hidden_size;
  text["initializer_range"] = 0.02;
  text["intermediate_size"] = config.intermediate_size;
  text["layer_types"] = layer_types;
  text["linear_conv_kernel_dim"] = config.linear_conv_kernel_dim;
  text["linear_key_head_dim"] = config.linear_key_head_dim;
  text["linear_num_key_heads"] = config.linear_num_key_heads;
  text["linear_num_value_heads"] = config.linear_num_value_heads;
  text["linear_value_head_dim"] = config.linear_value_head_dim;
  text["max_position_embeddings"] = 262144;
  text["mlp_only_layers"] = ordered_json::array();
  text["model_type"] = "qwen3_5_text";
  text["mtp_num_hidden_layers"] = 1;
  text["mtp_use_dedicated_embeddings"] = false;
  text["num_attention_heads"] = config.num_attention_heads;
  text["num_hidden_layers"] = config.num_hidden_layers;
  text["num_key_value_heads"] = config.num_key_value_heads;
  text["rms_norm_eps"] = config.rms_norm_eps;
  text["tie_word_embeddings"] = config.tie_word_embeddings;
  text["use_cache"] = true;
  text["vocab_size"] = config.vocab_size;
  text["mamba_ssm_dtype"] = "float32";
  text["rope_parameters"] = {{"mrope_interleaved", true},
                             {"mrope_section", mrope_section(config)},
                             {"rope_type", "default"},
                             {"rope_theta", number(config.rope_theta)},
                             {"partial_rotary_factor", config.partial_rotary_factor}};
  return text;
}

ordered_json multimodal_config_json(const Config& config, const VisionConfig& vision, const SpecialTokens& tokens) {
  ordered_json vision_config;
  vision_config["deepstack_visual_indexes"] = ordered_json::array();
  vision_config["depth"] = vision.depth;
  vision_config["hidden_act"] = "gelu_pytorch_tanh";
  vision_config["hidden_size"] = vision.hidden_size;
  vision_config["in_channels"] = vision.in_channels;
  vision_config["initializer_range"] = 0.02;
  vision_config["intermediate_size"] = vision.intermediate_size;
  vision_config["model_type"] = "qwen3_5";
  vision_config["num_heads"] = vision.num_heads;
  vision_config["num_position_embeddings"] = vision.num_position_embeddings;
  vision_config["out_hidden_size"] = config.hidden_size;
  vision_config["patch_size"] = vision.patch_size;
  vision_config["spatial_merge_size"] = vision.spatial_merge_size;
  vision_config["temporal_patch_size"] = vision.temporal_patch_size;

  ordered_json document;
  document["architectures"] = {"Qwen3_5ForConditionalGeneration"};
  document["image_token_id"] = tokens.image;
  document["model_type"] = "qwen3_5";
  document["text_config"] = text_config_json(config, tokens);
  document["tie_word_embeddings"] = config.tie_word_embeddings;
  document["transformers_version"] = transformers_version;
  document["video_token_id"] = tokens.video;
  document["vision_config"] = vision_config;
  document["vision_end_token_id"] = tokens.vision_end;
  document["vision_start_token_id"] = tokens.vision_start;
  return document;
}

ordered_json generation_config_json(const SpecialTokens& tokens) {
  ordered_json document;
  document["bos_token_id"] = tokens.end_of_text;
  document["do_sample"] = true;
  document["eos_token_id"] = {tokens.im_end, tokens.end_of_text};
  document["pad_token_id"] = tokens.end_of_text;
  document["temperature"] = 1.0;
  document["top_k"] = 20;
  document["top_p"] = 0.95;
  document["transformers_version"] = transformers_version;
  return document;
}

std::vector<TensorLayout> multimodal_tensor_layouts(const Config& config, const VisionConfig& vision) {
  std::vector<TensorLayout> layouts;
  for (TensorSpec& spec : checkpoint_tensor_specs(config)) {
    const bool head = spec.name == "lm_head.weight";
    const DType dtype = spec.name.ends_with(".A_log") ? DType::F32 : DType::BF16;
    layouts.push_back({head ? spec.name : "model.language_model." + spec.name, dtype, std::move(spec.shape)});
  }
  add_mtp_layouts(config, layouts);
  add_vision_layouts(config, vision, layouts);
  return layouts;
}

std::vector<std::string> write_sharded_safetensors(const std::filesystem::path& directory,
                                                   std::span<const TensorLayout> tensors, const TensorBytes& bytes,
                                                   const ShardOptions& options) {
  // Plan: consecutive runs of tensors, each shard closed before the tensor that would overflow it.
  std::vector<std::size_t> first_of_shard;
  std::uint64_t total = 0;
  std::uint64_t in_shard = 0;
  for (std::size_t index = 0; index < tensors.size(); ++index) {
    const std::uint64_t size = tensors[index].byte_size();
    if (first_of_shard.empty() || (in_shard > 0 && in_shard + size > options.max_shard_bytes)) {
      first_of_shard.push_back(index);
      in_shard = 0;
    }
    in_shard += size;
    total += size;
  }
  if (first_of_shard.empty()) fail("cannot write {}: no tensors", directory.string());
  first_of_shard.push_back(tensors.size());

  const std::size_t shards = first_of_shard.size() - 1;
  std::vector<std::string> names;
  std::map<std::string, std::string> weight_map;
  std::uint64_t written = 0;
  for (std::size_t shard = 0; shard < shards; ++shard) {
    names.push_back(fmt::format("model-{:05d}-of-{:05d}.safetensors", shard + 1, shards));
    const std::size_t first = first_of_shard[shard];
    const auto part = tensors.subspan(first, first_of_shard[shard + 1] - first);
    for (const TensorLayout& tensor : part) weight_map[tensor.name] = names.back();
    const auto counted = [&](std::size_t index, std::size_t offset, std::span<std::uint8_t> chunk) {
      bytes(first + index, offset, chunk);
      written += chunk.size();
      if (options.progress) options.progress(written, total);
    };
    write_safetensors(directory / names.back(), part, counted, {{"format", "pt"}});
  }
  ordered_json index;
  index["metadata"] = {{"total_size", total}};
  index["weight_map"] = weight_map;
  write_file_atomic(directory / "model.safetensors.index.json", index.dump(2) + "\n");
  return names;
}

}  // namespace rvformer::engine
