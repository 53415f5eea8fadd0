// cli/whole_number_option.h — the one parser behind every numeric option of the command line: a
// whole number written in decimal digits only, within the option's range. A sign, a fraction, an
// exponent, hex, spaces, an empty value or one out of range is refused with the option's name,
// never wrapped, rounded or read as "no limit".
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace rvformer::cli {

inline constexpr std::uint64_t kLargestCount = std::numeric_limits<std::uint64_t>::max();

// The value of `text`, or rvformer::Error "OPTION: 'TEXT' is not a whole number from MIN to MAX".
std::uint64_t parse_whole_number(std::string_view text, std::string_view option, std::uint64_t min, std::uint64_t max);

// Adds option `name` to `command`, parsed by parse_whole_number into `target` (a refusal is a
// CLI::ValidationError, which the command line reports like any other).
CLI::Option* add_whole_number_option(CLI::App& command, const std::string& name, std::uint64_t& target,
                                     const std::string& description, std::uint64_t min = 0, std::uint64_t max = kLargestCount);
// The same, leaving `target` empty when the option is not given.
CLI::Option* add_whole_number_option(CLI::App& command, const std::string& name, std::optional<std::uint64_t>& target,
                                     const std::string& description, std::uint64_t min = 0, std::uint64_t max = kLargestCount);
// The same for an int; `max` must fit it.
CLI::Option* add_whole_number_option(CLI::App& command, const std::string& name, int& target,
                                     const std::string& description, std::uint64_t min, std::uint64_t max);

}  // namespace rvformer::cli
