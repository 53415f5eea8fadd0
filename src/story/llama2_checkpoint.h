// story/llama2_checkpoint.h — llama2.c's float checkpoint (legacy version 0: a seven-int32 header,
// then fp32 tensors) and its tokenizer file (tok512.bin and the like), read into memory.
// models/stories260K/README.md describes both formats.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace rvformer::story {

struct Llama2Config {
  int dim = 0;
  int hidden_dim = 0;
  int n_layers = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int vocab_size = 0;
  int seq_len = 0;
  bool shared_classifier = true;  // the file's vocab_size was positive: the classifier is the embedding

  int head_size() const { return dim / n_heads; }
  int kv_dim() const { return head_size() * n_kv_heads; }
};

struct Llama2Layer {
  std::vector<float> rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3;  // row-major [out, in]
};

struct Llama2Checkpoint {
  Llama2Config config;
  std::vector<float> token_embedding;  // [vocab, dim]
  std::vector<Llama2Layer> layers;
  std::vector<float> rms_final;
  std::vector<float> classifier;  // [vocab, dim]: a copy of the embedding when shared
};

struct Llama2Vocabulary {
  std::vector<float> scores;
  std::vector<std::string> pieces;
};

// Throw rvformer::Error naming the file when it is missing, truncated or not of the format.
Llama2Checkpoint read_llama2_checkpoint(const std::filesystem::path& path);
Llama2Vocabulary read_llama2_vocabulary(const std::filesystem::path& path, int vocab_size);

}  // namespace rvformer::story
