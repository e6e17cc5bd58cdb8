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

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/hlo/instruction.h"
#include "compiler/tf2hlo/lowering_context.h"
#include "frontend/function.h"
#include "frontend/graph.h"

namespace tfjit::tf2hlo {

// How an op's lowering treats an input with a padded dim.
enum class DynamicRead {
  kNone,        // refuses it (LoweringContext::Input fails: PaddedReadError)
  kPropagates,  // its output is padded too, with the size carried on
  kResolves,    // its output has a static size (Shape, Size, NMS; Pad with run-time paddings)
};
DynamicRead DynamicReadOf(absl::string_view op);

// The error of a node whose op does not compile on padded input `i`.
absl::Status PaddedReadError(const tf::Node& node, int i, const DynamicDim& dim);

// Whether every padded value made inside `body` (a While/If function) is read only by ops that
// compile on it and ends before the function's results; else why not, naming the node. The
// clustering pass asks this before it puts such a While/If in a cluster; the lowering decides
// the rest (a Pad whose paddings do not give a static size fails there, naming the Pad).
std::optional<std::string> UnresolvedDynamicSize(const tf::FunctionBody& body);

// Run after each node's lowering: carries a padded dim through shape-preserving unary ops, and
// the run-time sizes through the integer ops that compute with shapes (StridedSlice, Pack,
// Sub, ...), so a Pad can tell that `bound - size` pads to a static size.
absl::Status PropagateDynamicSizes(LoweringContext& ctx, const tf::Node& node);

// `x` with the entries at index >= `limit` along `dim` replaced by the scalar `fill`.
absl::StatusOr<hlo::Instruction*> MaskBeyond(LoweringContext& ctx, hlo::Instruction* x, int dim,
                                             const SymExpr& limit, hlo::Instruction* fill);

// Pad/PadV2 whose input is padded or whose paddings are computed at run time.
absl::Status LowerDynamicPad(LoweringContext& ctx, const tf::Node& node);

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_DYNAMIC_SIZES_H_
