// cli/main.cpp — the `rvformer` command: parses the command line, runs one subcommand, and turns
// every rvformer::Error into a one-line message and a non-zero exit status.
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "support/error.h"

namespace {

namespace exit_status = rvformer::cli::exit_status;

int report(const std::exception& error, int status) {
  std::fflush(stdout);
  fmt::print(stderr, "rvformer: error: {}\n", error.what());
  return status;
}

// The words after the program name, with `help [COMMAND...]` read as `[COMMAND...] --help`.
std::vector<std::string> command_words(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (!words.empty() && words.front() == "help") {
    words.erase(words.begin());
    words.push_back("--help");
  }
  return words;
}

// Checks that the leading words of `words` name a command of `app` (and of its subcommands, as in
// `model info`); `path` is the command that `app` is, "" at the top. A command's own options are
// left to CLI11.
void check_command(CLI::App& app, std::span<const std::string> words, const std::string& path) {
  std::vector<CLI::App*> commands = app.get_subcommands([](CLI::App*) { return true; });
  if (commands.empty()) return;
  std::vector<std::string> names;
  for (CLI::App* command : commands) names.push_back(command->get_name());
  const std::string known = fmt::format("the {}commands are {} (rvformer {}--help)", path.empty() ? "" : path + " ",
                                        fmt::join(names, ", "), path.empty() ? "" : path + " ");
  if (words.empty()) rvformer::fail("no command given; {}", known);
  if (words.front().starts_with('-')) {
    if (app.get_option_no_throw(words.front()) == nullptr)
      rvformer::fail("unknown option '{}' where a command belongs; {}", words.front(), known);
    return;  // --help, --version
  }
  for (CLI::App* command : commands)
    if (command->get_name() == words.front())
      return check_command(*command, words.subspan(1), path.empty() ? words.front() : path + " " + words.front());
  rvformer::fail("unknown command '{}{}'; {}", path.empty() ? "" : path + " ", words.front(), known);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rvformer: a RISC-V computer compiled into the weights of a Qwen3.5 model", "rvformer"};
  app.set_version_flag("--version", "rvformer " RVFORMER_VERSION);
  app.require_subcommand(1);
  rvformer::cli::Action action;
  rvformer::cli::add_program_commands(app, action);
  rvformer::cli::add_calc_command(app, action);
  rvformer::cli::add_story_command(app, action);
  rvformer::cli::add_model_commands(app, action);
  rvformer::cli::add_machine_commands(app, action);
  rvformer::cli::add_verify_command(app, action);
  rvformer::cli::add_tokenize_command(app, action);
  rvformer::cli::add_chat_command(app, action);
  rvformer::cli::add_merge_command(app, action);
  try {
    std::vector<std::string> words = command_words(argc, argv);
    check_command(app, words, "");
    std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 takes them last first
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here too, successfully; anything else is a usage error.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return report(e, exit_status::kBadInput);
  } catch (const rvformer::Error& e) {
    return report(e, exit_status::kBadInput);
  }
  try {
    return action ? action() : 0;
  } catch (const rvformer::BuildError& e) {
    return report(e, exit_status::kBuildFailed);
  } catch (const std::exception& e) {
    // rvformer::Error, or what the system said about a file no check foresaw (a filesystem error
    // names the path): one line either way, never an abort.
    return report(e, exit_status::kBadInput);
  }
}
