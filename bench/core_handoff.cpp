// core_handoff — what it costs to hand work to the other core and wait for the answer: two threads
// pass a counter back and forth through shared memory (both spinning, the cheapest handoff there
// is) and the average round trip is printed. Splitting a token's forward pass between the cores
// pays only where a piece of work outweighs this cost (docs/performance.md, "Both cores").
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <CLI/CLI.hpp>

namespace {

// Each counter on its own cache line, so that the only traffic is the handoff itself.
struct alignas(64) Counter {
  std::atomic<std::uint64_t> value{0};
};

// Average seconds for one round trip: the main thread publishes n, the helper answers n.
double round_trip_seconds(std::uint64_t round_trips) {
  Counter request, answer;
  std::thread helper([&] {
    for (std::uint64_t n = 1; n <= round_trips; ++n) {
      while (request.value.load(std::memory_order_acquire) != n) {
      }
      answer.value.store(n, std::memory_order_release);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t n = 1; n <= round_trips; ++n) {
    request.value.store(n, std::memory_order_release);
    while (answer.value.load(std::memory_order_acquire) != n) {
    }
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  helper.join();
  return elapsed.count() / static_cast<double>(round_trips);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Round-trip time of a handoff between two cores (two spinning threads)"};
  std::uint64_t round_trips = 1'000'000;
  int runs = 5;
  app.add_option("--round-trips", round_trips, "round trips per run")->check(CLI::PositiveNumber);
  app.add_option("--runs", runs, "runs (the best one is reported as well)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (std::thread::hardware_concurrency() < 2) {
    fmt::print(stderr, "core_handoff: this machine has one hardware thread; both threads would share it\n");
  }
  double best = 0;
  for (int run = 0; run < runs; ++run) {
    const double seconds = round_trip_seconds(round_trips);
    best = run == 0 ? seconds : std::min(best, seconds);
    fmt::print("run {}: {} round trips, {:.0f} ns each\n", run + 1, round_trips, seconds * 1e9);
  }
  fmt::print("best: {:.0f} ns per round trip (a fork and a join between the two cores)\n", best * 1e9);
}
