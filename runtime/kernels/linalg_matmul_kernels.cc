// The linalg family's products: MatMul (Eigen GEMM, rows split across the pool), and the
// batched contractions: BatchMatMul (equal batch dims), BatchMatMulV2/V3 (broadcast batch
// dims; V3 with Ta == Tb == Tout) with adj_x/adj_y, and Einsum (any number of operands,
// repeated labels, ellipsis broadcasting, implicit output) as a direct loop nest.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/str_split.h"
#include "frontend/attr.h"
#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// c[m,n] = op(a) * op(b) with row blocks of c computed in parallel; op transposes when asked.
template <typename T>
void Gemm(const KernelContext& ctx, const Eigen::Map<const RowMajorMatrix<T>>& a, bool ta,
          const Eigen::Map<const RowMajorMatrix<T>>& b, bool tb, Eigen::Map<RowMajorMatrix<T>>& c) {
  const int64_t m = c.rows();
  const int64_t k = ta ? a.rows() : a.cols();
  const int64_t cost = std::max<int64_t>(1, 2 * k * c.cols());
  ParallelFor(ctx, m, cost, [&](int64_t begin, int64_t end) {
    const int64_t rows = end - begin;
    auto out = c.middleRows(begin, rows);
    if (ta && tb) {
      out.noalias() = a.transpose().middleRows(begin, rows) * b.transpose();
    } else if (ta) {
      out.noalias() = a.transpose().middleRows(begin, rows) * b;
    } else if (tb) {
      out.noalias() = a.middleRows(begin, rows) * b.transpose();
    } else {
      out.noalias() = a.middleRows(begin, rows) * b;
    }
  });
}

template <typename T>
void MatMulTyped(const KernelContext& ctx, const Tensor& a, bool ta, const Tensor& b, bool tb,
                 Tensor& out) {
  using MapC = Eigen::Map<const RowMajorMatrix<T>>;
  MapC ma(a.data<T>(), a.dim(0), a.dim(1));
  MapC mb(b.data<T>(), b.dim(0), b.dim(1));
  Eigen::Map<RowMajorMatrix<T>> mc(out.data<T>(), out.dim(0), out.dim(1));
  Gemm<T>(ctx, ma, ta, mb, tb, mc);
}

// 16-bit floats multiply in float (TF does the same on CPU), then round once.
template <typename T>
void MatMulViaFloat(const KernelContext& ctx, const Tensor& a, bool ta, const Tensor& b, bool tb,
                    Tensor& out) {
  using MapT = Eigen::Map<const RowMajorMatrix<T>>;
  RowMajorMatrix<float> fa = MapT(a.data<T>(), a.dim(0), a.dim(1)).template cast<float>();
  RowMajorMatrix<float> fb = MapT(b.data<T>(), b.dim(0), b.dim(1)).template cast<float>();
  RowMajorMatrix<float> fc(out.dim(0), out.dim(1));
  Eigen::Map<const RowMajorMatrix<float>> ma(fa.data(), fa.rows(), fa.cols());
  Eigen::Map<const RowMajorMatrix<float>> mb(fb.data(), fb.rows(), fb.cols());
  Eigen::Map<RowMajorMatrix<float>> mc(fc.data(), fc.rows(), fc.cols());
  Gemm<float>(ctx, ma, ta, mb, tb, mc);
  Eigen::Map<RowMajorMatrix<T>>(out.data<T>(), out.dim(0), out.dim(1)) = fc.template cast<T>();
}

// How to fix mismatched inner dimensions, e.g. "set transpose_b" when that would match.
std::string MatMulHint(const Tensor& a, bool ta, const Tensor& b, bool tb, int64_t k) {
  const int64_t b_other = tb ? b.dim(0) : b.dim(1);
  if (b_other == k) return tb ? "clear transpose_b" : "set transpose_b";
  const int64_t a_other = ta ? a.dim(1) : a.dim(0);
  const int64_t kb = tb ? b.dim(1) : b.dim(0);
  if (a_other == kb) return ta ? "clear transpose_a" : "set transpose_a";
  return absl::StrFormat("feed b with shape %s",
                         tb ? absl::StrFormat("[N,%d]", k) : absl::StrFormat("[%d,N]", k));
}

absl::Status MatMulKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(ctx.node(), "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(ctx.node(), "transpose_b", false));
  if (a.dtype() != b.dtype()) {
    return KernelError(ctx, "operands have different dtypes: a is %s, b is %s; add a Cast",
                       a.ShapeString(), b.ShapeString());
  }
  if (a.rank() != 2 || b.rank() != 2) {
    return KernelError(ctx,
                       "operands must be matrices (rank 2): a is %s, b is %s; use "
                       "BatchMatMulV2 or reshape to 2-D",
                       a.ShapeString(), b.ShapeString());
  }
  const int64_t k = ta ? a.dim(0) : a.dim(1);
  const int64_t kb = tb ? b.dim(1) : b.dim(0);
  if (k != kb) {
    return KernelError(ctx, "inner dimensions differ: a is %s%s, b is %s%s; %s", a.ShapeString(),
                       ta ? " (transposed)" : "", b.ShapeString(), tb ? " (transposed)" : "",
                       MatMulHint(a, ta, b, tb, k));
  }
  Tensor out(a.dtype(), {ta ? a.dim(1) : a.dim(0), tb ? b.dim(0) : b.dim(1)});
  const bool ok = DispatchFloatInt(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, ComputeType<T>>) {
      MatMulTyped<T>(ctx, a, ta, b, tb, out);
    } else {
      MatMulViaFloat<T>(ctx, a, ta, b, tb, out);
    }
  });
  if (!ok)
    return UnsupportedDType(ctx, a.dtype(), "float16, bfloat16, float32, float64, int32, int64");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

template <typename T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One [m, n] = op(x)[m, k] * op(y)[k, n] product per batch entry, in ComputeType.
template <typename T>
void BatchGemm(const KernelContext& ctx, const Tensor& x, const Tensor& y, bool ax, bool ay,
               const std::vector<int64_t>& x_batch, const std::vector<int64_t>& y_batch,
               Tensor& out) {
  using C = ComputeType<T>;
  const int xr = x.rank(), yr = y.rank();
  const int64_t xm = x.dim(xr - 2), xn = x.dim(xr - 1), ym = y.dim(yr - 2), yn = y.dim(yr - 1);
  const int64_t m = out.dim(out.rank() - 2), n = out.dim(out.rank() - 1);
  const int64_t batches = static_cast<int64_t>(x_batch.size());
  ParallelFor(ctx, batches, 2 * m * n * (ax ? xm : xn) + 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const size_t k = static_cast<size_t>(b);
      RowMajor<C> a = Eigen::Map<const RowMajor<T>>(x.data<T>() + x_batch[k] * xm * xn, xm, xn)
                          .template cast<C>();
      RowMajor<C> c = Eigen::Map<const RowMajor<T>>(y.data<T>() + y_batch[k] * ym * yn, ym, yn)
                          .template cast<C>();
      RowMajor<C> r;
      if (ax && ay)
        r.noalias() = a.transpose() * c.transpose();
      else if (ax)
        r.noalias() = a.transpose() * c;
      else if (ay)
        r.noalias() = a * c.transpose();
      else
        r.noalias() = a * c;
      Eigen::Map<RowMajor<T>>(out.data<T>() + b * m * n, m, n) = r.template cast<T>();
    }
  });
}

absl::Status BatchMatMulKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  const bool v1 = ctx.node().op() == "BatchMatMul";
  TFJIT_ASSIGN_OR_RETURN(bool ax, tf::GetBoolAttrOr(ctx.node(), "adj_x", false));
  TFJIT_ASSIGN_OR_RETURN(bool ay, tf::GetBoolAttrOr(ctx.node(), "adj_y", false));
  if (x.dtype() != y.dtype()) {
    return KernelError(ctx, "x and y must have the same dtype: x is %s, y is %s; add a Cast",
                       x.ShapeString(), y.ShapeString());
  }
  if (x.rank() < 2 || y.rank() < 2 || (v1 && x.rank() != y.rank())) {
    return KernelError(ctx, "x and y must be at least rank 2%s: x is %s, y is %s",
                       v1 ? " and of equal rank" : "", x.ShapeString(), y.ShapeString());
  }
  const std::vector<int64_t> xb(x.dims().begin(), x.dims().end() - 2);
  const std::vector<int64_t> yb(y.dims().begin(), y.dims().end() - 2);
  std::optional<BroadcastPlan> plan = MakeBroadcastPlan({xb, yb});
  if (!plan.has_value() || (v1 && xb != yb)) {
    return KernelError(ctx, "In[0] and In[1] must have compatible batch dimensions: %s vs. %s",
                       x.ShapeString(), y.ShapeString());
  }
  const int64_t k_x = ax ? x.dim(x.rank() - 2) : x.dim(x.rank() - 1);
  const int64_t k_y = ay ? y.dim(y.rank() - 1) : y.dim(y.rank() - 2);
  if (k_x != k_y) {
    return KernelError(ctx,
                       "Matrix size-incompatible: In[0]: %s, In[1]: %s (adj_x %d, adj_y %d): "
                       "the contracted dimensions %d and %d differ",
                       x.ShapeString(), y.ShapeString(), ax, ay, k_x, k_y);
  }
  std::vector<int64_t> out_dims = plan->out_dims;
  out_dims.push_back(ax ? x.dim(x.rank() - 1) : x.dim(x.rank() - 2));
  out_dims.push_back(ay ? y.dim(y.rank() - 2) : y.dim(y.rank() - 1));
  // The batch-matrix index of x and y for each output batch entry.
  std::vector<int64_t> x_batch, y_batch;
  for (int64_t b = 0; b < plan->num_elements; ++b) {
    int64_t off[2];
    plan->Offsets(b, off);
    x_batch.push_back(off[0]);
    y_batch.push_back(off[1]);
  }
  Tensor out(x.dtype(), out_dims);
  if (ctx.node().op() == "BatchMatMulV3") {
    TFJIT_ASSIGN_OR_RETURN(DType tout, tf::GetTypeAttr(ctx.node(), "Tout"));
    if (tout != x.dtype()) {
      return KernelError(ctx, "only Ta == Tb == Tout is supported; got inputs %s and Tout %s",
                         DTypeName(x.dtype()), DTypeName(tout));
    }
  }
  const bool ok = DispatchFloatInt(x.dtype(), [&](auto tag) {
    BatchGemm<decltype(tag)>(ctx, x, y, ax, ay, x_batch, y_batch, out);
  });
  if (!ok)
    return UnsupportedDType(ctx, x.dtype(), "float16, bfloat16, float32, float64, int32, int64");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Einsum ----

// Label ids: letters map to their char; ellipsis dims to 256 + (distance from the right).
struct EinsumSpec {
  std::vector<std::vector<int>> inputs;  // label per dim of each operand
  std::vector<int> output;
};

absl::StatusOr<std::vector<int>> ParseTerm(const KernelContext& ctx, absl::string_view term,
                                           int rank, int* ellipsis_rank) {
  std::vector<int> labels;
  int named = 0;
  for (char ch : term) named += std::isalpha(static_cast<unsigned char>(ch)) ? 1 : 0;
  const size_t dots = term.find("...");
  const int ell = rank < 0 ? *ellipsis_rank : rank - named;
  if ((dots == absl::string_view::npos && rank >= 0 && ell != 0) || ell < 0) {
    return KernelError(ctx, "einsum term '%s' does not match an operand of rank %d",
                       std::string(term), rank);
  }
  if (rank >= 0 && dots != absl::string_view::npos) *ellipsis_rank = std::max(*ellipsis_rank, ell);
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.substr(i, 3) == "...") {
      for (int e = ell; e > 0; --e) labels.push_back(256 + e);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      labels.push_back(static_cast<unsigned char>(term[i]));
    } else {
      return KernelError(ctx, "invalid character '%c' in einsum equation", term[i]);
    }
  }
  return labels;
}

absl::StatusOr<EinsumSpec> ParseEinsum(const KernelContext& ctx, const std::string& equation) {
  std::string eq;
  for (char ch : equation) {
    if (ch != ' ') eq.push_back(ch);
  }
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms = absl::StrSplit(eq.substr(0, arrow), ',');
  if (static_cast<int>(terms.size()) != ctx.num_inputs()) {
    return KernelError(ctx, "equation '%s' names %d operands but the op has %d inputs", equation,
                       terms.size(), ctx.num_inputs());
  }
  EinsumSpec spec;
  int ellipsis_rank = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    TFJIT_ASSIGN_OR_RETURN(
        std::vector<int> labels,
        ParseTerm(ctx, terms[t], ctx.input(static_cast<int>(t)).rank(), &ellipsis_rank));
    spec.inputs.push_back(std::move(labels));
  }
  if (arrow != std::string::npos) {
    TFJIT_ASSIGN_OR_RETURN(spec.output, ParseTerm(ctx, eq.substr(arrow + 2), -1, &ellipsis_rank));
    return spec;
  }
  // Implicit output: the ellipsis dims, then labels used exactly once, alphabetically.
  std::map<int, int> count;
  for (const auto& in : spec.inputs) {
    for (int l : in) ++count[l];
  }
  for (int e = ellipsis_rank; e > 0; --e) spec.output.push_back(256 + e);
  for (auto [l, c] : count) {
    if (l < 256 && c == 1) spec.output.push_back(l);
  }
  return spec;
}

// Sizes of every label (broadcasting 1s) and each operand's element stride per label.
struct EinsumPlan {
  std::map<int, int64_t> size;
  std::map<int, std::vector<int64_t>> strides;  // label -> stride per operand
};

absl::StatusOr<EinsumPlan> PlanEinsum(const KernelContext& ctx, const EinsumSpec& spec) {
  EinsumPlan plan;
  for (size_t t = 0; t < spec.inputs.size(); ++t) {
    const Tensor& in = ctx.input(static_cast<int>(t));
    for (size_t d = 0; d < spec.inputs[t].size(); ++d) {
      const int l = spec.inputs[t][d];
      const int64_t n = in.dim(static_cast<int>(d));
      auto [it, fresh] = plan.size.insert({l, n});
      if (!fresh && it->second != n && n != 1) {
        if (it->second != 1) {
          return KernelError(ctx,
                             "einsum label sizes disagree: operand %d dim %d has size %d, "
                             "elsewhere %d",
                             t, d, n, it->second);
        }
        it->second = n;
      }
    }
  }
  for (int l : spec.output) {
    if (!plan.size.count(l)) {
      return KernelError(ctx, "einsum output label '%c' appears in no input", static_cast<char>(l));
    }
  }
  for (auto& [l, n] : plan.size) plan.strides[l].assign(spec.inputs.size(), 0);
  for (size_t t = 0; t < spec.inputs.size(); ++t) {
    const Tensor& in = ctx.input(static_cast<int>(t));
    int64_t stride = 1;
    for (size_t d = spec.inputs[t].size(); d-- > 0;) {
      const int l = spec.inputs[t][d];
      if (in.dim(static_cast<int>(d)) != 1 || plan.size[l] == 1) plan.strides[l][t] += stride;
      stride *= in.dim(static_cast<int>(d));
    }
  }
  return plan;
}

template <typename T>
void EinsumLoop(const KernelContext& ctx, const EinsumSpec& spec, const EinsumPlan& plan,
                const std::vector<int>& sum_labels, Tensor& out) {
  using C = ComputeType<T>;
  const size_t ops = spec.inputs.size();
  int64_t sum_n = 1;
  for (int l : sum_labels) sum_n *= plan.size.at(l);
  ParallelFor(ctx, out.num_elements(), sum_n * static_cast<int64_t>(ops) + 1,
              [&](int64_t b, int64_t e) {
                std::vector<int64_t> base(ops), off(ops);
                for (int64_t o = b; o < e; ++o) {
                  std::fill(base.begin(), base.end(), 0);
                  for (size_t d = spec.output.size(), rest = static_cast<size_t>(o); d-- > 0;) {
                    const int l = spec.output[d];
                    const int64_t n = plan.size.at(l), i = static_cast<int64_t>(rest) % n;
                    rest /= static_cast<size_t>(n);
                    for (size_t t = 0; t < ops; ++t) base[t] += i * plan.strides.at(l)[t];
                  }
                  C total = C(0);
                  for (int64_t s = 0; s < sum_n; ++s) {
                    off = base;
                    for (size_t d = sum_labels.size(), rest = static_cast<size_t>(s); d-- > 0;) {
                      const int l = sum_labels[d];
                      const int64_t n = plan.size.at(l), i = static_cast<int64_t>(rest) % n;
                      rest /= static_cast<size_t>(n);
                      for (size_t t = 0; t < ops; ++t) off[t] += i * plan.strides.at(l)[t];
                    }
                    C prod = C(1);
                    for (size_t t = 0; t < ops; ++t)
                      prod *= C(ctx.input(static_cast<int>(t)).data<T>()[off[t]]);
                    total += prod;
                  }
                  out.data<T>()[o] = static_cast<T>(total);
                }
              });
}

absl::Status EinsumKernel(KernelContext& ctx) {
  if (ctx.num_inputs() < 1) return KernelError(ctx, "Einsum needs at least one input");
  TFJIT_ASSIGN_OR_RETURN(std::string equation, tf::GetStringAttr(ctx.node(), "equation"));
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).dtype() != ctx.input(0).dtype()) {
      return KernelError(ctx, "all Einsum inputs must share a dtype: input 0 is %s, input %d %s",
                         ctx.input(0).ShapeString(), i, ctx.input(i).ShapeString());
    }
  }
  TFJIT_ASSIGN_OR_RETURN(EinsumSpec spec, ParseEinsum(ctx, equation));
  TFJIT_ASSIGN_OR_RETURN(EinsumPlan plan, PlanEinsum(ctx, spec));
  std::vector<int> sum_labels;
  for (auto& [l, n] : plan.size) {
    if (std::find(spec.output.begin(), spec.output.end(), l) == spec.output.end()) {
      sum_labels.push_back(l);
    }
  }
  std::vector<int64_t> out_dims;
  for (int l : spec.output) out_dims.push_back(plan.size[l]);
  Tensor out(ctx.input(0).dtype(), out_dims);
  const auto loop = [&](auto tag) { EinsumLoop<decltype(tag)>(ctx, spec, plan, sum_labels, out); };
  // TF registers Einsum on CPU for the floats, int32/int64 and complex64/complex128.
  const bool ok = DispatchFloatInt(out.dtype(), loop) || DispatchComplex(out.dtype(), loop);
  if (!ok) {
    return UnsupportedDType(ctx, out.dtype(),
                            "float16, bfloat16, float32, float64, int32, int64, complex64, "
                            "complex128");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterLinalgMatmulKernels(KernelRegistry& registry) {
  registry.Register("MatMul", &MatMulKernel);
  registry.Register("BatchMatMul", &BatchMatMulKernel);
  registry.Register("BatchMatMulV2", &BatchMatMulKernel);
  registry.Register("BatchMatMulV3", &BatchMatMulKernel);
  registry.Register("Einsum", &EinsumKernel);
}

}  // namespace tfjit::runtime
