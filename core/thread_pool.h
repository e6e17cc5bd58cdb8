// A fixed-size thread pool built for short, frequent parallel loops: the calling thread of
// ParallelFor takes part in the work, idle workers spin briefly before they sleep, and a loop
// too small to pay for a second thread runs inline. See docs/decisions.md ("Thread pool").
#ifndef TFJIT_CORE_THREAD_POOL_H_
#define TFJIT_CORE_THREAD_POOL_H_

#include <cstdint>
#include <functional>
#include <memory>

namespace tfjit {

// Thread safety: every method may be called from any thread, including pool threads, and
// ParallelFor may nest (a shard may call ParallelFor again) without deadlock.
class ThreadPool {
 public:
  // The parallelism of the pool: `num_threads` threads work on each ParallelFor (the caller
  // and num_threads - 1 workers); num_threads <= 0 means one per hardware core.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int NumThreads() const;

  // Runs fn on a worker thread (never inline). With num_threads == 1 there is still one
  // worker, so a scheduled function never waits for the caller.
  void Schedule(std::function<void()> fn);

  // Runs fn(begin, end) over a partition of [0, n) and returns when every part is done.
  // `cost_per_unit` is roughly the CPU cycles one index takes; the partition gives each part
  // enough work to pay for handing it to another thread, and runs inline when the whole loop
  // would not.
  void ParallelFor(int64_t n, int64_t cost_per_unit,
                   const std::function<void(int64_t, int64_t)>& fn);

  // Parts ParallelFor(n, cost_per_unit, ...) splits [0, n) into (1 = runs inline).
  int64_t NumShards(int64_t n, int64_t cost_per_unit) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tfjit

#endif  // TFJIT_CORE_THREAD_POOL_H_
