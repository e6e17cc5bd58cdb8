// Model benchmarks: the demo MLP through the Session, uncompiled (--jit none: fallback Eigen
// kernels) vs auto-clustered JIT, in the same run. Report the ratio of the two times.
//   build/bin/model_bench --benchmark_filter=Demo
#include <filesystem>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "examples/cli_output.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

std::string DemoPath() {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "examples" / "models" / "demo_mlp.pbtxt")
      .string();
}

void RunDemo(benchmark::State& state, JitMode jit) {
  SessionOptions options;
  options.jit = jit;
  auto session = Session::Load(DemoPath(),
                               options);
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return;
  }
  const int64_t batch = state.range(0);
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"input", cli::RandomTensor(DType::kFloat32, {batch, 256}, 1)}};
  const std::vector<std::string> fetches = {"output"};
  if (!(*session)->Run(feeds, fetches).ok()) {  // warm-up: compiles outside the timed loop
    state.SkipWithError("run failed");
    return;
  }
  for (auto _ : state) {
    auto out = (*session)->Run(feeds, fetches);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_DemoUncompiled(benchmark::State& state) { RunDemo(state, JitMode::kNone); }
void BM_DemoJitAuto(benchmark::State& state) { RunDemo(state, JitMode::kAuto); }
BENCHMARK(BM_DemoUncompiled)->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DemoJitAuto)->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

// Compile time of the demo's clusters (a fresh session each iteration: no cache).
void BM_DemoCompile(benchmark::State& state) {
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"input", cli::RandomTensor(DType::kFloat32, {64, 256}, 1)}};
  for (auto _ : state) {
    auto session =
        Session::Load(DemoPath());
    RunStats stats;
    auto out = (*session)->Run(feeds, {"output"}, &stats);
    state.counters["compile_ms"] = stats.compile_ms;
  }
}
BENCHMARK(BM_DemoCompile)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace tfjit
