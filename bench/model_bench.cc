// Model benchmarks through the Session, each comparison in the same run (report the ratio of
// the times): the demo MLP uncompiled (--jit none: fallback Eigen kernels) vs auto-clustered
// JIT, and reduce_sum(x + y * z) op by op vs compiled.
//   build/bin/model_bench --benchmark_filter=Demo
#include <filesystem>
#include <fstream>
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
  auto session = Session::Load(DemoPath(), options);
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

// reduce_sum(x + y * z) over 16M floats, XLA's fusion example: op by op on the runtime's
// kernels (--jit none: y*z and x+y*z go to memory) vs one compiled cluster (--jit all).
//   build/bin/model_bench --benchmark_filter=ReduceSum
std::string ReduceSumGraph() {
  std::string g;
  for (const char* name : {"x", "y", "z"}) {
    g += std::string("node { name: \"") + name +
         "\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
  }
  g += R"(node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }
node { name: "yz" op: "Mul" input: "y" input: "z" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "s" op: "AddV2" input: "x" input: "yz" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "sum" op: "Sum" input: "s" input: "axis" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tidx" value { type: DT_INT32 } } attr { key: "keep_dims" value { b: false } } }
)";
  return g;
}

void RunReduceSum(benchmark::State& state, JitMode jit) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "tfjit_bench_reduce_sum.pbtxt").string();
  std::ofstream(path) << ReduceSumGraph();
  SessionOptions options;
  options.jit = jit;
  options.intra_op_threads = options.inter_op_threads = static_cast<int>(state.range(0));
  auto session = Session::Load(path, options);
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return;
  }
  const int64_t n = int64_t{1} << 24;
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", cli::RandomTensor(DType::kFloat32, {n}, 1)},
      {"y", cli::RandomTensor(DType::kFloat32, {n}, 2)},
      {"z", cli::RandomTensor(DType::kFloat32, {n}, 3)}};
  if (!(*session)->Run(feeds, {"sum"}).ok()) {
    state.SkipWithError("run failed");
    return;
  }
  for (auto _ : state) {
    auto out = (*session)->Run(feeds, {"sum"});
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * 3 * n * 4);  // the inputs, read once
}
void BM_ReduceSumOpByOp(benchmark::State& state) { RunReduceSum(state, JitMode::kNone); }
void BM_ReduceSumCompiled(benchmark::State& state) { RunReduceSum(state, JitMode::kAll); }
BENCHMARK(BM_ReduceSumOpByOp)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReduceSumCompiled)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Compile time of the demo's clusters (a fresh session each iteration: no cache).
void BM_DemoCompile(benchmark::State& state) {
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"input", cli::RandomTensor(DType::kFloat32, {64, 256}, 1)}};
  for (auto _ : state) {
    auto session = Session::Load(DemoPath());
    RunStats stats;
    auto out = (*session)->Run(feeds, {"output"}, &stats);
    state.counters["compile_ms"] = stats.compile_ms;
  }
}
BENCHMARK(BM_DemoCompile)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace tfjit
