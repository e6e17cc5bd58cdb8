// AnalyzeRows (row_analysis.h): each value of the entry computation is one of
//   none:    its shape and its values do not depend on the batch (a weight, a constant);
//   aligned: its dim 0 is the batch (`?b`) and row i depends only on row i of the batch
//            inputs and on values that are none (an iota or a broadcast constant shaped
//            [?b, ...] too: its row i is the same whatever the batch size, but reducing it over
//            dim 0 depends on that size);
//   mixed:   anything else that depends on the batch.
// An instruction with a mixed operand is mixed; one with only none operands is none when its
// shape is static and aligned when its dim 0 is `?b` (mixed for another symbolic dim);
// otherwise its opcode's rule decides, and a result the rule calls aligned must have dim 0
// `?b` too. The module keeps rows apart when no result (run-time checks aside) is mixed.
#include "compiler/hlo/row_analysis.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/hlo/symbolic.h"
#include "core/dtype.h"
#include "core/top_k.h"

namespace tfjit::hlo {
namespace {

enum class Rows { kNone, kAligned, kMixed };

// One state per array leaf: an array value has one, a tuple one per element; a mixed leaf
// says why.
struct State {
  std::vector<Rows> leaves;
  std::vector<std::string> why;
  static State Of(Rows rows, std::string reason = "") { return State{{rows}, {reason}}; }
  Rows Join() const {
    Rows r = Rows::kNone;
    for (Rows leaf : leaves) r = std::max(r, leaf);
    return r;
  }
  // The reason of the first mixed leaf.
  const std::string& Reason() const {
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i] == Rows::kMixed) return why[i];
    }
    static const std::string kNoReason;
    return kNoReason;
  }
};

bool IsBatchDim0(const Shape& shape) {
  return shape.IsArray() && shape.has_symbolic_dim0() && shape.symbolic_dim0().k == 1 &&
         shape.symbolic_dim0().c == 0;
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Whether `inst` is an integer constant 0.
bool IsZeroConstant(const Instruction& inst) {
  if (inst.opcode() != Opcode::kConstant || !inst.shape().IsArray()) return false;
  const Tensor& t = inst.literal().tensor();
  if (t.byte_size() == 0 || IsFloatingDType(t.dtype())) return false;
  const auto* bytes = static_cast<const unsigned char*>(t.raw_data());
  return std::all_of(bytes, bytes + t.byte_size(), [](unsigned char c) { return c == 0; });
}

class Analyzer {
 public:
  // The state of `computation`'s root, its parameters in `params`.
  State Run(const Computation& computation, const std::vector<State>& params) {
    absl::flat_hash_map<const Instruction*, State> state;
    for (const Instruction* inst : computation.MakePostOrder()) {
      State s;
      if (inst->opcode() == Opcode::kParameter) {
        const size_t p = static_cast<size_t>(inst->parameter_number());
        s = p < params.size() ? params[p] : State::Of(Rows::kMixed, "a parameter without a value");
      } else {
        std::vector<const State*> ops;
        for (const Instruction* op : inst->operands()) ops.push_back(&state.at(op));
        s = Visit(*inst, ops);
      }
      state[inst] = std::move(s);
    }
    return state.at(computation.root());
  }

 private:
  static size_t Leaves(const Instruction& inst) {
    return inst.shape().IsTuple() ? inst.shape().tuple_shapes().size() : size_t{1};
  }
  static State Uniform(const Instruction& inst, Rows rows, const std::string& why) {
    return State{std::vector<Rows>(Leaves(inst), rows),
                 std::vector<std::string>(Leaves(inst), why)};
  }
  static State None(const Instruction& inst) { return Uniform(inst, Rows::kNone, ""); }
  static State Mixed(const Instruction& inst, const std::string& how) {
    return Uniform(inst, Rows::kMixed, absl::StrCat("%", inst.name(), " ", how));
  }
  // Aligned, when every array leaf of the result has dim 0 `?b`.
  static State Aligned(const Instruction& inst) {
    State s = None(inst);
    for (size_t i = 0; i < s.leaves.size(); ++i) {
      const Shape& leaf =
          inst.shape().IsTuple() ? inst.shape().tuple_shape(static_cast<int>(i)) : inst.shape();
      if (!IsBatchDim0(leaf)) {
        return Mixed(inst, absl::StrCat("gives ", leaf.ToString(),
                                        ", whose dim 0 is not the batch, from batch rows"));
      }
      s.leaves[i] = Rows::kAligned;
    }
    return s;
  }
  State Visit(const Instruction& inst, const std::vector<const State*>& ops) {
    const bool passes_tuples = inst.opcode() == Opcode::kTuple ||
                               inst.opcode() == Opcode::kGetTupleElement ||
                               inst.opcode() == Opcode::kCall;
    Rows any = Rows::kNone;
    for (const State* op : ops) {
      // A mixed operand makes the result mixed (tuples pass their elements' states on).
      if (op->Join() == Rows::kMixed && !passes_tuples) {
        return Uniform(inst, Rows::kMixed, op->Reason());
      }
      any = std::max(any, op->Join());
    }
    auto rows = [&](int i) { return ops[static_cast<size_t>(i)]->Join(); };
    const Attributes& a = inst.attrs();
    switch (inst.opcode()) {
      case Opcode::kParameter:
      case Opcode::kConstant:
        return None(inst);
      case Opcode::kIota:
        return inst.shape().IsSymbolic() ? Aligned(inst) : None(inst);
      case Opcode::kTuple: {
        State s;
        for (int i = 0; i < inst.operand_count(); ++i) {
          const State& op = *ops[static_cast<size_t>(i)];
          if (op.leaves.size() != 1) {
            return any == Rows::kNone ? None(inst) : Mixed(inst, "nests a tuple");
          }
          s.leaves.push_back(op.leaves[0]);
          s.why.push_back(op.why[0]);
        }
        return s;
      }
      case Opcode::kGetTupleElement: {
        const State& tuple = *ops[0];
        const size_t i = static_cast<size_t>(a.tuple_index);
        if (i >= tuple.leaves.size() || !inst.shape().IsArray()) {
          return any == Rows::kNone ? None(inst) : Mixed(inst, "reads a nested tuple");
        }
        return State::Of(tuple.leaves[i], tuple.why[i]);
      }
      case Opcode::kCall: {
        std::vector<State> params;
        for (const State* op : ops) params.push_back(*op);
        return Run(*inst.to_apply(), params);
      }
      case Opcode::kRngBitGenerator:
      case Opcode::kCustomCall:
        // Random fills draw per element of their whole shape, and a state advanced by the
        // padded size would differ: none only when no batch-sized value is involved.
        if (any == Rows::kNone && !inst.shape().IsSymbolic()) return None(inst);
        if (inst.opcode() == Opcode::kCustomCall && a.custom_call_target == topk::kTopKTarget &&
            rows(0) == Rows::kAligned && inst.operand(0)->shape().rank() >= 2) {
          return Aligned(inst);  // along the last dim, row by row
        }
        return Mixed(inst, absl::StrCat("(", std::string(OpcodeName(inst.opcode())),
                                        inst.opcode() == Opcode::kCustomCall
                                            ? absl::StrCat(" ", a.custom_call_target)
                                            : "",
                                        ") is not known to keep batch rows apart"));
      default:
        break;
    }
    if (any == Rows::kNone) return inst.shape().IsSymbolic() ? Aligned(inst) : None(inst);
    if (IsElementwise(inst.opcode()) || inst.opcode() == Opcode::kBitcastConvert) {
      return Aligned(inst);
    }
    switch (inst.opcode()) {
      case Opcode::kBroadcast:
        if (!a.dimensions.empty() && a.dimensions[0] == 0) return Aligned(inst);
        return Mixed(inst, "moves the batch away from dim 0");
      case Opcode::kReshape:
        // Row-major: with dim 0 the batch on both sides, each row keeps its own elements.
        return Aligned(inst);
      case Opcode::kTranspose:
        if (!a.dimensions.empty() && a.dimensions[0] == 0) return Aligned(inst);
        return Mixed(inst, "moves the batch away from dim 0");
      case Opcode::kSlice:
        if (!a.slice.empty() && a.slice[0].start == 0 && a.slice[0].stride == 1) {
          return Aligned(inst);
        }
        return Mixed(inst, "slices along the batch");
      case Opcode::kConcatenate:
        if (!a.dimensions.empty() && a.dimensions[0] != 0) return Aligned(inst);
        return Mixed(inst, "concatenates along the batch");
      case Opcode::kPad:
        if (rows(1) == Rows::kNone && !a.padding.empty() && a.padding[0] == PadDim{}) {
          return Aligned(inst);
        }
        return Mixed(inst, "pads along the batch");
      case Opcode::kReverse:
        if (!Contains(a.dimensions, 0)) return Aligned(inst);
        return Mixed(inst, "reverses the batch");
      case Opcode::kReduce: {
        const int n = inst.operand_count() / 2;
        for (int i = n; i < inst.operand_count(); ++i) {
          if (rows(i) != Rows::kNone) return Mixed(inst, "starts from a batch value");
        }
        if (!Contains(a.dimensions, 0)) return Aligned(inst);
        return Mixed(inst, "reduces over the batch (dim 0)");
      }
      case Opcode::kReduceWindow: {
        const int n = inst.operand_count() / 2;
        for (int i = n; i < inst.operand_count(); ++i) {
          if (rows(i) != Rows::kNone) return Mixed(inst, "starts from a batch value");
        }
        if (!a.window.empty() && a.window[0] == WindowDim{}) return Aligned(inst);
        return Mixed(inst, "has a window along the batch");
      }
      case Opcode::kDot: {
        const DotDims& d = a.dot;
        if (!d.lhs_batch.empty()) {
          if (d.lhs_batch[0] == 0 && d.rhs_batch[0] == 0) return Aligned(inst);
          return Mixed(inst, "is a batched product whose first batch dim is not the batch");
        }
        if (rows(0) == Rows::kAligned && rows(1) == Rows::kNone &&
            !Contains(d.lhs_contracting, 0)) {
          return Aligned(inst);
        }
        return Mixed(inst, "contracts over the batch or takes it from its right-hand side");
      }
      case Opcode::kConvolution:
        if (rows(0) == Rows::kAligned && rows(1) == Rows::kNone && a.conv.input_batch == 0 &&
            a.conv.output_batch == 0) {
          return Aligned(inst);
        }
        return Mixed(inst, "convolves across the batch");
      case Opcode::kGather: {
        const GatherDims& g = a.gather;
        if (rows(0) == Rows::kNone && rows(1) == Rows::kAligned && g.index_vector_dim != 0 &&
            !Contains(g.offset_dims, 0)) {
          return Aligned(inst);  // row i gathers with row i's indices
        }
        if (rows(0) == Rows::kAligned && rows(1) == Rows::kNone &&
            !Contains(g.collapsed_slice_dims, 0) && !Contains(g.start_index_map, 0) &&
            FullSymbolicGather(inst) && !g.offset_dims.empty() && g.offset_dims[0] == 0) {
          return Aligned(inst);  // every row, gathered along its other dims
        }
        return Mixed(inst, "gathers across the batch");
      }
      case Opcode::kDynamicSlice:
        if (rows(0) == Rows::kAligned && inst.operand_count() > 1 &&
            IsZeroConstant(*inst.operand(1))) {
          for (int i = 1; i < inst.operand_count(); ++i) {
            if (rows(i) != Rows::kNone) return Mixed(inst, "slices at batch-dependent starts");
          }
          return Aligned(inst);
        }
        return Mixed(inst, "slices along the batch");
      case Opcode::kDynamicUpdateSlice:
        if (inst.operand_count() > 2 && IsZeroConstant(*inst.operand(2)) &&
            IsBatchDim0(inst.operand(1)->shape())) {
          for (int i = 2; i < inst.operand_count(); ++i) {
            if (rows(i) != Rows::kNone) return Mixed(inst, "updates at batch-dependent starts");
          }
          return Aligned(inst);
        }
        return Mixed(inst, "updates along the batch");
      default:
        return Mixed(inst, absl::StrCat("(", std::string(OpcodeName(inst.opcode())),
                                        ") is not known to keep batch rows apart"));
    }
  }
};

}  // namespace

RowAnalysis AnalyzeRows(const Module& module) {
  RowAnalysis out;
  const Computation* entry = module.entry();
  if (entry == nullptr || module.batch_representative() <= 0) {
    out.reason = "the module has no batch dim";
    return out;
  }
  if (!module.row_counted_outputs().empty()) {
    out.reason = "a result's row count is computed at run time";
    return out;
  }
  std::vector<State> params;
  for (int i = 0; i < entry->num_parameters(); ++i) {
    const Shape& shape = entry->parameter(i)->shape();
    if (IsBatchDim0(shape)) {
      params.push_back(State::Of(Rows::kAligned));
    } else if (shape.IsSymbolic()) {
      params.push_back(
          State::Of(Rows::kMixed, absl::StrCat("parameter ", i, " is ", shape.ToString(),
                                               " (its dim 0 is not the batch)")));
    } else {
      params.push_back(State::Of(Rows::kNone));
    }
  }
  Analyzer analyzer;
  const State root = analyzer.Run(*entry, params);
  const size_t checks = module.runtime_checks().size();
  const size_t results = root.leaves.size();
  out.independent = true;
  for (size_t k = 0; k < results; ++k) {
    const bool check = k + checks >= results && entry->root()->shape().IsTuple();
    const Shape& shape = entry->root()->shape().IsTuple()
                             ? entry->root()->shape().tuple_shape(static_cast<int>(k))
                             : entry->root()->shape();
    out.batch_results.push_back(!check && IsBatchDim0(shape));
    if (check) continue;
    if (root.leaves[k] == Rows::kMixed) {
      out.independent = false;
      out.reason = root.why[k].empty() ? "a result mixes batch rows" : root.why[k];
      break;
    }
    if (shape.IsSymbolic() && !IsBatchDim0(shape)) {
      out.independent = false;
      out.reason =
          absl::StrCat("result ", k, " is ", shape.ToString(), " (its dim 0 is not the batch)");
      break;
    }
  }
  if (!out.independent) out.batch_results.clear();
  return out;
}

}  // namespace tfjit::hlo
