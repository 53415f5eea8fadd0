// engine/layer_range_test.cpp — decoding through a prefix of the layers (the merged model's computer
// mode), in the dense and the fast path. Tokens run through layers [0, N) only ("prefix runs") are
// interleaved with tokens run through every layer ("full runs"), and:
// * layers below N see every token: prefix-run logits and their states equal those of a model made
//   of the first N layers alone, fed every token;
// * layers from N on see only the full-run tokens (their attention positions count those alone):
//   with the first N layers made silent (no output), full-run logits and the states of the other
//   layers equal those of a model made of layers N.. alone, fed only the full-run tokens;
// * a prefix run leaves every later layer's state and position untouched;
// * the fast path equals the dense path after every step; states with per-layer positions save,
//   load and resume exactly; version 1 state files still load; bad layer counts are rejected.
#include <cstring>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "engine/bitwise_comparison.h"
#include "engine/crc32.h"
#include "engine/fast_model.h"
#include "engine/model.h"
#include "engine/random_model.h"
#include "support/error.h"

namespace rvformer::engine {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t prefix_layers = 2;

// linear, full | linear, linear, full: attention on both sides of the prefix boundary.
Config range_config() {
  Config config = tiny_test_config();
  config.layer_types = {LayerType::linear_attention, LayerType::full_attention, LayerType::linear_attention,
                        LayerType::linear_attention, LayerType::full_attention};
  config.num_hidden_layers = config.layer_types.size();
  return config;
}

// The steps of a run: true for a full run, false for a prefix run.
std::vector<bool> schedule() {
  return {true, true, false, false, false, true, false, true, true, false, false, true, false, false, true, true};
}

std::vector<TokenId> tokens(std::size_t count, std::size_t vocab) {
  std::mt19937 random(5);
  std::vector<TokenId> result;
  for (std::size_t i = 0; i < count; ++i) result.push_back(static_cast<TokenId>(random() % vocab));
  return result;
}

fs::path directory(const std::string& name) { return fs::path(::testing::TempDir()) / ("layer_range_" + name); }

// Layers [first, end) of `tensors` (a model of `config`) as a model of their own, renumbered from 0.
fs::path write_layers(const std::string& name, const Config& config, const std::vector<OwnedTensor>& tensors,
                      std::size_t first, std::size_t end) {
  Config part = config;
  part.layer_types.assign(config.layer_types.begin() + static_cast<std::ptrdiff_t>(first),
                          config.layer_types.begin() + static_cast<std::ptrdiff_t>(end));
  part.num_hidden_layers = end - first;
  std::vector<OwnedTensor> kept;
  for (const OwnedTensor& tensor : tensors) {
    if (!tensor.name.starts_with("layers.")) {
      kept.push_back(tensor);
      continue;
    }
    const std::size_t dot = tensor.name.find('.', 7);
    const std::size_t layer = std::stoul(tensor.name.substr(7, dot - 7));
    if (layer < first || layer >= end) continue;
    kept.push_back(tensor);
    kept.back().name = "layers." + std::to_string(layer - first) + tensor.name.substr(dot);
  }
  write_checkpoint(directory(name), part, tensors_to_write(kept, DType::F32));
  return directory(name);
}

// The states of layers [first, end) of `whole` equal those of layers [0, end − first) of `part`.
void expect_layers_equal(const State& whole, std::size_t first, std::size_t end, const State& part,
                         const std::string& what) {
  const Config& config = whole.config();
  for (std::size_t layer = first; layer < end; ++layer) {
    const std::size_t other = layer - first;
    ASSERT_EQ(whole.layer_position(layer), part.layer_position(other)) << what << " layer " << layer;
    if (config.layer_types[layer] == LayerType::linear_attention) {
      const auto& a = whole.gated_delta_net(layer);
      const auto& b = part.gated_delta_net(other);
      ASSERT_FALSE(first_difference(a.conv, b.conv)) << what << " conv of layer " << layer;
      ASSERT_FALSE(first_difference(a.recurrent, b.recurrent)) << what << " recurrent state of layer " << layer;
    } else {
      const auto& a = whole.attention(layer);
      const auto& b = part.attention(other);
      ASSERT_FALSE(first_difference(a.keys, b.keys)) << what << " keys of layer " << layer;
      ASSERT_FALSE(first_difference(a.values, b.values)) << what << " values of layer " << layer;
    }
  }
}

void expect_same_logits(const std::vector<float>& actual, const std::vector<float>& expected, const std::string& what) {
  const auto difference = first_difference(actual, expected);
  ASSERT_FALSE(difference) << what << ": " << *difference;
}

TEST(LayerRange, LayersBelowThePrefixSeeEveryToken) {
  const Config config = range_config();
  const auto tensors = random_model_tensors(config, 31);
  write_checkpoint(directory("front_whole"), config, tensors_to_write(tensors, DType::F32));
  const Model whole = Model::load(directory("front_whole"));
  const Model front = Model::load(write_layers("front", config, tensors, 0, prefix_layers));
  State state = whole.new_state();
  State front_state = front.new_state();
  const auto steps = schedule();
  const auto fed = tokens(steps.size(), config.vocab_size);
  for (std::size_t step = 0; step < steps.size(); ++step) {
    const std::string what = "step " + std::to_string(step);
    const auto expected = front.decode(front_state, fed[step]);
    if (steps[step]) {
      whole.decode(state, fed[step]);
    } else {
      expect_same_logits(whole.decode(state, fed[step], prefix_layers), expected, what);
    }
    expect_layers_equal(state, 0, prefix_layers, front_state, what);
  }
}

// Layers below the prefix with no output (o_proj, out_proj and down_proj zero): the rest of the
// model then receives each token's embedding as a model of its own layers would.
std::vector<OwnedTensor> silent_front(const Config& config, std::uint64_t seed) {
  auto tensors = random_model_tensors(config, seed);
  for (OwnedTensor& tensor : tensors) {
    for (std::size_t layer = 0; layer < prefix_layers; ++layer) {
      const std::string prefix = "layers." + std::to_string(layer) + ".";
      if (tensor.name.starts_with(prefix) &&
          (tensor.name.ends_with("o_proj.weight") || tensor.name.ends_with("out_proj.weight") ||
           tensor.name.ends_with("down_proj.weight"))) {
        std::fill(tensor.values.begin(), tensor.values.end(), 0.0f);
      }
    }
  }
  return tensors;
}

TEST(LayerRange, LayersFromThePrefixOnSeeOnlyTheFullRunTokens) {
  const Config config = range_config();
  const auto tensors = silent_front(config, 37);
  write_checkpoint(directory("back_whole"), config, tensors_to_write(tensors, DType::F32));
  const Model whole = Model::load(directory("back_whole"));
  const Model back = Model::load(write_layers("back", config, tensors, prefix_layers, config.num_hidden_layers));
  State state = whole.new_state();
  State back_state = back.new_state();
  const auto steps = schedule();
  const auto fed = tokens(steps.size(), config.vocab_size);
  for (std::size_t step = 0; step < steps.size(); ++step) {
    const std::string what = "step " + std::to_string(step);
    if (steps[step]) {
      expect_same_logits(whole.decode(state, fed[step]), back.decode(back_state, fed[step]), what);
    } else {
      whole.decode(state, fed[step], prefix_layers);
    }
    expect_layers_equal(state, prefix_layers, config.num_hidden_layers, back_state, what);
  }
  EXPECT_EQ(state.position(), steps.size());
  EXPECT_EQ(state.layer_position(prefix_layers), back_state.position());
}

TEST(LayerRange, APrefixRunLeavesTheLaterLayersUntouched) {
  const Config config = range_config();
  write_random_model(directory("untouched"), config, 41);
  const Model model = Model::load(directory("untouched"));
  State state = model.new_state();
  model.prefill(state, std::vector<TokenId>{3, 1, 4});
  for (std::size_t layer_count = 1; layer_count < config.num_hidden_layers; ++layer_count) {
    const State before = state;
    model.decode_argmax(state, 9, layer_count);
    for (std::size_t layer = 0; layer < config.num_hidden_layers; ++layer) {
      EXPECT_EQ(state.layer_position(layer), before.layer_position(layer) + (layer < layer_count ? 1 : 0));
    }
    // Layers from layer_count on: bit for bit as before.
    for (std::size_t layer = layer_count; layer < config.num_hidden_layers; ++layer) {
      if (config.layer_types[layer] == LayerType::linear_attention) {
        ASSERT_FALSE(first_difference(state.gated_delta_net(layer).conv, before.gated_delta_net(layer).conv));
        ASSERT_FALSE(first_difference(state.gated_delta_net(layer).recurrent, before.gated_delta_net(layer).recurrent));
      } else {
        ASSERT_FALSE(first_difference(state.attention(layer).keys, before.attention(layer).keys));
        ASSERT_FALSE(first_difference(state.attention(layer).values, before.attention(layer).values));
      }
    }
  }
}

TEST(LayerRange, BadLayerCountsAreRejectedBeforeTheStateChanges) {
  const Config config = range_config();
  write_random_model(directory("bad"), config, 43);
  const Model model = Model::load(directory("bad"));
  FastModel fast = FastModel::load(directory("bad"));
  State state = model.new_state();
  model.decode(state, 1, 2);
  const State before = state;
  for (std::size_t layer_count : {std::size_t{0}, config.num_hidden_layers + 1}) {
    EXPECT_THROW(model.decode(state, 1, layer_count), Error);
    EXPECT_THROW(model.prefill(state, std::vector<TokenId>{1, 2}, layer_count), Error);
  }
  EXPECT_EQ(state, before);
  FastState fast_state = fast.adopt(state);
  EXPECT_THROW(fast.decode(fast_state, 1, 0), Error);
  EXPECT_THROW(fast.decode_argmax(fast_state, 1, config.num_hidden_layers + 1), Error);
  EXPECT_EQ(fast_state.state(), before);
}

// The fast path on interleaved runs (several prefix lengths), against the dense path.
void expect_fast_equals_dense(const fs::path& model_directory) {
  const Model model = Model::load(model_directory);
  FastModel fast = FastModel::load(model_directory);
  const Config& config = model.config();
  State reference = model.new_state();
  FastState state = fast.new_state();
  std::mt19937 random(7);
  for (std::size_t step = 0; step < 40; ++step) {
    const auto token = static_cast<TokenId>(random() % config.vocab_size);
    const std::size_t layer_count = step % 3 == 0 ? config.num_hidden_layers : 1 + random() % config.num_hidden_layers;
    const std::string what = "step " + std::to_string(step) + " through " + std::to_string(layer_count) + " layers";
    if (step % 2 == 0) {
      expect_same_logits(fast.decode(state, token, layer_count), model.decode(reference, token, layer_count), what);
    } else {
      ASSERT_EQ(fast.decode_argmax(state, token, layer_count), model.decode_argmax(reference, token, layer_count)) << what;
    }
    const auto difference = first_difference(state.state(), reference);
    ASSERT_FALSE(difference) << what << ": " << *difference;
  }
}

TEST(LayerRange, TheFastPathEqualsTheDensePath) {
  const Config config = range_config();
  write_random_model(directory("fast_dense"), config, 47);
  expect_fast_equals_dense(directory("fast_dense"));
  write_random_sparse_model(directory("fast_sparse"), config, 53);
  expect_fast_equals_dense(directory("fast_sparse"));
}

TEST(LayerRange, StatesWithPerLayerPositionsSaveLoadAndResumeExactly) {
  const Config config = range_config();
  write_random_model(directory("resume"), config, 59);
  const Model model = Model::load(directory("resume"));
  State uninterrupted = model.new_state();
  const auto steps = schedule();
  const auto fed = tokens(steps.size(), config.vocab_size);
  const auto run = [&](State& state, std::size_t step) {
    return model.decode(state, fed[step], steps[step] ? config.num_hidden_layers : prefix_layers);
  };
  for (std::size_t step = 0; step < 7; ++step) run(uninterrupted, step);
  const fs::path path = directory("resume.state");
  uninterrupted.save(path);
  State resumed = model.new_state();
  resumed.load(path);
  EXPECT_EQ(resumed, uninterrupted);
  EXPECT_NE(resumed.layer_position(0), resumed.layer_position(config.num_hidden_layers - 1));
  for (std::size_t step = 7; step < steps.size(); ++step) {
    expect_same_logits(run(resumed, step), run(uninterrupted, step), "step " + std::to_string(step));
  }
  EXPECT_EQ(resumed, uninterrupted);
}

// A version 1 file (no per-layer counts: every layer saw every token) of a state made by full runs.
std::vector<std::uint8_t> version_one_image(const State& state) {
  std::vector<std::uint8_t> bytes = state.serialize();
  const std::size_t counts = state.config().num_hidden_layers * sizeof(std::uint64_t);
  bytes.erase(bytes.begin() + 40, bytes.begin() + 40 + static_cast<std::ptrdiff_t>(counts));
  const std::uint32_t version = 1;
  std::memcpy(bytes.data() + 8, &version, sizeof version);
  const std::uint64_t payload = bytes.size() - 40;
  std::memcpy(bytes.data() + 32, &payload, sizeof payload);
  const std::uint32_t crc = crc32(std::span(bytes).subspan(16));
  std::memcpy(bytes.data() + 12, &crc, sizeof crc);
  return bytes;
}

TEST(LayerRange, VersionOneStateFilesStillLoad) {
  const Config config = range_config();
  write_random_model(directory("v1"), config, 61);
  const Model model = Model::load(directory("v1"));
  State state = model.new_state();
  model.prefill(state, std::vector<TokenId>{8, 6, 7, 5});
  const State loaded = State::deserialize(config, version_one_image(state), "v1.state");
  EXPECT_EQ(loaded, state);
  EXPECT_EQ(loaded.layer_position(config.num_hidden_layers - 1), 4u);
}

TEST(LayerRange, StateFilesWithImpossibleLayerCountsAreRejected) {
  const Config config = range_config();
  State state(config);
  state.advance(prefix_layers);
  std::vector<std::uint8_t> bytes = state.serialize();
  // Layer 3 claims a token that layer 2 never saw.
  const std::uint64_t count = 1;
  std::memcpy(bytes.data() + 40 + 3 * 8, &count, sizeof count);
  const std::uint32_t crc = crc32(std::span(bytes).subspan(16));
  std::memcpy(bytes.data() + 12, &crc, sizeof crc);
  try {
    State::deserialize(config, bytes, "bad.state");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 3 has seen more tokens"), std::string::npos) << e.what();
  }
}

TEST(LayerRange, AFastModelOfTheFirstLayersEqualsTheDensePathThroughThem) {
  const Config config = range_config();
  write_random_sparse_model(directory("prefix_loaded"), config, 59);
  const Model model = Model::load(directory("prefix_loaded"));
  const std::size_t loaded = config.num_hidden_layers - 1;
  FastModel fast = FastModel::load(directory("prefix_loaded"), {.layers = loaded});
  ASSERT_EQ(fast.loaded_layers(), loaded);
  State reference = model.new_state();
  FastState state = fast.new_state();
  std::mt19937 random(11);
  for (std::size_t step = 0; step < 30; ++step) {
    const auto token = static_cast<TokenId>(random() % config.vocab_size);
    const std::string what = "step " + std::to_string(step);
    if (step % 2 == 0) {
      expect_same_logits(fast.decode(state, token), model.decode(reference, token, loaded), what);
    } else {
      ASSERT_EQ(fast.decode_argmax(state, token), model.decode_argmax(reference, token, loaded)) << what;
    }
  }
  EXPECT_FALSE(first_difference(state.state(), reference));
  const std::vector<TokenId> prompt = tokens(7, config.vocab_size);
  expect_same_logits(fast.prefill(state, prompt), model.prefill(reference, prompt, loaded), "prefill");
  EXPECT_FALSE(first_difference(state.state(), reference));
  const State before = state.state();
  EXPECT_THROW(fast.decode(state, 1, config.num_hidden_layers), Error);
  EXPECT_THROW(fast.prefill(state, std::vector<TokenId>{1, static_cast<TokenId>(config.vocab_size)}), Error);
  EXPECT_EQ(state.state(), before);
  EXPECT_EQ(state.state(), before);
  const FastModelOptions too_many{.layers = config.num_hidden_layers + 1};
  EXPECT_THROW(FastModel::load(directory("prefix_loaded"), too_many), Error);
}

// A model split in two halves of the residual, as a merged checkpoint is: tokens [0, half) live in
// the first half of the columns, tokens [half, vocab) in the second, and every layer's output
// projection writes the second half only. Fed the second half's tokens alone, the fast model whose
// head holds only the columns they can reach gives the dense path's logits, tokens and state.
TEST(LayerRange, AFastModelFedSomeTokensOnlyHoldsTheHeadColumnsTheyReach) {
  const Config config = range_config();
  std::vector<OwnedTensor> tensors = random_model_tensors(config, 61);
  const std::size_t hidden = config.hidden_size, half_vocab = config.vocab_size / 2;
  for (OwnedTensor& tensor : tensors) {
    const bool output = tensor.name.ends_with("down_proj.weight") || tensor.name.ends_with("out_proj.weight") ||
                        tensor.name.ends_with("o_proj.weight");
    const std::size_t cols = tensor.values.size() / tensor.shape[0];
    for (std::size_t row = 0; row < tensor.shape[0]; ++row) {
      for (std::size_t col = 0; col < cols; ++col) {
        float& value = tensor.values[row * cols + col];
        if (output && row < hidden / 2) value = 0.0f;
        if (tensor.name == "embed_tokens.weight" && (row < half_vocab) != (col < hidden / 2)) value = 0.0f;
      }
    }
  }
  write_checkpoint(directory("fed_half"), config, tensors_to_write(tensors, DType::F32));
  const Model model = Model::load(directory("fed_half"));
  FastModel fast = FastModel::load(directory("fed_half"), {.first_fed_token = static_cast<TokenId>(half_vocab),
                                                           .fed_token_count = config.vocab_size - half_vocab});
  FastModel whole = FastModel::load(directory("fed_half"));
  EXPECT_LT(fast.weight_count(), whole.weight_count()) << "the head kept the columns the tokens never reach";
  State reference = model.new_state();
  FastState state = fast.new_state();
  std::mt19937 random(13);
  for (std::size_t step = 0; step < 30; ++step) {
    const auto token = static_cast<TokenId>(half_vocab + random() % (config.vocab_size - half_vocab));
    const std::string what = "step " + std::to_string(step);
    if (step % 2 == 0) {
      expect_same_logits(fast.decode(state, token), model.decode(reference, token), what);
    } else {
      ASSERT_EQ(fast.decode_argmax(state, token), model.decode_argmax(reference, token)) << what;
    }
  }
  EXPECT_FALSE(first_difference(state.state(), reference));
  const State before = state.state();
  EXPECT_THROW(fast.decode(state, 1), Error);
  EXPECT_EQ(state.state(), before);
}

}  // namespace
}  // namespace rvformer::engine
