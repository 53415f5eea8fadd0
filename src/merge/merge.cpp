// merge/merge.cpp — see merge.h.
#include "merge/merge.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "engine/dtype.h"
#include "engine/hf_checkpoint.h"
#include "merge/tokenizer_files.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::merge {
namespace fs = std::filesystem;
using engine::CheckpointTensor;
using engine::Config;
using engine::DType;
using engine::LayerType;

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MergeInfo, machine_layers, base_layers, machine_first_dim, machine_hidden, base_vocab,
                                   trace_tokens, first_reserved_token, norm_scale, parameters, bytes, machine)

namespace {

constexpr const char* kMergeInfoFile = "rvformer-merge.json";
constexpr const char* kMachineInfoFile = "rvformer-machine.json";

// A tensor seen as [rows, cols]: the first extent, and the product of the others (a vector is one row).
std::pair<std::size_t, std::size_t> matrix_view(const std::vector<std::size_t>& shape) {
  if (shape.size() == 1) return {1, shape[0]};
  std::size_t cols = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) cols *= shape[i];
  return {shape.empty() ? 1 : shape[0], cols};
}

// Which of a tensor's two view axes are residual dimensions: those that grow with the hidden size.
struct HiddenAxes {
  bool rows = false, cols = false;
};

std::map<std::string, HiddenAxes> hidden_axes(const Config& config) {
  Config wider = config;
  wider.hidden_size += 1;
  const std::vector<engine::TensorSpec> specs = engine::checkpoint_tensor_specs(config);
  const std::vector<engine::TensorSpec> wider_specs = engine::checkpoint_tensor_specs(wider);
  std::map<std::string, HiddenAxes> axes;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto [rows, cols] = matrix_view(specs[i].shape);
    const auto [wider_rows, wider_cols] = matrix_view(wider_specs[i].shape);
    axes[specs[i].name] = {wider_rows != rows, wider_cols != cols};
  }
  return axes;
}

// "layers.12.mlp.up_proj.weight" → (12, "mlp.up_proj.weight"); other names give nothing.
std::optional<std::pair<std::size_t, std::string>> split_layer_name(const std::string& name) {
  if (!name.starts_with("layers.")) return std::nullopt;
  const std::size_t dot = name.find('.', 7);
  return std::pair{static_cast<std::size_t>(std::stoul(name.substr(7, dot - 7))), name.substr(dot + 1)};
}

std::string layer_name(std::size_t layer, const std::string& rest) { return fmt::format("layers.{}.{}", layer, rest); }

bool is_residual_norm(const std::string& rest) {
  return rest == "input_layernorm.weight" || rest == "post_attention_layernorm.weight";
}

std::string geometry_text(const Config& c, LayerType type) {
  if (type == LayerType::linear_attention)
    return fmt::format("GDN {} key heads × {}, {} value heads × {}, conv {}", c.linear_num_key_heads,
                       c.linear_key_head_dim, c.linear_num_value_heads, c.linear_value_head_dim,
                       c.linear_conv_kernel_dim);
  return fmt::format("attention {} heads × {}, {} KV heads, rotary {}, θ {}", c.num_attention_heads, c.head_dim,
                     c.num_key_value_heads, c.partial_rotary_factor, c.rope_theta);
}

// The compiled layers share the base's global widths, so their mixers must have its geometry and
// their MLP may be no wider than its.
void check_machine_fits(const Config& base, const Config& machine, const fs::path& machine_dir) {
  for (LayerType type : {LayerType::linear_attention, LayerType::full_attention}) {
    if (machine.count_layers(type) == 0) continue;
    if (geometry_text(machine, type) != geometry_text(base, type))
      fail("merge: the machine in {} has {}, the base {}; compile a machine for this base's geometry",
           machine_dir.string(), geometry_text(machine, type), geometry_text(base, type));
  }
  if (machine.intermediate_size > base.intermediate_size)
    fail("merge: the machine's MLP width {} is wider than the base's {}", machine.intermediate_size,
         base.intermediate_size);
  if (!machine.tie_word_embeddings) fail("merge: the machine in {} has an untied LM head", machine_dir.string());
}

Config merged_config(const Config& base, const Config& machine) {
  Config merged = base;
  merged.hidden_size = base.hidden_size + machine.hidden_size;
  merged.num_hidden_layers = machine.num_hidden_layers + base.num_hidden_layers;
  merged.layer_types = machine.layer_types;
  merged.layer_types.insert(merged.layer_types.end(), base.layer_types.begin(), base.layer_types.end());
  merged.vocab_size = base.vocab_size + machine.vocab_size;
  engine::validate_config(merged, "merged model");
  return merged;
}

// (1 + w)·s − 1 with s = √(H/(H+W)): the zero-centred weight that makes an RMSNorm over H + W
// dimensions, W of them zero (whose 1/rms is 1/s times the base's), scale the base's H as the
// base's norm over H did, up to the rounding of the weight and of ε·W/H.
std::vector<float> widened_norm(const CheckpointTensor& norm, double scale) {
  std::vector<float> values = norm.to_floats();
  for (float& w : values) w = static_cast<float>((1.0 + static_cast<double>(w)) * scale - 1.0);
  return values;
}

MergedTensor::Block whole(const CheckpointTensor& source, std::size_t row = 0, std::size_t col = 0) {
  const auto [rows, cols] = matrix_view(source.shape);
  return {&source, {}, rows, cols, row, col};
}

MergedTensor::Block computed(std::vector<float> values, std::size_t col = 0) {
  const std::size_t cols = values.size();
  return {nullptr, std::move(values), 1, cols, 0, col};
}

MergedTensor make_tensor(std::string name, DType dtype, std::vector<std::size_t> shape,
                         std::vector<MergedTensor::Block> blocks) {
  MergedTensor t;
  std::tie(t.rows, t.cols) = matrix_view(shape);
  t.layout = {std::move(name), dtype, std::move(shape)};
  for (const MergedTensor::Block& b : blocks)
    if (b.row + b.rows > t.rows || b.col + b.cols > t.cols)
      fail("merge: a {}×{} block at ({}, {}) does not fit {} [{}×{}]", b.rows, b.cols, b.row, b.col, t.layout.name,
           t.rows, t.cols);
  t.blocks = std::move(blocks);
  return t;
}

class Planner {
 public:
  Planner(const engine::Checkpoint& base, const engine::Checkpoint& machine)
      : base_(base), machine_(machine), b_(base.config()), m_(machine.config()), merged_(merged_config(b_, m_)),
        scale_(std::sqrt(static_cast<double>(b_.hidden_size) / static_cast<double>(merged_.hidden_size))),
        axes_(hidden_axes(merged_)) {
    const CheckpointTensor& embed = base.tensor("embed_tokens.weight");
    prefix_ = embed.stored_name.substr(0, embed.stored_name.size() - embed.name.size());
  }

  const Config& config() const { return merged_; }
  double scale() const { return scale_; }

  std::vector<MergedTensor> text_tensors() const {
    std::vector<MergedTensor> tensors;
    for (const engine::TensorSpec& spec : engine::checkpoint_tensor_specs(merged_)) tensors.push_back(text_tensor(spec));
    return tensors;
  }

  // The vision tower as it was, except the merger's output, which feeds the residual stream: zero in
  // the machine's dimensions. The mtp head is left out (docs/merge.md).
  std::vector<MergedTensor> vision_tensors() const {
    std::vector<MergedTensor> tensors;
    for (const CheckpointTensor& t : base_.other_tensors()) {
      if (!t.name.starts_with("model.visual.")) continue;
      std::vector<std::size_t> shape = t.shape;
      const bool output = t.name.ends_with("merger.linear_fc2.weight") || t.name.ends_with("merger.linear_fc2.bias");
      if (output && shape[0] == b_.hidden_size) shape[0] = merged_.hidden_size;
      tensors.push_back(make_tensor(t.name, t.dtype, shape, {whole(t)}));
    }
    return tensors;
  }

 private:
  MergedTensor text_tensor(const engine::TensorSpec& spec) const {
    const std::string stored = spec.name == "lm_head.weight" ? spec.name : prefix_ + spec.name;
    const std::size_t H = b_.hidden_size;
    if (spec.name == "embed_tokens.weight" || spec.name == "lm_head.weight") {
      const CheckpointTensor& rows = base_.tensor(spec.name);
      return make_tensor(stored, rows.dtype, spec.shape,
                         {whole(rows), whole(machine_.tensor("embed_tokens.weight"), b_.vocab_size, H)});
    }
    if (spec.name == "norm.weight") {
      return make_tensor(stored, DType::F32, spec.shape,
                         {computed(widened_norm(base_.tensor(spec.name), scale_)),
                          computed(machine_.tensor(spec.name).to_floats(), H)});
    }
    const auto [layer, rest] = *split_layer_name(spec.name);
    if (layer >= m_.num_hidden_layers) {
      const CheckpointTensor& source = base_.tensor(layer_name(layer - m_.num_hidden_layers, rest));
      if (is_residual_norm(rest))
        return make_tensor(stored, DType::F32, spec.shape, {computed(widened_norm(source, scale_))});
      return make_tensor(stored, source.dtype, spec.shape, {whole(source)});
    }
    // A compiled layer: its residual axes go after the base's dimensions.
    const CheckpointTensor& source = machine_.tensor(spec.name);
    const HiddenAxes axes = axes_.at(spec.name);
    return make_tensor(stored, base_dtype(merged_.layer_types[layer], rest, source.dtype), spec.shape,
                       {whole(source, axes.rows ? H : 0, axes.cols ? H : 0)});
  }

  // The dtype the base stores this tensor of a layer of this type in (BF16 weights, F32 A_log).
  DType base_dtype(LayerType type, const std::string& rest, DType fallback) const {
    for (std::size_t layer = 0; layer < b_.num_hidden_layers; ++layer)
      if (b_.layer_types[layer] == type) return base_.tensor(layer_name(layer, rest)).dtype;
    return fallback;
  }

  const engine::Checkpoint& base_;
  const engine::Checkpoint& machine_;
  const Config& b_;
  const Config& m_;
  Config merged_;
  double scale_;
  std::map<std::string, HiddenAxes> axes_;
  std::string prefix_;
};

nlohmann::ordered_json merged_config_json(const nlohmann::ordered_json& base, const Config& merged,
                                          std::size_t base_hidden) {
  nlohmann::ordered_json document = base;
  nlohmann::ordered_json& text = document.contains("text_config") ? document["text_config"] : document;
  nlohmann::ordered_json layer_types = nlohmann::ordered_json::array();
  for (LayerType type : merged.layer_types) layer_types.push_back(engine::layer_type_name(type));
  text["hidden_size"] = merged.hidden_size;
  text["num_hidden_layers"] = merged.num_hidden_layers;
  text["layer_types"] = layer_types;
  text["vocab_size"] = merged.vocab_size;
  if (text.contains("mtp_num_hidden_layers")) text["mtp_num_hidden_layers"] = 0;
  if (document.contains("vision_config")) {
    nlohmann::ordered_json& vision = document["vision_config"];
    const auto deepstack = vision.find("deepstack_visual_indexes");
    if (deepstack != vision.end() && !deepstack->empty())
      fail("merge: the vision tower feeds deepstack features into layers {}; they would land in the compiled "
           "layers", deepstack->dump());
    if (vision.value("out_hidden_size", std::size_t{0}) == base_hidden) vision["out_hidden_size"] = merged.hidden_size;
  }
  return document;
}

// Streams the merged tensors' bytes; source pages are dropped from memory once a tensor is done.
class TensorFiller {
 public:
  explicit TensorFiller(const std::vector<MergedTensor>& tensors) : tensors_(tensors) {}

  void operator()(std::size_t index, std::size_t offset, std::span<std::uint8_t> bytes) {
    const MergedTensor& t = tensors_[index];
    const std::size_t size = engine::dtype_size(t.layout.dtype);
    std::fill(bytes.begin(), bytes.end(), std::uint8_t{0});
    std::size_t element = offset / size;
    const std::size_t end = (offset + bytes.size()) / size;
    while (element < end) {
      const std::size_t row = element / t.cols, col = element % t.cols;
      const std::size_t count = std::min(t.cols - col, end - element);
      std::uint8_t* out = bytes.data() + (element * size - offset);
      for (const MergedTensor::Block& b : t.blocks) fill_from(t, b, row, col, count, out);
      element += count;
    }
    if (offset + bytes.size() == t.layout.byte_size())
      for (const MergedTensor::Block& b : t.blocks)
        if (b.source) release(b.source->bytes);
  }

 private:
  // Columns [col, col + count) of `row` from block b, written at `out` (which holds column `col`).
  void fill_from(const MergedTensor& t, const MergedTensor::Block& b, std::size_t row, std::size_t col,
                 std::size_t count, std::uint8_t* out) {
    if (row < b.row || row >= b.row + b.rows) return;
    const std::size_t first = std::max(col, b.col), last = std::min(col + count, b.col + b.cols);
    if (first >= last) return;
    const DType dtype = t.layout.dtype;
    const std::size_t size = engine::dtype_size(dtype);
    const std::size_t source_index = (row - b.row) * b.cols + (first - b.col), n = last - first;
    std::uint8_t* target = out + (first - col) * size;
    if (b.source && b.source->dtype == dtype) {
      std::memcpy(target, b.source->bytes.data() + source_index * size, n * size);
      return;
    }
    values_.resize(n);
    if (b.source) {
      const std::size_t source_size = engine::dtype_size(b.source->dtype);
      engine::decode_floats(b.source->dtype, b.source->bytes.subspan(source_index * source_size, n * source_size),
                            values_);
    } else {
      std::copy_n(b.values.begin() + static_cast<std::ptrdiff_t>(source_index), n, values_.begin());
    }
    const std::span<std::uint8_t> encoded(target, n * size);
    engine::encode_floats(dtype, values_, encoded);
    check_exact(t, encoded);
  }

  // A narrowing conversion must not change a value: the machine's weights are exact in bf16.
  void check_exact(const MergedTensor& t, std::span<const std::uint8_t> encoded) {
    back_.resize(values_.size());
    engine::decode_floats(t.layout.dtype, encoded, back_);
    for (std::size_t i = 0; i < values_.size(); ++i)
      if (back_[i] != values_[i] && !(std::isnan(back_[i]) && std::isnan(values_[i])))
        fail("merge: {} holds {}, which {} cannot store exactly", t.layout.name, values_[i],
             engine::dtype_name(t.layout.dtype));
  }

  // Drops the whole pages of a mapped source range from this process's memory (they stay in the
  // page cache), so a merge's resident size does not grow with the checkpoint.
  static void release(std::span<const std::uint8_t> bytes) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<std::uintptr_t>(bytes.data()) + page - 1) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.size()) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }

  const std::vector<MergedTensor>& tensors_;
  std::vector<float> values_, back_;
};

nlohmann::json read_json(const fs::path& path) {
  nlohmann::json json = nlohmann::json::parse(read_file_text(path), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) fail("{}: not a JSON object", path.string());
  return json;
}

// Every file of the base the merge does not write itself (README, license, vocab.json, merges.txt,
// chat_template.jinja, processor configs ...), copied as it is.
void copy_other_files(const fs::path& base, const fs::path& output) {
  for (const fs::directory_entry& entry : fs::directory_iterator(base)) {
    const std::string name = entry.path().filename().string();
    const bool written = name.ends_with(".safetensors") || name == "model.safetensors.index.json" ||
                         name == "config.json" || is_tokenizer_file(name);
    if (!written && entry.is_regular_file()) fs::copy_file(entry.path(), output / name);
  }
}

}  // namespace

MergePlan plan_merge(const engine::Checkpoint& base, const nlohmann::ordered_json& base_config_json,
                     const engine::Checkpoint& machine, const nlohmann::json& machine_info) {
  const Config& b = base.config();
  const Config& m = machine.config();
  const int compiled_after = machine_info.value("base_hidden", 0);
  if (compiled_after != static_cast<int>(b.hidden_size))
    fail("merge: the machine in {} was compiled {}; this base needs one compiled with `rvformer compile -o DIR "
         "--base-hidden {}`", machine.directory().string(),
         compiled_after ? fmt::format("to sit after {} dimensions", compiled_after) : std::string("to run on its own"),
         b.hidden_size);
  check_machine_fits(b, m, machine.directory());

  Planner planner(base, machine);
  MergePlan plan;
  plan.config = planner.config();
  plan.config_json = merged_config_json(base_config_json, plan.config, b.hidden_size);
  plan.tensors = planner.text_tensors();
  for (MergedTensor& t : planner.vision_tensors()) plan.tensors.push_back(std::move(t));

  MergeInfo& info = plan.info;
  info.machine_layers = m.num_hidden_layers;
  info.base_layers = b.num_hidden_layers;
  info.machine_first_dim = b.hidden_size;
  info.machine_hidden = m.hidden_size;
  info.base_vocab = b.vocab_size;
  info.trace_tokens = m.vocab_size;
  info.first_reserved_token = b.vocab_size;
  info.norm_scale = planner.scale();
  for (const MergedTensor& t : plan.tensors) {
    info.parameters += t.layout.element_count();
    info.bytes += t.layout.byte_size();
  }
  info.machine = machine_info;
  return plan;
}

MergeInfo merge_checkpoints(const fs::path& base_dir, const fs::path& machine_dir, const fs::path& output,
                            const MergeOptions& options) {
  if (fs::exists(base_dir / kMergeInfoFile))
    fail("merge: {} is already a merged checkpoint", base_dir.string());
  if (!fs::exists(machine_dir / kMachineInfoFile))
    fail("merge: {} is not a compiled rvformer machine (no {})", machine_dir.string(), kMachineInfoFile);
  if (fs::exists(output) && !(fs::is_directory(output) && fs::is_empty(output)))
    fail("merge: {} exists and is not an empty directory", output.string());
  const engine::Checkpoint base = engine::Checkpoint::open(base_dir);
  const engine::Checkpoint machine = engine::Checkpoint::open(machine_dir);
  const auto base_json = nlohmann::ordered_json::parse(read_file_text(base_dir / "config.json"));
  MergePlan plan = plan_merge(base, base_json, machine, read_json(machine_dir / kMachineInfoFile));

  fs::path staging = output;
  staging += fmt::format(".partial.{}", ::getpid());
  fs::remove_all(staging);
  fs::create_directories(staging);
  try {
    std::vector<engine::TensorLayout> layouts;
    for (const MergedTensor& t : plan.tensors) layouts.push_back(t.layout);
    TensorFiller filler(plan.tensors);
    engine::write_sharded_safetensors(staging, layouts, std::ref(filler),
                                      {.max_shard_bytes = options.max_shard_bytes, .progress = options.progress});
    plan.info.first_reserved_token =
        write_tokenizer_files(base_dir, staging, plan.info.base_vocab, plan.info.trace_tokens);
    copy_other_files(base_dir, staging);
    write_file_atomic(staging / kMergeInfoFile, nlohmann::json(plan.info).dump(2) + "\n");
    write_file_atomic(staging / "config.json", plan.config_json.dump(2) + "\n");
    fs::remove_all(output);
    fs::rename(staging, output);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
  return plan.info;
}

MergeInfo read_merge_info(const fs::path& directory) {
  const fs::path path = directory / kMergeInfoFile;
  if (!fs::exists(path)) fail("{} is not a merged checkpoint (no {})", directory.string(), kMergeInfoFile);
  const nlohmann::json json = read_json(path);
  try {
    return json.get<MergeInfo>();
  } catch (const std::exception& e) {
    fail("{}: malformed merge description ({})", path.string(), e.what());
  }
}

std::string trace_token_name(std::size_t index) { return fmt::format("<|rv_trace_{}|>", index); }
std::string reserved_token_name(std::size_t id) { return fmt::format("<|rv_reserved_{}|>", id); }

}  // namespace rvformer::merge
