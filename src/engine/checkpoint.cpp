// engine/checkpoint.cpp — see checkpoint.h.
#include "engine/checkpoint.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/file.h"

namespace rvformer::engine {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view lm_head_name = "lm_head.weight";
constexpr std::string_view single_file_name = "model.safetensors";
constexpr std::string_view index_file_name = "model.safetensors.index.json";

void add_layer_specs(const Config& config, std::size_t layer, std::vector<TensorSpec>& specs) {
  const std::string prefix = fmt::format("layers.{}.", layer);
  const auto add = [&](std::string_view name, std::vector<std::size_t> shape) {
    specs.push_back({prefix + std::string(name), std::move(shape)});
  };
  const std::size_t hidden = config.hidden_size;
  add("input_layernorm.weight", {hidden});
  add("post_attention_layernorm.weight", {hidden});
  if (config.layer_types[layer] == LayerType::linear_attention) {
    const std::size_t heads = config.linear_num_value_heads;
    add("linear_attn.in_proj_qkv.weight", {config.linear_conv_dim(), hidden});
    add("linear_attn.in_proj_z.weight", {config.linear_value_dim(), hidden});
    add("linear_attn.in_proj_b.weight", {heads, hidden});
    add("linear_attn.in_proj_a.weight", {heads, hidden});
    add("linear_attn.conv1d.weight", {config.linear_conv_dim(), 1, config.linear_conv_kernel_dim});
    add("linear_attn.dt_bias", {heads});
    add("linear_attn.A_log", {heads});
    add("linear_attn.norm.weight", {config.linear_value_head_dim});
    add("linear_attn.out_proj.weight", {hidden, config.linear_value_dim()});
  } else {
    const std::size_t query_dim = config.num_attention_heads * config.head_dim;
    const std::size_t key_value_dim = config.num_key_value_heads * config.head_dim;
    add("self_attn.q_proj.weight", {2 * query_dim, hidden});
    add("self_attn.k_proj.weight", {key_value_dim, hidden});
    add("self_attn.v_proj.weight", {key_value_dim, hidden});
    add("self_attn.o_proj.weight", {hidden, query_dim});
    add("self_attn.q_norm.weight", {config.head_dim});
    add("self_attn.k_norm.weight", {config.head_dim});
  }
  add("mlp.gate_proj.weight", {config.intermediate_size, hidden});
  add("mlp.up_proj.weight", {config.intermediate_size, hidden});
  add("mlp.down_proj.weight", {hidden, config.intermediate_size});
}

// The stored name's canonical form, or "" for tensors outside the text model that are ignored.
// Names under no known prefix are returned whole, so that they are reported as unexpected.
std::string canonical_name(std::string_view stored) {
  for (std::string_view ignored : {"model.visual.", "mtp."}) {
    if (stored.starts_with(ignored)) return "";
  }
  for (std::string_view prefix : {"model.language_model.", "model."}) {
    if (stored.starts_with(prefix)) return std::string(stored.substr(prefix.size()));
  }
  return std::string(stored);
}

std::string stored_name(std::string_view canonical) {
  return canonical == lm_head_name ? std::string(canonical) : "model." + std::string(canonical);
}

std::string list_names(const std::vector<std::string>& names) {
  constexpr std::size_t shown = 8;
  std::vector<std::string> head(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min(shown, names.size())));
  std::string text = fmt::format("{}", fmt::join(head, ", "));
  if (names.size() > shown) text += fmt::format(" (and {} more)", names.size() - shown);
  return text;
}

// Shard file names from model.safetensors.index.json, with the tensors each must hold.
std::map<std::string, std::set<std::string>> read_shard_index(const fs::path& path) {
  const std::string source = path.string();
  const std::string text = read_file_text(path);
  const json index = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded() || !index.is_object()) fail("{}: not a JSON object", source);
  const auto weight_map = index.find("weight_map");
  if (weight_map == index.end() || !weight_map->is_object()) fail("{}: missing object 'weight_map'", source);
  std::map<std::string, std::set<std::string>> shards;
  for (const auto& [tensor, file] : weight_map->items()) {
    const std::string name = file.is_string() ? file.get<std::string>() : "";
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
      fail("{}: tensor '{}' maps to {}, which is not a file name in this directory", source, tensor, file.dump());
    }
    shards[name].insert(tensor);
  }
  return shards;
}

void check_shard_matches_index(const SafetensorsFile& shard, const std::set<std::string>& listed,
                               const fs::path& index_path) {
  std::set<std::string> present;
  for (const TensorRecord& record : shard.header().tensors) {
    if (!listed.contains(record.name)) {
      fail("{}: tensor '{}' is not assigned to this shard by {}", shard.source(), record.name, index_path.string());
    }
    present.insert(record.name);
  }
  for (const std::string& name : listed) {
    if (!present.contains(name)) {
      fail("{}: lists tensor '{}' in {}, which does not hold it", index_path.string(), name, shard.source());
    }
  }
}

std::vector<std::shared_ptr<const SafetensorsFile>> open_weight_files(const fs::path& directory) {
  std::vector<std::shared_ptr<const SafetensorsFile>> files;
  if (fs::exists(directory / single_file_name)) {
    files.push_back(std::make_shared<const SafetensorsFile>(directory / single_file_name));
    return files;
  }
  const fs::path index_path = directory / index_file_name;
  if (!fs::exists(index_path)) {
    fail("{}: no {} or {} in this directory", directory.string(), single_file_name, index_file_name);
  }
  for (const auto& [name, listed] : read_shard_index(index_path)) {
    files.push_back(std::make_shared<const SafetensorsFile>(directory / name));
    check_shard_matches_index(*files.back(), listed, index_path);
  }
  return files;
}

std::string shape_text(const std::vector<std::size_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace

std::vector<TensorSpec> checkpoint_tensor_specs(const Config& config) {
  std::vector<TensorSpec> specs;
  specs.push_back({"embed_tokens.weight", {config.vocab_size, config.hidden_size}});
  specs.push_back({"norm.weight", {config.hidden_size}});
  if (!config.tie_word_embeddings) specs.push_back({std::string(lm_head_name), {config.vocab_size, config.hidden_size}});
  for (std::size_t layer = 0; layer < config.num_hidden_layers; ++layer) add_layer_specs(config, layer, specs);
  return specs;
}

std::size_t CheckpointTensor::element_count() const {
  std::size_t count = 1;
  for (std::size_t extent : shape) count *= extent;
  return count;
}

std::vector<float> CheckpointTensor::to_floats() const {
  std::vector<float> values(element_count());
  decode_floats(dtype, bytes, values);
  return values;
}

Checkpoint Checkpoint::open(const fs::path& directory) {
  Checkpoint checkpoint;
  checkpoint.directory_ = directory;
  checkpoint.config_ = load_config(directory / "config.json");
  checkpoint.files_ = open_weight_files(directory);

  std::map<std::string, CheckpointTensor> found;
  for (const auto& file : checkpoint.files_) {
    for (const TensorRecord& record : file->header().tensors) {
      const std::string name = canonical_name(record.name);
      CheckpointTensor tensor{name.empty() ? record.name : name, record.name, record.dtype, record.shape,
                              file->tensor_bytes(record), file.get()};
      if (name.empty()) {
        checkpoint.other_tensors_.push_back(std::move(tensor));
        continue;
      }
      const auto [it, inserted] = found.emplace(name, std::move(tensor));
      if (!inserted) {
        fail("{}: tensor '{}' is stored twice, as '{}' and '{}'", directory.string(), name, it->second.stored_name,
             record.name);
      }
    }
  }

  std::vector<std::string> missing;
  for (const TensorSpec& spec : checkpoint_tensor_specs(checkpoint.config_)) {
    auto it = found.find(spec.name);
    if (it == found.end()) {
      missing.push_back(spec.name);
      continue;
    }
    const CheckpointTensor& tensor = it->second;
    if (tensor.shape != spec.shape) {
      fail("{}: tensor '{}' has shape {}; the config needs {}", tensor.file->source(), tensor.stored_name,
           shape_text(tensor.shape), shape_text(spec.shape));
    }
    if (!is_weight_dtype(tensor.dtype)) {
      fail("{}: tensor '{}' has dtype {}; weights must be F32, BF16 or F16", tensor.file->source(),
           tensor.stored_name, dtype_name(tensor.dtype));
    }
    checkpoint.tensors_.push_back(tensor);
    found.erase(it);
  }
  if (!missing.empty()) fail("{}: missing tensors: {}", directory.string(), list_names(missing));
  if (!found.empty()) {
    std::vector<std::string> unexpected;
    for (const auto& [name, tensor] : found) unexpected.push_back(tensor.stored_name);
    fail("{}: unexpected tensors for this config: {}", directory.string(), list_names(unexpected));
  }
  return checkpoint;
}

const CheckpointTensor& Checkpoint::tensor(std::string_view name) const {
  for (const CheckpointTensor& tensor : tensors_) {
    if (tensor.name == name) return tensor;
  }
  fail("{}: no tensor '{}'", directory_.string(), name);
}

void write_checkpoint(const fs::path& directory, const Config& config, std::span<const TensorToWrite> tensors) {
  validate_config(config, (directory / "config.json").string());
  std::map<std::string_view, const TensorToWrite*> given;
  for (const TensorToWrite& tensor : tensors) {
    if (!given.emplace(tensor.name, &tensor).second) fail("cannot write {}: tensor '{}' given twice", directory.string(), tensor.name);
  }
  std::vector<TensorToWrite> stored;
  std::vector<std::string> missing;
  for (const TensorSpec& spec : checkpoint_tensor_specs(config)) {
    auto it = given.find(spec.name);
    if (it == given.end()) {
      missing.push_back(spec.name);
      continue;
    }
    TensorToWrite tensor = *it->second;
    if (tensor.shape != spec.shape) {
      fail("cannot write {}: tensor '{}' has shape {}; the config needs {}", directory.string(), spec.name,
           shape_text(tensor.shape), shape_text(spec.shape));
    }
    tensor.name = stored_name(spec.name);
    stored.push_back(std::move(tensor));
    given.erase(it);
  }
  if (!missing.empty()) fail("cannot write {}: missing tensors: {}", directory.string(), list_names(missing));
  if (!given.empty()) {
    fail("cannot write {}: tensor '{}' does not belong to a model with this config", directory.string(),
         given.begin()->first);
  }
  fs::create_directories(directory);
  write_safetensors(directory / single_file_name, stored, {{"format", "pt"}});
  write_file_atomic(directory / "config.json", config_to_json(config).dump(2) + "\n");
}

}  // namespace rvformer::engine
