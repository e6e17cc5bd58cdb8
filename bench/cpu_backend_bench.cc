// CPU backend benchmarks: a fused elementwise chain and a matmul, each run by the JIT (inline
// and on a thread pool) and by the evaluator, so speedups are measured in the same run; plus
// compile time.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backends/cpu/cpu_backend.h"
#include "benchmark/benchmark.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "core/thread_pool.h"

namespace tfjit {
namespace {

std::string ChainModule(int64_t n) {
  return absl::StrReplaceAll(R"(HloModule chain

ENTRY %main (x: f32[$N], y: f32[$N]) -> f32[$N] {
  %x = f32[$N] parameter(0)
  %y = f32[$N] parameter(1)
  %m = f32[$N] multiply(%x, %y)
  %a = f32[$N] add(%m, %x)
  %s = f32[$N] subtract(%a, %y)
  %z = f32[] constant(0)
  %zb = f32[$N] broadcast(%z), dimensions={}
  ROOT %r = f32[$N] maximum(%s, %zb)
}
)",
                             {{"$N", absl::StrCat(n)}});
}

std::string MatmulModule(int64_t n) {
  return absl::StrReplaceAll(R"(HloModule matmul

ENTRY %main (a: f32[$N,$N], b: f32[$N,$N]) -> f32[$N,$N] {
  %a = f32[$N,$N] parameter(0)
  %b = f32[$N,$N] parameter(1)
  ROOT %d = f32[$N,$N] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                             {{"$N", absl::StrCat(n)}});
}

std::vector<hlo::Literal> Args(const hlo::Module& module) {
  std::vector<hlo::Literal> args;
  for (const hlo::Instruction* p : module.entry()->parameters()) {
    hlo::Literal l(p->shape());
    float* d = l.data<float>();
    for (int64_t i = 0; i < p->shape().num_elements(); ++i) d[i] = static_cast<float>(i % 17) - 8;
    args.push_back(std::move(l));
  }
  return args;
}

// mode 0: JIT inline, 1: JIT on a 2-thread pool, 2: evaluator.
void RunModule(benchmark::State& state, const std::string& text, int64_t bytes, int64_t flops) {
  auto module = hlo::ParseAndVerifyModule(text);
  if (!module.ok()) return state.SkipWithError(std::string(module.status().message()).c_str());
  std::vector<hlo::Literal> args = Args(**module);
  const int mode = static_cast<int>(state.range(1));
  if (mode == 2) {
    for (auto _ : state) benchmark::DoNotOptimize(hlo::Evaluate(**module, args));
  } else {
    auto exe = cpu::CreateCpuBackend()->Compile(std::move(*module));
    if (!exe.ok()) return state.SkipWithError(std::string(exe.status().message()).c_str());
    std::vector<Tensor> tensors;
    for (const hlo::Literal& a : args) tensors.push_back(a.tensor());
    ThreadPool pool(2);
    for (auto _ : state)
      benchmark::DoNotOptimize((*exe)->Run(tensors, mode == 1 ? &pool : nullptr));
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  if (flops > 0) {
    state.counters["GFLOP/s"] =
        benchmark::Counter(static_cast<double>(flops) * state.iterations(),
                           benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  }
  state.SetLabel(mode == 0 ? "jit" : mode == 1 ? "jit-pool2" : "evaluator");
}

void BM_ElementwiseChain(benchmark::State& state) {
  const int64_t n = state.range(0);
  RunModule(state, ChainModule(n), 3 * n * 4, 0);
}
BENCHMARK(BM_ElementwiseChain)
    ->ArgsProduct({{1 << 10, 1 << 16, 1 << 20, 1 << 24}, {0, 1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The bandwidth bar for BM_ElementwiseChain (which also reads two arrays and writes one): a
// STREAM triad a = b + s * c, compiled into this binary, one thread. The fraction of triad
// bandwidth a fused chain reaches is the ratio of their bytes_per_second at the same size:
//   build/bin/cpu_backend_bench --benchmark_filter='Triad|ElementwiseChain/16777216/0'
void BM_Triad(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n), 1.0f),
      c(static_cast<size_t>(n), 2.0f);
  const float s = 3.0f;
  for (auto _ : state) {
    float* __restrict pa = a.data();
    const float* __restrict pb = b.data();
    const float* __restrict pc = c.data();
    for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    benchmark::DoNotOptimize(a.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 3 * n * 4);
}
BENCHMARK(BM_Triad)->Arg(1 << 20)->Arg(1 << 24)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  RunModule(state, MatmulModule(n), 3 * n * n * 4, 2 * n * n * n);
}
BENCHMARK(BM_Matmul)
    ->ArgsProduct({{64, 256, 1024}, {0, 1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_CompileChain(benchmark::State& state) {
  const std::string text = ChainModule(1 << 16);
  for (auto _ : state) {
    auto module = hlo::ParseAndVerifyModule(text);
    if (!module.ok()) return state.SkipWithError(std::string(module.status().message()).c_str());
    benchmark::DoNotOptimize(cpu::CreateCpuBackend()->Compile(std::move(*module)));
  }
}
BENCHMARK(BM_CompileChain)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tfjit
