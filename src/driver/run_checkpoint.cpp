// driver/run_checkpoint.cpp — see run_checkpoint.h.
//
// File layout: the 8-byte magic, a little-endian u32 length, that many bytes of JSON (the position
// and what the run belongs to), the engine's state file image (its own header and CRC-32), then a
// little-endian CRC-32 of everything before it, so that an edited record is caught as well as a
// damaged state.
#include "driver/run_checkpoint.h"

#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/crc32.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::driver {
namespace {

constexpr char kMagic[8] = {'R', 'V', 'F', 'R', 'U', 'N', '0', '2'};
// The format before the whole file was checksummed.
constexpr char kUncheckedMagic[8] = {'R', 'V', 'F', 'R', 'U', 'N', '0', '1'};

void put_u32(std::vector<std::uint8_t>& bytes, std::uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<std::uint8_t>(value >> shift));
}

std::uint32_t get_u32(std::span<const std::uint8_t> bytes) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= std::uint32_t{bytes[i]} << (8 * i);
  return value;
}

nlohmann::json to_json(const RunCheckpoint& c) {
  return {{"next_token", c.position.next_token},
          {"mirror", {c.position.mirror.base, c.position.mirror.steps, c.position.mirror.far_high}},
          {"instructions", c.position.instructions},
          {"trace_tokens", c.position.trace_tokens},
          {"load_tokens", c.position.load_tokens},
          {"machine_fingerprint", c.machine_fingerprint},
          {"program_digest", c.program_digest}};
}

RunCheckpoint from_json(const nlohmann::json& j) {
  RunCheckpoint c;
  c.position.next_token = j.at("next_token").get<std::uint32_t>();
  const nlohmann::json& mirror = j.at("mirror");
  c.position.mirror = {mirror.at(0).get<std::uint32_t>(), mirror.at(1).get<std::uint32_t>(), mirror.at(2).get<std::uint32_t>()};
  c.position.instructions = j.at("instructions").get<std::uint64_t>();
  c.position.trace_tokens = j.at("trace_tokens").get<std::uint64_t>();
  c.position.load_tokens = j.at("load_tokens").get<std::uint64_t>();
  c.machine_fingerprint = j.at("machine_fingerprint").get<std::uint64_t>();
  c.program_digest = j.at("program_digest").get<std::uint64_t>();
  return c;
}

}  // namespace

std::uint64_t program_digest(const program::ProgramImage& image, const Protocol& protocol) {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a over the token ids
  for (std::uint32_t token : program_load_tokens(image, protocol))
    for (int shift = 0; shift < 32; shift += 8) hash = (hash ^ ((token >> shift) & 0xFF)) * 0x100000001b3ull;
  return hash;
}

void save_run_checkpoint(const std::filesystem::path& path, const RunCheckpoint& checkpoint, const engine::State& state) {
  const std::string record = to_json(checkpoint).dump();
  const std::vector<std::uint8_t> image = state.serialize();
  std::vector<std::uint8_t> bytes(std::begin(kMagic), std::end(kMagic));
  put_u32(bytes, static_cast<std::uint32_t>(record.size()));
  bytes.insert(bytes.end(), record.begin(), record.end());
  bytes.insert(bytes.end(), image.begin(), image.end());
  put_u32(bytes, engine::crc32(bytes));
  write_file_atomic(path, bytes);
}

std::pair<RunCheckpoint, engine::State> read_run_checkpoint(const std::filesystem::path& path, const engine::Config& config) {
  const std::string source = path.string();
  const std::vector<std::uint8_t> file = read_file_bytes(path);
  if (file.size() >= sizeof kUncheckedMagic && std::memcmp(file.data(), kUncheckedMagic, sizeof kUncheckedMagic) == 0)
    fail("{}: a run checkpoint from an older rvformer, whose record has no checksum; start the run again without it",
         source);
  if (file.size() < 16 || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0)
    fail("{}: not an rvformer run checkpoint", source);
  const std::span<const std::uint8_t> bytes = std::span(file).first(file.size() - 4);
  if (engine::crc32(bytes) != get_u32(std::span(file).last(4)))
    fail("{}: the run checkpoint is damaged (its checksum does not match; truncated or edited?)", source);
  const std::uint32_t length = get_u32(bytes.subspan(8));
  if (bytes.size() - 12 < length) fail("{}: truncated run checkpoint", source);
  RunCheckpoint checkpoint;
  try {
    checkpoint = from_json(nlohmann::json::parse(bytes.begin() + 12, bytes.begin() + 12 + length));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: malformed run checkpoint record: {}", source, e.what());
  }
  engine::State state = engine::State::deserialize(config, bytes.subspan(12 + length), source);
  const std::uint64_t fed = checkpoint.position.load_tokens + checkpoint.position.trace_tokens;
  if (state.position() != fed)
    fail("{}: the state has seen {} tokens but the record says {} were fed", source, state.position(), fed);
  return {checkpoint, std::move(state)};
}

}  // namespace rvformer::driver
