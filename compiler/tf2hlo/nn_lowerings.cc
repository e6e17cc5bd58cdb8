// Lowerings of TF's neural-network ops: MatMul, BiasAdd, Softmax.
#include <limits>

#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

absl::Status LowerMatMul(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(node, "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(node, "transpose_b", false));
  const hlo::Shape& sa = a->shape();
  const hlo::Shape& sb = b->shape();
  if (sa.rank() != 2 || sb.rank() != 2) {
    return InvalidArgument("In[0] and In[1] must be matrices, got %s and %s", sa.ToString(),
                           sb.ToString());
  }
  const int64_t ka = ta ? 0 : 1;
  const int64_t kb = tb ? 1 : 0;
  if (sa.dim(static_cast<int>(ka)) != sb.dim(static_cast<int>(kb))) {
    return InvalidArgument("Matrix size-incompatible: In[0]: %s, In[1]: %s (transpose_a=%s, "
                           "transpose_b=%s); the contracted dimensions must be equal",
                           sa.ToString(), sb.ToString(), ta ? "true" : "false",
                           tb ? "true" : "false");
  }
  hlo::DotDims dims;
  dims.lhs_contracting = {ka};
  dims.rhs_contracting = {kb};
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Dot(a, b, dims));
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
    return InvalidArgument("Must provide as many biases as the channel dimension of the input "
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
  hlo::Computation* max_comp = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, t);
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

}  // namespace

void AppendNnLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
      {"MatMul", LowerMatMul},
      {"BiasAdd", LowerBiasAdd},
      {"Softmax", LowerSoftmax, /*float_only=*/true},
  });
}

}  // namespace tfjit::tf2hlo
