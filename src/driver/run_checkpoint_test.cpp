// Run checkpoint files: a round trip keeps everything, and damaged or mismatched files are refused
// with an error naming the file.
#include <gtest/gtest.h>

#include <fstream>

#include "driver/run_checkpoint.h"
#include "engine/crc32.h"
#include "engine/random_model.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::driver {
namespace {

// Gated DeltaNet layers only (the compiled machine's kind): their state has the same size at
// every position, so the test can advance a state without decoding.
engine::Config linear_only_config() {
  engine::Config config = engine::tiny_test_config();
  config.layer_types.assign(config.num_hidden_layers, engine::LayerType::linear_attention);
  return config;
}

class RunCheckpointFile : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 5; ++i) state_.advance();
    state_.gated_delta_net(0).recurrent[3] = 181.0f;
    checkpoint_ = {{.next_token = 1234, .mirror = {3, 4, 5}, .instructions = 2, .trace_tokens = 3, .load_tokens = 2}, 99, 77};
    save_run_checkpoint(path_, checkpoint_, state_);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::string error_reading() {
    try {
      read_run_checkpoint(path_, config_);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  void rewrite(const std::function<void(std::vector<std::uint8_t>&)>& change) {
    std::vector<std::uint8_t> bytes = read_file_bytes(path_);
    change(bytes);
    write_file_atomic(path_, bytes);
  }

  engine::Config config_ = linear_only_config();
  engine::State state_{config_};
  RunCheckpoint checkpoint_;
  std::filesystem::path path_ = std::filesystem::path(::testing::TempDir()) / "run.checkpoint";
};

TEST_F(RunCheckpointFile, RoundTripKeepsThePositionAndTheState) {
  auto [read, state] = read_run_checkpoint(path_, config_);
  EXPECT_EQ(read.position.next_token, 1234u);
  EXPECT_EQ(read.position.mirror.steps, 4u);
  EXPECT_EQ(read.position.instructions, 2u);
  EXPECT_EQ(read.machine_fingerprint, 99u);
  EXPECT_EQ(read.program_digest, 77u);
  EXPECT_TRUE(state == state_);
}

TEST_F(RunCheckpointFile, TruncatedOrCorruptedFilesAreRefused) {
  rewrite([](auto& bytes) { bytes.resize(bytes.size() - 9); });
  EXPECT_NE(error_reading().find("run.checkpoint"), std::string::npos);
  save_run_checkpoint(path_, checkpoint_, state_);
  rewrite([](auto& bytes) { bytes[bytes.size() - 5] ^= 0x40; });  // a state byte: its CRC catches it
  EXPECT_NE(error_reading().find("run.checkpoint"), std::string::npos);
  rewrite([](auto& bytes) { bytes.resize(10); });
  EXPECT_NE(error_reading().find("not an rvformer run checkpoint"), std::string::npos);
}

TEST_F(RunCheckpointFile, AStateAtAnotherPositionThanTheRecordIsRefused) {
  checkpoint_.position.trace_tokens = 4;
  save_run_checkpoint(path_, checkpoint_, state_);
  EXPECT_NE(error_reading().find("the state has seen 5 tokens but the record says 6"), std::string::npos) << error_reading();
}

TEST_F(RunCheckpointFile, AnEditedRecordIsRefusedAsDamaged) {
  // The same length, still valid JSON, and a state that agrees with the token counts: only a checksum
  // over the record can tell.
  rewrite([](auto& bytes) {
    std::string text(bytes.begin(), bytes.end());
    std::size_t at = text.find("\"instructions\":2");
    ASSERT_NE(at, std::string::npos);
    bytes[at + std::string("\"instructions\":").size()] = '3';
  });
  EXPECT_NE(error_reading().find("run.checkpoint: the run checkpoint is damaged"), std::string::npos) << error_reading();
}

TEST_F(RunCheckpointFile, AMalformedRecordIsRefused) {
  rewrite([](auto& bytes) {
    bytes[12] = '!';
    // Sealed again, as a faulty writer would: the record itself must still be checked.
    bytes.resize(bytes.size() - 4);
    const std::uint32_t crc = engine::crc32(bytes);
    for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<std::uint8_t>(crc >> shift));
  });
  EXPECT_NE(error_reading().find("malformed run checkpoint record"), std::string::npos) << error_reading();
}

}  // namespace
}  // namespace rvformer::driver
