// cli/main.cpp — the `rvformer` command: parses the command line, runs one subcommand, and turns
// every rvformer::Error into a one-line message and a non-zero exit status.
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.h"
#include "support/error.h"

int main(int argc, char** argv) {
  CLI::App app{"rvformer: a RISC-V computer compiled into the weights of a Qwen3.5 model"};
  app.require_subcommand(1);
  rvformer::cli::Action action;
  rvformer::cli::add_program_commands(app, action);
  rvformer::cli::add_model_commands(app, action);
  rvformer::cli::add_machine_commands(app, action);
  rvformer::cli::add_verify_command(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here too, successfully; anything else is a usage error.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    fmt::print(stderr, "rvformer: error: {}\n", e.what());
    return 2;
  }
  try {
    return action ? action() : 0;
  } catch (const rvformer::Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "rvformer: error: {}\n", e.what());
    return 2;
  }
}
