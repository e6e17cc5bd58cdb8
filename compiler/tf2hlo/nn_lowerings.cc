// Lowerings of TF's neural-network ops: MatMul, BatchMatMul*, Einsum, BiasAdd, Softmax,
// LogSoftmax and the activations Elu, Selu, Softplus, Softsign, LeakyRelu; L2Loss; MaxPool and
// AvgPool as reduce-window (NHWC or NCHW).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "absl/strings/str_split.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/conv_attrs.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

absl::Status LowerMatMul(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(node, "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(node, "transpose_b", false));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, MatMulValues(ctx, a, b, ta, tb));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerBiasAdd(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * bias, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(node, "data_format", "NHWC"));
  const hlo::Shape& s = x->shape();
  if (s.rank() < 2 || bias->shape().rank() != 1) {
    return InvalidArgument("value must be at least rank 2 and bias a vector, got %s and %s",
                           s.ToString(), bias->shape().ToString());
  }
  const int64_t channel_dim = (format == "NCHW") ? 1 : s.rank() - 1;
  if (s.dim(static_cast<int>(channel_dim)) != bias->shape().dim(0)) {
    return InvalidArgument(
        "Must provide as many biases as the channel dimension of the input "
        "tensor: %s vs. %s in %s format",
        bias->shape().ToString(), s.ToString(), format);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * bb, ctx.b().Broadcast(bias, s.dims(), {channel_dim}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kAdd, x, bb));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Softmax(x) over the last axis: e = exp(x - max(x)); e / sum(e).
absl::Status LowerSoftmax(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape& s = x->shape();
  if (s.rank() < 1) return InvalidArgument("logits must have >= 1 dimension, got %s", s.ToString());
  const DType t = s.element_type();
  const int64_t last = s.rank() - 1;
  std::vector<int64_t> batch_dims(s.dims().begin(), s.dims().end() - 1);
  std::vector<int64_t> keep_map;
  for (int64_t d = 0; d < last; ++d) keep_map.push_back(d);

  TFJIT_ASSIGN_OR_RETURN(Instruction * neg_inf,
                         ctx.Splat(t, -std::numeric_limits<double>::infinity(), {}));
  hlo::Computation* max_comp =
      hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * mx, ctx.b().Reduce(x, neg_inf, {last}, max_comp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mxb, ctx.b().Broadcast(mx, s.dims(), keep_map));
  TFJIT_ASSIGN_OR_RETURN(Instruction * shifted, ctx.b().Binary(Opcode::kSubtract, x, mxb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * e, ctx.b().Unary(Opcode::kExp, shifted));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, {}));
  hlo::Computation* add_comp = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, ctx.b().Reduce(e, zero, {last}, add_comp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * sumb, ctx.b().Broadcast(sum, s.dims(), keep_map));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kDivide, e, sumb));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// LogSoftmax(x) over the last axis: s = x - max(x); s - log(sum(exp(s))).
absl::Status LowerLogSoftmax(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape& s = x->shape();
  if (s.rank() < 1) return InvalidArgument("logits must have >= 1 dimension, got %s", s.ToString());
  const DType t = s.element_type();
  const int64_t last = s.rank() - 1;
  std::vector<int64_t> keep_map;
  for (int64_t d = 0; d < last; ++d) keep_map.push_back(d);
  TFJIT_ASSIGN_OR_RETURN(Instruction * neg_inf,
                         ctx.Splat(t, -std::numeric_limits<double>::infinity(), {}));
  hlo::Computation* max_comp =
      hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * mx, ctx.b().Reduce(x, neg_inf, {last}, max_comp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * mxb, ctx.b().Broadcast(mx, s.dims(), keep_map));
  TFJIT_ASSIGN_OR_RETURN(Instruction * shifted, ctx.b().Binary(Opcode::kSubtract, x, mxb));
  TFJIT_ASSIGN_OR_RETURN(Instruction * e, ctx.b().Unary(Opcode::kExp, shifted));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, {}));
  hlo::Computation* add_comp = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, ctx.b().Reduce(e, zero, {last}, add_comp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * log_sum, ctx.b().Unary(Opcode::kLog, sum));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lsb, ctx.b().Broadcast(log_sum, s.dims(), keep_map));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kSubtract, shifted, lsb));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Elu(x) => x < 0 ? expm1(x) : x; Selu(x) => x < 0 ? scale*alpha*expm1(x) : scale*x.
absl::Status LowerExpLinear(LoweringContext& ctx, const tf::Node& node, bool selu) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  const std::vector<int64_t>& dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * neg,
                         ctx.b().Compare(hlo::ComparisonDirection::kLt, x, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * em1, ctx.b().Unary(Opcode::kExpm1, x));
  Instruction* pos = x;
  if (selu) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * sa, ctx.Splat(t, kScale * kAlpha, dims));
    TFJIT_ASSIGN_OR_RETURN(Instruction * sc, ctx.Splat(t, kScale, dims));
    TFJIT_ASSIGN_OR_RETURN(em1, ctx.b().Binary(Opcode::kMultiply, em1, sa));
    TFJIT_ASSIGN_OR_RETURN(pos, ctx.b().Binary(Opcode::kMultiply, x, sc));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(neg, em1, pos));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}
absl::Status LowerElu(LoweringContext& ctx, const tf::Node& node) {
  return LowerExpLinear(ctx, node, false);
}
absl::Status LowerSelu(LoweringContext& ctx, const tf::Node& node) {
  return LowerExpLinear(ctx, node, true);
}

// Softplus as TF's kernel computes it: with th = log(epsilon) + 2, x > -th gives x, x < th
// gives exp(x), anything else log1p(exp(x)).
absl::Status LowerSoftplus(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  const std::vector<int64_t>& dims = x->shape().dims();
  double eps = std::numeric_limits<float>::epsilon();
  if (t == DType::kFloat64) eps = std::numeric_limits<double>::epsilon();
  if (t == DType::kFloat16) eps = 0.0009765625;  // 2^-10
  if (t == DType::kBFloat16) eps = 0.0078125;    // 2^-7
  const double threshold = std::log(eps) + 2.0;
  TFJIT_ASSIGN_OR_RETURN(Instruction * hi, ctx.Splat(t, -threshold, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * lo, ctx.Splat(t, threshold, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * too_large,
                         ctx.b().Compare(hlo::ComparisonDirection::kGt, x, hi));
  TFJIT_ASSIGN_OR_RETURN(Instruction * too_small,
                         ctx.b().Compare(hlo::ComparisonDirection::kLt, x, lo));
  TFJIT_ASSIGN_OR_RETURN(Instruction * e, ctx.b().Unary(Opcode::kExp, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * l, ctx.b().Unary(Opcode::kLog1p, e));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(too_small, e, l));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Select(too_large, x, r));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Softsign(x) => x / (1 + |x|)
absl::Status LowerSoftsign(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * one,
                         ctx.Splat(x->shape().element_type(), 1.0, x->shape().dims()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ax, ctx.b().Unary(Opcode::kAbs, x));
  TFJIT_ASSIGN_OR_RETURN(Instruction * d, ctx.b().Binary(Opcode::kAdd, one, ax));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kDivide, x, d));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// LeakyRelu(x) => x > 0 ? x : x * alpha
absl::Status LowerLeakyRelu(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(float alpha, tf::GetFloatAttrOr(node, "alpha", 0.2f));
  const DType t = x->shape().element_type();
  const std::vector<int64_t>& dims = x->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Splat(t, alpha, dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * pos,
                         ctx.b().Compare(hlo::ComparisonDirection::kGt, x, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * xa, ctx.b().Binary(Opcode::kMultiply, x, a));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Select(pos, x, xa));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// L2Loss(t) => sum(t * t) / 2
absl::Status LowerL2Loss(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * sq, ctx.b().Binary(Opcode::kMultiply, x, x));
  std::vector<int64_t> all;
  for (int d = 0; d < x->shape().rank(); ++d) all.push_back(d);
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, {}));
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum, ctx.b().Reduce(sq, zero, all, add));
  TFJIT_ASSIGN_OR_RETURN(Instruction * half, ctx.Splat(t, 0.5, {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kMultiply, sum, half));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// BatchMatMul/V2/V3(x, y): batch dims broadcast (V1 requires them equal, a special case);
// adj_x/adj_y transpose the last two dims (real types only, so adjoint = transpose).
absl::Status LowerBatchMatMul(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(bool adj_x, tf::GetBoolAttrOr(node, "adj_x", false));
  TFJIT_ASSIGN_OR_RETURN(bool adj_y, tf::GetBoolAttrOr(node, "adj_y", false));
  const DType out_t = node.output_types()[0];
  if (x->shape().element_type() != out_t) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, out_t));
  }
  if (y->shape().element_type() != out_t) {
    TFJIT_ASSIGN_OR_RETURN(y, ctx.b().Convert(y, out_t));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, BatchMatMulValues(ctx, node, x, y, adj_x, adj_y));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Instruction*> MatMulValues(LoweringContext& ctx, Instruction* a, Instruction* b,
                                          bool ta, bool tb) {
  const hlo::Shape& sa = a->shape();
  const hlo::Shape& sb = b->shape();
  if (sa.rank() != 2 || sb.rank() != 2) {
    return InvalidArgument("In[0] and In[1] must be matrices, got %s and %s", sa.ToString(),
                           sb.ToString());
  }
  const int64_t ka = ta ? 0 : 1;
  const int64_t kb = tb ? 1 : 0;
  if (sa.dim(static_cast<int>(ka)) != sb.dim(static_cast<int>(kb))) {
    return InvalidArgument(
        "Matrix size-incompatible: In[0]: %s, In[1]: %s (transpose_a=%s, "
        "transpose_b=%s); the contracted dimensions must be equal",
        sa.ToString(), sb.ToString(), ta ? "true" : "false", tb ? "true" : "false");
  }
  hlo::DotDims dims;
  dims.lhs_contracting = {ka};
  dims.rhs_contracting = {kb};
  return ctx.b().Dot(a, b, dims);
}

absl::StatusOr<Instruction*> BatchMatMulValues(LoweringContext& ctx, const tf::Node& node,
                                               Instruction* x, Instruction* y, bool adj_x,
                                               bool adj_y) {
  const std::vector<int64_t>& xd = x->shape().dims();
  const std::vector<int64_t>& yd = y->shape().dims();
  if (xd.size() < 2 || yd.size() < 2) {
    return InvalidArgument("node %s: In[0] and In[1] must have rank >= 2, got %s and %s",
                           node.DebugName(), x->shape().ToString(), y->shape().ToString());
  }
  const int64_t kx = adj_x ? xd[xd.size() - 2] : xd.back();
  const int64_t ky = adj_y ? yd.back() : yd[yd.size() - 2];
  if (kx != ky) {
    return InvalidArgument(
        "node %s: Matrix size-incompatible: In[0]: %s, In[1]: %s (adj_x=%d, "
        "adj_y=%d)",
        node.DebugName(), x->shape().ToString(), y->shape().ToString(), adj_x, adj_y);
  }
  std::vector<int64_t> bx(xd.begin(), xd.end() - 2), by(yd.begin(), yd.end() - 2);
  absl::StatusOr<std::vector<int64_t>> batch = BroadcastDims(bx, by);
  if (!batch.ok()) {
    return InvalidArgument(
        "node %s: In[0] and In[1] must have compatible batch dimensions: "
        "%s vs. %s",
        node.DebugName(), x->shape().ToString(), y->shape().ToString());
  }
  std::vector<int64_t> xt = *batch, yt = *batch;
  xt.insert(xt.end(), xd.end() - 2, xd.end());
  yt.insert(yt.end(), yd.end() - 2, yd.end());
  TFJIT_ASSIGN_OR_RETURN(x, ctx.BroadcastTo(x, xt));
  TFJIT_ASSIGN_OR_RETURN(y, ctx.BroadcastTo(y, yt));
  const int64_t nb = static_cast<int64_t>(batch->size());
  hlo::DotDims dims;
  for (int64_t i = 0; i < nb; ++i) {
    dims.lhs_batch.push_back(i);
    dims.rhs_batch.push_back(i);
  }
  dims.lhs_contracting = {adj_x ? nb : nb + 1};
  dims.rhs_contracting = {adj_y ? nb + 1 : nb};
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Dot(x, y, dims));
  return r;
}

namespace {

// One Einsum operand: its value and one label per dim.
struct EinsumOperand {
  Instruction* x = nullptr;
  std::string labels;
};

// Replaces "..." in each term by generated labels (one per ellipsis dim, right-aligned so
// that equal trailing dims share a label). Labels are letters, so \x01.. cannot collide.
absl::Status ExpandEllipses(const tf::Node& node, std::vector<EinsumOperand>* ops,
                            std::string* out) {
  int64_t max_ell = 0;
  for (EinsumOperand& op : *ops) {
    const size_t pos = op.labels.find("...");
    if (pos == std::string::npos) continue;
    const int64_t n = op.x->shape().rank() - static_cast<int64_t>(op.labels.size() - 3);
    if (n < 0)
      return InvalidArgument("node %s: too few dims for '%s'", node.DebugName(), op.labels);
    max_ell = std::max(max_ell, n);
  }
  auto generated = [&](int64_t n) {
    std::string g;
    for (int64_t i = max_ell - n; i < max_ell; ++i) g.push_back(static_cast<char>(1 + i));
    return g;
  };
  for (EinsumOperand& op : *ops) {
    const size_t pos = op.labels.find("...");
    if (pos == std::string::npos) continue;
    const int64_t n = op.x->shape().rank() - static_cast<int64_t>(op.labels.size() - 3);
    op.labels.replace(pos, 3, generated(n));
  }
  const size_t pos = out->find("...");
  if (pos != std::string::npos) out->replace(pos, 3, generated(max_ell));
  return absl::OkStatus();
}

// Sums `op` over the labels that are in neither `keep1` nor `keep2`.
absl::Status ReduceUnusedLabels(LoweringContext& ctx, EinsumOperand* op, const std::string& keep1,
                                const std::string& keep2) {
  std::vector<int64_t> dims;
  std::string kept;
  for (size_t i = 0; i < op->labels.size(); ++i) {
    const char l = op->labels[i];
    if (keep1.find(l) == std::string::npos && keep2.find(l) == std::string::npos) {
      dims.push_back(static_cast<int64_t>(i));
    } else {
      kept.push_back(l);
    }
  }
  if (dims.empty()) return absl::OkStatus();
  const DType t = op->x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(t, 0.0, {}));
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, t);
  TFJIT_ASSIGN_OR_RETURN(op->x, ctx.b().Reduce(op->x, zero, dims, add));
  op->labels = kept;
  return absl::OkStatus();
}

absl::StatusOr<Instruction*> TransposeToLabels(LoweringContext& ctx, const tf::Node& node,
                                               Instruction* x, const std::string& have,
                                               const std::string& want) {
  std::vector<int64_t> perm;
  for (char l : want) {
    const size_t pos = have.find(l);
    if (pos == std::string::npos || want.size() != have.size()) {
      return InvalidArgument("node %s: output label '%c' does not appear in the inputs",
                             node.DebugName(), l);
    }
    perm.push_back(static_cast<int64_t>(pos));
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity) return x;
  return ctx.b().Transpose(x, perm);
}

// Checks labels: one per dim, no repeats inside a term (diagonals are not compiled), equal
// sizes for equal labels across terms.
absl::Status CheckLabels(const tf::Node& node, const std::vector<EinsumOperand>& ops) {
  std::map<char, int64_t> sizes;
  for (const EinsumOperand& op : ops) {
    if (static_cast<int>(op.labels.size()) != op.x->shape().rank()) {
      return InvalidArgument(
          "node %s: Expected input rank %d to equal the number of labels "
          "%d",
          node.DebugName(), op.x->shape().rank(), op.labels.size());
    }
    for (size_t i = 0; i < op.labels.size(); ++i) {
      const char l = op.labels[i];
      if (op.labels.find(l) != i) {
        return Unimplemented(
            "node %s: Einsum with a repeated label in one operand (a "
            "diagonal) is not compiled",
            node.DebugName());
      }
      const int64_t d = op.x->shape().dim(static_cast<int>(i));
      auto [it, inserted] = sizes.insert({l, d});
      if (!inserted && it->second != d) {
        return Unimplemented(
            "node %s: Einsum label with sizes %d and %d (broadcasting) is "
            "not compiled",
            node.DebugName(), it->second, d);
      }
    }
  }
  return absl::OkStatus();
}

// Einsum with one or two operands: reduce labels used nowhere else, contract the shared
// labels missing from the output with one dot (shared output labels are its batch dims),
// then transpose to the output's label order.
absl::Status LowerEinsum(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::string equation, tf::GetStringAttr(node, "equation"));
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const size_t arrow = equation.find("->");
  if (arrow == std::string::npos) {
    return Unimplemented("node %s: Einsum without '->' is not compiled", node.DebugName());
  }
  std::string out = equation.substr(arrow + 2);
  std::vector<std::string> terms = absl::StrSplit(equation.substr(0, arrow), ',');
  if (static_cast<int>(terms.size()) != node.num_inputs() || terms.size() > 2) {
    return Unimplemented("node %s: Einsum '%s' with %d inputs is not compiled (1 or 2 are)",
                         node.DebugName(), equation, node.num_inputs());
  }
  std::vector<EinsumOperand> ops(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(ops[i].x, ctx.Input(node, static_cast<int>(i)));
    ops[i].labels = terms[i];
  }
  TFJIT_RETURN_IF_ERROR(ExpandEllipses(node, &ops, &out));
  TFJIT_RETURN_IF_ERROR(CheckLabels(node, ops));
  if (ops.size() == 1) {
    TFJIT_RETURN_IF_ERROR(ReduceUnusedLabels(ctx, &ops[0], out, ""));
    TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                           TransposeToLabels(ctx, node, ops[0].x, ops[0].labels, out));
    ctx.SetOutput(node, 0, r);
    return absl::OkStatus();
  }
  EinsumOperand& lhs = ops[0];
  EinsumOperand& rhs = ops[1];
  TFJIT_RETURN_IF_ERROR(ReduceUnusedLabels(ctx, &lhs, out, rhs.labels));
  TFJIT_RETURN_IF_ERROR(ReduceUnusedLabels(ctx, &rhs, out, lhs.labels));
  hlo::DotDims dims;
  std::string result;
  for (char l : out) {  // batch labels, in output order
    const size_t a = lhs.labels.find(l), b = rhs.labels.find(l);
    if (a == std::string::npos || b == std::string::npos) continue;
    dims.lhs_batch.push_back(static_cast<int64_t>(a));
    dims.rhs_batch.push_back(static_cast<int64_t>(b));
    result.push_back(l);
  }
  for (size_t a = 0; a < lhs.labels.size(); ++a) {
    const char l = lhs.labels[a];
    const size_t b = rhs.labels.find(l);
    if (b != std::string::npos && out.find(l) == std::string::npos) {
      dims.lhs_contracting.push_back(static_cast<int64_t>(a));
      dims.rhs_contracting.push_back(static_cast<int64_t>(b));
    }
  }
  for (char l : lhs.labels) {
    if (rhs.labels.find(l) == std::string::npos) result.push_back(l);
  }
  for (char l : rhs.labels) {
    if (lhs.labels.find(l) == std::string::npos) result.push_back(l);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Dot(lhs.x, rhs.x, dims));
  TFJIT_ASSIGN_OR_RETURN(r, TransposeToLabels(ctx, node, r, result, out));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- Pooling ----

// The NHWC or NCHW reduce-window of a MaxPool/AvgPool node (geometry from frontend/conv_attrs.h, as
// the fallback kernel); `out` gets the output's H and W. reduce-window's own size rule,
// (in + pads - k) / s + 1 (0 when the window does not fit), gives the same sizes.
// An NCHW node pools dims 2 and 3 (`*h_dim` gets the H dim: 1 for NHWC, 2 for NCHW).
absl::StatusOr<std::vector<hlo::WindowDim>> PoolWindow(const tf::Node& node, const hlo::Shape& x,
                                                       std::vector<int64_t>* out, int64_t* h_dim) {
  TFJIT_ASSIGN_OR_RETURN(tf::WindowAttrs a,
                         tf::ReadPoolAttrs(node, x.dims(), tf::Layouts::kNhwcOrNchw));
  const std::vector<int64_t> nhwc = a.nchw ? tf::NchwToNhwc(x.dims()) : x.dims();
  TFJIT_ASSIGN_OR_RETURN(tf::Window2D geometry,
                         tf::ComputeWindow(node, a, nhwc[1], nhwc[2], a.ksize[1], a.ksize[2]));
  *h_dim = a.nchw ? 2 : 1;
  const tf::SpatialDim* spatial[] = {&geometry.h, &geometry.w};
  std::vector<hlo::WindowDim> window(4);
  out->assign(2, 0);
  for (size_t i = 0; i < 2; ++i) {
    hlo::WindowDim& w = window[i + static_cast<size_t>(*h_dim)];
    w.size = spatial[i]->k;
    w.stride = spatial[i]->stride;
    w.pad_lo = spatial[i]->pad_before;
    w.pad_hi = spatial[i]->pad_after;
    (*out)[i] = spatial[i]->out;
  }
  return window;
}

absl::Status LowerMaxPool(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  std::vector<int64_t> out;
  int64_t h_dim = 1;
  TFJIT_ASSIGN_OR_RETURN(std::vector<hlo::WindowDim> window,
                         PoolWindow(node, x->shape(), &out, &h_dim));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * init, ctx.Splat(t, LowestValue(t), {}));
  hlo::Attributes attrs;
  attrs.window = std::move(window);
  hlo::Computation* max = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         ctx.b().Add(Opcode::kReduceWindow, {x, init}, std::move(attrs), {max}));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Sum over the window (padding cells add 0), divided by the count of non-padding cells of
// each output position (a constant). 16-bit floats sum in f32 like the kernel.
absl::Status LowerAvgPool(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  std::vector<int64_t> out;
  int64_t h_dim = 1;
  TFJIT_ASSIGN_OR_RETURN(std::vector<hlo::WindowDim> window,
                         PoolWindow(node, x->shape(), &out, &h_dim));
  const DType t = x->shape().element_type();
  const DType acc_t = (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
  if (acc_t != t) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, acc_t));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(acc_t, 0.0, {}));
  Tensor counts(acc_t, {out[0], out[1]});
  for (int64_t i = 0; i < out[0]; ++i) {
    for (int64_t j = 0; j < out[1]; ++j) {
      int64_t n = 1;
      for (int d = 0; d < 2; ++d) {
        const hlo::WindowDim& w = window[static_cast<size_t>(d + h_dim)];
        const int64_t start = (d == 0 ? i : j) * w.stride - w.pad_lo;
        const int64_t in = x->shape().dim(static_cast<int>(d + h_dim));
        n *= std::min(start + w.size, in) - std::max<int64_t>(start, 0);
      }
      // A window entirely in the padding (explicit padding only) divides 0 by 1, not by 0.
      const double c = static_cast<double>(std::max<int64_t>(n, 1));
      if (acc_t == DType::kFloat64)
        counts.data<double>()[i * out[1] + j] = c;
      else
        counts.data<float>()[i * out[1] + j] = static_cast<float>(c);
    }
  }
  hlo::Attributes attrs;
  attrs.window = std::move(window);
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, acc_t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum,
                         ctx.b().Add(Opcode::kReduceWindow, {x, zero}, std::move(attrs), {add}));
  Instruction* count = ctx.b().Constant(hlo::Literal::FromTensor(counts));
  TFJIT_ASSIGN_OR_RETURN(Instruction * countb,
                         ctx.b().Broadcast(count, sum->shape().dims(), {h_dim, h_dim + 1}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kDivide, sum, countb));
  if (acc_t != t) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

}  // namespace

void AppendNnLowerings(std::vector<OpLowering>* table) {
  table->insert(
      table->end(),
      {
          {"MatMul", LowerMatMul},
          {"MaxPool", LowerMaxPool},
          {"AvgPool", LowerAvgPool, true},
          {"BiasAdd", LowerBiasAdd},
          {"BiasAddV1", LowerBiasAdd},  // no data_format attr: the bias is on the last dim
          {"Softmax", LowerSoftmax, /*float_only=*/true},
          {"LogSoftmax", LowerLogSoftmax, true},
          {"Elu", LowerElu, true},
          {"Selu", LowerSelu, true},
          {"Softplus", LowerSoftplus, true},
          {"Softsign", LowerSoftsign, true},
          {"LeakyRelu", LowerLeakyRelu, true},
          {"L2Loss", LowerL2Loss, true},
          {"BatchMatMul", LowerBatchMatMul},
          {"BatchMatMulV2", LowerBatchMatMul},
          {"BatchMatMulV3", LowerBatchMatMul},
          {"Einsum", LowerEinsum},
      });
}

}  // namespace tfjit::tf2hlo
