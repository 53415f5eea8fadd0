// engine/workers.cpp — see workers.h.
#include "engine/workers.h"

#include <sched.h>

#include <algorithm>

namespace rvformer::engine {

Workers::Workers(std::size_t threads, std::size_t min_parallel_work)
    : threads_(std::max<std::size_t>(threads, 1)), min_parallel_work_(min_parallel_work) {
  for (std::size_t index = 1; index < threads_; ++index) team_.emplace_back([this, index] { serve(index); });
}

Workers::~Workers() {
  stopping_ = true;
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& thread : team_) thread.join();
}

void Workers::serve(std::size_t index) {
  std::uint64_t seen = 0;
  while (true) {
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_) return;
    (*job_)(index);
    if (unfinished_.fetch_sub(1, std::memory_order_acq_rel) == 1) unfinished_.notify_one();
  }
}

void Workers::run(const std::function<void(std::size_t)>& part) {
  std::unique_lock lock(busy_, std::try_to_lock);
  if (team_.empty() || !lock.owns_lock()) {
    for (std::size_t index = 0; index < threads_; ++index) part(index);
    return;
  }
  job_ = &part;
  unfinished_.store(team_.size(), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  part(0);
  for (std::size_t left = unfinished_.load(std::memory_order_acquire); left != 0;
       left = unfinished_.load(std::memory_order_acquire)) {
    unfinished_.wait(left, std::memory_order_acquire);
  }
}

std::size_t Workers::available_cores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0) return std::max(1, CPU_COUNT(&cpus));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace rvformer::engine
