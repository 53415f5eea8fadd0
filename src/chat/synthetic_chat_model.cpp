// chat/synthetic_chat_model.cpp — see synthetic_chat_model.h.
#include "chat/synthetic_chat_model.h"

#include "chat/qwen35_template.h"
#include "support/error.h"
#include "support/file.h"
#include "tokenizer/reference_tokenizer.h"

namespace rvformer::chat::testing {

const char* const synthetic_tokenizer_config = R"({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": null})";

void write_chat_tokenizer_files(const std::filesystem::path& directory) {
  if (const std::string missing = tokenizer::testing::missing_reference_package(); !missing.empty()) fail("{}", missing);
  std::filesystem::create_directories(directory);
  write_file_atomic(directory / "tokenizer.json",
                    tokenizer::testing::with_split_pattern(read_file_text(tokenizer::testing::qwen3_tokenizer_json()),
                                                           tokenizer::testing::qwen35_pattern));
  write_file_atomic(directory / "chat_template.jinja", std::string(qwen35_chat_template()));
  write_file_atomic(directory / "tokenizer_config.json", synthetic_tokenizer_config);
}

void write_synthetic_chat_checkpoint(const std::filesystem::path& directory, const engine::SyntheticModel& model,
                                     const engine::SyntheticWrite& options) {
  std::filesystem::path staging = directory;
  staging += ".tokenizer";
  write_chat_tokenizer_files(staging);
  engine::SyntheticWrite write = options;
  write.tokenizer_directory = staging;
  try {
    engine::write_synthetic_checkpoint(directory, model, write);
  } catch (...) {
    std::filesystem::remove_all(staging);
    throw;
  }
  std::filesystem::remove_all(staging);
}

}  // namespace rvformer::chat::testing
