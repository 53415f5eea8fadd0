// engine/helper_thread.cpp — see helper_thread.h.
#include "engine/helper_thread.h"

namespace rvformer::engine {

namespace {

// How many polls to spin before sleeping: about 50 µs, longer than the gap between two tokens.
constexpr int spin_polls = 20000;

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits until `counter` differs from `seen`, spinning first.
void wait_for_change(const std::atomic<std::uint32_t>& counter, std::uint32_t seen) {
  for (int poll = 0; poll < spin_polls; ++poll) {
    if (counter.load(std::memory_order_acquire) != seen) return;
    pause();
  }
  counter.wait(seen, std::memory_order_acquire);
}

}  // namespace

HelperThread::HelperThread() : thread_([this] { loop(); }) {}

HelperThread::~HelperThread() {
  stopping_.store(true, std::memory_order_release);
  started_.fetch_add(1, std::memory_order_release);  // wakes the helper; it sees stopping_
  started_.notify_one();
  thread_.join();
}

void HelperThread::start(void (*job)(void*), void* argument) {
  job_ = job;
  argument_ = argument;
  started_.fetch_add(1, std::memory_order_release);
  started_.notify_one();
}

void HelperThread::wait() {
  const std::uint32_t target = started_.load(std::memory_order_relaxed);
  while (true) {
    const std::uint32_t done = finished_.load(std::memory_order_acquire);
    if (done == target) return;
    wait_for_change(finished_, done);
  }
}

void HelperThread::loop() {
  std::uint32_t seen = 0;
  while (true) {
    wait_for_change(started_, seen);
    seen = started_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) return;
    job_(argument_);
    finished_.store(seen, std::memory_order_release);
    finished_.notify_one();
  }
}

}  // namespace rvformer::engine
