// Tests for core/thread_pool: every index of a ParallelFor runs exactly once, whatever the
// cost and size; the loop runs on more than one thread when the work pays for it; nested and
// concurrent loops finish; an exception in a shard reaches the caller and the pool stays
// usable; scheduled functions run on workers, also in a one-thread pool.
#include "core/thread_pool.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tfjit {
namespace {

void ExpectEachIndexOnce(ThreadPool& pool, int64_t n, int64_t cost) {
  SCOPED_TRACE(::testing::Message() << "n=" << n << " cost=" << cost);
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  pool.ParallelFor(n, cost, [&](int64_t begin, int64_t end) {
    ASSERT_LE(0, begin);
    ASSERT_LT(begin, end);
    ASSERT_LE(end, n);
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
}

TEST(ThreadPoolTest, EveryIndexRunsExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.NumThreads(), threads);
    for (int64_t n : {0, 1, 2, 7, 100, 10007}) {
      for (int64_t cost : {0, 1, 1000, 1000000}) ExpectEachIndexOnce(pool, n, cost);
    }
  }
}

TEST(ThreadPoolTest, ShardsFollowTheCost) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.NumShards(1000, 1), 1);        // 1000 cycles: not worth a hand-off
  EXPECT_EQ(pool.NumShards(1, 100000000), 1);   // one index cannot split
  EXPECT_EQ(pool.NumShards(100, 1000000), 16);  // 4 shards per thread at most
  EXPECT_EQ(pool.NumShards(3, 1000000), 3);     // never more shards than indices
  ThreadPool single(1);
  EXPECT_EQ(single.NumShards(100, 1000000), 1);  // one thread: always inline
}

TEST(ThreadPoolTest, ExpensiveLoopUsesMoreThanOneThread) {
  ThreadPool pool(2);
  std::mutex mu;
  std::set<std::thread::id> ids;
  // Each shard waits (up to 10 s, for a loaded machine) until a second thread has run one, so
  // the caller cannot finish every shard before the worker joins.
  pool.ParallelFor(8, 10000000, [&](int64_t, int64_t) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
        if (ids.size() >= 2) return;
      }
      if (std::chrono::steady_clock::now() >= until) return;
      std::this_thread::yield();
    }
  });
  EXPECT_EQ(ids.size(), 2u);
}

TEST(ThreadPoolTest, NestedLoopsFinish) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(16, 1000000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pool.ParallelFor(64, 1000000, [&](int64_t b2, int64_t e2) {
        for (int64_t j = b2; j < e2; ++j) sum += i * 64 + j;
      });
    }
  });
  const int64_t n = 16 * 64;
  EXPECT_EQ(sum.load(), n * (n - 1) / 2);
}

TEST(ThreadPoolTest, ConcurrentCallersShareThePool) {
  ThreadPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep) {
        std::vector<std::atomic<int>> hits(1000);
        pool.ParallelFor(1000, 100 * (t + 1), [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
        });
        for (auto& h : hits) failures += h.load() != 1;
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPoolTest, ShardExceptionReachesTheCaller) {
  ThreadPool pool(2);
  for (int rep = 0; rep < 20; ++rep) {
    EXPECT_THROW(pool.ParallelFor(64, 1000000,
                                  [&](int64_t b, int64_t e) {
                                    if (b <= 40 && 40 < e) throw std::bad_alloc();
                                  }),
                 std::bad_alloc);
  }
  ExpectEachIndexOnce(pool, 1000, 100000);  // still usable
}

TEST(ThreadPoolTest, ScheduleRunsOnAWorker) {
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    std::promise<std::thread::id> ran;
    pool.Schedule([&] { ran.set_value(std::this_thread::get_id()); });
    std::future<std::thread::id> id = ran.get_future();
    ASSERT_EQ(id.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_NE(id.get(), std::this_thread::get_id());
  }
}

TEST(ThreadPoolTest, DestructorRunsScheduledWork) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(2);
    for (int i = 0; i < 100; ++i) pool.Schedule([&] { ran++; });
  }
  EXPECT_EQ(ran.load(), 100);
}

}  // namespace
}  // namespace tfjit
