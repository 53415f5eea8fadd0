// engine/state_test.cpp — state files: round trip, and every malformed file (truncated, corrupted,
// foreign, another model shape, inconsistent) rejected with a clear message and no change to the
// state it was loaded into.
#include "engine/state.h"

#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "engine/crc32.h"
#include "engine/random_model.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::engine {
namespace {

namespace fs = std::filesystem;

// A file name of its own for each test: ctest runs tests in parallel processes.
fs::path test_file(const std::string& suffix) {
  return fs::path(::testing::TempDir()) /
         (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + suffix);
}

// A state with recognisable contents: every float distinct, two positions of KV cache.
State sample_state(const Config& config) {
  State state(config);
  float next = 1.0f;
  for (std::size_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    if (config.layer_types[layer] == LayerType::linear_attention) {
      for (float& value : state.gated_delta_net(layer).conv) value = next++;
      for (float& value : state.gated_delta_net(layer).recurrent) value = next++;
    } else {
      const std::size_t floats = 2 * config.num_key_value_heads * config.head_dim;
      for (std::size_t i = 0; i < floats; ++i) {
        state.attention(layer).keys.push_back(next++);
        state.attention(layer).values.push_back(-next++);
      }
    }
  }
  state.advance();
  state.advance();
  return state;
}

class StateFileTest : public ::testing::Test {
 protected:
  std::string load_error(const std::vector<std::uint8_t>& bytes) {
    const fs::path path = test_file(".state");
    write_file_atomic(path, bytes);
    State target = sample_state(config_);
    const State before = target;
    std::string message;
    try {
      target.load(path);
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_EQ(target, before) << "a failed load must leave the state untouched";
    return message;
  }

  static void refresh_checksum(std::vector<std::uint8_t>& bytes) {
    const std::uint32_t crc = crc32(std::span(bytes).subspan(16));
    std::memcpy(bytes.data() + 12, &crc, 4);
  }

  Config config_ = tiny_test_config();
  std::vector<std::uint8_t> good_ = sample_state(config_).serialize();
};

TEST(Crc32, KnownValue) {
  const std::string text = "123456789";
  EXPECT_EQ(crc32(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size())), 0xcbf43926u);
}

TEST_F(StateFileTest, SaveAndLoadRoundTrip) {
  const State original = sample_state(config_);
  const fs::path path = test_file(".state");
  original.save(path);
  State loaded(config_);
  loaded.load(path);
  EXPECT_EQ(loaded, original);
  EXPECT_EQ(loaded.position(), 2u);
  EXPECT_EQ(loaded.attention(3).keys.size(), 2 * config_.num_key_value_heads * config_.head_dim);
  EXPECT_EQ(loaded.recurrent_head(1, 2)[0], original.recurrent_head(1, 2)[0]);
}

TEST_F(StateFileTest, TruncatedFilesAreRejected) {
  for (std::size_t size : {std::size_t{0}, std::size_t{10}, std::size_t{39}, good_.size() - 1, good_.size() / 2}) {
    const std::vector<std::uint8_t> truncated(good_.begin(), good_.begin() + static_cast<std::ptrdiff_t>(size));
    EXPECT_NE(load_error(truncated).find("truncated"), std::string::npos) << size;
  }
}

TEST_F(StateFileTest, CorruptedBytesAreRejected) {
  for (std::size_t offset : {std::size_t{20}, std::size_t{40}, good_.size() / 2, good_.size() - 1}) {
    auto corrupted = good_;
    corrupted[offset] ^= 0x10;
    EXPECT_NE(load_error(corrupted).find("checksum mismatch"), std::string::npos) << offset;
  }
}

TEST_F(StateFileTest, ForeignFilesAndVersionsAreRejected) {
  auto foreign = good_;
  foreign[0] = 'X';
  EXPECT_NE(load_error(foreign).find("not an rvformer state file"), std::string::npos);
  auto future = good_;
  future[8] = 3;
  EXPECT_NE(load_error(future).find("version 3 is not supported"), std::string::npos);
  EXPECT_NE(load_error({}).find("truncated"), std::string::npos);
}

TEST_F(StateFileTest, StateOfAnotherModelShapeIsRejected) {
  Config other = config_;
  other.linear_value_head_dim = 8;
  const auto bytes = sample_state(other).serialize();
  EXPECT_NE(load_error(bytes).find("saved for a model of another shape"), std::string::npos);
}

TEST_F(StateFileTest, InconsistentPositionIsRejectedEvenWithAValidChecksum) {
  const auto with_position = [&](std::uint64_t position, bool layers_too) {
    auto bytes = good_;
    std::memcpy(bytes.data() + 24, &position, 8);
    for (std::size_t layer = 0; layers_too && layer < config_.num_hidden_layers; ++layer) {
      std::memcpy(bytes.data() + 40 + 8 * layer, &position, 8);
    }
    refresh_checksum(bytes);
    return bytes;
  };
  EXPECT_NE(load_error(with_position(3, false)).find("layer 0 has seen 2 tokens but the position is 3"),
            std::string::npos);
  EXPECT_NE(load_error(with_position(3, true)).find("does not match position 3"), std::string::npos);
  const std::uint64_t huge = ~std::uint64_t{0} / 2;
  EXPECT_NE(load_error(with_position(huge, true)).find("does not match position"), std::string::npos);
}

TEST_F(StateFileTest, MissingFileIsAClearError) {
  State state(config_);
  EXPECT_THROW(state.load(test_file(".absent")), Error);
}

TEST(State, LayerAccessChecksTheLayerType) {
  State state(tiny_test_config());
  EXPECT_THROW(state.gated_delta_net(3), Error);
  EXPECT_THROW(state.attention(0), Error);
  EXPECT_THROW(state.recurrent_head(0, 4), Error);
  EXPECT_EQ(state.recurrent_head(0, 3).size(), 16u * 16u);
}

}  // namespace
}  // namespace rvformer::engine
