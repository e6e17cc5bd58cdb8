// TransposedConvolutionSplitPass (transposed_conv_split.h): each qualifying convolution is
// replaced once; the convolutions it adds have no input dilation, so one visit suffices.
#include "compiler/passes/transposed_conv_split.h"

#include <algorithm>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/builder.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// One spatial dim's split into phases.
struct Phase {
  int64_t first_tap = 0;  // k0
  int64_t taps = 0;       // T
  int64_t pad_lo = 0;     // max(lo', 0)
  int64_t pad_hi = 0;     // max(hi', 0)
  int64_t in_start = 0;   // max(-lo', 0): the input elements a negative padding drops
  int64_t in_limit = 0;   // n - max(-hi', 0)
  // No tap meets an input element (fewer taps than the dilation, or a crop of all of them):
  // the phase's outputs are zeros.
  bool empty = false;
};
struct SpatialSplit {
  int64_t dilation = 1;       // s
  int64_t outputs = 0;        // Q = ceil(m / s), outputs per phase
  std::vector<Phase> phases;  // one per r in [0, s)
};

int64_t FloorMod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

// The split of every spatial dim, or an empty vector when the rewrite does not apply.
std::vector<SpatialSplit> SplitOf(const Instruction& conv) {
  if (conv.operand_count() != 2 || !conv.shape().IsArray()) return {};
  const hlo::ConvDims& cd = conv.attrs().conv;
  const std::vector<hlo::WindowDim>& window = conv.attrs().window;
  if (window.size() != cd.input_spatial.size() || window.empty()) return {};
  bool dilated = false;
  std::vector<SpatialSplit> splits;
  for (size_t i = 0; i < window.size(); ++i) {
    const hlo::WindowDim& w = window[i];
    if (w.stride != 1 || w.rhs_dilate != 1 || w.lhs_dilate < 1) return {};
    dilated |= w.lhs_dilate > 1;
    const int64_t s = w.lhs_dilate;
    const int64_t n = conv.operand(0)->shape().dims()[static_cast<size_t>(cd.input_spatial[i])];
    const int64_t m = conv.shape().dims()[static_cast<size_t>(cd.output_spatial[i])];
    if (n <= 0 || m <= 0) return {};
    SpatialSplit split;
    split.dilation = s;
    split.outputs = (m + s - 1) / s;
    for (int64_t r = 0; r < s; ++r) {
      Phase p;
      p.first_tap = FloorMod(w.pad_lo - r, s);
      p.taps = p.first_tap < w.size ? (w.size - p.first_tap + s - 1) / s : 0;
      const int64_t lo = (w.pad_lo - r - p.first_tap) / s;  // exact: a multiple of s
      const int64_t hi = split.outputs - 1 + p.taps - n - lo;
      p.pad_lo = std::max<int64_t>(lo, 0);
      p.pad_hi = std::max<int64_t>(hi, 0);
      p.in_start = std::max<int64_t>(-lo, 0);
      p.in_limit = n - std::max<int64_t>(-hi, 0);
      p.empty = p.taps == 0 || p.in_limit - p.in_start < 1;
      split.phases.push_back(p);
    }
    splits.push_back(std::move(split));
  }
  if (!dilated) return {};
  return splits;
}

// The permutation that puts a filter in the spatial..., input feature, output feature order
// (HWIO for 2-D, TF's own layout, which the CPU backend's convolution kernels take).
std::vector<int64_t> SpatialInOutOrder(const hlo::ConvDims& cd) {
  std::vector<int64_t> perm = cd.kernel_spatial;
  perm.push_back(cd.kernel_input_feature);
  perm.push_back(cd.kernel_output_feature);
  return perm;
}

// The filter taps of one phase (a strided slice of its spatial dims) in SpatialInOutOrder,
// folded to a constant when the filter is one.
absl::StatusOr<Instruction*> PhaseFilter(hlo::Computation& c, hlo::Builder& builder,
                                         Instruction* filter, const hlo::ConvDims& cd,
                                         const std::vector<const Phase*>& phase,
                                         const std::vector<SpatialSplit>& splits) {
  std::vector<hlo::SliceDim> slice;
  for (int64_t d : filter->shape().dims()) slice.push_back({0, d, 1});
  for (size_t i = 0; i < phase.size(); ++i) {
    hlo::SliceDim& sd = slice[static_cast<size_t>(cd.kernel_spatial[i])];
    sd.start = phase[i]->first_tap;
    sd.stride = splits[i].dilation;
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * taps, builder.Slice(filter, slice));
  const std::vector<int64_t> order = SpatialInOutOrder(cd);
  bool identity = true;
  for (size_t d = 0; d < order.size(); ++d) identity &= order[d] == static_cast<int64_t>(d);
  if (!identity) {
    TFJIT_ASSIGN_OR_RETURN(taps, builder.Transpose(taps, order));
  }
  if (filter->opcode() != Opcode::kConstant) return taps;  // a few copies at run time
  hlo::Literal value = filter->literal();
  std::vector<Instruction*> chain = {taps};
  if (!identity) chain.insert(chain.begin(), taps->operand(0));
  for (Instruction* inst : chain) {
    TFJIT_ASSIGN_OR_RETURN(value, hlo::EvaluateInstruction(*inst, {value}));
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    TFJIT_RETURN_IF_ERROR(c.RemoveInstruction(*it));
  }
  return builder.Constant(std::move(value));
}

absl::Status Split(hlo::Computation& c, Instruction* conv,
                   const std::vector<SpatialSplit>& splits) {
  hlo::Builder builder(&c);
  builder.set_metadata(conv->metadata());
  const hlo::ConvDims& cd = conv->attrs().conv;
  const std::vector<int64_t>& out_dims = conv->shape().dims();
  const DType dtype = conv->shape().element_type();
  const size_t k = splits.size();

  // Each phase's output, expanded with a size-1 dim after each spatial dim (where the phases
  // of that dim are concatenated).
  std::vector<int64_t> phase_dims = out_dims;
  for (size_t i = 0; i < k; ++i)
    phase_dims[static_cast<size_t>(cd.output_spatial[i])] = splits[i].outputs;
  std::vector<int64_t> expanded_dims, merged_dims, phase_axis(k);
  for (size_t p = 0; p < phase_dims.size(); ++p) {
    expanded_dims.push_back(phase_dims[p]);
    merged_dims.push_back(phase_dims[p]);
    for (size_t i = 0; i < k; ++i) {
      if (cd.output_spatial[i] == static_cast<int64_t>(p)) {
        phase_axis[i] = static_cast<int64_t>(expanded_dims.size());
        expanded_dims.push_back(1);
        merged_dims.back() *= splits[i].dilation;
      }
    }
  }

  // Phases in row-major order of (r_0, ..., r_{k-1}).
  int64_t num_phases = 1;
  for (const SpatialSplit& s : splits) num_phases *= s.dilation;
  std::vector<Instruction*> level;
  Instruction* zeros = nullptr;  // the output of a phase no tap reaches, made once
  for (int64_t flat = 0; flat < num_phases; ++flat) {
    std::vector<const Phase*> phase(k);
    int64_t rest = flat;
    for (size_t i = k; i-- > 0;) {
      phase[i] = &splits[i].phases[static_cast<size_t>(rest % splits[i].dilation)];
      rest /= splits[i].dilation;
    }
    bool empty = false;
    for (const Phase* p : phase) empty |= p->empty;
    if (empty) {
      if (zeros == nullptr) {
        Instruction* zero = builder.Constant(hlo::Literal(hlo::Shape(dtype, {})));  // zeroed
        TFJIT_ASSIGN_OR_RETURN(zeros, builder.Broadcast(zero, expanded_dims, {}));
      }
      level.push_back(zeros);
      continue;
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * filter,
                           PhaseFilter(c, builder, conv->operand(1), cd, phase, splits));
    Instruction* input = conv->operand(0);
    std::vector<hlo::SliceDim> input_slice;
    for (int64_t d : input->shape().dims()) input_slice.push_back({0, d, 1});
    bool sliced = false;
    for (size_t i = 0; i < k; ++i) {
      hlo::SliceDim& sd = input_slice[static_cast<size_t>(cd.input_spatial[i])];
      sliced |= phase[i]->in_start != sd.start || phase[i]->in_limit != sd.limit;
      sd.start = phase[i]->in_start;
      sd.limit = phase[i]->in_limit;
    }
    if (sliced) {
      TFJIT_ASSIGN_OR_RETURN(input, builder.Slice(input, input_slice));
    }
    hlo::Attributes attrs = conv->attrs();
    for (size_t i = 0; i < k; ++i) attrs.conv.kernel_spatial[i] = static_cast<int64_t>(i);
    attrs.conv.kernel_input_feature = static_cast<int64_t>(k);
    attrs.conv.kernel_output_feature = static_cast<int64_t>(k) + 1;
    for (size_t i = 0; i < k; ++i) {
      hlo::WindowDim& w = attrs.window[i];
      w.size = phase[i]->taps;
      w.pad_lo = phase[i]->pad_lo;
      w.pad_hi = phase[i]->pad_hi;
      w.lhs_dilate = 1;
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * out,
                           builder.Add(Opcode::kConvolution, {input, filter}, std::move(attrs), {},
                                       hlo::Shape(dtype, phase_dims)));
    TFJIT_ASSIGN_OR_RETURN(Instruction * expanded, builder.Reshape(out, expanded_dims));
    level.push_back(expanded);
  }
  // Interleave: concatenate the phases of the last spatial dim first.
  for (size_t i = k; i-- > 0;) {
    const int64_t s = splits[i].dilation;
    if (s == 1) continue;
    std::vector<Instruction*> next;
    for (size_t g = 0; g < level.size(); g += static_cast<size_t>(s)) {
      std::vector<Instruction*> group(level.begin() + static_cast<std::ptrdiff_t>(g),
                                      level.begin() + static_cast<std::ptrdiff_t>(g) + s);
      TFJIT_ASSIGN_OR_RETURN(Instruction * joined, builder.Concatenate(group, phase_axis[i]));
      next.push_back(joined);
    }
    level = std::move(next);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * result, builder.Reshape(level[0], merged_dims));
  if (merged_dims != out_dims) {
    std::vector<hlo::SliceDim> slice;
    for (int64_t d : out_dims) slice.push_back({0, d, 1});
    TFJIT_ASSIGN_OR_RETURN(result, builder.Slice(result, slice));
  }
  return c.ReplaceAllUsesWith(conv, result);
}

}  // namespace

absl::StatusOr<bool> TransposedConvolutionSplitPass::Run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    for (Instruction* inst : c->MakePostOrder()) {
      if (inst->opcode() != Opcode::kConvolution) continue;
      if (inst->user_count() == 0 && !inst->IsRoot()) continue;
      const std::vector<SpatialSplit> splits = SplitOf(*inst);
      if (splits.empty()) continue;
      TFJIT_RETURN_IF_ERROR(Split(*c, inst, splits));
      changed = true;
    }
  }
  return changed;
}

}  // namespace tfjit::passes
