// cli/tokenizer_commands.cpp — `rvformer tokenize`: text to token ids (one line, separated by
// spaces) and ids back to text, with the tokenizer.json of a checkpoint directory.
#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "support/error.h"
#include "support/file.h"
#include "tokenizer/tokenizer.h"

namespace rvformer::cli {
namespace {

struct TokenizeOptions {
  std::string model_directory;
  std::string text;
  std::string file;
  std::string decode;
  bool skip_special_tokens = false;
};

// "ID ID …" (spaces, tabs, newlines or commas between them); each must name a token.
std::vector<tokenizer::TokenId> parse_ids(const std::string& list, const tokenizer::Tokenizer& tokenizer) {
  std::vector<tokenizer::TokenId> ids;
  const std::string separators = " \t\r\n,";
  for (std::size_t begin = list.find_first_not_of(separators); begin != std::string::npos;
       begin = list.find_first_not_of(separators, begin)) {
    const std::size_t end = std::min(list.find_first_of(separators, begin), list.size());
    const std::string word = list.substr(begin, end - begin);
    tokenizer::TokenId id = 0;
    const auto [stop, error] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (error != std::errc() || stop != word.data() + word.size()) fail("--decode: \"{}\" is not a token id", word);
    if (!tokenizer.id_to_token(id)) fail("--decode: token id {} is not in the tokenizer (ids below {})", id, tokenizer.id_limit());
    ids.push_back(id);
    begin = end;
  }
  return ids;
}

int run_tokenize(const TokenizeOptions& options) {
  check_input_directory(options.model_directory);
  if (!options.file.empty()) check_input_file(options.file);
  const auto tokenizer = tokenizer::Tokenizer::load(options.model_directory);
  if (!options.decode.empty()) {
    const std::string text = tokenizer.decode(parse_ids(options.decode, tokenizer), options.skip_special_tokens);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  const std::string text = options.file.empty() ? options.text : read_file_text(options.file);
  fmt::print("{}\n", fmt::join(tokenizer.encode(text), " "));
  return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<TokenizeOptions>();
  auto* tokenize = app.add_subcommand(
      "tokenize", "Print the token ids of TEXT (or --file F) on one line, or with --decode the text of token ids");
  tokenize->add_option("MODEL_DIR", options->model_directory, "checkpoint directory holding tokenizer.json")->required();
  auto* text = tokenize->add_option("TEXT", options->text, "the text to tokenize");
  auto* file = tokenize->add_option("--file", options->file, "tokenize the contents of this file (UTF-8)");
  auto* decode = tokenize->add_option("--decode", options->decode, "print the text of these token ids, e.g. \"9707 11\" (exactly, no newline added)");
  tokenize->add_flag("--skip-special-tokens", options->skip_special_tokens, "with --decode, leave special tokens out");
  text->excludes(file)->excludes(decode);
  file->excludes(decode);
  tokenize->callback([&action, options, text, file, decode] {
    if (text->count() + file->count() + decode->count() == 0) {
      throw CLI::RequiredError("tokenize needs TEXT, --file F or --decode \"ID ID ...\"");
    }
    action = [options] { return run_tokenize(*options); };
  });
}

}  // namespace rvformer::cli
