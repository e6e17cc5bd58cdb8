// Implementations of the runtime ABI (runtime_abi.h): parallel-for over tfjit::ThreadPool,
// Eigen-backed batched GEMM and the Philox fills of core/random_fill.h.
#define EIGEN_USE_THREADS
#include "backends/cpu/runtime_abi.h"

#include "core/random_fill.h"
#include "core/thread_pool.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tfjit::cpu {
namespace {

template <typename T>
void Matmul(RunContext* ctx, T* out, const T* lhs, const T* rhs, int64_t batch, int64_t m,
            int64_t n, int64_t k, bool transpose_lhs, bool transpose_rhs) {
  using ConstMatrix =
      Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>, Eigen::Unaligned>;
  // Contract lhs dim (1, or 0 when transposed) with rhs dim (0, or 1 when transposed).
  Eigen::array<Eigen::IndexPair<Eigen::Index>, 1> dims = {
      Eigen::IndexPair<Eigen::Index>(transpose_lhs ? 0 : 1, transpose_rhs ? 1 : 0)};
  for (int64_t b = 0; b < batch; ++b) {
    ConstMatrix a(lhs + b * m * k, transpose_lhs ? k : m, transpose_lhs ? m : k);
    ConstMatrix c(rhs + b * k * n, transpose_rhs ? n : k, transpose_rhs ? k : n);
    Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>, Eigen::Unaligned> o(out + b * m * n,
                                                                               m, n);
    if (k == 0) {
      o.setZero();
    } else if (ctx != nullptr && ctx->pool != nullptr && m * n * k >= (1 << 15)) {
      o.device(*ctx->pool->eigen_device()) = a.contract(c, dims);
    } else {
      o = a.contract(c, dims);
    }
  }
}

}  // namespace

extern "C" {

void tfjit_cpu_parallel_for(RunContext* ctx, KernelFn kernel, void** buffers, int64_t n,
                            int64_t cost_per_unit) {
  if (n <= 0) return;
  if (ctx == nullptr || ctx->pool == nullptr || n == 1) {
    kernel(buffers, ctx, 0, n);
    return;
  }
  ctx->pool->ParallelFor(n, cost_per_unit, [&](int64_t begin, int64_t end) {
    kernel(buffers, ctx, begin, end);
  });
}

void tfjit_cpu_matmul_f32(RunContext* ctx, float* out, const float* lhs, const float* rhs,
                          int64_t batch, int64_t m, int64_t n, int64_t k, int32_t transpose_lhs,
                          int32_t transpose_rhs) {
  Matmul<float>(ctx, out, lhs, rhs, batch, m, n, k, transpose_lhs != 0, transpose_rhs != 0);
}

void tfjit_cpu_matmul_f64(RunContext* ctx, double* out, const double* lhs, const double* rhs,
                          int64_t batch, int64_t m, int64_t n, int64_t k, int32_t transpose_lhs,
                          int32_t transpose_rhs) {
  Matmul<double>(ctx, out, lhs, rhs, batch, m, n, k, transpose_lhs != 0, transpose_rhs != 0);
}

void tfjit_cpu_philox_fill(RunContext* ctx, int32_t distribution, int32_t dtype,
                           const uint64_t* state, void* out, int64_t n) {
  if (n <= 0) return;
  const auto dist = static_cast<random::RandomDistribution>(distribution);
  const DType type = static_cast<DType>(dtype);
  const random::PhiloxState s = random::StateFromU64x3(state);
  if (ctx == nullptr || ctx->pool == nullptr || n < 1024) {
    random::FillRandom(dist, type, s, out, 0, n);
    return;
  }
  ctx->pool->ParallelFor(n, random::RandomFillCostPerElement(dist),
                         [&](int64_t begin, int64_t end) {
                           random::FillRandom(dist, type, s, out, begin, end);
                         });
}

}  // extern "C"

std::vector<std::pair<const char*, void*>> RuntimeSymbols() {
  return {
      {"tfjit_cpu_parallel_for", reinterpret_cast<void*>(&tfjit_cpu_parallel_for)},
      {"tfjit_cpu_matmul_f32", reinterpret_cast<void*>(&tfjit_cpu_matmul_f32)},
      {"tfjit_cpu_matmul_f64", reinterpret_cast<void*>(&tfjit_cpu_matmul_f64)},
      {"tfjit_cpu_philox_fill", reinterpret_cast<void*>(&tfjit_cpu_philox_fill)},
  };
}

}  // namespace tfjit::cpu
