// driver/compiled_machine.cpp — see compiled_machine.h.
#include "driver/compiled_machine.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <xxhash.h>

#include "circuit/graph.h"
#include "compiler/emit.h"
#include "compiler/placement.h"
#include "driver/machine_sources_hash.h"  // generated: kMachineSourcesHash (src/driver/CMakeLists.txt)
#include "support/cache.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::driver {
namespace fs = std::filesystem;

namespace {

constexpr const char* kInfoFile = "rvformer-machine.json";
// A cached machine that nothing has loaded for this long is removed when a new one is compiled: each
// build of the machine's sources makes a new one, and the old ones are never loaded again.
constexpr std::chrono::hours kCachedMachineLifetime{24 * 30};

std::string hex(std::uint64_t value) { return fmt::format("{:016x}", value); }

std::string compile_target(int base_hidden) {
  return base_hidden ? fmt::format("to sit after a base model's {} dimensions", base_hidden) : "to run on its own";
}

// The circuit's fingerprint combined with the hash of the sources that decide the weights.
std::uint64_t compiled_fingerprint(const circuit::Circuit& c) {
  const std::uint64_t parts[2] = {c.fingerprint(), kMachineSourcesHash};
  return XXH3_64bits(parts, sizeof parts);
}

std::uint64_t tensor_digest(std::span<const std::uint8_t> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

std::map<std::string, std::uint64_t> tensor_digests(const engine::Checkpoint& checkpoint) {
  std::map<std::string, std::uint64_t> digests;
  for (const engine::CheckpointTensor& tensor : checkpoint.tensors()) digests[tensor.name] = tensor_digest(tensor.bytes);
  return digests;
}

nlohmann::json digests_json(const std::map<std::string, std::uint64_t>& digests) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, digest] : digests) object[name] = hex(digest);
  return object;
}

std::map<std::string, std::uint64_t> digests_from_json(const nlohmann::json& object) {
  std::map<std::string, std::uint64_t> digests;
  for (const auto& [name, digest] : object.items()) digests[name] = std::stoull(digest.get<std::string>(), nullptr, 16);
  return digests;
}

nlohmann::json bank_heads_json(const std::vector<compiler::HeadSlot>& heads) {
  nlohmann::json list = nlohmann::json::array();
  for (const compiler::HeadSlot& h : heads) list.push_back({h.layer, h.head});
  return list;
}

std::vector<compiler::HeadSlot> bank_heads_from_json(const nlohmann::json& list, int layers) {
  std::vector<compiler::HeadSlot> heads;
  for (const nlohmann::json& entry : list) {
    compiler::HeadSlot h{entry.at(0).get<int>(), entry.at(1).get<int>()};
    if (h.layer < 0 || h.layer >= layers || h.head < 0 || h.head >= compiler::kKeyHeads)
      throw std::out_of_range(fmt::format("bank head [{}, {}] outside the model", h.layer, h.head));
    heads.push_back(h);
  }
  return heads;
}

[[noreturn]] void malformed_description(const fs::path& path, const std::string& why) {
  fail("{}: not a machine description ({}); compile the machine again", path.string(), why);
}

}  // namespace

namespace {

CompiledMachineInfo compile_named(const circuit::Circuit& c, std::string_view machine_name, const fs::path& directory,
                                  const Progress& progress, const CompileOptions& options) {
  const int base_hidden = options.base_hidden;
  if (fs::exists(directory) && !fs::exists(directory / kInfoFile) &&
      !(fs::is_directory(directory) && fs::is_empty(directory)))
    fail("{} exists and is not a compiled rvformer machine; refusing to replace it", directory.string());
  if (base_hidden < 0) fail("a base model's hidden size cannot be negative ({})", base_hidden);
  progress(fmt::format("placing {} neurons, {} memory banks and {} delays into layers", c.neurons().size(),
                       c.banks().size(), c.delays().size()));
  circuit::CircuitGraph graph = circuit::analyze(c);
  compiler::Placement placement = compiler::place(c, graph, {.base_hidden = base_hidden});
  const int own_dims = placement.hidden_size - placement.first_dim;
  progress(fmt::format("computing the weights of {} layers (hidden size {}, MLP width {}, vocabulary {})",
                       placement.num_layers, base_hidden ? fmt::format("{} after {}", own_dims, base_hidden)
                                                         : std::to_string(own_dims),
                       placement.intermediate_size, c.vocab_size()));
  compiler::EmittedModel emitted = compiler::emit(c, graph, placement, {.machine_dims_only = base_hidden > 0});

  CompiledMachineInfo info{compiled_fingerprint(c), std::string(machine_name), placement.num_layers, own_dims,
                           base_hidden, placement.intermediate_size, 0, 0, placement.bank_head, {}};
  for (const compiler::EmittedTensor& t : emitted.tensors) {
    info.parameters += t.values.size();
    for (float v : t.values) info.zero_parameters += v == 0;
  }
  fs::path staging = directory;
  staging += fmt::format(".partial.{}", ::getpid());
  fs::remove_all(staging);
  progress(fmt::format("writing {} parameters ({:.2f}% exactly zero) in {} to {}", info.parameters,
                       100.0 * static_cast<double>(info.zero_parameters) / static_cast<double>(info.parameters),
                       engine::dtype_name(options.dtype), directory.string()));
  std::vector<engine::TensorToWrite> tensors = emitted.tensors_to_write(options.dtype);
  engine::write_checkpoint(staging, emitted.config, tensors);
  // The digests are taken from what was written, read back, so that they vouch for the file.
  info.tensor_digests = tensor_digests(engine::Checkpoint::open(staging));
  nlohmann::json json{{"fingerprint", hex(info.fingerprint)},   {"machine", info.machine},
                      {"layers", info.layers},
                      {"hidden_size", info.hidden_size},        {"base_hidden", info.base_hidden},
                      {"intermediate_size", info.intermediate_size},
                      {"parameters", info.parameters},          {"zero_parameters", info.zero_parameters},
                      {"bank_heads", bank_heads_json(info.bank_heads)},
                      {"tensor_digests", digests_json(info.tensor_digests)}};
  write_file_atomic(staging / kInfoFile, json.dump(2) + "\n");
  fs::remove_all(directory);
  fs::rename(staging, directory);
  return info;
}

}  // namespace

CompiledMachineInfo compile_machine(const cpu::Machine& machine, const fs::path& directory, const Progress& progress,
                                    const CompileOptions& options) {
  return compile_named(machine.circuit, machine.spec.name, directory, progress, options);
}

CompiledMachineInfo compile_circuit(const circuit::Circuit& c, const fs::path& directory, const Progress& progress,
                                    const CompileOptions& options) {
  return compile_named(c, "", directory, progress, options);
}

CompiledMachineInfo read_machine_info(const fs::path& directory) {
  check_input_directory(directory);
  fs::path path = directory / kInfoFile;
  if (!fs::exists(path)) fail("{} is not a compiled rvformer machine (no {})", directory.string(), kInfoFile);
  const std::string text = read_file_text(path);
  auto malformed = [&](const std::string& why) { malformed_description(path, why); };
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    malformed(fmt::format("not JSON: syntax error at byte {}", e.byte));
  }
  auto field = [&](const char* key) -> const nlohmann::json& {
    if (!json.is_object() || !json.contains(key)) malformed(fmt::format("no '{}'", key));
    return json.at(key);
  };
  try {
    return {std::stoull(field("fingerprint").get<std::string>(), nullptr, 16), json.value("machine", ""),
            field("layers").get<int>(),
            field("hidden_size").get<int>(), json.value("base_hidden", 0), field("intermediate_size").get<int>(),
            field("parameters").get<std::uint64_t>(), field("zero_parameters").get<std::uint64_t>(),
            bank_heads_from_json(field("bank_heads"), field("layers").get<int>()),
            digests_from_json(json.value("tensor_digests", nlohmann::json::object()))};
  } catch (const std::exception& e) {
    // Wrong types, a bank outside the model, a fingerprint that is not hex: say which, without the
    // parser's own codes.
    std::string why = e.what();
    if (why.starts_with("[json.exception.")) why = why.substr(why.find(']') + 2);
    malformed_description(path, why);
  }
}

engine::Checkpoint open_compiled_machine(const fs::path& directory, const CompiledMachineInfo& info) {
  const std::string advice = fmt::format(
      "compile it again with `rvformer compile -o {0}` (if it is the cached machine, remove {0} and the next run "
      "compiles it)", directory.string());
  std::optional<engine::Checkpoint> checkpoint;
  try {
    checkpoint = engine::Checkpoint::open(directory);
  } catch (const Error& e) {
    fail("the checkpoint is damaged: {}; {}", e.what(), advice);
  }
  if (checkpoint->tensors().size() != info.tensor_digests.size())
    fail("the checkpoint is damaged: {} holds {} tensors but {} were recorded when it was compiled; {}",
         directory.string(), checkpoint->tensors().size(), info.tensor_digests.size(), advice);
  for (const engine::CheckpointTensor& tensor : checkpoint->tensors()) {
    auto recorded = info.tensor_digests.find(tensor.name);
    if (recorded == info.tensor_digests.end() || recorded->second != tensor_digest(tensor.bytes))
      fail("the checkpoint is damaged: tensor '{}' in {} is not what was written when the machine was compiled "
           "(its digest differs); {}", tensor.name, tensor.file->source(), advice);
  }
  return std::move(*checkpoint);
}

namespace {

std::string compile_command(const fs::path& directory, int base_hidden) {
  return fmt::format("rvformer compile -o {}{}", directory.string(),
                     base_hidden ? fmt::format(" --base-hidden {}", base_hidden) : "");
}

}  // namespace

fs::path machine_checkpoint(const cpu::Machine& machine, const std::optional<fs::path>& model, const Progress& progress,
                            int base_hidden) {
  std::uint64_t fingerprint = compiled_fingerprint(machine.circuit);
  if (model) {
    CompiledMachineInfo info = read_machine_info(*model);
    if (!info.machine.empty() && info.machine != machine.spec.name)
      fail("{} holds the {} machine, not {}; pass --machine {}", model->string(), info.machine, machine.spec.name,
           info.machine);
    if (info.fingerprint != fingerprint)
      fail("{} was compiled from another machine description or by another compiler (fingerprint {}, this "
           "build's is {}); run `{}` again", model->string(), hex(info.fingerprint), hex(fingerprint),
           compile_command(*model, base_hidden));
    if (info.base_hidden != base_hidden)
      fail("{} was compiled {}, not {}; run `{}`", model->string(), compile_target(info.base_hidden),
           compile_target(base_hidden), compile_command(*model, base_hidden));
    return *model;
  }
  fs::path directory = cache_root() / ("machine-" + hex(fingerprint) +
                                       (base_hidden ? fmt::format("-after-{}", base_hidden) : std::string()));
  check_output_directory(directory);
  if (fs::exists(directory / kInfoFile)) {
    mark_cache_entry_used(directory);
    return directory;
  }
  fs::create_directories(directory.parent_path());
  // Concurrent runs (parallel tests, two shells) compile once: the others wait for the lock.
  CacheLock lock(directory.string() + ".lock");
  if (fs::exists(directory / kInfoFile)) return directory;
  progress("compiling the machine into weights (once per build; cached in " + directory.string() + ")");
  compile_machine(machine, directory, progress, {.base_hidden = base_hidden});
  if (int removed = prune_cache(directory.parent_path(), "machine-", kCachedMachineLifetime))
    progress(fmt::format("removed {} cached machine{} unused for {} days", removed, removed == 1 ? "" : "s",
                         kCachedMachineLifetime.count() / 24));
  return directory;
}

}  // namespace rvformer::driver
