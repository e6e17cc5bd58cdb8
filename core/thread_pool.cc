// ThreadPool on top of Eigen's NonBlockingThreadPool; ParallelFor via the Eigen device.
#include "core/thread_pool.h"

#include <thread>

#define EIGEN_USE_THREADS
#include "unsupported/Eigen/CXX11/Tensor"
#include "unsupported/Eigen/CXX11/ThreadPool"

namespace tfjit {

struct ThreadPool::Impl {
  explicit Impl(int n) : pool(n), device(&pool, n) {}
  Eigen::ThreadPool pool;
  Eigen::ThreadPoolDevice device;
};

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) {
    num_threads = static_cast<int>(std::thread::hardware_concurrency());
    if (num_threads <= 0) num_threads = 1;
  }
  impl_ = std::make_unique<Impl>(num_threads);
}

ThreadPool::~ThreadPool() = default;

int ThreadPool::NumThreads() const { return impl_->pool.NumThreads(); }

void ThreadPool::Schedule(std::function<void()> fn) { impl_->pool.Schedule(std::move(fn)); }

void ThreadPool::ParallelFor(int64_t n, int64_t cost_per_unit,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  // Eigen's parallelFor blocks on a barrier; running it from a pool thread is safe because
  // the calling thread also executes shards, but a single-threaded pool gains nothing.
  if (NumThreads() <= 1 || n == 1) {
    fn(0, n);
    return;
  }
  Eigen::TensorOpCost cost(/*bytes_loaded=*/0, /*bytes_stored=*/0,
                           /*compute_cycles=*/static_cast<double>(cost_per_unit));
  impl_->device.parallelFor(n, cost, [&fn](Eigen::Index b, Eigen::Index e) { fn(b, e); });
}

Eigen::ThreadPoolDevice* ThreadPool::eigen_device() { return &impl_->device; }

}  // namespace tfjit
