// engine/checkpoint_test.cpp — checkpoint directories: writer/reader round trip, the multimodal
// prefix, ignored vision and MTP tensors, shards, and every way the tensor set can disagree with
// the config.
#include "engine/checkpoint.h"

#include <filesystem>
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/random_model.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::engine {
namespace {

namespace fs = std::filesystem;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::path(::testing::TempDir()) /
                 ("checkpoint_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    tensors_ = random_model_tensors(config_, 7);
  }

  // Writes config.json and one safetensors file whose stored names come from `rename` ("" drops).
  void write_raw(const std::function<std::string(const std::string&)>& rename, DType dtype = DType::F32,
                 const std::string& file = "model.safetensors") {
    std::vector<TensorToWrite> stored;
    for (const auto& view : tensors_to_write(tensors_, dtype)) {
      TensorToWrite tensor = view;
      tensor.name = rename(view.name);
      if (!tensor.name.empty()) stored.push_back(tensor);
    }
    write_safetensors(directory_ / file, stored);
    write_file_atomic(directory_ / "config.json", config_to_json(config_).dump());
  }

  std::string open_error() {
    try {
      Checkpoint::open(directory_);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  Config config_ = tiny_test_config();
  std::vector<OwnedTensor> tensors_;
  fs::path directory_;
};

TEST_F(CheckpointTest, WrittenCheckpointReadsBackExactly) {
  write_checkpoint(directory_, config_, tensors_to_write(tensors_, DType::F32));
  const Checkpoint checkpoint = Checkpoint::open(directory_);
  EXPECT_EQ(checkpoint.config(), config_);
  ASSERT_EQ(checkpoint.tensors().size(), tensors_.size());
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    EXPECT_EQ(checkpoint.tensors()[i].name, tensors_[i].name);
    EXPECT_EQ(checkpoint.tensors()[i].to_floats(), tensors_[i].values) << tensors_[i].name;
  }
  EXPECT_EQ(checkpoint.tensor("lm_head.weight").stored_name, "lm_head.weight");
  EXPECT_EQ(checkpoint.tensor("norm.weight").stored_name, "model.norm.weight");
  const auto config_json = nlohmann::json::parse(read_file_text(directory_ / "config.json"));
  EXPECT_EQ(config_json["model_type"], "qwen3_5_text");
}

TEST_F(CheckpointTest, Bf16CheckpointUpcastsTheRoundedValues) {
  write_checkpoint(directory_, config_, tensors_to_write(tensors_, DType::BF16));
  const Checkpoint checkpoint = Checkpoint::open(directory_);
  const auto& tensor = checkpoint.tensor("layers.0.linear_attn.in_proj_qkv.weight");
  EXPECT_EQ(tensor.dtype, DType::BF16);
  const auto values = tensor.to_floats();
  const auto& original = tensors_[3 + 2].values;  // embed, norm, lm_head, then layer 0's two norms
  ASSERT_EQ(tensors_[5].name, "layers.0.linear_attn.in_proj_qkv.weight");
  for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], bf16_to_float(float_to_bf16(original[i])));
}

TEST_F(CheckpointTest, AcceptsTheMultimodalPrefixAndIgnoresVisionAndMtp) {
  tensors_.push_back({"model.visual.blocks.0.weight", {2}, {1.0f, 2.0f}});
  tensors_.push_back({"mtp.fc.weight", {1}, {3.0f}});
  write_raw([](const std::string& name) {
    if (name.starts_with("model.visual.") || name.starts_with("mtp.") || name == "lm_head.weight") return name;
    return "model.language_model." + name;
  });
  const Checkpoint checkpoint = Checkpoint::open(directory_);
  EXPECT_EQ(checkpoint.ignored_tensor_count(), 2u);
  EXPECT_EQ(checkpoint.tensor("embed_tokens.weight").stored_name, "model.language_model.embed_tokens.weight");
}

TEST_F(CheckpointTest, ReadsShardsListedInTheIndex) {
  nlohmann::json weight_map;
  std::vector<OwnedTensor> all = tensors_;
  for (int shard = 0; shard < 2; ++shard) {
    tensors_.clear();
    for (std::size_t i = shard; i < all.size(); i += 2) tensors_.push_back(all[i]);
    const std::string file = "model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors";
    write_raw([](const std::string& name) { return name == "lm_head.weight" ? name : "model." + name; }, DType::F16,
              file);
    for (const auto& tensor : tensors_) {
      weight_map[tensor.name == "lm_head.weight" ? tensor.name : "model." + tensor.name] = file;
    }
  }
  write_file_atomic(directory_ / "model.safetensors.index.json",
                    nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}}.dump());
  const Checkpoint checkpoint = Checkpoint::open(directory_);
  EXPECT_EQ(checkpoint.tensors().size(), all.size());
  EXPECT_EQ(checkpoint.tensor("layers.3.self_attn.q_norm.weight").dtype, DType::F16);

  // An index that disagrees with its shards is rejected.
  weight_map["model.norm.weight"] = "model-00002-of-00002.safetensors";
  weight_map.erase("model.layers.0.input_layernorm.weight");
  write_file_atomic(directory_ / "model.safetensors.index.json", nlohmann::json{{"weight_map", weight_map}}.dump());
  EXPECT_NE(open_error().find("is not assigned to this shard"), std::string::npos) << open_error();
  weight_map["model.norm.weight"] = "../elsewhere.safetensors";
  write_file_atomic(directory_ / "model.safetensors.index.json", nlohmann::json{{"weight_map", weight_map}}.dump());
  EXPECT_NE(open_error().find("not a file name in this directory"), std::string::npos) << open_error();
}

TEST_F(CheckpointTest, ReportsMissingAndUnexpectedTensorsByName) {
  write_raw([](const std::string& name) { return name == "layers.2.mlp.up_proj.weight" ? "" : "model." + name; });
  EXPECT_NE(open_error().find("missing tensors: layers.2.mlp.up_proj.weight"), std::string::npos) << open_error();

  tensors_.push_back({"layers.9.extra.weight", {1}, {0.0f}});
  write_raw([](const std::string& name) { return name == "lm_head.weight" ? name : "model." + name; });
  EXPECT_NE(open_error().find("unexpected tensors for this config: model.layers.9.extra.weight"), std::string::npos)
      << open_error();
}

TEST_F(CheckpointTest, TiedConfigRejectsAnLmHead) {
  config_.tie_word_embeddings = true;
  write_raw([](const std::string& name) { return name == "lm_head.weight" ? name : "model." + name; });
  EXPECT_NE(open_error().find("unexpected tensors for this config: lm_head.weight"), std::string::npos) << open_error();
}

TEST_F(CheckpointTest, ReportsShapeDtypeAndDuplicateProblems) {
  tensors_[1].shape = {8, 8};  // norm.weight
  write_raw([](const std::string& name) { return "model." + name; });
  EXPECT_NE(open_error().find("tensor 'model.norm.weight' has shape [8, 8]; the config needs [64]"), std::string::npos)
      << open_error();

  SetUp();
  tensors_.push_back(tensors_[1]);
  tensors_.back().name = "copy";
  write_raw([](const std::string& name) { return name == "copy" ? "model.language_model.norm.weight" : "model." + name; });
  EXPECT_NE(open_error().find("tensor 'norm.weight' is stored twice"), std::string::npos) << open_error();
}

TEST_F(CheckpointTest, RejectsNonFloatWeights) {
  // Hand-write a shard whose norm.weight is I32.
  write_raw([](const std::string& name) { return name == "norm.weight" ? "" : "model." + name; });
  const SafetensorsFile good(directory_ / "model.safetensors");
  nlohmann::json header;
  for (const auto& record : good.header().tensors) {
    header[record.name] = {{"dtype", dtype_name(record.dtype)}, {"shape", record.shape},
                           {"data_offsets", {record.begin, record.end}}};
  }
  const std::size_t data_size = good.header().tensors.back().end;
  header["model.norm.weight"] = {{"dtype", "I32"}, {"shape", {64}}, {"data_offsets", {data_size, data_size + 256}}};
  const std::string text = header.dump();
  std::vector<std::uint8_t> bytes(8 + text.size() + data_size + 256, 0);
  const std::uint64_t size = text.size();
  std::memcpy(bytes.data(), &size, 8);
  std::memcpy(bytes.data() + 8, text.data(), text.size());
  write_file_atomic(directory_ / "model.safetensors", bytes);
  EXPECT_NE(open_error().find("tensor 'model.norm.weight' has dtype I32"), std::string::npos) << open_error();
}

TEST_F(CheckpointTest, MissingFilesAreClearErrors) {
  EXPECT_NE(open_error().find("config.json"), std::string::npos);
  write_file_atomic(directory_ / "config.json", config_to_json(config_).dump());
  EXPECT_NE(open_error().find("no model.safetensors or model.safetensors.index.json"), std::string::npos);
}

TEST_F(CheckpointTest, WriterChecksTheTensorSet) {
  auto views = tensors_to_write(tensors_, DType::F32);
  views.pop_back();
  EXPECT_THROW(write_checkpoint(directory_, config_, views), Error);
  views = tensors_to_write(tensors_, DType::F32);
  views[0].shape = {64, 101};
  EXPECT_THROW(write_checkpoint(directory_, config_, views), Error);
  EXPECT_FALSE(fs::exists(directory_ / "model.safetensors"));
}

}  // namespace
}  // namespace rvformer::engine
