// engine/bitwise_comparison.h — bit-for-bit comparisons of float arrays and States for tests of
// executors that must reproduce the reference path exactly (library rvformer_engine_testing).
// Stricter than State::operator==, which equates +0 and −0; every NaN counts as the same NaN, since
// x86 picks a NaN's payload by operand order, which a faster executor may change.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "engine/state.h"

namespace rvformer::engine {

// A description of the first element where the arrays differ; nullopt when they are identical.
std::optional<std::string> first_difference(std::span<const float> actual, std::span<const float> expected);

// The same for every float of two States (positions, conv windows, recurrent states, KV caches).
std::optional<std::string> first_difference(const State& actual, const State& expected);

}  // namespace rvformer::engine
