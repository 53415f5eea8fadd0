// engine/workers.h — a fixed team of threads that share one job's independent parts: the row
// ranges of a large matrix-vector product. Each part is computed exactly as the calling thread would
// compute it alone, so results never depend on the thread count.
//
// The calling thread is one of the team (part 0); the others wait on a futex between jobs. A job
// that another caller started is never joined: a second caller runs all of its own parts on its
// thread, in order (bit-identical), so one team can serve models used from several threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rvformer::engine {

class Workers {
 public:
  // Work too small to split (in weights multiplied) runs on the calling thread: waking the others
  // costs a few microseconds.
  static constexpr std::size_t default_min_parallel_work = std::size_t{1} << 16;

  // threads ≥ 1 (1: no other thread is started).
  explicit Workers(std::size_t threads, std::size_t min_parallel_work = default_min_parallel_work);
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  std::size_t threads() const { return threads_; }
  std::size_t min_parallel_work() const { return min_parallel_work_; }

  // Calls part(i) for every i in [0, threads()), concurrently, and returns when all have returned.
  // `part` must not throw.
  void run(const std::function<void(std::size_t)>& part);

  // The CPUs this process may run on (its affinity mask), at least 1.
  static std::size_t available_cores();

 private:
  void serve(std::size_t index);

  std::size_t threads_;
  std::size_t min_parallel_work_;
  std::vector<std::thread> team_;
  std::mutex busy_;  // held by the caller whose job the team is running
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::atomic<std::uint64_t> generation_{0};  // bumped to start a job (or to stop)
  std::atomic<std::size_t> unfinished_{0};    // team members still in the current job
  bool stopping_ = false;
};

}  // namespace rvformer::engine
