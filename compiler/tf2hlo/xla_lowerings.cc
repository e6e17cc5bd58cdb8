// Lowerings of the xla family (docs/DESIGN.md, "Op families"): XlaDotV2/XlaDot become one
// HLO dot and XlaConvV2/XlaConv one HLO convolution, with the dimension numbers decoded and
// validated by frontend/xla_dims.h (shared with the kernels). The operands are converted to
// the output type first (preferred_element_type for the V2 ops), as tf2xla does for mixed
// input types.
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/xla_dims.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;

// The output type and both operands converted to it.
absl::StatusOr<DType> ConvertOperands(LoweringContext& ctx, const tf::Node& node, Instruction** lhs,
                                      Instruction** rhs) {
  TFJIT_ASSIGN_OR_RETURN(*lhs, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(*rhs, ctx.Input(node, 1));
  DType out = (*lhs)->shape().element_type();
  if (node.op() == "XlaDotV2" || node.op() == "XlaConvV2") {
    TFJIT_ASSIGN_OR_RETURN(out, tf::GetTypeAttr(node, "preferred_element_type"));
  }
  for (Instruction** x : {lhs, rhs}) {
    if ((*x)->shape().element_type() != out) {
      TFJIT_ASSIGN_OR_RETURN(*x, ctx.b().Convert(*x, out));
    }
  }
  return out;
}

absl::Status LowerXlaDot(LoweringContext& ctx, const tf::Node& node) {
  Instruction* lhs = nullptr;
  Instruction* rhs = nullptr;
  TFJIT_RETURN_IF_ERROR(ConvertOperands(ctx, node, &lhs, &rhs).status());
  TFJIT_ASSIGN_OR_RETURN(tf::XlaDotPlan plan,
                         tf::PlanXlaDot(node, lhs->shape().dims(), rhs->shape().dims()));
  hlo::DotDims dims;
  dims.lhs_batch = plan.lhs_batch;
  dims.rhs_batch = plan.rhs_batch;
  dims.lhs_contracting = plan.lhs_contracting;
  dims.rhs_contracting = plan.rhs_contracting;
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Dot(lhs, rhs, dims));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

absl::Status LowerXlaConv(LoweringContext& ctx, const tf::Node& node) {
  Instruction* lhs = nullptr;
  Instruction* rhs = nullptr;
  TFJIT_RETURN_IF_ERROR(ConvertOperands(ctx, node, &lhs, &rhs).status());
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, ctx.ConstantInputAsInts(node, 2));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> padding, ctx.ConstantInputAsInts(node, 3));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> lhs_dilation, ctx.ConstantInputAsInts(node, 4));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> rhs_dilation, ctx.ConstantInputAsInts(node, 5));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> groups, ctx.ConstantInputAsInts(node, 6));
  if (groups.size() != 1) {
    return InvalidArgument("node %s: feature_group_count must be a scalar, got %d values",
                           node.DebugName(), groups.size());
  }
  TFJIT_ASSIGN_OR_RETURN(tf::XlaConvPlan plan,
                         tf::PlanXlaConv(node, lhs->shape().dims(), rhs->shape().dims(), strides,
                                         padding, lhs_dilation, rhs_dilation, groups[0]));
  hlo::Attributes attrs;
  for (const tf::XlaConvWindow& w : plan.window) {
    hlo::WindowDim d;
    d.size = w.size;
    d.stride = w.stride;
    d.pad_lo = w.pad_lo;
    d.pad_hi = w.pad_hi;
    d.lhs_dilate = w.lhs_dilation;
    d.rhs_dilate = w.rhs_dilation;
    attrs.window.push_back(d);
  }
  attrs.conv.input_batch = plan.input_batch;
  attrs.conv.input_feature = plan.input_feature;
  attrs.conv.input_spatial = plan.input_spatial;
  attrs.conv.kernel_input_feature = plan.kernel_input_feature;
  attrs.conv.kernel_output_feature = plan.kernel_output_feature;
  attrs.conv.kernel_spatial = plan.kernel_spatial;
  attrs.conv.output_batch = plan.output_batch;
  attrs.conv.output_feature = plan.output_feature;
  attrs.conv.output_spatial = plan.output_spatial;
  attrs.feature_group_count = plan.feature_group_count;
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         ctx.b().Add(hlo::Opcode::kConvolution, {lhs, rhs}, std::move(attrs)));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

}  // namespace

void AppendXlaLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
                                  {"XlaDotV2", LowerXlaDot},
                                  {"XlaDot", LowerXlaDot},
                                  {"XlaConvV2", LowerXlaConv},
                                  {"XlaConv", LowerXlaConv},
                              });
}

}  // namespace tfjit::tf2hlo
