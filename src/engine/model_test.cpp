// engine/model_test.cpp — the decode API on a random tiny Qwen3.5-shaped model (linear×3 + full):
// prefill equals token-by-token decode bit for bit, save/load/resume equals an uninterrupted run,
// runs are deterministic, BF16 checkpoints equal F32 ones holding the same values, one, two and
// three threads give the same logits and States after every step, bad input is rejected before the
// state changes.
#include "engine/model.h"

#include <bit>
#include <filesystem>

#include <gtest/gtest.h>

#include "engine/bitwise_comparison.h"
#include "engine/ops.h"
#include "engine/random_model.h"
#include "support/error.h"

namespace rvformer::engine {
namespace {

namespace fs = std::filesystem;

const std::vector<TokenId> prompt{5, 17, 3, 99, 0, 42, 42, 7, 100, 64, 1, 2};

fs::path tiny_model_directory(const std::string& name, DType dtype, const Config& config = tiny_test_config()) {
  const fs::path directory = fs::path(::testing::TempDir()) / ("model_" + name);
  write_random_model(directory, config, 11, dtype);
  return directory;
}

void expect_bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(b[i])) << "index " << i;
  }
}

class ModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { model_ = new Model(Model::load(tiny_model_directory("f32", DType::F32))); }
  static void TearDownTestSuite() { delete model_; }
  static Model* model_;
};

Model* ModelTest::model_ = nullptr;

TEST_F(ModelTest, PrefillIsBitIdenticalToTokenByTokenDecode) {
  State stepped = model_->new_state();
  std::vector<float> last;
  for (TokenId token : prompt) last = model_->decode(stepped, token);
  State prefilled = model_->new_state();
  expect_bit_equal(model_->prefill(prefilled, prompt), last);
  EXPECT_EQ(prefilled, stepped);
  EXPECT_EQ(prefilled.position(), prompt.size());
}

TEST(ModelBatch, BatchedDecodeIsBitIdenticalToDecodingEachSequenceAlone) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    const Model model = Model::load(tiny_model_directory("batch_" + std::string(dtype_name(dtype)), dtype));
    // Ten sequences (more than one group of eight in the kernel), each a different prefix of the
    // prompt, so that their positions differ; then three batched steps against three lone ones.
    std::vector<State> batched, alone;
    for (std::size_t i = 0; i < 10; ++i) {
      batched.push_back(model.new_state());
      model.prefill(batched.back(), std::span(prompt).first(1 + i % prompt.size()));
      alone.push_back(batched.back());
    }
    std::vector<State*> states;
    for (State& state : batched) states.push_back(&state);
    for (TokenId step = 0; step < 3; ++step) {
      std::vector<TokenId> tokens;
      for (std::size_t i = 0; i < batched.size(); ++i) tokens.push_back(static_cast<TokenId>((7 * i + 13 * step) % 101));
      const std::vector<float> logits = model.decode_batch(states, tokens);
      const std::size_t vocab = model.config().vocab_size;
      ASSERT_EQ(logits.size(), batched.size() * vocab);
      for (std::size_t i = 0; i < batched.size(); ++i) {
        const std::vector<float> own = model.decode(alone[i], tokens[i]);
        expect_bit_equal(std::vector<float>(logits.begin() + i * vocab, logits.begin() + (i + 1) * vocab), own);
        EXPECT_EQ(batched[i], alone[i]) << dtype_name(dtype) << " sequence " << i << " step " << step;
      }
    }
  }
}

TEST_F(ModelTest, RunsAreDeterministicAndLogitsAreFinite) {
  State a = model_->new_state();
  State b = model_->new_state();
  for (TokenId token : prompt) {
    const auto logits = model_->decode(a, token);
    expect_bit_equal(logits, model_->decode(b, token));
    for (float value : logits) ASSERT_TRUE(std::isfinite(value));
  }
  EXPECT_EQ(a, b);
}

TEST_F(ModelTest, SaveLoadResumeEqualsAnUninterruptedRun) {
  const fs::path path = fs::path(::testing::TempDir()) / "resume.state";
  State uninterrupted = model_->new_state();
  State first_half = model_->new_state();
  for (std::size_t i = 0; i < 6; ++i) {
    model_->decode(uninterrupted, prompt[i]);
    model_->decode(first_half, prompt[i]);
  }
  first_half.save(path);
  State resumed = model_->new_state();
  resumed.load(path);
  EXPECT_EQ(resumed, first_half);
  for (std::size_t i = 6; i < prompt.size(); ++i) {
    expect_bit_equal(model_->decode(resumed, prompt[i]), model_->decode(uninterrupted, prompt[i]));
  }
  EXPECT_EQ(resumed, uninterrupted);
}

TEST_F(ModelTest, ArgmaxDecodeMatchesLogitsAndGreedyGenerationIsRepeatable) {
  State a = model_->new_state();
  State b = model_->new_state();
  TokenId token = 5;
  std::vector<TokenId> generated;
  for (int step = 0; step < 10; ++step) {
    const auto logits = model_->decode(a, token);
    const TokenId greedy = model_->decode_argmax(b, token);
    EXPECT_EQ(greedy, argmax(logits));
    generated.push_back(greedy);
    token = greedy;
  }
  State c = model_->new_state();
  token = 5;
  for (TokenId expected : generated) {
    token = model_->decode_argmax(c, token);
    EXPECT_EQ(token, expected);
  }
}

TEST_F(ModelTest, BadInputIsRejectedBeforeTheStateChanges) {
  State state = model_->new_state();
  model_->decode(state, 1);
  const State before = state;
  EXPECT_THROW(model_->decode(state, 101), Error);
  EXPECT_THROW(model_->prefill(state, std::vector<TokenId>{1, 2, 500}), Error);
  EXPECT_THROW(model_->prefill(state, std::vector<TokenId>{}), Error);
  EXPECT_EQ(state, before);
  Config other = tiny_test_config();
  other.hidden_size = 32;
  State foreign(other);
  EXPECT_THROW(model_->decode(foreign, 1), Error);
}

TEST_F(ModelTest, GatedDeltaNetStateIsReadable) {
  State state = model_->new_state();
  model_->prefill(state, prompt);
  const auto head = state.recurrent_head(0, 1);
  EXPECT_EQ(head.size(), 16u * 16u);
  bool any_non_zero = false;
  for (float value : head) any_non_zero = any_non_zero || value != 0.0f;
  EXPECT_TRUE(any_non_zero);
}

TEST(ModelDtypes, Bf16AndF16CheckpointsEqualF32CheckpointsOfTheSameValues) {
  const Config config = tiny_test_config();
  for (DType dtype : {DType::BF16, DType::F16}) {
    auto tensors = random_model_tensors(config, 11);
    const Model narrow = Model::load(tiny_model_directory(std::string(dtype_name(dtype)), dtype));
    for (auto& tensor : tensors) {
      for (float& value : tensor.values) {
        value = dtype == DType::BF16 ? bf16_to_float(float_to_bf16(value)) : f16_to_float(float_to_f16(value));
      }
    }
    const fs::path directory = fs::path(::testing::TempDir()) / "model_rounded_f32";
    write_checkpoint(directory, config, tensors_to_write(tensors, DType::F32));
    const Model wide = Model::load(directory);
    State a = narrow.new_state();
    State b = wide.new_state();
    expect_bit_equal(narrow.prefill(a, prompt), wide.prefill(b, prompt));
  }
}

// Every product split between threads (no size threshold), columns and rows that do not fill the
// kernels' 8×8 blocks (hidden 36, vocab 101), F32 weights packed into panels (the default) and read
// in place, BF16 weights read in place holding the same values.
TEST(ModelThreads, ThreadCountsAndStoragesGiveIdenticalLogitsAndStates) {
  Config config = tiny_test_config();
  config.hidden_size = 36;
  auto tensors = random_model_tensors(config, 13);
  for (auto& tensor : tensors) {
    for (float& value : tensor.values) value = bf16_to_float(float_to_bf16(value));
  }
  const fs::path f32 = fs::path(::testing::TempDir()) / "model_threads_f32";
  const fs::path bf16 = fs::path(::testing::TempDir()) / "model_threads_bf16";
  write_checkpoint(f32, config, tensors_to_write(tensors, DType::F32));
  write_checkpoint(bf16, config, tensors_to_write(tensors, DType::BF16));
  struct Variant {
    fs::path directory;
    std::size_t threads;
    bool f32_in_place;
  };
  std::vector<Model> models;
  for (const Variant& variant : {Variant{f32, 1, false}, Variant{f32, 2, false}, Variant{f32, 3, false},
                                 Variant{f32, 1, true}, Variant{f32, 2, true}, Variant{bf16, 1, false},
                                 Variant{bf16, 2, false}}) {
    models.push_back(Model::load(variant.directory, {.threads = variant.threads, .min_parallel_work = 0,
                                                     .f32_in_place = variant.f32_in_place}));
    EXPECT_EQ(models.back().threads(), variant.threads);
  }
  std::vector<State> states;
  for (const Model& model : models) states.push_back(model.new_state());
  for (std::size_t step = 0; step < 2 * prompt.size(); ++step) {
    const TokenId token = prompt[step % prompt.size()];
    const auto expected = models[0].decode(states[0], token);
    for (std::size_t m = 1; m < models.size(); ++m) {
      const auto difference = first_difference(models[m].decode(states[m], token), expected);
      ASSERT_FALSE(difference) << "model " << m << " step " << step << ": " << *difference;
      const auto state_difference = first_difference(states[m], states[0]);
      ASSERT_FALSE(state_difference) << "model " << m << " step " << step << ": " << *state_difference;
    }
  }
  EXPECT_EQ(Model::load(f32).threads(), Workers::available_cores());
}

TEST(ModelShapes, TiedFullAttentionFirstModelRuns) {
  Config config = tiny_test_config();
  config.tie_word_embeddings = true;
  config.layer_types = {LayerType::full_attention, LayerType::linear_attention, LayerType::full_attention,
                        LayerType::linear_attention};
  config.linear_conv_kernel_dim = 1;
  const Model model = Model::load(tiny_model_directory("tied", DType::F32, config));
  State stepped = model.new_state();
  std::vector<float> last;
  for (TokenId token : prompt) last = model.decode(stepped, token);
  State prefilled = model.new_state();
  expect_bit_equal(model.prefill(prefilled, prompt), last);
}

}  // namespace
}  // namespace rvformer::engine
