// Soak (issue 24): many runs of one corpus model through one Session, compiled (--jit auto),
// with 2 threads per run, reporting the process's resident memory at the start and the end
// and the spread of the runs' latencies. A number to watch across changes, not a timed test:
// RSS that grows with the run count is a leak, a p99 or max far above the median a stall.
//   build/bin/soak_bench                       (blazeface, 10,000 runs; about a minute)
//   build/bin/soak_bench --benchmark_filter='Soak/1000$'   (a quick look)
//   TFJIT_SOAK_MODEL=facemesh build/bin/soak_bench
// The model comes from the TF.js corpus cache (tests/models/fetch_models.sh, which ./test.sh
// runs): TFJIT_MODEL_CACHE, default ~/.cache/tfjit/models.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/corpus_model.h"
#include "benchmark/benchmark.h"
#include "examples/cli_output.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

namespace fs = std::filesystem;

// Resident set size in MiB (/proc/self/statm's second field, in pages).
double RssMiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

double Percentile(std::vector<double> sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p * (sorted.size() - 1)));
  return sorted[i];
}

void BM_Soak(benchmark::State& state) {
  const char* env = std::getenv("TFJIT_SOAK_MODEL");
  const std::string model = env != nullptr ? env : "blazeface";
  const std::string path = bench::CorpusModelPath(model);
  if (!fs::exists(path)) {
    state.SkipWithError(("no model at " + path +
                         " (tests/models/fetch_models.sh fetches the corpus; TFJIT_MODEL_CACHE, "
                         "TFJIT_SOAK_MODEL choose it)")
                            .c_str());
    return;
  }
  SessionOptions options;
  options.jit = JitMode::kAuto;
  options.intra_op_threads = 2;
  auto session = Session::Load(path, options);
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return;
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  uint64_t seed = 1;
  for (const InputInfo& in : (*session)->Inputs()) {
    std::vector<int64_t> dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    feeds.push_back({in.name, cli::RandomTensor(in.dtype, dims, seed++)});
  }
  const std::vector<std::string> fetches = (*session)->DefaultFetches();
  // Warm-up: the compile and the first allocations happen before the start is measured.
  for (int i = 0; i < 10; ++i) {
    if (!(*session)->Run(feeds, fetches).ok()) {
      state.SkipWithError("a warm-up run failed");
      return;
    }
  }
  const double rss_start = RssMiB();
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(state.max_iterations));
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = (*session)->Run(feeds, fetches);
    const auto t1 = std::chrono::steady_clock::now();
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(out);
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  const double rss_end = RssMiB();
  std::sort(ms.begin(), ms.end());
  state.counters["p50_ms"] = Percentile(ms, 0.50);
  state.counters["p99_ms"] = Percentile(ms, 0.99);
  state.counters["max_ms"] = ms.empty() ? 0 : ms.back();
  state.counters["rss_start_MiB"] = rss_start;
  state.counters["rss_end_MiB"] = rss_end;
  state.SetLabel(model + ", 2 threads, jit auto");
}

BENCHMARK(BM_Soak)
    ->Name("Soak/10000")
    ->Iterations(10000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Soak)
    ->Name("Soak/1000")
    ->Iterations(1000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace tfjit
