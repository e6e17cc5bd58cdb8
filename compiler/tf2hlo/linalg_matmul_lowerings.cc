// Lowerings of the linalg family's products to HLO (docs/DESIGN.md, "Op families"), with the
// semantics of TF's XLA kernels (tf2xla): MatMul, BatchMatMul* and Einsum are dots
// (MatMulValues and BatchMatMulValues serve the complex forms too, op_lowerings.h);
// SparseMatMul is a float32 dot. The rest of the family is linalg_lowerings.cc.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Dims = std::vector<int64_t>;

// ---- MatMul, BatchMatMul*, Einsum: dots ----

absl::Status LowerMatMul(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(node, "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(node, "transpose_b", false));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, MatMulValues(ctx, a, b, ta, tb));
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

// ---- SparseMatMul: a float32 dot; the sparsity attrs are only hints. ----

absl::Status LowerSparseMatMul(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(node, "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(node, "transpose_b", false));
  if (a->shape().rank() != 2 || b->shape().rank() != 2) {
    return InvalidArgument("node %s: a and b must be matrices, got %s and %s", node.DebugName(),
                           a->shape().ToString(), b->shape().ToString());
  }
  const int64_t ka = ta ? 0 : 1, kb = tb ? 1 : 0;
  if (a->shape().dims()[static_cast<size_t>(ka)] != b->shape().dims()[static_cast<size_t>(kb)]) {
    return InvalidArgument("node %s: Matrix size incompatible: a: %s, b: %s", node.DebugName(),
                           a->shape().ToString(), b->shape().ToString());
  }
  for (Instruction** x : {&a, &b}) {
    if ((*x)->shape().element_type() != DType::kFloat32) {
      TFJIT_ASSIGN_OR_RETURN(*x, ctx.b().Convert(*x, DType::kFloat32));
    }
  }
  hlo::DotDims dd;
  dd.lhs_contracting = {ka};
  dd.rhs_contracting = {kb};
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Dot(a, b, dd));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

}  // namespace

void AppendLinalgMatmulLowerings(std::vector<OpLowering>* table) {
  table->push_back({"MatMul", LowerMatMul});
  for (const char* op : {"BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"}) {
    table->push_back({op, LowerBatchMatMul});
  }
  table->push_back({"Einsum", LowerEinsum});
  table->push_back({"SparseMatMul", LowerSparseMatMul});
}

}  // namespace tfjit::tf2hlo
