// Eigen's float32 GEMM compiled for x86-64-v4 (AVX-512), as a reference for kernel_bench.
#ifndef TFJIT_BENCH_EIGEN_V4_GEMM_H_
#define TFJIT_BENCH_EIGEN_V4_GEMM_H_

#include <cstdint>

namespace tfjit::bench {

// c[m, n] = a[m, k] * b[k, n], row-major, contiguous. Only call it on an AVX-512 CPU.
void EigenV4Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);

}  // namespace tfjit::bench

#endif  // TFJIT_BENCH_EIGEN_V4_GEMM_H_
