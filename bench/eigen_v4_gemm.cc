// Built with -march=x86-64-v4 (bench/CMakeLists.txt). Eigen's namespace is renamed in this
// file so its AVX-512 template instances cannot merge with the AVX2 ones of the rest of the
// binary (same names, different code).
#define Eigen tfjit_eigen_v4
#include "Eigen/Core"
#undef Eigen

#include "bench/eigen_v4_gemm.h"

namespace tfjit::bench {

void EigenV4Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  using RowMajor = tfjit_eigen_v4::Matrix<float, tfjit_eigen_v4::Dynamic, tfjit_eigen_v4::Dynamic,
                                          tfjit_eigen_v4::RowMajor>;
  tfjit_eigen_v4::Map<const RowMajor> am(a, m, k), bm(b, k, n);
  tfjit_eigen_v4::Map<RowMajor> cm(c, m, n);
  cm.noalias() = am * bm;
}

}  // namespace tfjit::bench
