// engine/safetensors.h — the safetensors file format: a strict parser of the header (every offset,
// size and name is checked before any byte of data is trusted), a memory-mapped reader, and a
// streaming writer that converts fp32 values to F32, BF16 or F16.
//
// Layout: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (plus an optional "__metadata__" object of
// strings), then the data region; offsets are relative to its start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/dtype.h"
#include "engine/mapped_file.h"

namespace rvformer::engine {

struct TensorRecord {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::size_t> shape;
  std::size_t begin = 0;  // byte offsets within the data region
  std::size_t end = 0;

  std::size_t element_count() const;
};

struct SafetensorsHeader {
  std::vector<TensorRecord> tensors;  // in data order
  std::map<std::string, std::string> metadata;
  std::size_t data_start = 0;  // file offset of the data region
};

// Validates the header of a complete safetensors file image: header length within the file, JSON
// well-formed with no duplicate names, known dtypes, shape × dtype size equal to each byte range,
// ranges sorted, non-overlapping and covering the data region exactly. `source` names the file in
// error messages. Throws rvformer::Error.
SafetensorsHeader parse_safetensors(std::span<const std::uint8_t> file, std::string_view source);

// A memory-mapped, validated safetensors file.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::filesystem::path& path);

  const std::string& source() const { return source_; }
  const SafetensorsHeader& header() const { return header_; }
  std::span<const std::uint8_t> tensor_bytes(const TensorRecord& record) const;

 private:
  std::string source_;
  std::shared_ptr<const MappedFile> file_;
  SafetensorsHeader header_;
};

// One tensor to write: fp32 values, stored as `dtype` (F32, BF16 or F16; rounded to nearest even).
struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::size_t> shape;
  std::span<const float> values;  // row-major, product(shape) elements
};

// Writes a safetensors file atomically, tensors in the given order. Throws rvformer::Error.
void write_safetensors(const std::filesystem::path& path, std::span<const TensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata = {});

// One tensor to write whose bytes are produced while the file is written (so that no tensor needs
// to be in memory whole): name, dtype (F32, BF16 or F16) and shape.
struct TensorLayout {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::size_t> shape;

  std::size_t element_count() const;
  std::size_t byte_size() const { return element_count() * dtype_size(dtype); }
};

// Fills `bytes` with tensor `tensor`'s little-endian data from byte `offset` of that tensor on. It is
// called tensor by tensor in file order, with consecutive chunks of at most 4 MiB.
using TensorBytes = std::function<void(std::size_t tensor, std::size_t offset, std::span<std::uint8_t> bytes)>;

// Writes a safetensors file atomically, streaming each tensor's bytes from `bytes`.
void write_safetensors(const std::filesystem::path& path, std::span<const TensorLayout> tensors,
                       const TensorBytes& bytes, const std::map<std::string, std::string>& metadata = {});

}  // namespace rvformer::engine
