// Registry of per-op lowering functions (one function per TF op, grouped by family).
#ifndef TFJIT_COMPILER_TF2HLO_OP_LOWERINGS_H_
#define TFJIT_COMPILER_TF2HLO_OP_LOWERINGS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compiler/tf2hlo/lowering_context.h"
#include "frontend/strided_slice_rule.h"

namespace tfjit::tf2hlo {

using LoweringFn = absl::Status (*)(LoweringContext& ctx, const tf::Node& node);

struct OpLowering {
  const char* op;
  LoweringFn fn;
  // Element types the lowering accepts for its "T"-like attr; empty = any numeric type.
  bool float_only = false;
  // Optional extra check of the node's attrs (CanLower); false leaves the node uncompiled,
  // with `*why` saying why.
  bool (*can_lower)(const tf::Node& node, std::string* why) = nullptr;
  // Input 0 is a resource handle (variable ops); other non-numeric types never compile.
  bool takes_resource = false;
  // Inputs/outputs of type variant are TensorLists (state_list_lowerings.cc).
  bool takes_list = false;
};

// For ops that always stay in the runtime: UNIMPLEMENTED "<op> runs only as a fallback kernel".
absl::Status KernelOnlyLowering(LoweringContext& ctx, const tf::Node& node);
// A can_lower that keeps an op whose output shape depends on input values in the runtime, with
// that reason.
bool DataDependentShape(const tf::Node& node, std::string* why);

// The smallest value of `t`: max's identity (-inf for floats).
double LowestValue(DType t);

// The reduction axes of a reduction node (input 1, constant) for an input of `rank`:
// canonical, unique and sorted; TF's error for an axis out of range.
absl::StatusOr<std::vector<int64_t>> ReductionAxes(LoweringContext& ctx, const tf::Node& node,
                                                   int rank);

// Sum of `x` over `dims` in its own type (reduction_lowerings.cc).
absl::StatusOr<hlo::Instruction*> SumOver(LoweringContext& ctx, hlo::Instruction* x,
                                          const std::vector<int64_t>& dims);

// `x` padded with zeros by `pads` (lo, hi, interior per dim), and `x` reversed along `dims`
// (x itself when there are none).
absl::StatusOr<hlo::Instruction*> PadWithZeros(LoweringContext& ctx, hlo::Instruction* x,
                                               const std::vector<hlo::PadDim>& pads);
absl::StatusOr<hlo::Instruction*> ReverseDims(LoweringContext& ctx, hlo::Instruction* x,
                                              std::vector<int64_t> dims);

// `value` (holding a planned strided slice's elements, in the slice's processing or final
// shape) placed at the slice's positions of a zero tensor of dims `shape` (reverse + pad with
// interior padding). StridedSliceGrad and the strided-slice assignments use it.
absl::StatusOr<hlo::Instruction*> PlaceStridedSlice(LoweringContext& ctx, hlo::Instruction* value,
                                                    const tf::StridedPlan& plan,
                                                    const std::vector<int64_t>& shape);

// MatMul's product of matrices a and b (transposed as asked), and BatchMatMul's of x and y
// (batch dims broadcast; adj_* transposes the last two dims, the caller conjugates complex
// parts), both in the operands' element type; TF's shape errors (linalg_lowerings.cc).
absl::StatusOr<hlo::Instruction*> MatMulValues(LoweringContext& ctx, hlo::Instruction* a,
                                               hlo::Instruction* b, bool ta, bool tb);
absl::StatusOr<hlo::Instruction*> BatchMatMulValues(LoweringContext& ctx, const tf::Node& node,
                                                    hlo::Instruction* x, hlo::Instruction* y,
                                                    bool adj_x, bool adj_y);

// asinh of a real floating-point value, full relative accuracy near 0 and no overflow through
// x^2 for large |x| (math_elementwise_lowerings.cc; the complex inverse trigonometry uses it too).
absl::StatusOr<hlo::Instruction*> AsinhValue(LoweringContext& ctx, hlo::Instruction* x);

// nullptr when the op has no lowering.
const OpLowering* FindOpLowering(absl::string_view op);
// The lowering of an op for complex values (complex_values.h), or nullptr.
const OpLowering* FindComplexLowering(absl::string_view op);
// Whether any input or output of `node` is complex64/complex128.
bool HasComplexValues(const tf::Node& node);
// The lowering `node` uses: its op's complex lowering when it has complex values, else the
// op's lowering; nullptr when there is none.
const OpLowering* LoweringFor(const tf::Node& node);
// The scalar padding value of Pad (zero) or PadV2 (its third input, which must be a scalar).
absl::StatusOr<hlo::Instruction*> PadConstantValue(LoweringContext& ctx, const tf::Node& node,
                                                   DType type);
// Lowers one node of a cluster or a function body with its LoweringFor (metadata set, sizes
// known only at run time carried through: dynamic_sizes.h's LowerNodeWithSizes).
absl::Status LowerNode(LoweringContext& ctx, const tf::Node& node);

// Families (each defined in its own file).
void AppendMathLowerings(std::vector<OpLowering>* table);       // math_lowerings.cc
void AppendReductionLowerings(std::vector<OpLowering>* table);  // reduction_lowerings.cc
void AppendArrayLowerings(std::vector<OpLowering>* table);      // array_lowerings.cc
void AppendNnLowerings(std::vector<OpLowering>* table);         // nn_lowerings.cc
void AppendRandomLowerings(std::vector<OpLowering>* table);     // random_lowerings.cc
// While/If, ControlTrigger and the comparison/logical ops of loop conditions
// (control_flow_lowerings.cc).
void AppendControlFlowLowerings(std::vector<OpLowering>* table);
void AppendResourceLowerings(std::vector<OpLowering>* table);     // state_resource_lowerings.cc
void AppendListLowerings(std::vector<OpLowering>* table);         // state_list_lowerings.cc
void AppendElementwiseLowerings(std::vector<OpLowering>* table);  // math_elementwise_lowerings.cc
void AppendSliceLowerings(std::vector<OpLowering>* table);        // array_slice_lowerings.cc
void AppendConvLowerings(std::vector<OpLowering>* table);         // nn_conv_lowerings.cc
void AppendImageLowerings(std::vector<OpLowering>* table);        // image_lowerings.cc
void AppendGradientsLowerings(std::vector<OpLowering>* table);    // gradients_lowerings.cc
void AppendGradientsWindowLowerings(
    std::vector<OpLowering>* table);                               // gradients_window_lowerings.cc
void AppendGradients3dLowerings(std::vector<OpLowering>* table);   // gradients_3d_lowerings.cc
void AppendOptimizersLowerings(std::vector<OpLowering>* table);    // optimizers_lowerings.cc
void AppendLinalgLowerings(std::vector<OpLowering>* table);        // linalg_lowerings.cc
void AppendLinalgMatmulLowerings(std::vector<OpLowering>* table);  // linalg_matmul_lowerings.cc
void AppendScatterSegmentLowerings(std::vector<OpLowering>* table);  // scatter_segment_lowerings.cc
void AppendArrayMoreLowerings(std::vector<OpLowering>* table);       // array_more_lowerings.cc
void AppendSpecialLowerings(std::vector<OpLowering>* table);         // special_lowerings.cc
void AppendRandomMoreLowerings(std::vector<OpLowering>* table);      // random_more_lowerings.cc
void AppendImageMoreLowerings(std::vector<OpLowering>* table);       // image_more_lowerings.cc
void AppendNnMoreLowerings(std::vector<OpLowering>* table);          // nn_more_lowerings.cc
void AppendXlaLowerings(std::vector<OpLowering>* table);             // xla_lowerings.cc
void AppendGraphLowerings(std::vector<OpLowering>* table);           // graph_lowerings.cc

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_OP_LOWERINGS_H_
