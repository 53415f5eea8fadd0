// fuzz/engine_parsers_fuzz.cpp — libFuzzer target for the engine's parsers of untrusted input:
// config.json, safetensors headers and state files. The first byte picks the parser; malformed input
// must end in rvformer::Error, never in a crash, a hang or a sanitizer report.
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "engine/config.h"
#include "engine/crc32.h"
#include "engine/random_model.h"
#include "engine/safetensors.h"
#include "engine/state.h"
#include "support/error.h"

namespace {

using namespace rvformer::engine;

// State files with a valid checksum, so that the fuzzer reaches the checks behind it.
void parse_state_with_valid_checksum(std::span<const std::uint8_t> input, const Config& config) {
  std::vector<std::uint8_t> bytes(input.begin(), input.end());
  if (bytes.size() >= 16) {
    const std::uint32_t crc = crc32(std::span(bytes).subspan(16));
    std::memcpy(bytes.data() + 12, &crc, sizeof crc);
  }
  State::deserialize(config, bytes, "fuzz.state");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const Config config = tiny_test_config();
  const std::span<const std::uint8_t> input(data + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0:
        parse_config_text(std::string_view(reinterpret_cast<const char*>(input.data()), input.size()), "fuzz.json");
        break;
      case 1:
        parse_safetensors(input, "fuzz.safetensors");
        break;
      case 2:
        State::deserialize(config, input, "fuzz.state");
        break;
      default:
        parse_state_with_valid_checksum(input, config);
        break;
    }
  } catch (const rvformer::Error&) {
  }
  return 0;
}
