// MatchGemm: dot dimension numbers to a batched row-major GEMM.
#include "backends/gemm_match.h"

namespace tfjit::backends {

using hlo::Instruction;

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

}  // namespace tfjit::backends
