// Shared helpers for the fallback kernels: node-located errors, dtype dispatch by op type set,
// the compute type of 16-bit floats, parallel loops and reading shape/axis input tensors.
#ifndef TFJIT_RUNTIME_KERNELS_KERNEL_UTIL_H_
#define TFJIT_RUNTIME_KERNELS_KERNEL_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/strided_slice_rule.h"
#include "runtime/kernels/kernel.h"

namespace tfjit::runtime {

class Var;
class ResourceHandle;

// INVALID_ARGUMENT "node 'name' (Op): <message>" with the node payload attached.
absl::Status NodeError(const KernelContext& ctx, absl::string_view message);
template <typename... Args>
absl::Status KernelError(const KernelContext& ctx, const absl::FormatSpec<Args...>& format,
                         const Args&... args) {
  return NodeError(ctx, absl::StrFormat(format, args...));
}

// The standard "this op has no kernel for that dtype" error, listing what is supported.
absl::Status UnsupportedDType(const KernelContext& ctx, DType dtype, absl::string_view supported);

// Checks that the kernel received `n` inputs (INTERNAL otherwise: the executor's bug).
absl::Status CheckNumInputs(const KernelContext& ctx, int n);

// Reads an int32/int64 tensor of rank <= 1 (a shape, axes, perm) into int64s.
// INVALID_ARGUMENT naming `what` when the dtype or rank is wrong.
absl::Status ReadIndexVector(const KernelContext& ctx, const Tensor& t, absl::string_view what,
                             std::vector<int64_t>* out);

// The validated output size [height, width] (input 1) of a resize node whose input 0 is a 4-D
// image, with TF's checks and messages (ResizeBilinear, ResizeNearestNeighbor, ResizeArea,
// ResizeBicubic, ...).
absl::StatusOr<std::vector<int64_t>> ResizeOutputSize(const KernelContext& ctx);
// A resize node's align_corners and half_pixel_centers attrs (both default false); TF's error
// when both are set. Shared by the resize kernels and their gradients.
absl::Status ResizeFlags(const KernelContext& ctx, bool* align, bool* half_pixel);

// A strided slice of a value of dims `shape`, planned by TF's rule (frontend/
// strided_slice_rule.h) from the node's begin, end and strides (inputs 1, 2, 3) and masks;
// TF's messages on bad specs. Shared by StridedSlice, StridedSliceGrad and the assignments.
absl::StatusOr<tf::StridedPlan> PlanStridedSliceInputs(const KernelContext& ctx,
                                                       const std::vector<int64_t>& shape);

// The variable behind input `i` of a read-modify-write kernel: a resource handle (`handle`
// set) or a TF1 reference (a VariableV2 output). The caller locks var->update_mu().
struct VarTarget {
  Var* var = nullptr;
  std::string name;
  const ResourceHandle* handle = nullptr;  // resource variables only
};
absl::StatusOr<VarTarget> VariableTarget(const KernelContext& ctx, int i);
// The target's value, or TF's FAILED_PRECONDITION for an uninitialized variable ("Could not
// find variable ..." for a resource variable, "Attempting to use uninitialized value ..." for
// a reference).
absl::StatusOr<Tensor> InitializedValue(const VarTarget& target);

// For kernels that compute an output shape from input values (Fill, Range, Tile, a
// TensorList's reserve, ...), before they allocate or loop over it: INVALID_ARGUMENT when a
// dim is negative or the element count overflows int64, RESOURCE_EXHAUSTED when the tensor
// would pass the per-tensor ceiling or the session's memory cap (core/run_control.h).
// `what` names the output in messages ("output", "the list's element slots").
absl::Status CheckOutputShape(const KernelContext& ctx, DType dtype,
                              const std::vector<int64_t>& dims, absl::string_view what = "output");

// Canonicalises `axis` in [-rank, rank) to [0, rank); INVALID_ARGUMENT otherwise.
absl::Status CanonicalAxis(const KernelContext& ctx, int64_t axis, int rank, int64_t* out);

// Runs `kernel` on the node's inputs with every input of dtype `narrow` converted to `wide`,
// then converts its outputs of dtype `wide` back to `narrow`: the dtypes TF registers for ops
// whose arithmetic tfjit has only in a wider type. float16/bfloat16 convolutions accumulate in
// float32 as TF's CPU kernels do (Eigen's 16-bit GEMM works in float); int32 sums formed in
// int64 wrap to the same int32 values.
absl::Status RunWidened(KernelContext& ctx, KernelFn kernel, DType narrow, DType wide);

// 16-bit floats are computed in float (as TF's CPU kernels effectively do); others as is.
template <typename T>
using ComputeType =
    std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

template <typename T>
inline constexpr bool kIsFloat = std::is_same_v<T, half> || std::is_same_v<T, bfloat16> ||
                                 std::is_same_v<T, float> || std::is_same_v<T, double>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Dispatch over type sets that mirror TF's registrations. Each calls f(T{}) and returns
// false for types outside the set (the kernel then reports UnsupportedDType).
template <typename F>
bool DispatchFloat(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat16:
      f(half{});
      return true;
    case DType::kBFloat16:
      f(bfloat16{});
      return true;
    case DType::kFloat32:
      f(float{});
      return true;
    case DType::kFloat64:
      f(double{});
      return true;
    default:
      return false;
  }
}
// TF's "realnumbertypes": floats and every integer type (no bool).
template <typename F>
bool DispatchReal(DType dtype, F&& f) {
  if (dtype == DType::kBool) return false;
  return DispatchNumeric(dtype, std::forward<F>(f));
}
// Floats plus int32/int64 (MatMul, SquaredDifference, ...).
template <typename F>
bool DispatchFloatInt(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kInt32:
      f(int32_t{});
      return true;
    case DType::kInt64:
      f(int64_t{});
      return true;
    default:
      return DispatchFloat(dtype, std::forward<F>(f));
  }
}
// Element copies only care about the byte width (1, 2, 4, 8, 16); bool and complex included.
template <typename F>
bool DispatchByWidth(DType dtype, F&& f) {
  switch (DTypeSize(dtype)) {
    case 1:
      f(uint8_t{});
      return true;
    case 2:
      f(uint16_t{});
      return true;
    case 4:
      f(uint32_t{});
      return true;
    case 8:
      f(uint64_t{});
      return true;
    case 16:  // complex128
      f(complex128{});
      return true;
    default:
      return false;
  }
}

// Runs fn(begin, end) over [0, n) on the context's pool, or inline when there is none.
// `cost_per_unit` is roughly cycles per element.
void ParallelFor(const KernelContext& ctx, int64_t n, int64_t cost_per_unit,
                 const std::function<void(int64_t, int64_t)>& fn);

// `in` with its dims permuted: out.dim(i) == in.dim(perm[i]). Precondition: perm is a valid
// permutation of [0, rank) (callers validate user input). Implemented in array_kernels.cc.
Tensor TransposeTensor(const KernelContext& ctx, const Tensor& in, const std::vector<int>& perm);

// Registration of the families inside RegisterMathKernels (math_cwise_kernels.cc,
// reduction_kernels.cc).
void RegisterMathCwiseKernels(KernelRegistry& registry);
void RegisterReductionKernels(KernelRegistry& registry);

// ConcatV2 (array_kernels.cc); Concat (v1) runs it on reordered inputs.
absl::Status ConcatV2Kernel(KernelContext& ctx);

// Families registered from kernel_registry.cc (one file each).
void RegisterMathCwiseMoreKernels(KernelRegistry& registry);    // math_cwise_more_kernels.cc
void RegisterSliceKernels(KernelRegistry& registry);            // array_slice_kernels.cc
void RegisterShapeKernels(KernelRegistry& registry);            // array_shape_kernels.cc
void RegisterGatherKernels(KernelRegistry& registry);           // array_gather_kernels.cc
void RegisterReductionScanKernels(KernelRegistry& registry);    // reduction_scan_kernels.cc
void RegisterLinalgMatmulKernels(KernelRegistry& registry);     // linalg_matmul_kernels.cc
void RegisterConvKernels(KernelRegistry& registry);             // nn_conv_kernels.cc
void RegisterGradientsKernels(KernelRegistry& registry);        // gradients_kernels.cc
void RegisterGradientsWindowKernels(KernelRegistry& registry);  // gradients_window_kernels.cc
void RegisterGradients3dKernels(KernelRegistry& registry);      // gradients_3d_kernels.cc
void RegisterOptimizersKernels(KernelRegistry& registry);       // optimizers_kernels.cc
void RegisterLinalgKernels(KernelRegistry& registry);           // linalg_kernels.cc
void RegisterScatterSegmentKernels(KernelRegistry& registry);   // scatter_segment_kernels.cc
void RegisterArrayMoreKernels(KernelRegistry& registry);        // array_more_kernels.cc
void RegisterArrayQuantizeKernels(KernelRegistry& registry);    // array_quantize_kernels.cc
void RegisterSpecialKernels(KernelRegistry& registry);          // special_kernels.cc
void RegisterRandomMoreKernels(KernelRegistry& registry);       // random_more_kernels.cc
void RegisterImageMoreKernels(KernelRegistry& registry);        // image_more_kernels.cc
void RegisterStateMoreKernels(KernelRegistry& registry);        // state_more_kernels.cc
void RegisterCheckpointKernels(KernelRegistry& registry);       // state_checkpoint_kernels.cc
void RegisterNnMoreKernels(KernelRegistry& registry);           // nn_more_kernels.cc
void RegisterFftKernels(KernelRegistry& registry);              // fft_kernels.cc
void RegisterXlaKernels(KernelRegistry& registry);              // xla_kernels.cc
void RegisterParsingKernels(KernelRegistry& registry);          // parsing_kernels.cc
void RegisterMathComplexKernels(KernelRegistry& registry);      // math_complex_kernels.cc

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_KERNELS_KERNEL_UTIL_H_
