// MatchGemm: dot dimension numbers to a batched row-major GEMM.
#include "backends/gemm_match.h"

namespace tfjit::backends {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// A rank-2 lhs and a rhs with dims on both sides of its contracting dim (GemmShape::rhs_outer).
std::optional<GemmShape> MatchRhsOuterGemm(const Instruction& dot) {
  const hlo::DotDims& dn = dot.attrs().dot;
  const hlo::Shape& lhs = dot.operand(0)->shape();
  const hlo::Shape& rhs = dot.operand(1)->shape();
  if (!dn.lhs_batch.empty() || dn.lhs_contracting.size() != 1 || lhs.rank() != 2) {
    return std::nullopt;
  }
  GemmShape g;
  g.transpose_lhs = dn.lhs_contracting[0] == 0;
  g.m = lhs.dim(g.transpose_lhs ? 1 : 0);
  g.k = lhs.dim(g.transpose_lhs ? 0 : 1);
  const int rc = static_cast<int>(dn.rhs_contracting[0]);
  g.rhs_outer = 1;
  for (int d = 0; d < rhs.rank(); ++d) {
    if (d < rc) g.rhs_outer *= rhs.dim(d);
    if (d > rc) g.n *= rhs.dim(d);
  }
  return g;
}

}  // namespace

std::optional<GemmShape> MatchGemm(const Instruction& dot) {
  const DType type = dot.shape().element_type();
  if (type != DType::kFloat32 && type != DType::kFloat64) return std::nullopt;
  const hlo::DotDims& dn = dot.attrs().dot;
  const hlo::Shape& lhs = dot.operand(0)->shape();
  const hlo::Shape& rhs = dot.operand(1)->shape();
  const int nb = static_cast<int>(dn.lhs_batch.size());
  if (dn.lhs_contracting.size() != 1) return std::nullopt;
  GemmShape g;
  for (int i = 0; i < nb; ++i) {
    if (dn.lhs_batch[i] != i || dn.rhs_batch[i] != i) return std::nullopt;
    g.batch *= lhs.dim(i);
  }
  const int64_t lc = dn.lhs_contracting[0], rc = dn.rhs_contracting[0];
  g.k = lhs.dim(static_cast<int>(lc));
  if (lhs.rank() == nb + 1) {
    if (lc != nb) return std::nullopt;
  } else if (lhs.rank() == nb + 2) {
    g.transpose_lhs = lc == nb;
    g.m = lhs.dim(g.transpose_lhs ? nb + 1 : nb);
  } else {
    return std::nullopt;
  }
  if (rhs.rank() == nb + 1) {
    if (rc != nb) return std::nullopt;
  } else if (rhs.rank() == nb + 2) {
    g.transpose_rhs = rc == nb + 1;
    g.n = rhs.dim(g.transpose_rhs ? nb : nb + 1);
  } else {
    return MatchRhsOuterGemm(dot);
  }
  return g;
}

std::optional<conv::Conv2DParams> MatchConv2D(const Instruction& inst) {
  const DType type = inst.shape().element_type();
  if (type != DType::kFloat32 && type != DType::kFloat64) return std::nullopt;
  const hlo::Shape& lhs = inst.operand(0)->shape();
  const hlo::Shape& rhs = inst.operand(1)->shape();
  const hlo::Shape& out = inst.shape();
  if (lhs.element_type() != type || rhs.element_type() != type) return std::nullopt;
  if (lhs.rank() != 4 || rhs.rank() != 4 || out.rank() != 4) return std::nullopt;
  const hlo::ConvDims& cd = inst.attrs().conv;
  const std::vector<int64_t> spatial = {1, 2}, kernel_spatial = {0, 1};
  if (cd.input_batch != 0 || cd.input_feature != 3 || cd.input_spatial != spatial ||
      cd.kernel_input_feature != 2 || cd.kernel_output_feature != 3 ||
      cd.kernel_spatial != kernel_spatial || cd.output_batch != 0 || cd.output_feature != 3 ||
      cd.output_spatial != spatial) {
    return std::nullopt;
  }
  const std::vector<hlo::WindowDim>& window = inst.attrs().window;
  if (window.size() != 2) return std::nullopt;
  for (const hlo::WindowDim& w : window) {
    if (w.stride < 1 || w.lhs_dilate < 1 || w.rhs_dilate < 1) return std::nullopt;
  }
  conv::Conv2DParams p;
  p.groups = inst.attrs().feature_group_count;
  p.batch = lhs.dim(0);
  p.in_h = lhs.dim(1);
  p.in_w = lhs.dim(2);
  p.in_c = lhs.dim(3);
  p.k_h = rhs.dim(0);
  p.k_w = rhs.dim(1);
  p.out_c = out.dim(3);
  p.out_h = out.dim(1);
  p.out_w = out.dim(2);
  if (p.groups < 1 || p.in_c % p.groups != 0 || p.out_c % p.groups != 0 ||
      rhs.dim(2) != p.in_c / p.groups || rhs.dim(3) != p.out_c || out.dim(0) != p.batch ||
      window[0].size != p.k_h || window[1].size != p.k_w) {
    return std::nullopt;
  }
  p.stride_h = window[0].stride;
  p.stride_w = window[1].stride;
  p.pad_top = window[0].pad_lo;
  p.pad_left = window[1].pad_lo;
  p.lhs_dilate_h = window[0].lhs_dilate;
  p.lhs_dilate_w = window[1].lhs_dilate;
  p.rhs_dilate_h = window[0].rhs_dilate;
  p.rhs_dilate_w = window[1].rhs_dilate;
  return p;
}

}  // namespace tfjit::backends
