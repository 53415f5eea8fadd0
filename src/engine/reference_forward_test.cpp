// engine/reference_forward_test.cpp — the whole forward pass against a second implementation written
// here from docs/qwen35-forward.md in plain loops over the checkpoint tensors (nothing shared with
// the engine but the random weights). Both follow the engine's documented operation order, so the
// logits must agree bit for bit at every position.
#include <bit>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model.h"
#include "engine/random_model.h"

namespace rvformer::engine {
namespace {

using Vec = std::vector<float>;

float plain_sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

class PlainQwen35 {
 public:
  PlainQwen35(const Config& config, const std::vector<OwnedTensor>& tensors) : c_(config) {
    for (const auto& tensor : tensors) weights_[tensor.name] = &tensor;
    history_.resize(c_.num_hidden_layers);
    memory_.resize(c_.num_hidden_layers);
    keys_.resize(c_.num_hidden_layers);
    values_.resize(c_.num_hidden_layers);
  }

  Vec step(std::size_t token) {
    const std::size_t H = c_.hidden_size;
    const Vec& embedding = w("embed_tokens.weight");
    Vec h(embedding.begin() + static_cast<std::ptrdiff_t>(token * H),
          embedding.begin() + static_cast<std::ptrdiff_t>((token + 1) * H));
    for (std::size_t L = 0; L < c_.num_hidden_layers; ++L) {
      const std::string p = "layers." + std::to_string(L) + ".";
      Vec mixed = c_.layer_types[L] == LayerType::linear_attention ? deltanet(L, p, norm(h, w(p + "input_layernorm.weight")))
                                                                   : attention(L, p, norm(h, w(p + "input_layernorm.weight")));
      for (std::size_t i = 0; i < H; ++i) h[i] = h[i] + mixed[i];
      const Vec x = norm(h, w(p + "post_attention_layernorm.weight"));
      Vec gate = matvec(p + "mlp.gate_proj.weight", x);
      const Vec up = matvec(p + "mlp.up_proj.weight", x);
      for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = (gate[i] / (1.0f + std::exp(-gate[i]))) * up[i];
      const Vec down = matvec(p + "mlp.down_proj.weight", gate);
      for (std::size_t i = 0; i < H; ++i) h[i] = h[i] + down[i];
    }
    ++position_;
    return matvec(c_.tie_word_embeddings ? "embed_tokens.weight" : "lm_head.weight", norm(h, w("norm.weight")));
  }

 private:
  const Vec& w(const std::string& name) const { return weights_.at(name)->values; }

  Vec matvec(const std::string& name, const Vec& x) const {
    const Vec& m = w(name);
    const std::size_t cols = x.size();
    Vec y(m.size() / cols);
    for (std::size_t r = 0; r < y.size(); ++r) {
      float acc = 0.0f;
      for (std::size_t k = 0; k < cols; ++k) acc = acc + m[r * cols + k] * x[k];
      y[r] = acc;
    }
    return y;
  }

  Vec norm(const Vec& x, const Vec& weight) const {  // zero-centred
    float ss = 0.0f;
    for (float v : x) ss = ss + v * v;
    const float r = 1.0f / std::sqrt(ss / static_cast<float>(x.size()) + static_cast<float>(c_.rms_norm_eps));
    Vec y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = (x[i] * r) * (1.0f + weight[i]);
    return y;
  }

  Vec deltanet(std::size_t L, const std::string& p, const Vec& x) {
    const std::size_t nk = c_.linear_num_key_heads, nv = c_.linear_num_value_heads;
    const std::size_t dk = c_.linear_key_head_dim, dv = c_.linear_value_head_dim, K = c_.linear_conv_kernel_dim;
    const Vec raw = matvec(p + "linear_attn.in_proj_qkv.weight", x);
    const Vec z = matvec(p + "linear_attn.in_proj_z.weight", x);
    const Vec b = matvec(p + "linear_attn.in_proj_b.weight", x);
    const Vec a = matvec(p + "linear_attn.in_proj_a.weight", x);
    history_[L].push_back(raw);
    const Vec& taps = w(p + "linear_attn.conv1d.weight");
    Vec act(raw.size());
    for (std::size_t ch = 0; ch < raw.size(); ++ch) {
      float u = 0.0f;
      for (std::size_t j = 0; j < K; ++j) {
        const long t = static_cast<long>(position_) - static_cast<long>(K - 1 - j);
        const float in = t < 0 ? 0.0f : history_[L][static_cast<std::size_t>(t)][ch];
        u = u + taps[ch * K + j] * in;
      }
      act[ch] = u / (1.0f + std::exp(-u));
    }
    // q, k per key head: L2 norm with eps inside the root; q also scaled by fp32(1/sqrt(dk)).
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));
    for (std::size_t part = 0; part < 2; ++part) {
      for (std::size_t j = 0; j < nk; ++j) {
        float* v = &act[part * nk * dk + j * dk];
        float ss = 0.0f;
        for (std::size_t d = 0; d < dk; ++d) ss = ss + v[d] * v[d];
        const float r = 1.0f / std::sqrt(ss + 1e-6f);
        for (std::size_t d = 0; d < dk; ++d) v[d] = part == 0 ? (v[d] * r) * scale : v[d] * r;
      }
    }
    if (memory_[L].empty()) memory_[L].assign(nv * dk * dv, 0.0f);
    const Vec& A_log = w(p + "linear_attn.A_log");
    const Vec& dt_bias = w(p + "linear_attn.dt_bias");
    const Vec& gate_weight = w(p + "linear_attn.norm.weight");
    Vec out(nv * dv);
    for (std::size_t hv = 0; hv < nv; ++hv) {
      const std::size_t hk = hv / (nv / nk);
      const float* q = &act[hk * dk];
      const float* k = &act[nk * dk + hk * dk];
      const float* v = &act[2 * nk * dk + hv * dv];
      const float beta = plain_sigmoid(b[hv]);
      const float s = a[hv] + dt_bias[hv];
      const float sp = s > 20.0f ? s : std::log1p(std::exp(s));
      const float alpha = std::exp(-std::exp(A_log[hv]) * sp);
      float* S = &memory_[L][hv * dk * dv];
      for (std::size_t e = 0; e < dk * dv; ++e) S[e] = S[e] * alpha;
      Vec delta(dv);
      for (std::size_t i = 0; i < dv; ++i) {
        float r = 0.0f;
        for (std::size_t m = 0; m < dk; ++m) r = r + S[m * dv + i] * k[m];
        delta[i] = (v[i] - r) * beta;
      }
      for (std::size_t m = 0; m < dk; ++m)
        for (std::size_t i = 0; i < dv; ++i) S[m * dv + i] = S[m * dv + i] + k[m] * delta[i];
      Vec o(dv);
      float ss = 0.0f;
      for (std::size_t i = 0; i < dv; ++i) {
        float r = 0.0f;
        for (std::size_t m = 0; m < dk; ++m) r = r + S[m * dv + i] * q[m];
        o[i] = r;
        ss = ss + r * r;
      }
      const float inv = 1.0f / std::sqrt(ss / static_cast<float>(dv) + static_cast<float>(c_.rms_norm_eps));
      for (std::size_t i = 0; i < dv; ++i) {
        const float zi = z[hv * dv + i];
        out[hv * dv + i] = ((o[i] * inv) * gate_weight[i]) * (zi / (1.0f + std::exp(-zi)));
      }
    }
    return matvec(p + "linear_attn.out_proj.weight", out);
  }

  Vec attention(std::size_t L, const std::string& p, const Vec& x) {
    const std::size_t nh = c_.num_attention_heads, nkv = c_.num_key_value_heads, hd = c_.head_dim;
    const std::size_t half = c_.rotary_dim() / 2;
    const Vec qg = matvec(p + "self_attn.q_proj.weight", x);
    const Vec k = matvec(p + "self_attn.k_proj.weight", x);
    const Vec v = matvec(p + "self_attn.v_proj.weight", x);
    auto head_norm_rope = [&](const float* in, const Vec& weight) {
      Vec head = norm(Vec(in, in + hd), weight);
      const Vec original = head;
      for (std::size_t i = 0; i < half; ++i) {
        const float inv_freq =
            1.0f / std::pow(static_cast<float>(c_.rope_theta), static_cast<float>(2 * i) / static_cast<float>(2 * half));
        const float angle = static_cast<float>(position_) * inv_freq;
        head[i] = original[i] * std::cos(angle) - original[i + half] * std::sin(angle);
        head[i + half] = original[i + half] * std::cos(angle) + original[i] * std::sin(angle);
      }
      return head;
    };
    std::vector<Vec> new_keys;
    for (std::size_t g = 0; g < nkv; ++g) new_keys.push_back(head_norm_rope(&k[g * hd], w(p + "self_attn.k_norm.weight")));
    keys_[L].push_back(new_keys);
    std::vector<Vec> new_values;
    for (std::size_t g = 0; g < nkv; ++g) new_values.emplace_back(v.begin() + static_cast<std::ptrdiff_t>(g * hd), v.begin() + static_cast<std::ptrdiff_t>((g + 1) * hd));
    values_[L].push_back(new_values);

    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
    Vec out(nh * hd, 0.0f);
    for (std::size_t h = 0; h < nh; ++h) {
      const Vec q = head_norm_rope(&qg[2 * h * hd], w(p + "self_attn.q_norm.weight"));
      const std::size_t g = h / (nh / nkv);
      const std::size_t T = keys_[L].size();
      Vec score(T);
      float top = -INFINITY;
      for (std::size_t t = 0; t < T; ++t) {
        float dot = 0.0f;
        for (std::size_t d = 0; d < hd; ++d) dot = dot + q[d] * keys_[L][t][g][d];
        score[t] = dot * scale;
        top = std::fmax(top, score[t]);
      }
      float total = 0.0f;
      for (std::size_t t = 0; t < T; ++t) {
        score[t] = std::exp(score[t] - top);
        total = total + score[t];
      }
      for (std::size_t d = 0; d < hd; ++d) {
        float acc = 0.0f;
        for (std::size_t t = 0; t < T; ++t) acc = acc + (score[t] / total) * values_[L][t][g][d];
        const float gate = qg[2 * h * hd + hd + d];
        out[h * hd + d] = acc * plain_sigmoid(gate);
      }
    }
    return matvec(p + "self_attn.o_proj.weight", out);
  }

  const Config& c_;
  std::map<std::string, const OwnedTensor*> weights_;
  std::size_t position_ = 0;
  std::vector<std::vector<Vec>> history_;              // raw conv inputs per layer
  std::vector<Vec> memory_;                            // GDN states per layer
  std::vector<std::vector<std::vector<Vec>>> keys_;    // [layer][t][kv head]
  std::vector<std::vector<std::vector<Vec>>> values_;
};

void expect_engine_matches_plain(const Config& config, const std::string& name) {
  const auto tensors = random_model_tensors(config, 23);
  const auto directory = std::filesystem::path(::testing::TempDir()) / ("reference_" + name);
  write_checkpoint(directory, config, tensors_to_write(tensors, DType::F32));
  const Model model = Model::load(directory);
  State state = model.new_state();
  PlainQwen35 plain(config, tensors);
  for (std::size_t token : {3u, 1u, 4u, 1u, 5u, 9u, 2u, 6u, 5u, 3u}) {
    const auto expected = plain.step(token);
    const auto actual = model.decode(state, static_cast<TokenId>(token));
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(actual[i]), std::bit_cast<std::uint32_t>(expected[i]))
          << name << ": position " << state.position() - 1 << " logit " << i;
    }
  }
}

TEST(ReferenceForward, TinyModelMatchesPlainImplementationBitForBit) {
  expect_engine_matches_plain(tiny_test_config(), "tiny");
}

TEST(ReferenceForward, TiedModelWithOtherShapesMatchesPlainImplementation) {
  Config config = tiny_test_config();
  config.tie_word_embeddings = true;
  config.layer_types = {LayerType::full_attention, LayerType::linear_attention, LayerType::full_attention,
                        LayerType::linear_attention};
  config.linear_num_key_heads = 4;  // one value head per key head
  config.linear_conv_kernel_dim = 2;
  config.num_key_value_heads = 1;
  config.partial_rotary_factor = 1.0;
  config.rms_norm_eps = 1e-5;
  expect_engine_matches_plain(config, "tied");
}

}  // namespace
}  // namespace rvformer::engine
