// cli/whole_number_option.cpp — see whole_number_option.h.
#include "cli/whole_number_option.h"

#include <algorithm>
#include <charconv>
#include <functional>

#include "support/error.h"

namespace rvformer::cli {
namespace {

CLI::Option* add_option(CLI::App& command, const std::string& name, std::function<void(std::uint64_t)> store,
                        const std::string& description, std::uint64_t min, std::uint64_t max) {
  auto parse = [name, store = std::move(store), min, max](const std::string& text) {
    try {
      store(parse_whole_number(text, name, min, max));
    } catch (const Error& e) {
      throw CLI::ValidationError(e.what());
    }
  };
  return command.add_option_function<std::string>(name, std::move(parse), description)->type_name("N");
}

}  // namespace

std::uint64_t parse_whole_number(std::string_view text, std::string_view option, std::uint64_t min, std::uint64_t max) {
  std::uint64_t value = 0;
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!digits || error != std::errc() || end != text.data() + text.size() || value < min || value > max)
    fail("{}: '{}' is not a whole number from {} to {}", option, text, min, max);
  return value;
}

CLI::Option* add_whole_number_option(CLI::App& command, const std::string& name, std::uint64_t& target,
                                     const std::string& description, std::uint64_t min, std::uint64_t max) {
  return add_option(command, name, [&target](std::uint64_t value) { target = value; }, description, min, max);
}

CLI::Option* add_whole_number_option(CLI::App& command, const std::string& name, std::optional<std::uint64_t>& target,
                                     const std::string& description, std::uint64_t min, std::uint64_t max) {
  return add_option(command, name, [&target](std::uint64_t value) { target = value; }, description, min, max);
}

CLI::Option* add_whole_number_option(CLI::App& command, const std::string& name, int& target,
                                     const std::string& description, std::uint64_t min, std::uint64_t max) {
  return add_option(command, name, [&target](std::uint64_t value) { target = static_cast<int>(value); }, description,
                    min, std::min<std::uint64_t>(max, std::numeric_limits<int>::max()));
}

}  // namespace rvformer::cli
