// Symbolic vs static executables (issue 25): for corpus models with a -1 batch dim, the
// latency of one run at batch 1, 8 and 64 through a session that compiles each shape (--shapes
// static) and through one whose single symbolic executable serves every batch size >= 2
// (--shapes symbolic; batch 1 stays static there, so its ratio is 1 by construction). The two
// sessions alternate run by run in one process; the counters are the medians and their ratio
// (symbolic / static).
//   build/bin/symbolic_bench                          (every model and batch; a few minutes)
//   build/bin/symbolic_bench --benchmark_filter=age   (one model)
// The models come from the TF.js corpus cache (TFJIT_MODEL_CACHE, default ~/.cache/tfjit/models).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
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

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void BM_SymbolicVsStatic(benchmark::State& state, const std::string& model, int64_t batch) {
  const std::string path = bench::CorpusModelPath(model);
  if (!fs::exists(path)) {
    state.SkipWithError(("no model at " + path).c_str());
    return;
  }
  std::unique_ptr<Session> sessions[2];
  for (int s = 0; s < 2; ++s) {
    SessionOptions options;
    options.shapes = s == 0 ? ShapeMode::kStatic : ShapeMode::kSymbolic;
    auto loaded = Session::Load(path, options);
    if (!loaded.ok()) {
      state.SkipWithError(std::string(loaded.status().message()).c_str());
      return;
    }
    sessions[s] = std::move(*loaded);
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  uint64_t seed = 1;
  for (const InputInfo& in : sessions[0]->Inputs()) {
    std::vector<int64_t> dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? batch : d;
    feeds.push_back({in.name, cli::RandomTensor(in.dtype, dims, seed++)});
  }
  const std::vector<std::string> fetches = sessions[0]->DefaultFetches();
  std::string shape_class;
  for (int s = 0; s < 2; ++s) {  // compiles (the symbolic session its one executable)
    RunStats stats;
    auto out = sessions[s]->Run(feeds, fetches, &stats);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    if (s == 1 && !stats.compiles.empty()) shape_class = stats.compiles[0].shape_class;
  }
  std::vector<double> ms[2];
  for (auto _ : state) {
    for (int s = 0; s < 2; ++s) {
      const auto t0 = std::chrono::steady_clock::now();
      auto out = sessions[s]->Run(feeds, fetches);
      ms[s].push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      benchmark::DoNotOptimize(out);
    }
  }
  const double static_ms = Median(ms[0]);
  const double symbolic_ms = Median(ms[1]);
  state.counters["static_ms"] = static_ms;
  state.counters["symbolic_ms"] = symbolic_ms;
  state.counters["ratio"] = static_ms > 0 ? symbolic_ms / static_ms : 0;
  state.SetLabel(shape_class);
}

// Models of the corpus with a -1 batch dim; the larger inputs (192 and up) at batch 1 and 8.
void Register() {
  const std::vector<std::string> small = {"age",      "emotion",    "gender", "antispoof",
                                          "liveness", "mobileface", "iris"};
  const std::vector<std::string> large = {"facemesh", "blazepose-lite", "facemesh-detection-short",
                                          "gear", "facemesh-attention"};
  for (const std::string& m : small) {
    for (int64_t b : {1, 8, 64}) {
      benchmark::RegisterBenchmark(("SymbolicVsStatic/" + m + "/" + std::to_string(b)).c_str(),
                                   BM_SymbolicVsStatic, m, b)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(b == 64 ? 9 : 21);
    }
  }
  for (const std::string& m : large) {
    for (int64_t b : {1, 8}) {
      benchmark::RegisterBenchmark(("SymbolicVsStatic/" + m + "/" + std::to_string(b)).c_str(),
                                   BM_SymbolicVsStatic, m, b)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(11);
    }
  }
}

const int registered = (Register(), 0);

}  // namespace
}  // namespace tfjit
