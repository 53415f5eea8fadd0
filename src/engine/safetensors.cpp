// engine/safetensors.cpp — see safetensors.h.
#include "engine/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/atomic_file_writer.h"
#include "support/error.h"

namespace rvformer::engine {

namespace {

using nlohmann::json;

// The reference implementation's bound: a larger header is rejected before it is parsed.
constexpr std::uint64_t max_header_size = 100'000'000;
// Root object -> tensor entry -> shape or offsets list: anything deeper is malformed.
constexpr int max_json_depth = 3;

bool multiply_checked(std::size_t a, std::size_t b, std::size_t& product) {
  if (b != 0 && a > std::numeric_limits<std::size_t>::max() / b) return false;
  product = a * b;
  return true;
}

std::size_t read_count(const json& value, std::string_view source, const std::string& name, const char* what) {
  if (!value.is_number_unsigned()) fail("{}: tensor '{}': {} must hold non-negative integers", source, name, what);
  return value.get<std::size_t>();
}

json parse_header_json(std::span<const std::uint8_t> text, std::string_view source) {
  std::set<std::string> names;
  // The callback rejects duplicate tensor names (plain parsing keeps the last silently) and nesting
  // deeper than the format allows, before any of it is built.
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > max_json_depth) fail("{}: header JSON is nested too deeply", source);
    if (event == json::parse_event_t::key && depth == 1 && !names.insert(parsed.get<std::string>()).second) {
      fail("{}: tensor '{}' appears twice in the header", source, parsed.get<std::string>());
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), check);
  } catch (const json::exception& e) {
    fail("{}: header is not valid JSON ({})", source, e.what());
  }
}

TensorRecord parse_entry(const std::string& name, const json& entry, std::size_t data_size,
                         std::string_view source) {
  if (!entry.is_object() || entry.size() != 3 || !entry.contains("dtype") || !entry.contains("shape") ||
      !entry.contains("data_offsets")) {
    fail("{}: tensor '{}': entry must have exactly the keys dtype, shape and data_offsets", source, name);
  }
  TensorRecord record;
  record.name = name;
  const json& dtype = entry["dtype"];
  const auto parsed = dtype.is_string() ? parse_dtype(dtype.get<std::string>()) : std::nullopt;
  if (!parsed) fail("{}: tensor '{}': unknown dtype {}", source, name, dtype.dump());
  record.dtype = *parsed;

  const json& shape = entry["shape"];
  if (!shape.is_array()) fail("{}: tensor '{}': shape must be a list", source, name);
  std::size_t bytes = dtype_size(record.dtype);
  for (const json& extent : shape) {
    record.shape.push_back(read_count(extent, source, name, "shape"));
    if (!multiply_checked(bytes, record.shape.back(), bytes)) fail("{}: tensor '{}': shape is too large", source, name);
  }

  const json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    fail("{}: tensor '{}': data_offsets must be a list [begin, end]", source, name);
  }
  record.begin = read_count(offsets[0], source, name, "data_offsets");
  record.end = read_count(offsets[1], source, name, "data_offsets");
  if (record.begin > record.end || record.end > data_size) {
    fail("{}: tensor '{}': data_offsets [{}, {}] fall outside the data region of {} bytes", source, name,
         record.begin, record.end, data_size);
  }
  if (record.end - record.begin != bytes) {
    fail("{}: tensor '{}': shape and dtype need {} bytes but data_offsets span {}", source, name, bytes,
         record.end - record.begin);
  }
  return record;
}

std::map<std::string, std::string> parse_metadata(const json& metadata, std::string_view source) {
  if (!metadata.is_object()) fail("{}: __metadata__ must be an object of strings", source);
  std::map<std::string, std::string> result;
  for (const auto& [key, value] : metadata.items()) {
    if (!value.is_string()) fail("{}: __metadata__ entry '{}' must be a string", source, key);
    result[key] = value.get<std::string>();
  }
  return result;
}

void check_coverage(const std::vector<TensorRecord>& tensors, std::size_t data_size, std::string_view source) {
  std::size_t covered = 0;
  const TensorRecord* previous = nullptr;
  for (const TensorRecord& record : tensors) {
    if (record.begin < covered) {
      fail("{}: tensors '{}' and '{}' overlap", source, previous->name, record.name);
    }
    if (record.begin > covered) {
      fail("{}: bytes {} to {} of the data region belong to no tensor", source, covered, record.begin);
    }
    covered = record.end;
    previous = &record;
  }
  if (covered != data_size) {
    fail("{}: bytes {} to {} of the data region belong to no tensor", source, covered, data_size);
  }
}

}  // namespace

std::size_t TensorRecord::element_count() const {
  std::size_t count = 1;
  for (std::size_t extent : shape) count *= extent;
  return count;
}

SafetensorsHeader parse_safetensors(std::span<const std::uint8_t> file, std::string_view source) {
  if (file.size() < 8) fail("{}: too short for a safetensors file ({} bytes)", source, file.size());
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, file.data(), sizeof header_size);
  if (header_size > file.size() - 8 || header_size > max_header_size) {
    fail("{}: header length {} does not fit in the file of {} bytes", source, header_size, file.size());
  }
  const json header = parse_header_json(file.subspan(8, header_size), source);
  if (!header.is_object()) fail("{}: header must be a JSON object", source);

  SafetensorsHeader result;
  result.data_start = 8 + static_cast<std::size_t>(header_size);
  const std::size_t data_size = file.size() - result.data_start;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      result.metadata = parse_metadata(entry, source);
    } else {
      result.tensors.push_back(parse_entry(name, entry, data_size, source));
    }
  }
  std::sort(result.tensors.begin(), result.tensors.end(), [](const TensorRecord& a, const TensorRecord& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  check_coverage(result.tensors, data_size, source);
  return result;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path)
    : source_(path.string()), file_(std::make_shared<MappedFile>(path)) {
  header_ = parse_safetensors(file_->bytes(), source_);
}

std::span<const std::uint8_t> SafetensorsFile::tensor_bytes(const TensorRecord& record) const {
  return file_->bytes().subspan(header_.data_start + record.begin, record.end - record.begin);
}

std::size_t TensorLayout::element_count() const {
  std::size_t count = 1;
  for (std::size_t extent : shape) count *= extent;
  return count;
}

void write_safetensors(const std::filesystem::path& path, std::span<const TensorLayout> tensors,
                       const TensorBytes& bytes, const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::size_t offset = 0;
  for (const TensorLayout& tensor : tensors) {
    if (tensor.name.empty() || tensor.name == "__metadata__" || header.contains(tensor.name)) {
      fail("{}: cannot write tensor '{}': the name is empty, reserved or repeated", path.string(), tensor.name);
    }
    if (!is_weight_dtype(tensor.dtype)) {
      fail("{}: cannot write tensor '{}' as {}: only F32, BF16 and F16 are supported", path.string(), tensor.name,
           dtype_name(tensor.dtype));
    }
    const std::size_t size = tensor.byte_size();
    header[tensor.name] = {{"dtype", dtype_name(tensor.dtype)}, {"shape", tensor.shape}, {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');  // keeps the data region 8-byte aligned
  const std::uint64_t header_size = text.size();

  AtomicFileWriter writer(path);
  writer.write(std::span(reinterpret_cast<const std::uint8_t*>(&header_size), sizeof header_size));
  writer.write(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  constexpr std::size_t chunk = std::size_t{4} << 20;
  std::vector<std::uint8_t> buffer;
  for (std::size_t index = 0; index < tensors.size(); ++index) {
    const std::size_t size = tensors[index].byte_size();
    for (std::size_t start = 0; start < size; start += chunk) {
      buffer.resize(std::min(chunk, size - start));
      bytes(index, start, buffer);
      writer.write(buffer);
    }
  }
  writer.commit();
}

void write_safetensors(const std::filesystem::path& path, std::span<const TensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<TensorLayout> layouts;
  for (const TensorToWrite& tensor : tensors) {
    layouts.push_back({tensor.name, tensor.dtype, tensor.shape});
    if (is_weight_dtype(tensor.dtype) && layouts.back().element_count() != tensor.values.size()) {
      fail("{}: cannot write tensor '{}': its shape holds {} elements but {} values were given", path.string(),
           tensor.name, layouts.back().element_count(), tensor.values.size());
    }
  }
  const auto encode = [&](std::size_t index, std::size_t offset, std::span<std::uint8_t> bytes) {
    const TensorToWrite& tensor = tensors[index];
    const std::size_t element = dtype_size(tensor.dtype);
    encode_floats(tensor.dtype, tensor.values.subspan(offset / element, bytes.size() / element), bytes);
  };
  write_safetensors(path, layouts, encode, metadata);
}

}  // namespace rvformer::engine
