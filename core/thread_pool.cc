// ThreadPool: workers that take ParallelFor shards first and scheduled functions second.
//
// ParallelFor publishes a job (on the caller's stack) with an atomic shard counter; the caller
// and up to NumThreads() - 1 workers claim shards until none is left, then the caller waits
// for the workers still inside the job and unpublishes it. Workers that find nothing to do
// spin for a short while before sleeping on the condition variable: a model runs hundreds of
// parallel loops a few microseconds apart, and waking a sleeping thread (a futex call, which
// is slow in a virtual machine) cost more than many of those loops.
#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TFJIT_CPU_RELAX() _mm_pause()
#else
#define TFJIT_CPU_RELAX() std::this_thread::yield()
#endif

namespace tfjit {
namespace {

// A shard must carry about this many cycles (a few microseconds) to be worth a hand-off.
constexpr int64_t kMinShardCycles = 10000;
// More shards than threads balance uneven shards and threads that start late.
constexpr int64_t kShardsPerThread = 4;
// How long an idle worker spins for new work before it sleeps.
constexpr std::chrono::microseconds kIdleSpin(100);

struct Job {
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0, shard_size = 0, num_shards = 0;
  std::atomic<int64_t> next{0};  // the next unclaimed shard
  std::atomic<int> helpers{0};   // workers inside RunShards
  int joined = 0;                // workers that joined, ever (guarded by Impl::mu)
  int max_helpers = 0;
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // the first exception a shard threw (written once, by `failed`)

  bool HasShards() const { return next.load(std::memory_order_relaxed) < num_shards; }

  void RunShards() {
    for (;;) {
      const int64_t s = next.fetch_add(1, std::memory_order_relaxed);
      if (s >= num_shards) return;
      const int64_t begin = s * shard_size, end = std::min(n, begin + shard_size);
      try {
        (*fn)(begin, end);
      } catch (...) {
        if (!failed.exchange(true)) error = std::current_exception();
        next.store(num_shards, std::memory_order_relaxed);  // skip the shards left
        return;
      }
    }
  }
};

}  // namespace

struct ThreadPool::Impl {
  int parallelism = 1;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Job*> jobs;                   // guarded by mu
  std::deque<std::function<void()>> tasks;  // guarded by mu
  int sleepers = 0;                         // guarded by mu
  bool stop = false;                        // guarded by mu
  std::atomic<uint64_t> epoch{0};           // bumped (under mu) whenever work is published
  std::vector<std::thread> threads;

  // Publishes under `mu` (held by the caller): wakes sleepers, and spinners see the epoch.
  void PublishLocked() {
    epoch.fetch_add(1, std::memory_order_release);
    if (sleepers > 0) cv.notify_all();
  }

  // A job shard or a task for a worker; false when there is none.
  bool TakeWorkLocked(Job** job, std::function<void()>* task) {
    for (Job* j : jobs) {
      if (j->HasShards() && j->joined < j->max_helpers) {
        ++j->joined;
        j->helpers.fetch_add(1, std::memory_order_relaxed);
        *job = j;
        return true;
      }
    }
    if (!tasks.empty()) {
      *task = std::move(tasks.front());
      tasks.pop_front();
      return true;
    }
    return false;
  }

  // Spins until the epoch moves past `seen` (true) or the spin time is over (false).
  bool SpinFor(uint64_t seen) {
    const auto until = std::chrono::steady_clock::now() + kIdleSpin;
    for (int i = 1;; ++i) {
      if (epoch.load(std::memory_order_acquire) != seen) return true;
      TFJIT_CPU_RELAX();
      if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return false;
    }
  }

  void WorkerLoop() {
    for (;;) {
      Job* job = nullptr;
      std::function<void()> task;
      uint64_t seen = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!TakeWorkLocked(&job, &task)) {
          if (stop) return;
          seen = epoch.load(std::memory_order_relaxed);
        }
      }
      if (job != nullptr) {
        job->RunShards();
        job->helpers.fetch_sub(1, std::memory_order_release);  // the job may be gone after this
        continue;
      }
      if (task) {
        task();
        continue;
      }
      if (SpinFor(seen)) continue;
      std::unique_lock<std::mutex> lock(mu);
      ++sleepers;
      cv.wait(lock, [&] { return stop || epoch.load(std::memory_order_relaxed) != seen; });
      --sleepers;
    }
  }
};

ThreadPool::ThreadPool(int num_threads) : impl_(std::make_unique<Impl>()) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::thread::hardware_concurrency());
  impl_->parallelism = std::max(num_threads, 1);
  // The caller works in ParallelFor, so parallelism P needs P - 1 workers; Schedule needs one.
  const int workers = std::max(impl_->parallelism - 1, 1);
  impl_->threads.reserve(workers);
  for (int i = 0; i < workers; ++i) impl_->threads.emplace_back([this] { impl_->WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
    impl_->PublishLocked();
    impl_->cv.notify_all();
  }
  for (std::thread& t : impl_->threads) t.join();
}

int ThreadPool::NumThreads() const { return impl_->parallelism; }

void ThreadPool::Schedule(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->tasks.push_back(std::move(fn));
  impl_->PublishLocked();
}

int64_t ThreadPool::NumShards(int64_t n, int64_t cost_per_unit) const {
  if (impl_->parallelism <= 1 || n <= 1) return 1;
  const double total =
      static_cast<double>(n) * static_cast<double>(std::max<int64_t>(cost_per_unit, 1));
  if (total < 2.0 * kMinShardCycles) return 1;
  const double by_cost = total / kMinShardCycles;
  const int64_t cap = std::min<int64_t>(n, impl_->parallelism * kShardsPerThread);
  return by_cost >= static_cast<double>(cap) ? cap
                                             : std::max<int64_t>(2, static_cast<int64_t>(by_cost));
}

void ThreadPool::ParallelFor(int64_t n, int64_t cost_per_unit,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t shards = NumShards(n, cost_per_unit);
  if (shards <= 1) {
    fn(0, n);
    return;
  }
  Job job;
  job.fn = &fn;
  job.n = n;
  job.shard_size = (n + shards - 1) / shards;
  job.num_shards = (n + job.shard_size - 1) / job.shard_size;
  job.max_helpers = impl_->parallelism - 1;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->jobs.push_back(&job);
    impl_->PublishLocked();
  }
  job.RunShards();
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->jobs.erase(std::find(impl_->jobs.begin(), impl_->jobs.end(), &job));
  }
  // Workers joined under the lock, so none joins after the erase; wait for those inside.
  for (int i = 1; job.helpers.load(std::memory_order_acquire) != 0; ++i) {
    if (i % 1024 == 0) {
      std::this_thread::yield();
    } else {
      TFJIT_CPU_RELAX();
    }
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace tfjit
