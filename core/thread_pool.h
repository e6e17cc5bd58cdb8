// A fixed-size thread pool (Eigen's non-blocking pool) with ParallelFor and an Eigen device.
#ifndef TFJIT_CORE_THREAD_POOL_H_
#define TFJIT_CORE_THREAD_POOL_H_

#include <cstdint>
#include <functional>
#include <memory>

namespace Eigen {
class ThreadPoolDevice;
}  // namespace Eigen

namespace tfjit {

// Thread safety: every method may be called from any thread, including pool threads.
class ThreadPool {
 public:
  // num_threads <= 0 means one thread per hardware core.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int NumThreads() const;
  void Schedule(std::function<void()> fn);

  // Runs fn(begin, end) over [0, n) in shards sized by `cost_per_unit` (roughly cycles per
  // element); returns when every shard is done. Runs inline when n is small or the caller is
  // already a pool thread that would otherwise deadlock waiting.
  void ParallelFor(int64_t n, int64_t cost_per_unit,
                   const std::function<void(int64_t, int64_t)>& fn);

  // For Eigen Tensor expressions: `expr.device(*pool.eigen_device()) = ...`.
  Eigen::ThreadPoolDevice* eigen_device();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tfjit

#endif  // TFJIT_CORE_THREAD_POOL_H_
