// support/error.h — the one exception type every module throws for bad input or failed I/O.
// Its message is a complete one-line explanation meant for the user; the CLI prints it and exits
// with a non-zero status (BuildError's own, for programs that could not be built), so callers
// never need to decorate it further.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace rvformer {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A program could not be built: the cross compiler failed, or is missing. The CLI gives it an exit
// status of its own.
class BuildError : public Error {
 public:
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_build(fmt::format_string<Args...> format, Args&&... args) {
  throw BuildError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace rvformer
