// tfjit-gpu-check: the GPU device check as one self-contained binary (scripts/gpu_check.sh
// builds it here and runs it on a GPU machine, which has no LLVM and no package registry).
//
//   tfjit-gpu-check test [gtest flags]   the differential suite on GPU:0 against the evaluator
//                                        (random modules, GEMM shapes, the HLO corpus) and
//                                        known issue A with real devices
//   tfjit-gpu-check bench                fused elementwise bandwidth against a device-to-device
//                                        copy; tfjit's GEMM against cuBLAS called directly
//   tfjit-gpu-check model PATH [RUNS]    a real model's latency on GPU:0 against CPU:0, and
//                                        the largest difference between their outputs
//
// Every line of results starts with "RESULT " so the script can collect them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/gpu/gpu_backend.h"
#include "compiler/hlo/parser.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "%s\n", StatusToString(status).c_str());
  return 1;
}

// out = a * b + c over n float32 elements: one fused kernel reading 3n and writing n floats.
std::string TriadModule(int64_t n) {
  const std::string s = absl::StrCat("f32[", n, "]");
  return absl::StrCat("HloModule triad\n\nENTRY %main (a: ", s, ", b: ", s, ", c: ", s, ") -> ", s,
                      " {\n  %a = ", s, " parameter(0)\n  %b = ", s, " parameter(1)\n  %c = ", s,
                      " parameter(2)\n  %m = ", s, " multiply(%a, %b)\n  ROOT %r = ", s,
                      " add(%m, %c)\n}\n");
}

std::string DotModule(int64_t m, int64_t n, int64_t k) {
  return absl::StrCat("HloModule gemm\n\nENTRY %main (a: f32[", m, ",", k, "], b: f32[", k, ",", n,
                      "]) -> f32[", m, ",", n, "] {\n  %a = f32[", m, ",", k,
                      "] parameter(0)\n  %b = f32[", k, ",", n, "] parameter(1)\n  ROOT %d = f32[",
                      m, ",", n,
                      "] dot(%a, %b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}\n}\n");
}

absl::StatusOr<double> TimeModule(const backends::Backend& backend, const std::string& text,
                                  int iterations) {
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<backends::Executable> exe,
                         backend.Compile(std::move(module)));
  return gpu::TimeStepsOnDevice(*exe, iterations);
}

int Bench() {
  auto backend = gpu::CreateGpuBackend();
  if (!backend.ok()) return Fail(backend.status());
  // Bandwidth: 64 Mi floats per array (256 MiB), well past the 60 MB L2.
  const int64_t n = int64_t{64} << 20;
  auto copy_ms = gpu::TimeDeviceCopy(4 * n, 20);
  if (!copy_ms.ok()) return Fail(copy_ms.status());
  auto triad_ms = TimeModule(**backend, TriadModule(n), 20);
  if (!triad_ms.ok()) return Fail(triad_ms.status());
  // Bytes read and written: the copy 2 x 4n, the triad 4 x 4n.
  const double copy_gbs = 2.0 * 4 * n / (*copy_ms * 1e6);
  const double triad_gbs = 4.0 * 4 * n / (*triad_ms * 1e6);
  std::printf("RESULT bandwidth copy_GBps=%.0f fused_triad_GBps=%.0f fraction_of_copy=%.2f\n",
              copy_gbs, triad_gbs, triad_gbs / copy_gbs);
  for (int size : {1024, 4096, 8192}) {
    auto direct = gpu::TimeCublasSgemm(size, size, size, 10);
    if (!direct.ok()) return Fail(direct.status());
    auto ours = TimeModule(**backend, DotModule(size, size, size), 10);
    if (!ours.ok()) return Fail(ours.status());
    const double flops = 2.0 * size * size * size;
    std::printf("RESULT gemm n=%d cublas_TFLOPs=%.1f tfjit_TFLOPs=%.1f ratio=%.3f\n", size,
                flops / (*direct * 1e9), flops / (*ours * 1e9), *direct / *ours);
  }
  return 0;
}

// Deterministic inputs: every unknown dim is 1, values in [-1, 1).
std::vector<std::pair<std::string, Tensor>> Feeds(const Session& session) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  uint32_t state = 12345;
  for (const InputInfo& in : session.Inputs()) {
    std::vector<int64_t> dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    Tensor t(in.dtype, dims);
    if (in.dtype == DType::kFloat32) {
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        state = state * 1664525u + 1013904223u;
        t.data<float>()[i] = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;
      }
    }
    feeds.emplace_back(in.name, std::move(t));
  }
  return feeds;
}

int Model(const std::string& path, int runs) {
  std::vector<Tensor> outputs[2];
  double median_ms[2] = {0, 0};
  const char* devices[2] = {"cpu:0", "gpu:0"};
  for (int k = 0; k < 2; ++k) {
    SessionOptions options;
    options.device = devices[k];
    options.jit = JitMode::kAuto;
    auto session = Session::Load(path, options);
    if (!session.ok()) return Fail(session.status());
    const auto feeds = Feeds(**session);
    const std::vector<std::string> fetches = (*session)->DefaultFetches();
    std::vector<double> times;
    for (int r = 0; r < runs + 1; ++r) {  // the first run compiles
      RunStats stats;
      const auto t0 = std::chrono::steady_clock::now();
      auto out = (*session)->Run(feeds, fetches, &stats);
      if (!out.ok()) return Fail(out.status());
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (r == 0) {
        std::printf(
            "RESULT model device=%s first_run_ms=%.1f clusters=%d nodes_compiled=%d/%d "
            "fallbacks=%d\n",
            devices[k], ms, stats.clusters, stats.nodes_compiled, stats.nodes_total,
            stats.fallbacks);
        // Where the clusters are and why nodes stay out (the log, not the RESULT lines).
        if (auto explain = (*session)->Explain(fetches); explain.ok()) {
          std::fprintf(stderr, "explain on %s:\n%s\n", devices[k], explain->c_str());
        }
        outputs[k] = std::move(*out);
        continue;
      }
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    median_ms[k] = times[times.size() / 2];
  }
  double max_diff = 0;
  for (size_t i = 0; i < outputs[0].size() && i < outputs[1].size(); ++i) {
    const Tensor& a = outputs[0][i];
    const Tensor& b = outputs[1][i];
    if (a.dtype() != DType::kFloat32 || b.dtype() != DType::kFloat32) continue;
    for (int64_t j = 0; j < a.num_elements() && j < b.num_elements(); ++j) {
      max_diff = std::max(max_diff,
                          static_cast<double>(std::fabs(a.data<float>()[j] - b.data<float>()[j])));
    }
  }
  std::printf(
      "RESULT model path=%s cpu_ms=%.2f gpu_ms=%.2f gpu_speedup=%.2f "
      "max_abs_diff_gpu_vs_cpu=%.3g\n",
      path.c_str(), median_ms[0], median_ms[1], median_ms[0] / median_ms[1], max_diff);
  return 0;
}

}  // namespace
}  // namespace tfjit

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "test") {
    // gtest sees the flags after "test".
    std::vector<char*> args = {argv[0]};
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    int n = static_cast<int>(args.size());
    ::testing::InitGoogleTest(&n, args.data());
    return RUN_ALL_TESTS();
  }
  if (mode == "bench") return tfjit::Bench();
  if (mode == "model" && argc > 2) return tfjit::Model(argv[2], argc > 3 ? std::atoi(argv[3]) : 20);
  std::fprintf(stderr, "usage: %s test [gtest flags] | bench | model PATH [RUNS]\n", argv[0]);
  return 2;
}
