// Tests of the merge on a synthetic base in the published layout (the "narrow" shape: the 4B's GDN,
// attention and MLP widths, hidden 64, with the Qwen3 tokenizer) and a small compiled machine placed
// after its 64 dimensions: the merged checkpoint loads, computes the base's text logits, runs trace
// tokens through its compiled layers as the machine compiled on its own does, numbers its tokenizer
// as the embedding, and bad inputs give one-line errors that leave nothing behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/checkpoint_chat.h"
#include "circuit/evaluator.h"
#include "compiler/toy_machine_testing.h"
#include "driver/compiled_machine.h"
#include "engine/checkpoint.h"
#include "engine/model.h"
#include "engine/ops.h"
#include "engine/synthetic_checkpoint.h"
#include "merge/merge.h"
#include "support/error.h"
#include "support/file.h"
#include "tokenizer/reference_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace rvformer::merge {
namespace {

namespace fs = std::filesystem;
using engine::TokenId;
using nlohmann::json;

constexpr std::size_t kBaseHidden = 64;
constexpr TokenId kTextTokens = 151643;  // the Qwen3 tokenizer's vocabulary entries

// The directories a test wrote, removed when it ends (checkpoints take tens of MB each).
std::vector<fs::path> written_directories;

fs::path fresh_directory(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) /
                       (std::string("merge_") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name);
  fs::remove_all(dir);
  written_directories.push_back(dir);
  return dir;
}

json read_json(const fs::path& path) { return json::parse(read_file_text(path)); }

// The Qwen3 tokenizer with Qwen3.5's pre-tokenizer pattern, and its tokenizer_config.json.
fs::path tokenizer_directory() {
  const fs::path dir = fresh_directory("tokenizer");
  fs::create_directories(dir);
  const fs::path source = tokenizer::testing::qwen3_tokenizer_json();
  write_file_atomic(dir / "tokenizer.json",
                    tokenizer::testing::with_split_pattern(read_file_text(source), tokenizer::testing::qwen35_pattern));
  fs::copy_file(source.parent_path() / "tokenizer_config.json", dir / "tokenizer_config.json");
  return dir;
}

fs::path synthetic_base(const std::string& shape, bool untied = false) {
  engine::SyntheticModel model = engine::synthetic_preset(shape);
  model.config.tie_word_embeddings = !untied;
  model.max_shard_bytes = 16'000'000;  // several shards
  const fs::path dir = fresh_directory(shape + (untied ? "_untied" : ""));
  engine::write_synthetic_checkpoint(dir, model, {.tokenizer_directory = tokenizer_directory()});
  return dir;
}

void no_progress(const std::string&) {}

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string missing = tokenizer::testing::missing_reference_package(); !missing.empty()) GTEST_SKIP() << missing;
  }
  void TearDown() override {
    for (const fs::path& dir : written_directories) fs::remove_all(dir);
    written_directories.clear();
  }

  fs::path machine_for(std::size_t base_hidden) {
    const fs::path dir = fresh_directory(fmt::format("machine_after_{}", base_hidden));
    driver::compile_circuit(toy.c, dir, no_progress, {.base_hidden = static_cast<int>(base_hidden)});
    return dir;
  }

  fs::path merged(const fs::path& base) {
    const fs::path dir = fresh_directory("merged_" + base.filename().string());
    merge_checkpoints(base, machine_for(kBaseHidden), dir, {.max_shard_bytes = 16'000'000});
    return dir;
  }

  compiler::toy::ToyMachine toy;
};

TEST_F(MergeTest, TheMergedCheckpointHasThePublishedLayoutAndLoads) {
  const fs::path base_dir = synthetic_base("narrow");
  const fs::path dir = merged(base_dir);
  const engine::Checkpoint base = engine::Checkpoint::open(base_dir);
  const engine::Checkpoint merged = engine::Checkpoint::open(dir);
  const MergeInfo info = read_merge_info(dir);
  const engine::Config& config = merged.config();
  const engine::Config toy_config = engine::Checkpoint::open(machine_for(0)).config();

  EXPECT_EQ(info.machine_layers, toy_config.num_hidden_layers);
  EXPECT_EQ(info.base_layers, 4u);
  EXPECT_EQ(info.machine_first_dim, kBaseHidden);
  EXPECT_EQ(config.hidden_size, kBaseHidden + info.machine_hidden);
  EXPECT_EQ(config.num_hidden_layers, info.machine_layers + 4);
  EXPECT_EQ(info.base_vocab, base.config().vocab_size);
  EXPECT_EQ(info.trace_tokens, toy.c.vocab_size());
  EXPECT_EQ(config.vocab_size, info.base_vocab + info.trace_tokens);
  for (std::size_t layer = 0; layer < config.num_hidden_layers; ++layer)
    EXPECT_EQ(config.layer_types[layer], layer < info.machine_layers ? engine::LayerType::linear_attention
                                                                      : base.config().layer_types[layer - info.machine_layers]);

  const json document = read_json(dir / "config.json");
  EXPECT_EQ(document["architectures"], read_json(base_dir / "config.json")["architectures"]);
  EXPECT_EQ(document["text_config"]["hidden_size"], config.hidden_size);
  EXPECT_EQ(document["text_config"]["mtp_num_hidden_layers"], 0);
  EXPECT_EQ(document["vision_config"]["out_hidden_size"], config.hidden_size);
  const json index = read_json(dir / "model.safetensors.index.json");
  std::set<std::string> shards;
  for (const auto& [name, file] : index["weight_map"].items()) {
    EXPECT_FALSE(name.starts_with("mtp.")) << name;
    shards.insert(file.get<std::string>());
  }
  EXPECT_GT(shards.size(), 1u);
  EXPECT_EQ(merged.other_tensors().size(), base.other_tensors().size() - 15) << "the vision tower stays, mtp goes";
  for (const char* file : {"generation_config.json", "chat_template.jinja"}) {
    if (fs::exists(base_dir / file)) {
      EXPECT_EQ(read_file_text(dir / file), read_file_text(base_dir / file)) << file;
    }
  }

  // A base tensor keeps its values in its first columns and is zero after them; a compiled one is
  // zero in the base's columns.
  const std::size_t L = info.machine_layers;
  const std::vector<float> original = base.tensor("layers.0.linear_attn.in_proj_qkv.weight").to_floats();
  const std::vector<float> padded = merged.tensor(fmt::format("layers.{}.linear_attn.in_proj_qkv.weight", L)).to_floats();
  const std::vector<float> compiled = merged.tensor("layers.0.linear_attn.in_proj_qkv.weight").to_floats();
  const std::size_t rows = original.size() / kBaseHidden, cols = config.hidden_size;
  ASSERT_EQ(padded.size(), rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      ASSERT_EQ(padded[r * cols + c], c < kBaseHidden ? original[r * kBaseHidden + c] : 0.0f) << r << ", " << c;
      if (c < kBaseHidden) {
        ASSERT_EQ(compiled[r * cols + c], 0.0f) << r << ", " << c;
      }
    }
  EXPECT_EQ(merged.tensor(fmt::format("layers.{}.linear_attn.A_log", L)).dtype, engine::DType::F32);
  EXPECT_EQ(merged.tensor("layers.0.mlp.down_proj.weight").dtype, engine::DType::BF16);
  EXPECT_EQ(merged.tensor("norm.weight").dtype, engine::DType::F32);
}

// Prompts of random text tokens, then greedy continuations, on the base and on the merged model:
// the same tokens, logits within fp32 rounding, every trace token scoring exactly 0.
void expect_same_text_behaviour(const fs::path& base_dir, const fs::path& merged_dir) {
  const engine::Model base = engine::Model::load(base_dir, {.threads = 1});
  const engine::Model merged = engine::Model::load(merged_dir, {.threads = 1});
  const std::size_t vocab = base.config().vocab_size;
  std::mt19937 random(11);
  float largest = 0, largest_logit = 0;
  for (int prompt = 0; prompt < 3; ++prompt) {
    std::vector<TokenId> tokens(5);
    for (TokenId& t : tokens) t = static_cast<TokenId>(random() % kTextTokens);
    engine::State base_state = base.new_state(), merged_state = merged.new_state();
    std::vector<float> expected = base.prefill(base_state, tokens);
    std::vector<float> got = merged.prefill(merged_state, tokens);
    for (int step = 0; step < 6; ++step) {
      ASSERT_EQ(got.size(), merged.config().vocab_size);
      for (std::size_t i = 0; i < vocab; ++i) {
        largest = std::max(largest, std::fabs(got[i] - expected[i]));
        largest_logit = std::max(largest_logit, std::fabs(expected[i]));
      }
      for (std::size_t i = vocab; i < got.size(); ++i) ASSERT_EQ(got[i], 0.0f) << "trace token " << i - vocab;
      const auto next = static_cast<TokenId>(engine::argmax(std::span(got).first(vocab)));
      ASSERT_EQ(next, engine::argmax(expected)) << "prompt " << prompt << " step " << step;
      expected = base.decode(base_state, next);
      got = merged.decode(merged_state, next);
    }
  }
  std::cout << "largest text-logit difference " << largest << " (largest |logit| " << largest_logit << ")\n";
  EXPECT_LT(largest, 1e-5f * std::max(1.0f, largest_logit));
}

TEST_F(MergeTest, TextTokensGiveTheBaseLogits) {
  const fs::path base = synthetic_base("narrow");
  expect_same_text_behaviour(base, merged(base));
}

TEST_F(MergeTest, AnUntiedBaseGetsTheTraceRowsInItsHeadToo) {
  const fs::path base = synthetic_base("narrow", /*untied=*/true);
  const fs::path dir = merged(base);
  const engine::Checkpoint merged_checkpoint = engine::Checkpoint::open(dir);
  EXPECT_FALSE(merged_checkpoint.config().tie_word_embeddings);
  expect_same_text_behaviour(base, dir);
}

// Computer mode: trace tokens through the compiled layers only, as the standalone machine runs
// them; the text after them goes on as if they had not been there (the base never sees them).
TEST_F(MergeTest, TraceTokensRunAsTheStandaloneMachineBetweenText) {
  const fs::path base_dir = synthetic_base("narrow");
  const fs::path dir = merged(base_dir);
  const MergeInfo info = read_merge_info(dir);
  const engine::Model merged = engine::Model::load(dir, {.threads = 1});
  const engine::Model standalone = engine::Model::load(machine_for(0), {.threads = 1});
  // `text_only` sees the same text without the trace in between.
  engine::State state = merged.new_state(), text_only = merged.new_state();
  engine::State machine_state = standalone.new_state();
  const auto trace = [&](std::uint32_t machine_token) { return static_cast<TokenId>(info.base_vocab + machine_token); };

  const std::vector<TokenId> prompt{9707, 11, 1879, 0};
  merged.prefill(state, prompt);
  merged.prefill(text_only, prompt);

  std::mt19937 random(5);
  circuit::Evaluator evaluator(toy.c);
  std::uint32_t token = toy.write(3, 5);
  int since_write = 0;
  for (int step = 0; step < 40; ++step) {
    const std::uint32_t expected = standalone.decode_argmax(machine_state, token);
    ASSERT_EQ(evaluator.step(token), expected);
    const std::vector<float> logits = merged.decode(state, trace(token), info.machine_layers);
    for (std::size_t i = 0; i < info.base_vocab; ++i) ASSERT_EQ(logits[i], 0.0f) << "text token " << i;
    ASSERT_EQ(engine::argmax(logits), trace(expected)) << "step " << step;
    since_write = token < 128 ? 0 : since_write + 1;  // WRITE tokens come first
    const int kind = since_write >= 2 ? 0 : static_cast<int>(random() % 3);
    if (kind == 0) token = toy.write(random() % 8, random() % 16);
    else if (kind == 1) token = toy.read(random() % 8);
    else token = expected;
  }

  // The base's layers never saw the trace, and the compiled layers stay silent on text: the text
  // goes on bit for bit as if there had been no trace.
  for (TokenId next : {TokenId{220}, TokenId{3555}, TokenId{42}})
    ASSERT_EQ(merged.decode(state, next), merged.decode(text_only, next)) << "token " << next;
}

TEST_F(MergeTest, TheTokenizerNumbersTraceTokensAsTheEmbedding) {
  const fs::path base_dir = synthetic_base("narrow");
  const fs::path dir = merged(base_dir);
  const MergeInfo info = read_merge_info(dir);
  const tokenizer::Tokenizer original = tokenizer::Tokenizer::load(base_dir);
  const tokenizer::Tokenizer tokens = tokenizer::Tokenizer::load(dir);
  EXPECT_EQ(info.first_reserved_token, original.id_limit());
  EXPECT_EQ(tokens.id_limit(), info.base_vocab + info.trace_tokens);
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, info.trace_tokens - 1}) {
    const auto id = static_cast<TokenId>(info.base_vocab + i);
    EXPECT_EQ(tokens.encode(trace_token_name(i)), std::vector<TokenId>{id});
    const std::vector<TokenId> ids{id};
    EXPECT_EQ(tokens.decode(ids), trace_token_name(i));
    EXPECT_EQ(tokens.decode(ids, /*skip_special_tokens=*/true), "");
    EXPECT_TRUE(tokens.is_special(id));
  }
  EXPECT_EQ(tokens.token_to_id(reserved_token_name(info.first_reserved_token)), info.first_reserved_token);
  EXPECT_EQ(tokens.token_to_id(reserved_token_name(info.base_vocab - 1)), info.base_vocab - 1);
  const std::string text = "Merged models speak as before: 2 + 2 = 4, 你好, ok\n";
  EXPECT_EQ(tokens.encode(text), original.encode(text));
  const json config = read_json(dir / "tokenizer_config.json");
  EXPECT_EQ(config["added_tokens_decoder"][std::to_string(info.base_vocab + info.trace_tokens - 1)]["content"],
            trace_token_name(info.trace_tokens - 1));
  EXPECT_EQ(config["chat_template"], read_json(base_dir / "tokenizer_config.json")["chat_template"]);
}

// A chat on the merged checkpoint samples only the base's ids: the trace tokens are the computer's.
TEST_F(MergeTest, ChatRepliesUseTheBaseVocabularyOnly) {
  const fs::path base_dir = synthetic_base("narrow");
  const fs::path dir = merged(base_dir);
  const chat::CheckpointChat base(base_dir, {.threads = 1});
  const chat::CheckpointChat merged_chat(dir, {.threads = 1});
  EXPECT_EQ(merged_chat.vocabulary_limit(), read_merge_info(dir).first_reserved_token);
  EXPECT_EQ(merged_chat.vocabulary_limit(), base.vocabulary_limit());
}

// Each bad input gives an rvformer::Error of one line and leaves no output behind.
void expect_refused(const fs::path& base, const fs::path& machine, const fs::path& output, const std::string& says) {
  try {
    merge_checkpoints(base, machine, output);
    ADD_FAILURE() << "merged " << base << " with " << machine;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(says), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(output) && !fs::is_empty(output)) << output;
}

TEST_F(MergeTest, BadBasesAndMachinesAreRefusedInOneLine) {
  const fs::path base = synthetic_base("narrow");
  const fs::path machine = machine_for(kBaseHidden);
  const fs::path output = fresh_directory("output");

  expect_refused(synthetic_base("tiny"), machine_for(32), output, "GDN");
  expect_refused(base, machine_for(0), output, "--base-hidden 64");
  expect_refused(base, machine_for(32), output, "--base-hidden 64");
  expect_refused(base, base, output, "not a compiled rvformer machine");
  expect_refused(fresh_directory("nowhere"), machine, output, "config.json");

  const fs::path broken = fresh_directory("broken");
  fs::copy(base, broken);
  write_file_atomic(broken / "model.safetensors.index.json", std::string("{\"weight_map\": 7}"));
  expect_refused(broken, machine, output, "weight_map");
  fs::remove_all(broken);
  fs::copy(base, broken);
  const std::string shard = read_json(base / "model.safetensors.index.json")["weight_map"].begin()->get<std::string>();
  fs::remove(broken / shard);
  expect_refused(broken, machine, output, shard);

  fs::create_directories(output);
  write_file_atomic(output / "keep", std::string("mine"));
  try {
    merge_checkpoints(base, machine, output);
    ADD_FAILURE() << "wrote into a non-empty directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not an empty directory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file_text(output / "keep"), "mine");
}

}  // namespace
}  // namespace rvformer::merge
