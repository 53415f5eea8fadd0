// engine/fast_model_test.cpp — the fast exact executor (fast_model.h) against the dense reference
// path (model.h): on random sparse Qwen3.5-shaped models (every decay kind, zero keys, −0 in the
// state, tied and untied heads, a full-attention layer), on random dense models, on adopted states
// and on models with non-finite values, the logits, greedy tokens and States must be bit-identical
// after every step. Also: each kernel variant against the baseline and fast_silu against silu.
#include "engine/fast_model.h"

#include <bit>
#include <cmath>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "engine/bitwise_comparison.h"
#include "engine/column_matrix.h"
#include "engine/fast_kernels.h"
#include "engine/fast_ops.h"
#include "engine/ops.h"
#include "engine/random_model.h"
#include "support/error.h"

namespace rvformer::engine {
namespace {

namespace fs = std::filesystem;

// Equal bits, every NaN counting as the same NaN (bitwise_comparison.h).
std::uint32_t comparable_bits(float value) { return std::isnan(value) ? 0x7fc00000u : std::bit_cast<std::uint32_t>(value); }

bool holds_negative_zero(const State& state) {
  for (std::size_t layer = 0; layer < state.config().num_hidden_layers; ++layer) {
    if (state.config().layer_types[layer] != LayerType::linear_attention) continue;
    for (float value : state.gated_delta_net(layer).recurrent) {
      if (std::bit_cast<std::uint32_t>(value) == 0x80000000u) return true;
    }
  }
  return false;
}

// Five GDN layers and one full-attention layer; value head h uses key head h / 2, so the four
// decay kinds of random_sparse_model_tensors (h mod 4) meet both zero and non-zero keys.
Config sparse_test_config(bool tied) {
  Config config;
  config.hidden_size = 128;
  config.intermediate_size = 192;
  config.vocab_size = 300;
  config.layer_types = {LayerType::linear_attention, LayerType::linear_attention, LayerType::full_attention,
                        LayerType::linear_attention, LayerType::linear_attention, LayerType::linear_attention};
  config.num_hidden_layers = config.layer_types.size();
  config.linear_num_key_heads = 4;
  config.linear_num_value_heads = 8;
  config.linear_key_head_dim = 32;
  config.linear_value_head_dim = 32;
  config.linear_conv_kernel_dim = 4;
  config.num_attention_heads = 4;
  config.num_key_value_heads = 2;
  config.head_dim = 32;
  config.rope_theta = 10000.0;
  config.partial_rotary_factor = 0.5;
  config.rms_norm_eps = 1e-6;
  config.tie_word_embeddings = tied;
  return config;
}

fs::path model_directory(const std::string& name) { return fs::path(::testing::TempDir()) / ("fast_model_" + name); }

// Feeds both paths the same tokens: mostly their own greedy token, every third one a random token.
// Compares logits (or greedy tokens) and states after every step. Returns the fast path's counters.
FastCounters expect_identical_runs(const fs::path& directory, std::size_t steps, bool compare_logits,
                                   bool* saw_negative_zero = nullptr) {
  const Model model = Model::load(directory);
  FastModel fast = FastModel::load(directory);
  State reference = model.new_state();
  FastState state = fast.new_state();
  std::mt19937 random(3);
  const auto vocab = static_cast<TokenId>(model.config().vocab_size);
  TokenId token = 1;
  for (std::size_t step = 0; step < steps; ++step) {
    if (step % 3 == 0) token = static_cast<TokenId>(random() % vocab);
    if (compare_logits) {
      const auto expected = model.decode(reference, token);
      EXPECT_EQ(first_difference(fast.decode(state, token), expected), std::nullopt) << "step " << step;
      token = static_cast<TokenId>(argmax(expected));
    } else {
      const TokenId expected = model.decode_argmax(reference, token);
      EXPECT_EQ(fast.decode_argmax(state, token), expected) << "step " << step;
      token = expected;
    }
    EXPECT_EQ(first_difference(state.state(), reference), std::nullopt) << "step " << step;
    if (saw_negative_zero != nullptr && holds_negative_zero(reference)) *saw_negative_zero = true;
    if (::testing::Test::HasFailure()) break;
  }
  return fast.counters();
}

TEST(FastModelTest, SparseModelsGiveBitIdenticalLogitsAndStates) {
  for (const bool tied : {true, false}) {
    const fs::path directory = model_directory(tied ? "sparse_tied" : "sparse_untied");
    write_random_sparse_model(directory, sparse_test_config(tied), tied ? 5 : 6);
    bool saw_negative_zero = false;
    const FastCounters counters = expect_identical_runs(directory, 300, true, &saw_negative_zero);
    // Every head path ran, and the state held −0 (from the switching decay) at some point.
    EXPECT_GT(counters.gated_delta_net.idle_heads, 0u);
    EXPECT_GT(counters.gated_delta_net.sparse_heads, 0u);
    EXPECT_GT(counters.gated_delta_net.reference_heads, 0u);
    EXPECT_TRUE(saw_negative_zero);
  }
}

TEST(FastModelTest, SparseModelsGiveTheSameGreedyTokens) {
  const fs::path directory = model_directory("sparse_argmax");
  write_random_sparse_model(directory, sparse_test_config(true), 7);
  expect_identical_runs(directory, 300, false);
}

TEST(FastModelTest, DenseModelsGiveBitIdenticalLogitsAndStates) {
  const fs::path directory = model_directory("dense");
  write_random_model(directory, tiny_test_config(), 8);
  expect_identical_runs(directory, 60, true);
  expect_identical_runs(directory, 60, false);
}

TEST(FastModelTest, AnAdoptedStateContinuesLikeTheReference) {
  const fs::path directory = model_directory("adopt");
  write_random_sparse_model(directory, sparse_test_config(true), 9);
  const Model model = Model::load(directory);
  FastModel fast = FastModel::load(directory);
  State reference = model.new_state();
  for (TokenId token : {5u, 17u, 3u, 99u, 0u, 42u, 42u}) model.decode(reference, token);
  FastState state = fast.adopt(reference);
  EXPECT_EQ(first_difference(state.state(), reference), std::nullopt);
  for (TokenId token : {7u, 100u, 64u, 1u, 2u, 250u, 7u}) {
    EXPECT_EQ(first_difference(fast.decode(state, token), model.decode(reference, token)), std::nullopt);
    EXPECT_EQ(first_difference(state.state(), reference), std::nullopt);
  }
}

// The memos belong to the model, not to a state: two interleaved runs on one FastModel, each fed a
// short repeating cycle of tokens (so that inputs recur), match two reference runs.
TEST(FastModelTest, MemosServeInterleavedStatesExactly) {
  const fs::path directory = model_directory("memo");
  write_random_sparse_model(directory, sparse_test_config(true), 13);
  const Model model = Model::load(directory);
  FastModel fast = FastModel::load(directory);
  State references[2] = {model.new_state(), model.new_state()};
  FastState states[2] = {fast.new_state(), fast.new_state()};
  const std::vector<TokenId> cycle{4, 8, 15, 16, 23, 42};
  for (std::size_t step = 0; step < 60; ++step) {
    for (std::size_t run = 0; run < 2; ++run) {
      const TokenId token = cycle[(step + 3 * run) % cycle.size()];
      EXPECT_EQ(first_difference(fast.decode(states[run], token), model.decode(references[run], token)), std::nullopt)
          << "step " << step << " run " << run;
      EXPECT_EQ(first_difference(states[run].state(), references[run]), std::nullopt) << "step " << step;
    }
  }
  EXPECT_GT(fast.counters().remembered_mlps, 0u);
  EXPECT_GT(fast.counters().gated_delta_net.remembered_heads, 0u) << fast.counters().gated_delta_net.computed_heads;
}

// Every GDN layer's query and key heads read the same input columns (one memo group per layer), each
// through its own rows, and convolve only the current token: one key recalls all of them, and
// heads that share a key but not their weights must still get their own outputs.
TEST(FastModelTest, KeyHeadsReadingTheSameColumnsShareOneMemoExactly) {
  const Config config = sparse_test_config(true);
  auto tensors = random_sparse_model_tensors(config, 14);
  const std::size_t key_head_dim = config.linear_key_head_dim;
  const std::size_t key_channels = 2 * config.linear_num_key_heads * key_head_dim;
  const std::size_t kernel = config.linear_conv_kernel_dim;
  for (OwnedTensor& tensor : tensors) {
    if (tensor.name.ends_with("in_proj_qkv.weight")) {
      std::fill_n(tensor.values.begin(), key_channels * config.hidden_size, 0.0f);
      for (std::size_t part = 0; part < key_channels / key_head_dim; ++part) {
        for (std::size_t col = 0; col < config.hidden_size; col += 5) {
          const std::size_t row = part * key_head_dim + (col * 7 + part) % key_head_dim;
          tensor.values[row * config.hidden_size + col] = 0.25f * static_cast<float>(1 + (part + col) % 3);
        }
      }
    } else if (tensor.name.ends_with("conv1d.weight")) {
      for (std::size_t channel = 0; channel < key_channels; ++channel) {
        std::fill_n(tensor.values.begin() + static_cast<std::ptrdiff_t>(channel * kernel), kernel - 1, 0.0f);
        tensor.values[channel * kernel + kernel - 1] = 1.0f;
      }
    }
  }
  const fs::path directory = model_directory("memo_groups");
  write_checkpoint(directory, config, tensors_to_write(tensors, DType::F32));
  const FastCounters counters = expect_identical_runs(directory, 150, true);
  EXPECT_GT(counters.gated_delta_net.remembered_heads, 0u);
  EXPECT_GT(counters.gated_delta_net.computed_heads, 0u);
}

// Layers whose norms share their weights, with mixers and MLPs that add nothing (no output weights):
// the next norm's output is the one already computed. Layer 3's post-attention norm has weights of
// its own, so it must be computed although its input is unchanged (its MLP reads it).
TEST(FastModelTest, ANormOfAnUnchangedInputWithEqualWeightsIsReusedExactly) {
  const Config config = sparse_test_config(true);
  auto tensors = random_sparse_model_tensors(config, 15);
  std::vector<float> shared;
  for (OwnedTensor& tensor : tensors) {
    const bool layer_norm = tensor.name.ends_with("layernorm.weight");
    if (layer_norm && shared.empty()) shared = tensor.values;
    if (layer_norm && tensor.name != "layers.3.post_attention_layernorm.weight") tensor.values = shared;
    for (const char* silent : {"layers.1.linear_attn.out_proj.weight", "layers.3.linear_attn.out_proj.weight",
                               "layers.4.mlp.down_proj.weight"}) {
      if (tensor.name == silent) std::fill(tensor.values.begin(), tensor.values.end(), 0.0f);
    }
  }
  const fs::path directory = model_directory("shared_norms");
  write_checkpoint(directory, config, tensors_to_write(tensors, DType::F32));
  const FastCounters counters = expect_identical_runs(directory, 100, true);
  // Per token at least layer 1's post-attention norm and layer 5's input norm.
  EXPECT_GE(counters.reused_norms, 2 * counters.tokens);
}

// Layer 1 holds no memory: no query or key weights, no `a` weights, α = 1 for every head and a conv
// over the current token only. Its mixer adds nothing without looking at a head, unless a head's
// state is not clean: an adopted state with a NaN in one head must give NaN read-outs as in the
// reference.
TEST(FastModelTest, ALayerWithoutKeysIsSkippedExactly) {
  const Config config = sparse_test_config(true);
  auto tensors = random_sparse_model_tensors(config, 16);
  const std::size_t key_channels = 2 * config.linear_num_key_heads * config.linear_key_head_dim;
  const std::size_t kernel = config.linear_conv_kernel_dim;
  for (OwnedTensor& tensor : tensors) {
    if (tensor.name == "layers.1.linear_attn.in_proj_qkv.weight") {
      std::fill_n(tensor.values.begin(), key_channels * config.hidden_size, 0.0f);
    } else if (tensor.name == "layers.1.linear_attn.in_proj_a.weight") {
      std::fill(tensor.values.begin(), tensor.values.end(), 0.0f);
    } else if (tensor.name == "layers.1.linear_attn.A_log") {
      std::fill(tensor.values.begin(), tensor.values.end(), -INFINITY);
    } else if (tensor.name == "layers.1.linear_attn.conv1d.weight") {
      for (std::size_t channel = 0; channel < tensor.shape[0]; ++channel) {
        std::fill_n(tensor.values.begin() + static_cast<std::ptrdiff_t>(channel * kernel), kernel - 1, 0.0f);
      }
    }
  }
  const fs::path directory = model_directory("silent_layer");
  write_checkpoint(directory, config, tensors_to_write(tensors, DType::F32));
  const FastCounters counters = expect_identical_runs(directory, 100, true);
  EXPECT_GT(counters.gated_delta_net.silent_layers, counters.tokens / 2);

  const Model model = Model::load(directory);
  FastModel fast = FastModel::load(directory);
  State reference = model.new_state();
  for (TokenId token : {5u, 17u, 3u}) model.decode(reference, token);
  // A NaN in value head 0 (it stays there, and every read-out of the head is NaN).
  reference.gated_delta_net(1).recurrent[40] = NAN;
  FastState state = fast.adopt(reference);
  for (TokenId token = 0; token < 12; ++token) {
    EXPECT_EQ(first_difference(fast.decode(state, 7 * token), model.decode(reference, 7 * token)), std::nullopt);
    EXPECT_EQ(first_difference(state.state(), reference), std::nullopt) << "step " << token;
  }
}

// Up rows of at most four weights (0 to 4 per row, one a −0) in every layer but the first: those
// MLPs compute up by rows, only for the neurons whose SiLU(gate) is not ±0, padding the shorter rows
// with +0 weights; the first layer's long rows still take the column product. Then with huge up
// weights in layer 4 on neurons that are off (gate +0), whose up overflows to ∞ (the reference's
// +0·∞ = NaN): that layer must take the column product.
TEST(FastModelTest, MlpsWithShortUpRowsComputeUpOnlyWhereNeededExactly) {
  const Config config = sparse_test_config(true);
  for (const bool huge_weight : {false, true}) {
    auto tensors = random_sparse_model_tensors(config, 17);
    for (OwnedTensor& tensor : tensors) {
      if (!tensor.name.ends_with("mlp.up_proj.weight") || tensor.name.starts_with("layers.0.")) continue;
      const std::size_t cols = tensor.shape[1];
      for (std::size_t row = 0; row < tensor.shape[0]; ++row) {
        const auto weights = std::span(tensor.values).subspan(row * cols, cols);
        std::size_t kept = 0;
        for (float& weight : weights) {
          if (weight != 0.0f && kept++ >= row % 5) weight = 0.0f;
        }
        // Column 3 where the random row had too few weights, so that most rows have some.
        if (kept < row % 5) weights[3] = 0.5f;
      }
      tensor.values[7 * cols + 11] = -0.0f;
      if (huge_weight && tensor.name.starts_with("layers.4.")) {
        for (std::size_t row = 0; row < tensor.shape[0]; row += 5) {
          for (std::size_t col : {3, 40, 77, 110}) tensor.values[row * cols + col] = 3e38f;
        }
      }
    }
    // Those neurons are off (gate +0), so SiLU(gate) is +0 where their up is ∞.
    for (OwnedTensor& tensor : tensors) {
      if (!huge_weight || tensor.name != "layers.4.mlp.gate_proj.weight") continue;
      const std::size_t cols = tensor.shape[1];
      for (std::size_t row = 0; row < tensor.shape[0]; row += 5) {
        std::fill_n(tensor.values.begin() + static_cast<std::ptrdiff_t>(row * cols), cols, 0.0f);
      }
    }
    const fs::path directory = model_directory("short_up_rows");
    write_checkpoint(directory, config, tensors_to_write(tensors, DType::F32));
    const FastCounters counters = expect_identical_runs(directory, 200, true);
    EXPECT_GT(counters.up_by_rows_mlps, 0u);
    EXPECT_LT(counters.up_by_rows_mlps, counters.tokens * config.num_hidden_layers - counters.remembered_mlps);
  }
}

// Like a compiled model's biases: every token embeds 1 at hidden entry 0, every gate row has a weight
// in column 0, and rows 96.. have no other weight (off alone for a positive input there, −400·x;
// on alone for a negative one). Those MLPs compute gate only where a neuron can be on
// (leading_column.h), which must leave the results bit-identical.
TEST(FastModelTest, GatesComputedOnlyWhereNeuronsCanBeOnGiveTheReferenceResults) {
  const Config config = sparse_test_config(true);
  auto tensors = random_sparse_model_tensors(config, 19);
  for (OwnedTensor& tensor : tensors) {
    const std::size_t cols = tensor.shape.size() == 2 ? tensor.shape[1] : 0;
    if (tensor.name == "embed_tokens.weight") {
      for (std::size_t row = 0; row < tensor.shape[0]; ++row) tensor.values[row * cols] = 1.0f;
    } else if (tensor.name.ends_with("post_attention_layernorm.weight")) {
      tensor.values[0] = 0.0f;
    } else if (tensor.name.ends_with("mlp.gate_proj.weight")) {
      for (std::size_t row = 0; row < tensor.shape[0]; ++row) {
        if (row >= 96) std::fill_n(tensor.values.begin() + static_cast<std::ptrdiff_t>(row * cols), cols, 0.0f);
        tensor.values[row * cols] = row % 4 == 0 && row < 96 ? 3.0f : -400.0f;
      }
    }
  }
  const fs::path directory = model_directory("leading_column");
  write_checkpoint(directory, config, tensors_to_write(tensors, DType::F32));
  const FastCounters counters = expect_identical_runs(directory, 200, true);
  EXPECT_GT(counters.leading_column_mlps, counters.tokens);
}

TEST(FastModelTest, BadInputIsRejectedBeforeTheStateChanges) {
  const fs::path directory = model_directory("bad_input");
  write_random_sparse_model(directory, sparse_test_config(true), 10);
  FastModel fast = FastModel::load(directory);
  FastState state = fast.new_state();
  EXPECT_THROW(fast.decode(state, 300), Error);
  EXPECT_EQ(state.position(), 0u);
  Config other = sparse_test_config(true);
  other.hidden_size = 64;
  EXPECT_THROW(fast.adopt(State(other)), Error);
}

// Columns whose block weights are all bfloat16 values keep their blocks in bfloat16; products over
// them equal the reference's sums (every column's term in column order, from +0) bit for bit.
TEST(ColumnMatrixTest, BfloatColumnsGiveTheReferenceProducts) {
  const std::size_t rows = 70, cols = 24;
  std::mt19937 random(5);
  std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
  std::vector<float> weights(rows * cols, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      if ((r * 7 + c * 3) % 5 == 0) continue;  // dense blocks, with a few zeros in them
      // Even columns: bfloat16 values; odd columns: full floats, except the rare one that is not.
      // (Built from the bits: GCC 12.2 at -O1 and above drops the mask from
      // `c % 2 == 0 ? bit_cast<float>(bit_cast<uint32_t>(value) & mask) : value`.)
      const std::uint32_t bits = std::bit_cast<std::uint32_t>(uniform(random));
      weights[r * cols + c] = std::bit_cast<float>(c % 2 == 0 ? bits & 0xffff0000u : bits);
    }
  }
  const ColumnMatrix matrix(rows, cols, weights);
  EXPECT_GT(matrix.bfloat16_blocks(), 0u);
  EXPECT_GT(matrix.float_blocks(), 0u);
  std::vector<float> x(cols, 0.0f);
  SparseVector nonzeros(cols);
  for (std::size_t c = 0; c < cols; c += 1 + c % 2) {
    x[c] = uniform(random);
    nonzeros.push(static_cast<std::uint32_t>(c), x[c]);
  }
  const auto expect_reference_product = [&] {
    BlockVector y(rows);
    matrix.multiply({x, nonzeros}, y);
    for (std::size_t r = 0; r < rows; ++r) {
      float expected = 0.0f;
      for (std::size_t c = 0; c < cols; ++c) expected += weights[r * cols + c] * x[c];
      EXPECT_EQ(std::bit_cast<std::uint32_t>(y.values()[r]), std::bit_cast<std::uint32_t>(expected)) << "row " << r;
    }
  };
  expect_reference_product();
  // An infinite input at a bfloat16 column reaches every row (its zero weights give NaN).
  x[2] = INFINITY;
  nonzeros.clear();
  for (std::size_t c = 0; c < cols; ++c) {
    if (x[c] != 0.0f) nonzeros.push(static_cast<std::uint32_t>(c), x[c]);
  }
  expect_reference_product();
}

// A column's record counts its dense blocks in 16 bits: a column of 65,535 full blocks loads, one of
// 65,536 is refused with a clear error instead of wrapping the count.
TEST(ColumnMatrixTest, AColumnTooLongForItsRecordIsRefused) {
  const std::size_t largest = 65'535 * block_lanes;
  const std::vector<float> ones(largest + block_lanes, 1.0f);
  const ColumnMatrix loaded(largest, 1, std::span(ones).first(largest));
  EXPECT_EQ(loaded.nonzero_count(), largest);
  try {
    ColumnMatrix(largest + block_lanes, 1, ones);
    ADD_FAILURE() << "a column of 65,536 blocks was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("too many weights"), std::string::npos) << error.what();
  }
}

// Layer 2's attention output (o_proj row 5 all 3e38) is huge or ∞ at hidden entry 5, which its MLP
// does not read (gate and up have no weight in column 5). Huge: the post-attention norm's scale is 0
// and the MLP input is ±0. ∞: the input is NaN at 5 and ±0 elsewhere, and the reference's gate and
// up are NaN in every row (+0·NaN). An MLP memo keyed by the columns the MLP reads would take the
// second input for the first.
TEST(FastModelTest, AnMlpInputNotFiniteOutsideTheColumnsItReadsIsNotRecalled) {
  const Config config = sparse_test_config(true);
  constexpr std::size_t unread = 5;
  auto tensors = random_sparse_model_tensors(config, 18);
  for (OwnedTensor& tensor : tensors) {
    const std::size_t cols = tensor.shape.size() == 2 ? tensor.shape[1] : 0;
    if (tensor.name == "layers.2.self_attn.o_proj.weight") {
      std::fill_n(tensor.values.begin() + static_cast<std::ptrdiff_t>(unread * cols), cols, 3e38f);
    } else if (tensor.name == "layers.2.mlp.gate_proj.weight" || tensor.name == "layers.2.mlp.up_proj.weight") {
      for (std::size_t row = 0; row < tensor.shape[0]; ++row) tensor.values[row * cols + unread] = 0.0f;
    }
  }
  const fs::path directory = model_directory("unread_non_finite");
  write_checkpoint(directory, config, tensors_to_write(tensors, DType::F32));
  // The overflow happens: tokens after it score NaN, those before it do not.
  const Model model = Model::load(directory);
  State reference = model.new_state();
  std::size_t nan_steps = 0;
  for (TokenId token = 0; token < 40; ++token) nan_steps += std::isnan(model.decode(reference, 7 * token).front());
  EXPECT_GT(nan_steps, 0u);
  EXPECT_LT(nan_steps, 40u);
  expect_identical_runs(directory, 200, true);
}

// An infinite weight makes NaNs that spread through the rest of the pass; a huge embedding value
// overflows a norm's sum of squares. NaNs must appear exactly where the reference has them.
TEST(FastModelTest, NonFiniteValuesAppearWhereTheReferenceHasThem) {
  const Config config = sparse_test_config(false);
  for (const std::string damaged : {"layers.5.mlp.down_proj.weight", "layers.3.linear_attn.in_proj_qkv.weight",
                                    "layers.1.linear_attn.in_proj_b.weight", "embed_tokens.weight"}) {
    auto tensors = random_sparse_model_tensors(config, 11);
    for (OwnedTensor& tensor : tensors) {
      if (tensor.name == damaged) tensor.values[tensor.values.size() / 2 + 7] = damaged == "embed_tokens.weight" ? 3e38f : INFINITY;
    }
    const fs::path directory = model_directory("non_finite");
    write_checkpoint(directory, config, tensors_to_write(tensors, DType::F32));
    const Model model = Model::load(directory);
    FastModel fast = FastModel::load(directory);
    State reference = model.new_state();
    FastState state = fast.new_state();
    const TokenId huge_token = static_cast<TokenId>((tensors.front().values.size() / 2 + 7) / config.hidden_size);
    for (TokenId token : {1u, huge_token, 2u, 3u, huge_token, 4u}) {
      EXPECT_EQ(first_difference(fast.decode(state, token), model.decode(reference, token)), std::nullopt) << damaged;
      EXPECT_EQ(first_difference(state.state(), reference), std::nullopt) << damaged;
    }
  }
}

TEST(FastSiluTest, FastSiluIsSiluBitForBit) {
  const SiluShortcuts& shortcuts = silu_shortcuts();
  std::vector<float> values{0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 3.4e38f, -3.4e38f};
  for (const float bound : {shortcuts.identity_from, -shortcuts.minus_zero_from}) {
    float below = bound;
    float above = bound;
    for (int step = 0; step < 1000; ++step) {
      below = std::nextafter(below, -INFINITY);
      above = std::nextafter(above, INFINITY);
      values.insert(values.end(), {below, above});
    }
  }
  for (std::uint64_t bits = 0; bits < (std::uint64_t{1} << 32); bits += 4099) values.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  for (float x : values) ASSERT_EQ(comparable_bits(fast_silu(x)), comparable_bits(silu(x))) << x;
}

// Every kernel variant this CPU runs computes what the baseline computes, bit for bit.
TEST(FastKernelsTest, EveryVariantMatchesTheBaseline) {
  const auto variants = kernel_variants();
  const FastKernels& baseline = *variants.back().kernels;
  std::mt19937 random(12);
  std::uniform_real_distribution<float> uniform(-200.0f, 200.0f);
  const std::size_t blocks = 64;
  std::vector<float> a(blocks * 16), b(blocks * 16), c(blocks * 16);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = i % 5 == 0 ? 0.0f : uniform(random);
    b[i] = i % 7 == 0 ? -0.0f : uniform(random);
    c[i] = uniform(random) / 100.0f;
  }
  a[33] = NAN;
  b[70] = INFINITY;
  std::vector<std::uint32_t> listed;
  for (std::uint32_t block = 0; block < blocks; block += 1 + block % 3) listed.push_back(block);
  for (const KernelVariant& variant : variants) {
    if (!variant.supported) continue;
    SCOPED_TRACE(variant.name);
    const FastKernels& kernels = *variant.kernels;
    const auto run_both = [&](auto&& kernel_call) {
      std::vector<float> expected(a.size(), 0.0f), got(a.size(), 0.0f);
      std::vector<std::uint32_t> expected_index(a.size()), got_index(a.size());
      std::vector<float> expected_value(a.size()), got_value(a.size());
      const auto expected_count = kernel_call(baseline, expected.data(), NonzeroSink{expected_index.data(), expected_value.data()});
      const auto got_count = kernel_call(kernels, got.data(), NonzeroSink{got_index.data(), got_value.data()});
      EXPECT_EQ(got_count, expected_count);
      EXPECT_EQ(first_difference(got, expected), std::nullopt);
      EXPECT_EQ(got_index, expected_index);
      EXPECT_EQ(first_difference(got_value, expected_value), std::nullopt);
    };
    const SiluShortcuts silu = silu_shortcuts();
    run_both([&](const FastKernels& k, float* out, NonzeroSink sink) {
      return k.silu_product(a.data(), c.data(), listed.data(), listed.size(), out, sink, silu);
    });
    run_both([&](const FastKernels& k, float* out, NonzeroSink sink) {
      return k.silu(a.data(), listed.data(), listed.size(), out, sink, silu);
    });
    run_both([&](const FastKernels& k, float*, NonzeroSink sink) { return k.gather(b.data(), listed.data(), listed.size(), sink); });
    run_both([&](const FastKernels& k, float* out, NonzeroSink sink) {
      const float* inputs[] = {a.data(), b.data(), c.data()};
      std::vector<std::uint32_t> block_taps(blocks);
      for (std::size_t block = 0; block < blocks; ++block) block_taps[block] = static_cast<std::uint32_t>(block % 8);
      const ConvolveResult result =
          k.convolve({listed.data(), listed.size(), inputs, c.data(), 0, block_taps.data(), 1, out, sink, silu});
      return result.nonzeros * 2 + result.finite;
    });
    // A column product: column 0 has dense blocks 0 and 2, column 1 block 1, columns 1 and 2 single
    // entries, column 3 bfloat16 blocks 3 and 0 (the upper halves of a's first 32 values).
    const ColumnRange ranges[] = {{0, 0, 32, 0, 2, 0}, {2, 0, 17, 0, 1, 1}, {3, 1, 2, 0, 0, 2}, {0, 3, 32, 1, 2, 0}};
    const std::uint32_t block_index[] = {0, 2, 1};
    const std::uint32_t bfloat16_index[] = {3, 0};
    std::vector<std::uint16_t> bfloat16_values(32);
    for (std::size_t i = 0; i < bfloat16_values.size(); ++i) {
      bfloat16_values[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(a[i]) >> 16);
    }
    const ColumnEntry entries[] = {{5, 0.75f}, {20, -3.5f}, {47, 1e-3f}};
    const ColumnStorage storage{1, ranges, {block_index, c.data()}, {bfloat16_index, bfloat16_values.data()}, entries};
    const std::uint32_t cols[] = {0, 1, 2, 3};
    const float factors[] = {1.5f, -2.25f, 3.0f, -0.625f};
    std::vector<float> expected(64, 0.0f), got(64, 0.0f);
    std::uint64_t expected_written = 0, got_written = 0;
    // The weight counts come from the ranges: 32 + 17 + 2 + 32.
    EXPECT_EQ(baseline.accumulate(storage, 0, cols, factors, nullptr, 4, expected.data(), &expected_written), 83u);
    EXPECT_EQ(kernels.accumulate(storage, 0, cols, factors, nullptr, 4, got.data(), &got_written), 83u);
    EXPECT_EQ(first_difference(got, expected), std::nullopt);
    EXPECT_EQ(got_written, expected_written);
    // The bfloat16 blocks widen exactly: row 48 + lane of block 3 got weight bfloat16(a[lane]).
    const float widened = std::bit_cast<float>(std::uint32_t{bfloat16_values[1]} << 16);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(expected[49]), std::bit_cast<std::uint32_t>(0.0f + widened * -0.625f));
    // The argmax scan over written blocks (the last block only partly inside the rows).
    for (const std::size_t rows : {blocks * 16, blocks * 16 - 5}) {
      std::vector<float> scores_expected = b, scores_got = b;
      std::vector<std::uint64_t> written_expected{0x8000f0f0f0f0f0f1ull}, written_got = written_expected;
      const BlockArgmax want = baseline.argmax_written(scores_expected.data(), written_expected.data(), 1, rows);
      const BlockArgmax have = kernels.argmax_written(scores_got.data(), written_got.data(), 1, rows);
      EXPECT_EQ(have.found, want.found);
      EXPECT_EQ(have.is_nan, want.is_nan);
      EXPECT_EQ(have.row, want.row);
      EXPECT_EQ(first_difference(scores_got, scores_expected), std::nullopt);
      EXPECT_EQ(written_got, written_expected);
    }
  }
}

// The delta rule's kernels on every variant against the plain scalar formulas, with rows of 37 lanes
// (two whole blocks and a scalar tail), −0 in the factors and rows, a δ that overflows (nothing is
// written) and a write that overflows a row.
TEST(FastKernelsTest, DeltaRuleKernelsFollowTheScalarFormulas) {
  constexpr std::size_t dim = 37;
  constexpr std::size_t row_count = 6;
  std::mt19937 random(5);
  std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
  std::vector<float> rows(row_count * dim), value(dim);
  for (float& v : rows) v = uniform(random);
  for (float& v : value) v = uniform(random);
  rows[2 * dim + 5] = -0.0f;
  const std::uint32_t indices[] = {4, 0, 2};
  const float factors[] = {0.5f, -0.0f, -1.75f};
  const auto scalar_sum = [&](const std::vector<float>& state) {
    std::vector<float> out(dim);
    for (std::size_t i = 0; i < dim; ++i) {
      float sum = 0.0f;
      for (std::size_t k = 0; k < 3; ++k) sum += state[indices[k] * dim + i] * factors[k];
      out[i] = sum;
    }
    return out;
  };
  for (const KernelVariant& variant : kernel_variants()) {
    if (!variant.supported) continue;
    SCOPED_TRACE(variant.name);
    const FastKernels& kernels = *variant.kernels;
    std::vector<float> out(dim, 7.0f);
    kernels.sum_scaled_rows(rows.data(), dim, indices, factors, 3, out.data());
    EXPECT_EQ(first_difference(out, scalar_sum(rows)), std::nullopt);

    // β, a lane set to 1e38 (or none), and what the write must report: written and finite; written
    // and a row overflowed (that lane's δ is 2e38 and row 2 gets −1.75 of it); δ overflowed and nothing
    // was written. Lane 0 lies in a whole block, lane 36 in the scalar tail.
    struct Case {
      float beta;
      std::size_t big_lane;
      bool delta_finite, rows_finite;
    };
    for (const Case& test : {Case{0.75f, dim, true, true}, Case{2.0f, 0, true, false}, Case{2.0f, 36, true, false},
                             Case{4.0f, 0, false, false}, Case{4.0f, 36, false, false}}) {
      SCOPED_TRACE(testing::Message() << "beta " << test.beta << ", lane " << test.big_lane);
      std::vector<float> state = rows, expected_state = rows, input = value;
      if (test.big_lane < dim) input[test.big_lane] = 1e38f;
      const std::vector<float> recall = scalar_sum(state);
      std::vector<float> delta(dim), expected_delta(dim);
      for (std::size_t i = 0; i < dim; ++i) expected_delta[i] = (input[i] - recall[i]) * test.beta;
      for (std::size_t k = 0; test.delta_finite && k < 3; ++k) {
        for (std::size_t i = 0; i < dim; ++i) expected_state[indices[k] * dim + i] += factors[k] * expected_delta[i];
      }
      const DeltaRuleWrite write = kernels.delta_rule_write(state.data(), dim, indices, factors, 3, input.data(),
                                                            recall.data(), test.beta, delta.data());
      EXPECT_EQ(write.delta_finite, test.delta_finite);
      if (test.delta_finite) {
        EXPECT_EQ(write.rows_finite, test.rows_finite);
      }
      EXPECT_EQ(first_difference(delta, expected_delta), std::nullopt);
      EXPECT_EQ(first_difference(state, expected_state), std::nullopt);
    }
  }
}

}  // namespace
}  // namespace rvformer::engine
