// engine/helper_thread.h — a second thread that runs one job at a time while the caller runs
// another (the fast executor splits its LM head this way). Jobs are handed over through atomics: the
// helper spins for a short while after each job, so back-to-back tokens do not pay a wake-up, and
// then sleeps on the atomic (a futex) until the next job.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace rvformer::engine {

class HelperThread {
 public:
  HelperThread();
  ~HelperThread();
  HelperThread(const HelperThread&) = delete;
  HelperThread& operator=(const HelperThread&) = delete;

  // Runs job(argument) on the helper and returns at once; call wait() before the next start().
  void start(void (*job)(void*), void* argument);
  // Returns when the job started last has finished.
  void wait();

 private:
  void loop();

  void (*job_)(void*) = nullptr;
  void* argument_ = nullptr;
  std::atomic<std::uint32_t> started_{0};   // jobs handed over
  std::atomic<std::uint32_t> finished_{0};  // jobs completed
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace rvformer::engine
