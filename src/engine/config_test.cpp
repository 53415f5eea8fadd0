// engine/config_test.cpp — config.json parsing (flat and nested, derived layer types, rope keys),
// validation errors that name the key, and the round trip through config_to_json.
#include "engine/config.h"

#include <gtest/gtest.h>

#include "engine/random_model.h"
#include "support/error.h"

namespace rvformer::engine {
namespace {

using nlohmann::json;

// The text part of a Qwen3.5-4B config.json, nested as in the multimodal release (docs §1.1).
json qwen35_4b_config() {
  json text = {
      {"hidden_size", 2560}, {"intermediate_size", 9216}, {"num_hidden_layers", 32}, {"num_attention_heads", 16},
      {"num_key_value_heads", 4}, {"head_dim", 256}, {"attention_bias", false}, {"attn_output_gate", true},
      {"linear_num_key_heads", 16}, {"linear_num_value_heads", 32}, {"linear_key_head_dim", 128},
      {"linear_value_head_dim", 128}, {"linear_conv_kernel_dim", 4}, {"hidden_act", "silu"},
      {"rms_norm_eps", 1e-6}, {"vocab_size", 248320}, {"max_position_embeddings", 262144},
      {"mamba_ssm_dtype", "float32"}, {"mtp_num_hidden_layers", 1}, {"mtp_use_dedicated_embeddings", false},
      {"eos_token_id", 248044}, {"dtype", "bfloat16"}, {"model_type", "qwen3_5_text"},
      {"full_attention_interval", 4},
      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000}, {"partial_rotary_factor", 0.25},
                           {"mrope_section", {11, 11, 10}}, {"mrope_interleaved", true}}},
  };
  return {{"architectures", {"Qwen3_5ForConditionalGeneration"}}, {"model_type", "qwen3_5"},
          {"tie_word_embeddings", true}, {"image_token_id", 248056}, {"text_config", text},
          {"vision_config", {{"depth", 24}, {"hidden_size", 1024}}}};
}

std::string error_of(const json& document) {
  try {
    parse_config(document, "config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Config, ParsesTheNestedQwen35_4BConfig) {
  const Config config = parse_config(qwen35_4b_config(), "config.json");
  EXPECT_EQ(config.hidden_size, 2560u);
  EXPECT_EQ(config.num_hidden_layers, 32u);
  ASSERT_EQ(config.layer_types.size(), 32u);
  for (std::size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(config.layer_types[i], i % 4 == 3 ? LayerType::full_attention : LayerType::linear_attention) << i;
  }
  EXPECT_TRUE(config.tie_word_embeddings);  // from the outer config
  EXPECT_EQ(config.rope_theta, 1e7);
  EXPECT_EQ(config.rotary_dim(), 64u);
  EXPECT_EQ(config.linear_conv_dim(), 8192u);
  EXPECT_EQ(config.linear_value_dim(), 4096u);
  EXPECT_EQ(config.count_layers(LayerType::full_attention), 8u);
}

TEST(Config, ExplicitLayerTypesWinOverTheInterval) {
  json document = qwen35_4b_config()["text_config"];
  document["num_hidden_layers"] = 3;
  document["layer_types"] = {"full_attention", "linear_attention", "full_attention"};
  const Config config = parse_config(document, "config.json");
  EXPECT_EQ(config.layer_types,
            (std::vector{LayerType::full_attention, LayerType::linear_attention, LayerType::full_attention}));
  EXPECT_FALSE(config.tie_word_embeddings);  // flat config without the key: Hugging Face default
}

TEST(Config, RopeKeysMayBeTopLevelAndPartialRotaryDefaultsToAQuarter) {
  json document = qwen35_4b_config()["text_config"];
  document.erase("rope_parameters");
  document["rope_theta"] = 5000.0;
  Config config = parse_config(document, "config.json");
  EXPECT_EQ(config.rope_theta, 5000.0);
  EXPECT_EQ(config.partial_rotary_factor, 0.25);
  document["partial_rotary_factor"] = 0.5;
  document["rope_parameters"] = {{"rope_type", "default"}, {"partial_rotary_factor", 1.0}};
  config = parse_config(document, "config.json");
  EXPECT_EQ(config.partial_rotary_factor, 1.0);  // rope_parameters wins
}

TEST(Config, ErrorsNameTheKey) {
  json document = qwen35_4b_config();
  document["text_config"].erase("hidden_size");
  EXPECT_EQ(error_of(document), "config.json: missing key 'hidden_size'");

  document = qwen35_4b_config();
  document["text_config"]["linear_num_value_heads"] = 30;
  EXPECT_NE(error_of(document).find("linear_num_value_heads (30) must be a multiple of linear_num_key_heads"),
            std::string::npos);

  document = qwen35_4b_config();
  document["text_config"]["head_dim"] = "256";
  EXPECT_NE(error_of(document).find("'head_dim' must be an integer"), std::string::npos);

  document = qwen35_4b_config();
  document["text_config"]["rope_parameters"]["rope_type"] = "yarn";
  EXPECT_NE(error_of(document).find("only \"default\" rotary"), std::string::npos);

  document = qwen35_4b_config();
  document["text_config"]["layer_types"] = {"full_attention"};
  EXPECT_NE(error_of(document).find("'layer_types' must be a list of 32"), std::string::npos);

  document = qwen35_4b_config();
  document["text_config"]["hidden_act"] = "gelu";
  EXPECT_NE(error_of(document).find("'hidden_act'"), std::string::npos);

  document = qwen35_4b_config();
  document["text_config"]["rms_norm_eps"] = "tiny";
  EXPECT_NE(error_of(document).find("'rms_norm_eps' must be a finite number"), std::string::npos);

  document = qwen35_4b_config();
  document["text_config"]["vocab_size"] = -5;
  EXPECT_NE(error_of(document).find("'vocab_size'"), std::string::npos);

  document = qwen35_4b_config();
  document["text_config"].erase("rope_parameters");
  EXPECT_NE(error_of(document).find("missing key 'rope_theta'"), std::string::npos);

  EXPECT_NE(error_of(json::array()).find("must be a JSON object"), std::string::npos);
  EXPECT_THROW(parse_config_text("{not json", "config.json"), Error);
}

TEST(Config, LinearKeysAreOptionalWithoutLinearLayers) {
  json document = {{"hidden_size", 8}, {"intermediate_size", 8}, {"num_hidden_layers", 1}, {"vocab_size", 4},
                   {"layer_types", {"full_attention"}}, {"num_attention_heads", 2}, {"num_key_value_heads", 1},
                   {"head_dim", 8}, {"rope_theta", 100.0}};
  const Config config = parse_config(document, "config.json");
  EXPECT_EQ(config.linear_num_value_heads, 32u);
}

TEST(Config, JsonRoundTrip) {
  for (const Config& config : {tiny_test_config(), parse_config(qwen35_4b_config(), "config.json")}) {
    const json written = config_to_json(config);
    EXPECT_EQ(written["model_type"], "qwen3_5_text");
    EXPECT_EQ(written["architectures"], json::array({"Qwen3_5ForCausalLM"}));
    EXPECT_EQ(parse_config_text(written.dump(), "written"), config);
  }
}

TEST(Config, FingerprintFollowsTheShape) {
  Config a = tiny_test_config();
  Config b = a;
  b.rope_theta = 1.0;
  EXPECT_EQ(a.shape_fingerprint(), b.shape_fingerprint());  // not a shape
  b.linear_value_head_dim = 8;
  EXPECT_NE(a.shape_fingerprint(), b.shape_fingerprint());
}

}  // namespace
}  // namespace rvformer::engine
