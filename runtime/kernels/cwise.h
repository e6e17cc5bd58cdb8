// Elementwise kernel machinery shared by math and nn kernels: unary maps over Eigen arrays
// (vectorised exp/tanh/...) and broadcasting binary loops, both split across the pool.
#ifndef TFJIT_RUNTIME_KERNELS_CWISE_H_
#define TFJIT_RUNTIME_KERNELS_CWISE_H_

#include <cstdint>
#include <type_traits>

#include "Eigen/Core"
#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {

template <typename T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// out[i] = fn(in[i]) where fn maps an Eigen array expression of ComputeType<T> to one of the
// same length (e.g. [](const auto& x) { return x.exp(); }). `out` has in's shape; the result
// is converted back to T.
template <typename T, typename Fn>
void MapUnary(const KernelContext& ctx, const Tensor& in, Tensor& out, int64_t cost, Fn fn) {
  using C = ComputeType<T>;
  const T* src = in.data<T>();
  T* dst = out.data<T>();
  ParallelFor(ctx, in.num_elements(), cost, [&](int64_t begin, int64_t end) {
    ConstArrayMap<T> x(src + begin, end - begin);
    ArrayMap<T> y(dst + begin, end - begin);
    if constexpr (std::is_same_v<T, C>) {
      y = fn(x);
    } else {
      y = fn(x.template cast<C>()).template cast<T>();
    }
  });
}

// out = fn(a, b) elementwise under `plan` (two operands). fn takes two ComputeType<T>
// scalars; its result is converted to Out.
template <typename T, typename Out, typename Fn>
void MapBinary(const KernelContext& ctx, const BroadcastPlan& plan, const T* a, const T* b,
               Out* out, Fn fn) {
  using C = ComputeType<T>;
  const int64_t sa = plan.inner_stride(0);
  const int64_t sb = plan.inner_stride(1);
  ParallelFor(ctx, plan.num_elements, 2, [&](int64_t begin, int64_t end) {
    ForEachRun(plan, begin, end, [&](int64_t o, const int64_t* off, int64_t len) {
      const T* pa = a + off[0];
      const T* pb = b + off[1];
      Out* po = out + o;
      // Separate loops for the common stride patterns so the compiler can vectorise them.
      if (sa == 1 && sb == 1) {
        for (int64_t j = 0; j < len; ++j) po[j] = static_cast<Out>(fn(C(pa[j]), C(pb[j])));
      } else if (sa == 0 && sb == 1) {
        const C x = C(pa[0]);
        for (int64_t j = 0; j < len; ++j) po[j] = static_cast<Out>(fn(x, C(pb[j])));
      } else if (sa == 1 && sb == 0) {
        const C y = C(pb[0]);
        for (int64_t j = 0; j < len; ++j) po[j] = static_cast<Out>(fn(C(pa[j]), y));
      } else {
        const Out v = static_cast<Out>(fn(C(pa[0]), C(pb[0])));
        for (int64_t j = 0; j < len; ++j) po[j] = v;
      }
    });
  });
}

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_KERNELS_CWISE_H_
