// Kernel-level benchmarks on one thread, each comparison inside one run (report the ratios):
//   build/bin/kernel_bench
// - Gemm/*: core/gemm.h's float32 GEMM (AVX-512 path where the CPU has it) vs Eigen as tfjit
//   builds it (x86-64-v3) vs Eigen built for x86-64-v4 (bench/eigen_v4_gemm.cc) vs the
//   micro-kernels generated through LLVM for AVX2+FMA and for AVX-512 (impl 3, 4), GFLOP/s.
// - Conv/*: the convolution shapes of the corpus through core/conv2d.h (what the fallback
//   kernels and compiled clusters run) vs native XNNPACK's NHWC convolution operator when
//   libxnnpack-dev is installed (bench only; tfjit never links it).
// - FmaPeak: one core's float32 FMA peak, measured: the yardstick of every "% of peak"
//   (bench/corpus_bench.sh reads it).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <immintrin.h>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "backends/cpu/gemm_kernels.h"
#include "bench/eigen_v4_gemm.h"
#include "benchmark/benchmark.h"
#include "core/conv2d.h"
#include "core/gemm.h"

#ifdef TFJIT_HAVE_XNNPACK
#include <xnnpack.h>
#endif

namespace tfjit {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

void SetFlops(benchmark::State& state, double flops_per_iter) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iter * 1e-9 * state.iterations(), benchmark::Counter::kIsRate);
}

// ---- GEMM: m x k times k x n ----

// kJitAvx2 / kJitAvx512: the micro-kernels generated through LLVM (backends/cpu/gemm_kernels.h)
// in the same driver; the AVX2 ones also run on AVX-512 hosts.
enum GemmImpl { kTfjit = 0, kEigenV3 = 1, kEigenV4 = 2, kJitAvx2 = 3, kJitAvx512 = 4 };

// Installs and forces the generated kernels of impl kJitAvx2 / kJitAvx512, labelling the
// benchmark with their ISA (false: skipped).
bool UseGenerated(benchmark::State& state, GemmImpl impl) {
  const cpu::GemmIsa isa = impl == kJitAvx2 ? cpu::GemmIsa::kAvx2 : cpu::GemmIsa::kAvx512;
  absl::StatusOr<const gemm::MicroKernelSet*> set = cpu::GetGemmMicroKernels(isa);
  if (!set.ok()) {
    state.SkipWithError(std::string(set.status().message()).c_str());
    return false;
  }
  gemm::InstallMicroKernels(*set);
  gemm::SetIsaForTesting(gemm::Isa::kGenerated);
  state.SetLabel(std::string("generated ") + cpu::GemmIsaName(isa));
  return true;
}

void BM_Gemm(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const auto impl = static_cast<GemmImpl>(state.range(3));
  if (impl == kTfjit && !gemm::HostHasAvx512()) state.SetLabel("no AVX-512: generic path");
  if ((impl == kJitAvx2 || impl == kJitAvx512) && !UseGenerated(state, impl)) return;
  std::vector<float> a = Random(m * k, 1), b = Random(k * n, 2), c(static_cast<size_t>(m * n));
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMajor> am(a.data(), m, k), bm(b.data(), k, n);
  Eigen::Map<RowMajor> cm(c.data(), m, n);
  for (auto _ : state) {
    switch (impl) {
      case kTfjit:
        gemm::GemmF32(m, n, k, a.data(), k, b.data(), n, c.data(), n);
        break;
      case kEigenV3:
        cm.noalias() = am * bm;
        break;
      case kEigenV4:
        bench::EigenV4Gemm(m, n, k, a.data(), b.data(), c.data());
        break;
      case kJitAvx2:
      case kJitAvx512:
        gemm::GemmF32(m, n, k, a.data(), k, b.data(), n, c.data(), n);
        break;
    }
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  gemm::SetIsaForTesting(gemm::Isa::kAuto);
  SetFlops(state, 2.0 * m * n * k);
}

void GemmArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k", "impl"});
  // 1024^3, then pointwise convolutions and matmuls of the corpus (m = pixels); then
  // blazepose-lite's narrow outputs on large images, and faceres's (MobileNet v1) 14x14 and
  // 7x7 pointwise convolutions, few rows against wide weights.
  const std::vector<std::vector<int64_t>> shapes = {
      {1024, 1024, 1024}, {2304, 96, 16}, {2304, 24, 96},  {576, 144, 24},   {576, 32, 144},
      {144, 192, 32},     {144, 64, 192}, {36, 576, 96},   {36, 160, 576},   {1, 1000, 1280},
      {4096, 16, 96},     {16384, 8, 32}, {196, 512, 512}, {49, 1024, 1024}, {625, 384, 384}};
  for (const auto& s : shapes) {
    for (int impl : {kTfjit, kEigenV3, kEigenV4, kJitAvx2, kJitAvx512}) {
      b->Args({s[0], s[1], s[2], impl});
    }
  }
}
BENCHMARK(BM_Gemm)->Apply(GemmArgs);

// The AVX-512 GEMM's blocking: register-block rows and the panel count from which `a` is
// copied contiguous (1000: never), interleaved in one run to compare them.
void BM_GemmBlocking(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  if (!gemm::HostHasAvx512()) {
    state.SkipWithError("no AVX-512");
    return;
  }
  std::vector<float> a = Random(m * k, 1), b = Random(k * n, 2), c(static_cast<size_t>(m * n));
  gemm::SetBlockingForTesting(state.range(3), state.range(4));
  for (auto _ : state) {
    gemm::GemmF32(m, n, k, a.data(), k, b.data(), n, c.data(), n);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  gemm::SetBlockingForTesting(0, 0);
  SetFlops(state, 2.0 * m * n * k);
}
void GemmBlockingArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k", "mr", "pack_a"});
  const std::vector<std::vector<int64_t>> shapes = {
      {1024, 1024, 1024}, {2304, 24, 96},  {576, 144, 24},   {576, 32, 144},
      {144, 64, 192},     {196, 512, 512}, {49, 1024, 1024}, {625, 384, 384}};
  for (const auto& s : shapes) {
    for (int64_t mr : {6, 8, 12}) {
      for (int64_t pack_a : {1000, 2}) b->Args({s[0], s[1], s[2], mr, pack_a});
    }
  }
}
BENCHMARK(BM_GemmBlocking)->Apply(GemmBlockingArgs);

// One core's float32 FMA peak: 12 independent chains of fused multiply-adds (more than FMA
// latency x pipes on current x86 cores, so the pipes never wait) in the widest vectors the CPU
// has: zmm with AVX-512F, else ymm with AVX2+FMA. 2 FLOP per lane per FMA.
constexpr int kChains = 12;

// `seed` comes from outside each call, so nothing can be folded or hoisted out of the timing.
__attribute__((target("avx512f"), noinline)) float FmaChains512(float seed, int64_t steps) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(seed * static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(0.9999999f), b = _mm512_set1_ps(seed);
  for (int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  }
  __m512 sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm512_add_ps(sum, acc[k]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

__attribute__((target("avx2,fma"), noinline)) float FmaChains256(float seed, int64_t steps) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(seed * static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(0.9999999f), b = _mm256_set1_ps(seed);
  for (int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (int k = 0; k < kChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  }
  __m256 sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm256_add_ps(sum, acc[k]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

void BM_FmaPeak(benchmark::State& state) {
  const bool zmm = __builtin_cpu_supports("avx512f");
  if (!zmm && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    state.SkipWithError("no FMA unit: this CPU has neither AVX-512F nor AVX2+FMA");
    return;
  }
  constexpr int64_t kSteps = 1 << 16;
  float seed = 1e-7f;
  for (auto _ : state) {
    benchmark::DoNotOptimize(seed);
    benchmark::DoNotOptimize(zmm ? FmaChains512(seed, kSteps) : FmaChains256(seed, kSteps));
  }
  SetFlops(state, 2.0 * (zmm ? 16 : 8) * kChains * static_cast<double>(kSteps));
  state.SetLabel(zmm ? "avx512f, zmm" : "avx2+fma, ymm");
}
BENCHMARK(BM_FmaPeak);

// ---- Convolutions of the corpus (NHWC, SAME padding, batch 1) ----

struct ConvShape {
  const char* name;
  int64_t h, w, c_in, k, c_out, stride;
  bool depthwise;
};

const ConvShape kConvs[] = {
    {"3x3 56x56x64->64 (XNNPACK bar)", 56, 56, 64, 3, 64, 1, false},
    {"movenet stem 3x3/2 192x192x3->32", 192, 192, 3, 3, 32, 2, false},
    {"mobilenet 1x1 48x48x96->24", 48, 48, 96, 1, 24, 1, false},
    {"mobilenet 1x1 24x24x32->192", 24, 24, 32, 1, 192, 1, false},
    {"mobilenet dw 3x3 96x96x96", 96, 96, 96, 3, 96, 1, true},
    {"mobilenet dw 3x3/2 48x48x144", 48, 48, 144, 3, 144, 2, true},
    {"mobilenet dw 3x3 12x12x576", 12, 12, 576, 3, 576, 1, true},
    {"blazeface dw 5x5 64x64x24", 64, 64, 24, 5, 24, 1, true},
    {"blazepose-lite dw 3x3 128x128x8", 128, 128, 8, 3, 8, 1, true},
    {"nanodet 3x3 52x52x128->128", 52, 52, 128, 3, 128, 1, false},
    {"nanodet 3x3 26x26x128->128", 26, 26, 128, 3, 128, 1, false},
    {"nanodet 3x3 13x13x128->128", 13, 13, 128, 3, 128, 1, false},
    {"gender 3x3 62x62x8->8", 62, 62, 8, 3, 8, 1, false},
    {"gender 3x3 64x64x1->8", 64, 64, 1, 3, 8, 1, false},
    {"antispoof 3x3 64x64x16->16", 64, 64, 16, 3, 16, 1, false},
    {"blazepose mask 3x3 256x256x8->1", 256, 256, 8, 3, 1, 1, false},
    {"antispoof stem 3x3 128x128x3->64", 128, 128, 3, 3, 64, 1, false},
};

conv::Conv2DParams Params(const ConvShape& s) {
  conv::Conv2DParams p;
  p.in_h = s.h;
  p.in_w = s.w;
  p.in_c = s.c_in;
  p.k_h = p.k_w = s.k;
  p.out_c = s.c_out;
  p.stride_h = p.stride_w = s.stride;
  p.out_h = (s.h + s.stride - 1) / s.stride;
  p.out_w = (s.w + s.stride - 1) / s.stride;
  const int64_t pad_h = std::max<int64_t>(0, (p.out_h - 1) * s.stride + s.k - s.h);
  const int64_t pad_w = std::max<int64_t>(0, (p.out_w - 1) * s.stride + s.k - s.w);
  p.pad_top = pad_h / 2;
  p.pad_left = pad_w / 2;
  p.groups = s.depthwise ? s.c_in : 1;
  return p;
}

double ConvFlops(const conv::Conv2DParams& p) {
  return 2.0 * p.out_h * p.out_w * p.out_c * p.k_h * p.k_w * p.in_per_group();
}

// Times conv::Conv2D of `p` on one thread (random input and filter), the filter packed
// beforehand when `pack` is set and the path packs.
void TimeConv(benchmark::State& state, const conv::Conv2DParams& p, bool pack) {
  std::vector<float> x = Random(p.in_h * p.in_w * p.in_c, 3);
  std::vector<float> f = Random(p.k_h * p.k_w * p.in_per_group() * p.out_c, 4);
  std::vector<float> y(static_cast<size_t>(p.out_h * p.out_w * p.out_c));
  std::vector<float> packed;
  const gemm::Packing packing = conv::FilterPackingOf(p);
  if (pack && packing.blocks > 0) {
    packed.resize(static_cast<size_t>(gemm::PackedFloats(packing)));
    gemm::Pack(packing, f.data(), packed.data());
  }
  const conv::ParallelForFn serial = [](int64_t n, int64_t,
                                        const std::function<void(int64_t, int64_t)>& fn) {
    if (n > 0) fn(0, n);
  };
  for (auto _ : state) {
    conv::Conv2D<float>(
        p, x.data(), f.data(), y.data(), serial, [](int64_t, int64_t) {},
        packed.empty() ? nullptr : packed.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

// packed = 1: the filter packed once beforehand (gemm::Pack), as compiled clusters run
// constant filters; 0: packed on every call, as the fallback kernels run. impl: 0 the host's
// default path (AVX-512 intrinsics where there is AVX-512), 1 the generic one (Eigen GEMM,
// scalar depthwise loop), 3 / 4 the kernels generated for AVX2 / AVX-512 (GemmImpl).
void BM_ConvTfjit(benchmark::State& state) {
  const ConvShape& s = kConvs[state.range(0)];
  const conv::Conv2DParams p = Params(s);
  const auto impl = static_cast<GemmImpl>(state.range(2));
  if (impl == kEigenV3) gemm::SetIsaForTesting(gemm::Isa::kGeneric);
  if ((impl == kJitAvx2 || impl == kJitAvx512) && !UseGenerated(state, impl)) return;
  state.SetLabel(s.name);
  TimeConv(state, p, state.range(1) == 1);
  gemm::SetIsaForTesting(gemm::Isa::kAuto);
  SetFlops(state, ConvFlops(p));
}

#ifdef TFJIT_HAVE_XNNPACK
void BM_ConvXnnpack(benchmark::State& state) {
  const ConvShape& s = kConvs[state.range(0)];
  const conv::Conv2DParams p = Params(s);
  state.SetLabel(s.name);
  if (xnn_initialize(nullptr) != xnn_status_success) {
    state.SkipWithError("xnn_initialize failed");
    return;
  }
  // XNNPACK wants the filter as [out_c, k_h, k_w, in_c / groups] (depthwise: [1, k_h, k_w,
  // c]); the values do not matter for speed.
  std::vector<float> x = Random(p.in_h * p.in_w * p.in_c + 16, 3);
  std::vector<float> f = Random(p.k_h * p.k_w * p.in_per_group() * p.out_c, 4);
  std::vector<float> bias(static_cast<size_t>(p.out_c), 0.0f);
  std::vector<float> y(static_cast<size_t>(p.out_h * p.out_w * p.out_c + 16));
  const int64_t pad_h = std::max<int64_t>(0, (p.out_h - 1) * s.stride + s.k - s.h);
  const int64_t pad_w = std::max<int64_t>(0, (p.out_w - 1) * s.stride + s.k - s.w);
  xnn_operator_t op = nullptr;
  const uint32_t groups = static_cast<uint32_t>(p.groups);
  xnn_status st = xnn_create_convolution2d_nhwc_f32(
      static_cast<uint32_t>(p.pad_top), static_cast<uint32_t>(pad_w - p.pad_left),
      static_cast<uint32_t>(pad_h - p.pad_top), static_cast<uint32_t>(p.pad_left),
      static_cast<uint32_t>(s.k), static_cast<uint32_t>(s.k), static_cast<uint32_t>(s.stride),
      static_cast<uint32_t>(s.stride), 1, 1, groups, static_cast<size_t>(p.in_per_group()),
      static_cast<size_t>(p.out_c / groups), static_cast<size_t>(p.in_c),
      static_cast<size_t>(p.out_c), f.data(), bias.data(), -INFINITY, INFINITY,
      s.depthwise ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0, &op);
  if (st != xnn_status_success) {
    state.SkipWithError("xnn_create_convolution2d_nhwc_f32 failed");
    return;
  }
  st = xnn_setup_convolution2d_nhwc_f32(op, 1, static_cast<size_t>(p.in_h),
                                        static_cast<size_t>(p.in_w), x.data(), y.data(), nullptr);
  if (st != xnn_status_success) {
    state.SkipWithError("xnn_setup_convolution2d_nhwc_f32 failed");
    xnn_delete_operator(op);
    return;
  }
  for (auto _ : state) {
    xnn_run_operator(op, nullptr);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  xnn_delete_operator(op);
  SetFlops(state, ConvFlops(p));
}
#endif

void ConvArgs(benchmark::internal::Benchmark* b) {
  b->ArgName("shape");
  for (int64_t i = 0; i < static_cast<int64_t>(sizeof(kConvs) / sizeof(kConvs[0])); ++i) {
    b->Arg(i);
  }
}
void ConvImplArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape", "packed", "impl"});
  for (int64_t i = 0; i < static_cast<int64_t>(sizeof(kConvs) / sizeof(kConvs[0])); ++i) {
    b->Args({i, 0, kTfjit});
    if (kConvs[i].depthwise) {
      // Depthwise filters are read where they are: no packing.
      for (int64_t impl : {kEigenV3, kJitAvx2, kJitAvx512}) b->Args({i, 0, impl});
      continue;
    }
    for (int64_t impl : {kTfjit, kJitAvx2, kJitAvx512}) b->Args({i, 1, impl});
  }
}
BENCHMARK(BM_ConvTfjit)->Apply(ConvImplArgs);

// The default path's convolutions (filters packed) under each AVX-512 GEMM blocking
// (BM_GemmBlocking's two settings).
void BM_ConvBlocking(benchmark::State& state) {
  if (!gemm::HostHasAvx512()) {
    state.SkipWithError("no AVX-512");
    return;
  }
  gemm::SetBlockingForTesting(state.range(1), state.range(2));
  state.SetLabel(kConvs[state.range(0)].name);
  const conv::Conv2DParams p = Params(kConvs[state.range(0)]);
  TimeConv(state, p, /*pack=*/true);
  gemm::SetBlockingForTesting(0, 0);
  SetFlops(state, ConvFlops(p));
}
void ConvBlockingArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape", "mr", "pack_a"});
  for (int64_t i = 0; i < static_cast<int64_t>(sizeof(kConvs) / sizeof(kConvs[0])); ++i) {
    if (kConvs[i].depthwise) continue;
    for (int64_t mr : {6, 12}) {
      for (int64_t pack_a : {1000, 2}) b->Args({i, mr, pack_a});
    }
  }
}
BENCHMARK(BM_ConvBlocking)->Apply(ConvBlockingArgs);

// Convolutions to few features: output pixels in the lanes (narrow = 1, conv::Conv2DNarrow)
// or the row GEMM (0); impl 0: the host's default path, 3: AVX2 (the generated AVX2 GEMM
// and the AVX2 narrow row, as an AVX2-only host runs them).
void BM_ConvNarrow(benchmark::State& state) {
  const auto impl = static_cast<GemmImpl>(state.range(2));
  if (impl == kJitAvx2 && !UseGenerated(state, impl)) return;
  gemm::SetNarrowConvForTesting(state.range(1) == 1);
  const conv::Conv2DParams p = Params(kConvs[state.range(0)]);
  state.SetLabel(
      absl::StrCat(kConvs[state.range(0)].name, conv::UsesNarrow(p) ? ", narrow" : ", row GEMM"));
  TimeConv(state, p, /*pack=*/true);
  gemm::SetNarrowConvForTesting(true);
  gemm::SetIsaForTesting(gemm::Isa::kAuto);
  SetFlops(state, ConvFlops(p));
}
void ConvNarrowArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape", "narrow", "impl"});
  for (int64_t i = 0; i < static_cast<int64_t>(sizeof(kConvs) / sizeof(kConvs[0])); ++i) {
    if (kConvs[i].depthwise || kConvs[i].c_out > gemm::kMaxNarrowOutputs) continue;
    for (int64_t impl : {kTfjit, kJitAvx2}) {
      for (int64_t narrow : {0, 1}) b->Args({i, narrow, impl});
    }
  }
}
BENCHMARK(BM_ConvNarrow)->Apply(ConvNarrowArgs);
#ifdef TFJIT_HAVE_XNNPACK
BENCHMARK(BM_ConvXnnpack)->Apply(ConvArgs);
#endif

}  // namespace
}  // namespace tfjit
