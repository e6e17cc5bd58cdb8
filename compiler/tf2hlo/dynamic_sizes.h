// Bounded dynamic sizes inside a cluster, as XLA's dynamic padder does them: a value whose
// size along one dim is known only at run time (Where's rows, an unpadded NonMaxSuppression's
// selection) is padded to its static bound, and the lowering carries its real size beside it
// (LoweringContext::DynamicDim). Ops that know about padding read such values and either
// carry the size on (Identity, Squeeze, GatherV2, ...) or end it (Shape, Size, and a Pad whose
// run-time paddings make a static size: the TF Object Detection API's pad-to-max pattern).
// Every other op refuses a padded input, so a padded row can never reach a real result.
//
// In ENTRY a padded output may also leave the cluster with its row count (Where, NMS:
// hlo::Module::row_counted_outputs); inside a While/If body it must end there, since a body's
// results have static shapes.
#ifndef TFJIT_COMPILER_TF2HLO_DYNAMIC_SIZES_H_
#define TFJIT_COMPILER_TF2HLO_DYNAMIC_SIZES_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/hlo/instruction.h"
#include "compiler/tf2hlo/lowering_context.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "frontend/function.h"
#include "frontend/graph.h"

namespace tfjit::tf2hlo {

// Affine expressions of run-time sizes (LoweringContext's SymExpr): c, a * k, a + b.
SymExpr Constant(int64_t c);
SymExpr Scaled(const SymExpr& a, int64_t k);
SymExpr Sum(const SymExpr& a, const SymExpr& b);

// How an op's lowering treats an input with a padded dim.
enum class DynamicRead {
  kNone,        // refuses it (LoweringContext::Input fails: PaddedReadError)
  kPropagates,  // its output is padded too, with the size carried on
  kResolves,    // its output has a static size (Shape, Size, NMS; Pad with run-time paddings)
};
DynamicRead DynamicReadOf(absl::string_view op);
// The same for input `i` of `node` (its data inputs only: not a shape or axis argument, and
// no complex values).
DynamicRead DynamicReadOf(const tf::Node& node, int i);

// The error of a node whose op does not compile on padded input `i`.
absl::Status PaddedReadError(const tf::Node& node, int i, const DynamicDim& dim);

// Which tensors of a graph are padded, and which hold values computed from padded ones (sizes,
// counts), when the nodes `in_scope` (in topological `order`) compile together; `refused`
// lists the (producer, reader) pairs that may not share a cluster: a reader that does not
// compile on the padded value, or needs a value computed from one when compiling. Clustering
// keeps those pairs apart; MustBeConstantInputs never asks a computed size for its value.
struct PaddedAnalysis {
  // Tensor -> the Where/NMS whose run-time size it carries or comes from.
  absl::flat_hash_map<std::pair<const tf::Node*, int>, const tf::Node*> padded, dependent;
  std::vector<std::pair<const tf::Node*, const tf::Node*>> refused;
  std::string first_problem;  // the first refused read, said for a user
};
PaddedAnalysis AnalyzePadded(const std::vector<const tf::Node*>& order,
                             const std::function<bool(const tf::Node&)>& in_scope);

// Whether every padded value made inside `body` (a While/If function) is read only by ops that
// compile on it and ends before the function's results; else why not, naming the node. The
// clustering pass asks this before it puts such a While/If in a cluster; the lowering decides
// the rest (a Pad whose paddings do not give a static size fails there, naming the Pad).
std::optional<std::string> UnresolvedDynamicSize(const tf::FunctionBody& body);

// Lowers `node` with its op's `lowering` and carries sizes known only at run time through it
// (padded_lowerings.cc). A node reading a padded value or a run-time size is lowered by its
// padded lowering where it has one (reductions, TopKV2, ConcatV2 along the padded dim,
// Reshape, Slice, Range, Fill, Where, elementwise ops meeting a static extent), else plainly;
// any other node plainly, and only when that fails is a Range, Slice, Fill or TopKV2 tried
// again with a run-time size bounded by value ranges. Then PropagateDynamicSizes.
absl::Status LowerNodeWithSizes(LoweringContext& ctx, const tf::Node& node,
                                const OpLowering& lowering);

// After a node's lowering: carries a padded dim through shape-preserving unary ops (unless
// `lowered_padded`: its padded lowering set its outputs), and the run-time sizes through the
// integer ops that compute with shapes (StridedSlice, Pack, Sub, ...), so a Pad can tell that
// `bound - size` pads to a static size.
absl::Status PropagateDynamicSizes(LoweringContext& ctx, const tf::Node& node, bool lowered_padded);

// `x` with the entries at index >= `limit` along `dim` replaced by the scalar `fill`.
absl::StatusOr<hlo::Instruction*> MaskBeyond(LoweringContext& ctx, hlo::Instruction* x, int dim,
                                             const SymExpr& limit, hlo::Instruction* fill);

// Pad/PadV2 whose input is padded or whose paddings are computed at run time.
absl::Status LowerDynamicPad(LoweringContext& ctx, const tf::Node& node);

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_DYNAMIC_SIZES_H_
