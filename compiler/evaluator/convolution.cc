// Evaluator: convolution with dim_labels, window (padding, strides, lhs/rhs dilation) and
// feature_group_count; f16/bf16 accumulate in f32.
#include "compiler/evaluator/evaluator_internal.h"
#include "core/status.h"

namespace tfjit::hlo::eval {
namespace {

struct ConvGeometry {
  const ConvDims* dims;
  const std::vector<WindowDim>* window;
  std::vector<int64_t> in_dims, kernel_dims, kernel_spatial_sizes;
  std::vector<int64_t> in_strides, kernel_strides;
  int64_t in_features_per_group = 0, out_features_per_group = 0;
};

// Fills the input index for output index `oi`, kernel spatial position `k` and input feature
// `feature`; false when the tap lands on padding or on a hole of lhs dilation.
bool InputIndex(const ConvGeometry& g, const std::vector<int64_t>& oi,
                const std::vector<int64_t>& k, std::vector<int64_t>& li) {
  const ConvDims& cd = *g.dims;
  for (size_t s = 0; s < cd.input_spatial.size(); ++s) {
    const WindowDim& w = (*g.window)[s];
    const int64_t pos = oi[cd.output_spatial[s]] * w.stride + k[s] * w.rhs_dilate - w.pad_lo;
    if (pos < 0 || pos % w.lhs_dilate != 0) return false;
    const int64_t i = pos / w.lhs_dilate;
    if (i >= g.in_dims[cd.input_spatial[s]]) return false;
    li[cd.input_spatial[s]] = i;
  }
  return true;
}

template <typename T>
void ConvolveTyped(const ConvGeometry& g, const Literal& lhs, const Literal& rhs, Literal& out) {
  using Acc = ComputeT<T>;
  const ConvDims& cd = *g.dims;
  const T* a = lhs.data<T>();
  const T* b = rhs.data<T>();
  T* z = out.data<T>();
  const std::vector<int64_t>& out_dims = out.shape().dims();
  std::vector<int64_t> oi(out_dims.size(), 0), li(g.in_dims.size(), 0), ri(g.kernel_dims.size(), 0);
  int64_t linear = 0;
  do {
    const int64_t of = oi[cd.output_feature];
    const int64_t group = of / g.out_features_per_group;
    li[cd.input_batch] = oi[cd.output_batch];
    ri[cd.kernel_output_feature] = of;
    Acc acc = Acc(0);
    std::vector<int64_t> k(g.kernel_spatial_sizes.size(), 0);
    bool more = true;
    for (int64_t s : g.kernel_spatial_sizes) more = more && s > 0;
    while (more) {
      if (InputIndex(g, oi, k, li)) {
        for (size_t s = 0; s < k.size(); ++s) ri[cd.kernel_spatial[s]] = k[s];
        for (int64_t ci = 0; ci < g.in_features_per_group; ++ci) {
          li[cd.input_feature] = group * g.in_features_per_group + ci;
          ri[cd.kernel_input_feature] = ci;
          const T x = a[LinearIndex(li, g.in_strides)];
          const T y = b[LinearIndex(ri, g.kernel_strides)];
          if constexpr (std::is_same_v<T, bool>) {
            acc = acc || (x && y);
          } else if constexpr (kIsFloat<T>) {
            acc += static_cast<Acc>(x) * static_cast<Acc>(y);
          } else {
            using U = std::make_unsigned_t<T>;
            using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
            acc = static_cast<T>(static_cast<U>(static_cast<P>(static_cast<U>(acc)) +
                                                static_cast<P>(static_cast<U>(x)) *
                                                    static_cast<P>(static_cast<U>(y))));
          }
        }
      }
      more = NextIndex(k, g.kernel_spatial_sizes);
    }
    z[linear++] = static_cast<T>(acc);
  } while (NextIndex(oi, out_dims));
}

}  // namespace

absl::StatusOr<Literal> EvalConvolution(const Instruction& inst, const Operands& ops) {
  ConvGeometry g;
  g.dims = &inst.attrs().conv;
  g.window = &inst.attrs().window;
  g.in_dims = ops[0]->shape().dims();
  g.kernel_dims = ops[1]->shape().dims();
  g.in_strides = RowMajorStrides(g.in_dims);
  g.kernel_strides = RowMajorStrides(g.kernel_dims);
  for (int64_t d : g.dims->kernel_spatial) g.kernel_spatial_sizes.push_back(g.kernel_dims[d]);
  const int64_t groups = inst.attrs().feature_group_count;
  const int64_t out_features = inst.shape().dims()[g.dims->output_feature];
  if (groups <= 0 || out_features % groups != 0 ||
      g.window->size() != g.dims->input_spatial.size()) {
    return InvalidArgument("%s: bad convolution window or feature_group_count %d", inst.name(),
                           groups);
  }
  g.in_features_per_group = g.kernel_dims[g.dims->kernel_input_feature];
  g.out_features_per_group = out_features / groups;
  Literal out(inst.shape());
  if (inst.shape().num_elements() == 0) return out;
  DispatchNumeric(inst.shape().element_type(),
                  [&](auto tag) { ConvolveTyped<decltype(tag)>(g, *ops[0], *ops[1], out); });
  return out;
}

}  // namespace tfjit::hlo::eval
