// engine/synthetic_checkpoint_test.cpp — the published Hugging Face layout (hf_checkpoint.h) and the
// synthetic checkpoints written in it: the 4B layout has the release's 738 tensors (426 text, 297
// vision, the 15 mtp.* tensors by name), the config files hold the published keys and parse back to
// the same model, shards respect their size and the index lists every tensor, Checkpoint::open reads
// the result and the model computes exactly what a flat checkpoint of the same values computes, a
// tokenizer directory supplies the special ids and is copied, and bad requests are refused.
#include "engine/synthetic_checkpoint.h"

#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/bitwise_comparison.h"
#include "engine/checkpoint.h"
#include "engine/model.h"
#include "engine/random_model.h"
#include "support/error.h"
#include "support/file.h"

namespace rvformer::engine {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fresh_directory(const std::string& name) {
  const fs::path directory = fs::path(::testing::TempDir()) / ("synthetic_" + name);
  fs::remove_all(directory);
  return directory;
}

json read_json(const fs::path& path) { return json::parse(read_file_text(path)); }

std::size_t count_prefix(const std::vector<TensorLayout>& layouts, std::string_view prefix) {
  std::size_t count = 0;
  for (const TensorLayout& layout : layouts) count += layout.name.starts_with(prefix) ? 1 : 0;
  return count;
}

TEST(HfLayout, TheFourBillionLayoutHasTheReleasedTensors) {
  const SyntheticModel model = synthetic_preset("4b");
  const auto layouts = multimodal_tensor_layouts(model.config, model.vision);
  EXPECT_EQ(layouts.size(), 738u);
  EXPECT_EQ(count_prefix(layouts, "model.language_model."), 426u);
  EXPECT_EQ(count_prefix(layouts, "model.visual."), 297u);
  std::map<std::string, std::vector<std::size_t>> mtp;
  for (const TensorLayout& layout : layouts) {
    if (layout.name.starts_with("mtp.")) mtp[layout.name] = layout.shape;
    EXPECT_EQ(layout.dtype, layout.name.ends_with("A_log") ? DType::F32 : DType::BF16) << layout.name;
  }
  const std::map<std::string, std::vector<std::size_t>> expected_mtp{
      {"mtp.fc.weight", {2560, 5120}},
      {"mtp.layers.0.input_layernorm.weight", {2560}},
      {"mtp.layers.0.mlp.down_proj.weight", {2560, 9216}},
      {"mtp.layers.0.mlp.gate_proj.weight", {9216, 2560}},
      {"mtp.layers.0.mlp.up_proj.weight", {9216, 2560}},
      {"mtp.layers.0.post_attention_layernorm.weight", {2560}},
      {"mtp.layers.0.self_attn.k_norm.weight", {256}},
      {"mtp.layers.0.self_attn.k_proj.weight", {1024, 2560}},
      {"mtp.layers.0.self_attn.o_proj.weight", {2560, 4096}},
      {"mtp.layers.0.self_attn.q_norm.weight", {256}},
      {"mtp.layers.0.self_attn.q_proj.weight", {8192, 2560}},
      {"mtp.layers.0.self_attn.v_proj.weight", {1024, 2560}},
      {"mtp.norm.weight", {2560}},
      {"mtp.pre_fc_norm_embedding.weight", {2560}},
      {"mtp.pre_fc_norm_hidden.weight", {2560}},
  };
  EXPECT_EQ(mtp, expected_mtp);
  std::map<std::string, std::vector<std::size_t>> vision;
  for (const TensorLayout& layout : layouts) vision[layout.name] = layout.shape;
  EXPECT_EQ(vision["model.visual.patch_embed.proj.weight"], (std::vector<std::size_t>{1024, 3, 2, 16, 16}));
  EXPECT_EQ(vision["model.visual.pos_embed.weight"], (std::vector<std::size_t>{2304, 1024}));
  EXPECT_EQ(vision["model.visual.blocks.23.attn.qkv.weight"], (std::vector<std::size_t>{3072, 1024}));
  EXPECT_EQ(vision["model.visual.blocks.23.mlp.linear_fc1.bias"], (std::vector<std::size_t>{4096}));
  EXPECT_EQ(vision["model.visual.merger.linear_fc1.weight"], (std::vector<std::size_t>{4096, 4096}));
  EXPECT_EQ(vision["model.visual.merger.linear_fc2.weight"], (std::vector<std::size_t>{2560, 4096}));
  EXPECT_EQ(vision["model.language_model.embed_tokens.weight"], (std::vector<std::size_t>{248320, 2560}));
  EXPECT_FALSE(vision.contains("lm_head.weight"));  // tied
}

TEST(HfLayout, ConfigFilesHoldThePublishedKeysAndParseBack) {
  for (const char* shape : {"tiny", "narrow", "4b"}) {
    for (bool tied : {true, false}) {
      SyntheticModel model = synthetic_preset(shape);
      model.config.tie_word_embeddings = tied;
      const SpecialTokens tokens = std::string(shape) == "4b" ? SpecialTokens{} : qwen3_special_tokens();
      const auto document = multimodal_config_json(model.config, model.vision, tokens);
      EXPECT_EQ(parse_config(json::parse(document.dump()), shape), model.config) << shape;
      EXPECT_EQ(document["architectures"], json::array({"Qwen3_5ForConditionalGeneration"}));
      EXPECT_EQ(document["model_type"], "qwen3_5");
      EXPECT_EQ(document["tie_word_embeddings"], tied);
      EXPECT_EQ(document["vision_config"]["out_hidden_size"], model.config.hidden_size);
      const auto& text = document["text_config"];
      for (const char* key : {"attn_output_gate", "mamba_ssm_dtype", "mtp_num_hidden_layers",
                              "mtp_use_dedicated_embeddings", "layer_types", "eos_token_id", "full_attention_interval"}) {
        EXPECT_TRUE(text.contains(key)) << shape << " " << key;
      }
      const auto& rope = text["rope_parameters"];
      EXPECT_EQ(rope["rope_type"], "default");
      EXPECT_EQ(rope["mrope_section"][0].get<std::size_t>() + rope["mrope_section"][1].get<std::size_t>() +
                    rope["mrope_section"][2].get<std::size_t>(),
                model.config.rotary_dim() / 2);
    }
  }
  const SyntheticModel four = synthetic_preset("4b");
  const auto text = text_config_json(four.config, SpecialTokens{});
  EXPECT_EQ(text["rope_parameters"]["mrope_section"], json::array({11, 11, 10}));
  EXPECT_EQ(text["rope_parameters"]["rope_theta"].dump(), "10000000");
  EXPECT_EQ(text["eos_token_id"], 248044);
  const auto generation = generation_config_json(SpecialTokens{});
  EXPECT_EQ(generation["eos_token_id"], json::array({248046, 248044}));
  EXPECT_EQ(generation["pad_token_id"], 248044);
}

// The tiny preset in shards of at most 128 KB (the embedding alone, 9.7 MB, gets one of its own).
class TinySyntheticCheckpoint : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = synthetic_preset("tiny");
    model_.max_shard_bytes = 128 << 10;
    model_.seed = 3;
    directory_ = fresh_directory("tiny");
    write_synthetic_checkpoint(directory_, model_);
  }
  static SyntheticModel model_;
  static fs::path directory_;
};

SyntheticModel TinySyntheticCheckpoint::model_;
fs::path TinySyntheticCheckpoint::directory_;

TEST_F(TinySyntheticCheckpoint, ShardsAndIndexAgree) {
  const json index = read_json(directory_ / "model.safetensors.index.json");
  const auto layouts = multimodal_tensor_layouts(model_.config, model_.vision);
  std::uint64_t total = 0;
  std::set<std::string> shards;
  for (const TensorLayout& layout : layouts) {
    total += layout.byte_size();
    ASSERT_TRUE(index["weight_map"].contains(layout.name)) << layout.name;
    shards.insert(index["weight_map"][layout.name].get<std::string>());
  }
  EXPECT_EQ(index["weight_map"].size(), layouts.size());
  EXPECT_EQ(index["metadata"]["total_size"], total);
  EXPECT_GE(shards.size(), 3u);
  for (const std::string& shard : shards) {
    EXPECT_TRUE(shard.starts_with("model-000") && shard.find("-of-") == 11) << shard;
    const SafetensorsFile file(directory_ / shard);
    std::uint64_t bytes = 0;
    for (const TensorRecord& record : file.header().tensors) bytes += record.end - record.begin;
    EXPECT_TRUE(bytes <= (128u << 10) || file.header().tensors.size() == 1) << shard << " holds " << bytes;
    EXPECT_EQ(file.header().metadata.at("format"), "pt");
  }
  EXPECT_FALSE(fs::exists(directory_ / "model.safetensors"));
  const json generation = read_json(directory_ / "generation_config.json");
  EXPECT_EQ(generation["eos_token_id"], json::array({151645, 151643}));  // Qwen3's ids fit 151,936 rows
}

TEST_F(TinySyntheticCheckpoint, CheckpointOpenReadsTheTextModelAndIgnoresTheRest) {
  const Checkpoint checkpoint = Checkpoint::open(directory_);
  EXPECT_EQ(checkpoint.config(), model_.config);
  const auto layouts = multimodal_tensor_layouts(model_.config, model_.vision);
  EXPECT_EQ(checkpoint.tensors().size(), count_prefix(layouts, "model.language_model."));
  EXPECT_EQ(checkpoint.ignored_tensor_count(), count_prefix(layouts, "mtp.") + count_prefix(layouts, "model.visual."));
  EXPECT_EQ(checkpoint.tensor("layers.0.linear_attn.A_log").dtype, DType::F32);
  EXPECT_EQ(checkpoint.tensor("embed_tokens.weight").dtype, DType::BF16);
  EXPECT_EQ(checkpoint.tensor("embed_tokens.weight").stored_name, "model.language_model.embed_tokens.weight");
}

// A flat Qwen3_5ForCausalLM checkpoint of random_model_tensors (the same values for the same seed),
// stored as the synthetic one is: the two must compute the same logits bit for bit.
TEST_F(TinySyntheticCheckpoint, TheModelComputesWhatAFlatCheckpointOfTheSameValuesComputes) {
  const auto tensors = random_model_tensors(model_.config, model_.seed);
  auto views = tensors_to_write(tensors, DType::BF16);
  for (TensorToWrite& view : views) {
    if (view.name.ends_with("A_log")) view.dtype = DType::F32;
  }
  const fs::path flat = fresh_directory("tiny_flat");
  write_checkpoint(flat, model_.config, views);
  const Model synthetic = Model::load(directory_, {.threads = 2, .min_parallel_work = 0});
  const Model reference = Model::load(flat, {.threads = 1});
  State a = synthetic.new_state();
  State b = reference.new_state();
  for (TokenId token : {151643u, 0u, 9707u, 151644u, 11u, 151935u}) {
    const auto logits = synthetic.decode(a, token);
    const auto difference = first_difference(logits, reference.decode(b, token));
    ASSERT_FALSE(difference) << *difference;
    for (float value : logits) ASSERT_TRUE(std::isfinite(value));
  }
}

TEST(SyntheticCheckpoint, ATokenizerDirectorySuppliesTheSpecialIdsAndIsCopied) {
  const fs::path tokenizer = fresh_directory("tokenizer_source");
  fs::create_directories(tokenizer);
  json document = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}}}}}, {"added_tokens", json::array()}};
  std::uint32_t id = 190;
  for (const char* content :
       {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"}) {
    document["added_tokens"].push_back({{"id", id++}, {"content", content}, {"special", true}});
  }
  write_file_atomic(tokenizer / "tokenizer.json", document.dump());
  write_file_atomic(tokenizer / "chat_template.jinja", std::string("{{ messages }}"));

  SyntheticModel model = synthetic_preset("tiny");
  model.config.vocab_size = 200;
  const fs::path directory = fresh_directory("with_tokenizer");
  write_synthetic_checkpoint(directory, model, {.tokenizer_directory = tokenizer});
  EXPECT_EQ(read_file_text(directory / "tokenizer.json"), document.dump());
  EXPECT_EQ(read_file_text(directory / "chat_template.jinja"), "{{ messages }}");
  EXPECT_FALSE(fs::exists(directory / "tokenizer_config.json"));
  const json config = read_json(directory / "config.json");
  EXPECT_EQ(config["text_config"]["eos_token_id"], 190);
  EXPECT_EQ(config["image_token_id"], 195);
  EXPECT_EQ(read_json(directory / "generation_config.json")["eos_token_id"], json::array({192, 190}));
  EXPECT_EQ(Checkpoint::open(directory).config().vocab_size, 200u);

  // Ids beyond the vocabulary, or a tokenizer without Qwen's special tokens, are refused.
  model.config.vocab_size = 196;
  EXPECT_THROW(write_synthetic_checkpoint(fresh_directory("too_small"), model, {.tokenizer_directory = tokenizer}), Error);
  document["added_tokens"].erase(2);
  write_file_atomic(tokenizer / "tokenizer.json", document.dump());
  model.config.vocab_size = 200;
  EXPECT_THROW(write_synthetic_checkpoint(fresh_directory("no_im_end"), model, {.tokenizer_directory = tokenizer}), Error);
}

TEST(SyntheticCheckpoint, BadRequestsAreRefusedWithoutTouchingFiles) {
  EXPECT_THROW(synthetic_preset("huge"), Error);
  SyntheticModel model = synthetic_preset("tiny");
  model.config.vocab_size = 1000;  // holds no Qwen tokenizer's special ids
  EXPECT_THROW(write_synthetic_checkpoint(fresh_directory("small_vocab"), model), Error);
  const fs::path occupied = fresh_directory("occupied");
  fs::create_directories(occupied);
  write_file_atomic(occupied / "notes.txt", std::string("keep me"));
  EXPECT_THROW(write_synthetic_checkpoint(occupied, synthetic_preset("tiny")), Error);
  EXPECT_EQ(read_file_text(occupied / "notes.txt"), "keep me");
}

TEST(SyntheticCheckpoint, ValuesAreAFunctionOfTheElementIndex) {
  const std::vector<std::size_t> shape{7, 300};
  std::vector<float> whole(2100), part(1000);
  random_tensor_values("layers.1.mlp.up_proj.weight", shape, 5, 0, whole);
  random_tensor_values("layers.1.mlp.up_proj.weight", shape, 5, 777, part);
  EXPECT_FALSE(first_difference(part, std::span(whole).subspan(777, 1000)));
  for (float value : whole) ASSERT_LE(std::abs(value), 1.0f / std::sqrt(300.0f));
}

}  // namespace
}  // namespace rvformer::engine
