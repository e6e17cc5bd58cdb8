// The HLO text printer (HLO.md "Text form"), including the canonical fingerprint form.
#include "compiler/hlo/printer.h"

#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/symbolic.h"

namespace tfjit::hlo {
namespace {

// Names used in the output: the real ones, or canonical %iN / %cN renumbering.
class Namer {
 public:
  std::string Of(const Instruction* inst) const {
    if (inst == nullptr) return "%<null>";
    auto it = insts_.find(inst);
    return absl::StrCat("%", it == insts_.end() ? inst->name() : it->second);
  }
  std::string Of(const Computation* comp) const {
    if (comp == nullptr) return "%<null>";
    auto it = comps_.find(comp);
    return absl::StrCat("%", it == comps_.end() ? comp->name() : it->second);
  }
  void Rename(const Instruction* inst) { insts_[inst] = absl::StrCat("i", insts_.size()); }
  void Rename(const Computation* comp) { comps_[comp] = absl::StrCat("c", comps_.size()); }

 private:
  absl::flat_hash_map<const Instruction*, std::string> insts_;
  absl::flat_hash_map<const Computation*, std::string> comps_;
};

std::string IntList(const std::vector<int64_t>& v) {
  return absl::StrCat("{", absl::StrJoin(v, ","), "}");
}

// `v` with its first entry written as `first` (a symbolic size) when there is one.
std::string IntList(const std::vector<int64_t>& v, std::optional<SymbolicExtent> first) {
  if (!first.has_value() || v.empty()) return IntList(v);
  std::string out = absl::StrCat("{", first->ToString());
  for (size_t i = 1; i < v.size(); ++i) absl::StrAppend(&out, ",", v[i]);
  return out + "}";
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

// `limit0`: the symbolic limit along dim 0 of a slice whose result's dim 0 is symbolic.
std::string SliceText(const std::vector<SliceDim>& slice,
                      std::optional<SymbolicExtent> limit0 = std::nullopt) {
  std::string out = "{";
  for (size_t i = 0; i < slice.size(); ++i) {
    const SliceDim& s = slice[i];
    const std::string limit =
        i == 0 && limit0.has_value() ? limit0->ToString() : absl::StrCat(s.limit);
    absl::StrAppend(&out, i == 0 ? "" : ", ", "[", s.start, ":", limit, ":", s.stride, "]");
  }
  return out + "}";
}

std::string PaddingText(const std::vector<PadDim>& padding) {
  if (padding.empty()) return "{}";
  bool interior = false;
  for (const PadDim& p : padding) interior |= p.interior != 0;
  return absl::StrJoin(padding, "x", [&](std::string* out, const PadDim& p) {
    absl::StrAppend(out, p.lo, "_", p.hi);
    if (interior) absl::StrAppend(out, "_", p.interior);
  });
}

// window={size=3x3 stride=2x2 pad=0_1x0_1 ...}; fields at their defaults are omitted (the
// parser fills them in), so the printed form stays canonical.
std::string WindowText(const std::vector<WindowDim>& window) {
  auto field = [&](absl::string_view key, int64_t WindowDim::* member, int64_t dflt,
                   std::vector<std::string>* parts) {
    bool all_default = true;
    for (const WindowDim& w : window) all_default &= w.*member == dflt;
    if (all_default && key != "size") return;
    parts->push_back(absl::StrCat(
        key, "=", absl::StrJoin(window, "x", [&](std::string* out, const WindowDim& w) {
          absl::StrAppend(out, w.*member);
        })));
  };
  std::vector<std::string> parts;
  if (!window.empty()) {
    field("size", &WindowDim::size, 1, &parts);
    field("stride", &WindowDim::stride, 1, &parts);
    bool pad_default = true;
    for (const WindowDim& w : window) pad_default &= w.pad_lo == 0 && w.pad_hi == 0;
    if (!pad_default) {
      parts.push_back(
          absl::StrCat("pad=", absl::StrJoin(window, "x", [](std::string* out, const WindowDim& w) {
                         absl::StrAppend(out, w.pad_lo, "_", w.pad_hi);
                       })));
    }
    field("lhs_dilate", &WindowDim::lhs_dilate, 1, &parts);
    field("rhs_dilate", &WindowDim::rhs_dilate, 1, &parts);
  }
  return absl::StrCat("{", absl::StrJoin(parts, " "), "}");
}

// One of the three dim_labels groups: `first`/`second` letters at their positions, spatial
// dims as their index digits.
std::string Labels(size_t rank, int64_t first_pos, char first, int64_t second_pos, char second,
                   const std::vector<int64_t>& spatial) {
  std::string s(rank, '?');
  auto put = [&](int64_t pos, char c) {
    if (pos >= 0 && static_cast<size_t>(pos) < rank) s[static_cast<size_t>(pos)] = c;
  };
  put(first_pos, first);
  put(second_pos, second);
  for (size_t i = 0; i < spatial.size(); ++i) put(spatial[i], static_cast<char>('0' + i));
  return s;
}

std::string DimLabelsText(const ConvDims& c) {
  const size_t rank = c.input_spatial.size() + 2;
  return absl::StrCat(
      Labels(rank, c.input_batch, 'b', c.input_feature, 'f', c.input_spatial), "_",
      Labels(rank, c.kernel_input_feature, 'i', c.kernel_output_feature, 'o', c.kernel_spatial),
      "->", Labels(rank, c.output_batch, 'b', c.output_feature, 'f', c.output_spatial));
}

std::string MetadataText(const Metadata& m) {
  std::vector<std::string> parts;
  if (!m.tf_node.empty()) parts.push_back(absl::StrCat("tf_node=", Quote(m.tf_node)));
  if (!m.tf_op.empty()) parts.push_back(absl::StrCat("tf_op=", Quote(m.tf_op)));
  if (!m.source_file.empty()) parts.push_back(absl::StrCat("source_file=", Quote(m.source_file)));
  if (m.source_line != 0) parts.push_back(absl::StrCat("source_line=", m.source_line));
  return absl::StrCat("meta={", absl::StrJoin(parts, " "), "}");
}

using Attrs = std::vector<std::string>;

std::string Called(const Instruction& inst, size_t i, const Namer& namer) {
  const auto& called = inst.called_computations();
  return namer.Of(i < called.size() ? called[i] : nullptr);
}

void AppendDotAttrs(const DotDims& d, Attrs* out) {
  out->push_back(absl::StrCat("lhs_batch_dims=", IntList(d.lhs_batch)));
  out->push_back(absl::StrCat("rhs_batch_dims=", IntList(d.rhs_batch)));
  out->push_back(absl::StrCat("lhs_contracting_dims=", IntList(d.lhs_contracting)));
  out->push_back(absl::StrCat("rhs_contracting_dims=", IntList(d.rhs_contracting)));
}

void AppendGatherAttrs(const GatherDims& g, std::optional<SymbolicExtent> size0, Attrs* out) {
  out->push_back(absl::StrCat("offset_dims=", IntList(g.offset_dims)));
  out->push_back(absl::StrCat("collapsed_slice_dims=", IntList(g.collapsed_slice_dims)));
  out->push_back(absl::StrCat("start_index_map=", IntList(g.start_index_map)));
  out->push_back(absl::StrCat("index_vector_dim=", g.index_vector_dim));
  out->push_back(absl::StrCat("slice_sizes=", IntList(g.slice_sizes, size0)));
}

void AppendScatterAttrs(const ScatterDims& s, Attrs* out) {
  out->push_back(absl::StrCat("update_window_dims=", IntList(s.update_window_dims)));
  out->push_back(absl::StrCat("inserted_window_dims=", IntList(s.inserted_window_dims)));
  out->push_back(
      absl::StrCat("scatter_dims_to_operand_dims=", IntList(s.scatter_dims_to_operand_dims)));
  out->push_back(absl::StrCat("index_vector_dim=", s.index_vector_dim));
}

std::string BranchList(const Instruction& inst, const Namer& namer) {
  std::vector<std::string> names;
  for (const Computation* c : inst.called_computations()) names.push_back(namer.Of(c));
  return absl::StrCat("{", absl::StrJoin(names, ", "), "}");
}

// The `, key=value` attributes of one instruction, in the fixed order of HLO.md.
Attrs AttributesOf(const Instruction& inst, const Namer& namer) {
  const Attributes& a = inst.attrs();
  Attrs out;
  auto dims = [&] { out.push_back(absl::StrCat("dimensions=", IntList(a.dimensions))); };
  auto to_apply = [&] { out.push_back(absl::StrCat("to_apply=", Called(inst, 0, namer))); };
  switch (inst.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kGetDimensionSize:
      dims();
      break;
    case Opcode::kReduce:
      dims();
      to_apply();
      break;
    case Opcode::kReduceWindow:
      out.push_back(absl::StrCat("window=", WindowText(a.window)));
      to_apply();
      break;
    case Opcode::kCall:
      to_apply();
      break;
    case Opcode::kCompare:
      out.push_back(absl::StrCat("direction=", ComparisonDirectionName(a.comparison)));
      break;
    case Opcode::kSlice:
      out.push_back(absl::StrCat(
          "slice=", SliceText(a.slice, inst.shape().has_symbolic_dim0() && !a.slice.empty()
                                           ? std::optional(SymbolicSliceLimit(
                                                 a.slice[0], inst.shape().symbolic_dim0()))
                                           : std::nullopt)));
      break;
    case Opcode::kPad:
      out.push_back(absl::StrCat("padding=", PaddingText(a.padding)));
      break;
    case Opcode::kDynamicSlice:
      out.push_back(absl::StrCat(
          "dynamic_slice_sizes=",
          IntList(a.dynamic_slice_sizes, inst.shape().has_symbolic_dim0()
                                             ? std::optional(inst.shape().symbolic_dim0())
                                             : std::nullopt)));
      break;
    case Opcode::kDot:
      AppendDotAttrs(a.dot, &out);
      break;
    case Opcode::kConvolution:
      out.push_back(absl::StrCat("window=", WindowText(a.window)));
      out.push_back(absl::StrCat("dim_labels=", DimLabelsText(a.conv)));
      if (a.feature_group_count != 1) {
        out.push_back(absl::StrCat("feature_group_count=", a.feature_group_count));
      }
      break;
    case Opcode::kGather:
      AppendGatherAttrs(a.gather,
                        FullSymbolicGather(inst)
                            ? std::optional(inst.operand(0)->shape().symbolic_dim0())
                            : std::nullopt,
                        &out);
      break;
    case Opcode::kScatter:
      AppendScatterAttrs(a.scatter, &out);
      to_apply();
      break;
    case Opcode::kGetTupleElement:
      out.push_back(absl::StrCat("index=", a.tuple_index));
      break;
    case Opcode::kIota:
      out.push_back(absl::StrCat("iota_dimension=", a.iota_dimension));
      break;
    case Opcode::kFusion:
      out.push_back(absl::StrCat("kind=", a.fusion_kind.empty() ? "kLoop" : a.fusion_kind));
      out.push_back(absl::StrCat("calls=", Called(inst, 0, namer)));
      break;
    case Opcode::kWhile:
      out.push_back(absl::StrCat("condition=", Called(inst, 0, namer)));
      out.push_back(absl::StrCat("body=", Called(inst, 1, namer)));
      break;
    case Opcode::kConditional:
      out.push_back(absl::StrCat("branch_computations=", BranchList(inst, namer)));
      break;
    case Opcode::kCustomCall:
      out.push_back(absl::StrCat("custom_call_target=", Quote(a.custom_call_target)));
      break;
    case Opcode::kRngBitGenerator:
      out.push_back(
          absl::StrCat("algorithm=", a.rng_algorithm.empty() ? "rng_philox" : a.rng_algorithm));
      break;
    default:
      break;
  }
  return out;
}

std::string InstructionText(const Instruction& inst, const Namer& namer,
                            const PrintOptions& options) {
  const bool metadata = options.print_metadata && !options.canonical;
  std::string out = absl::StrCat(namer.Of(&inst), " = ", inst.shape().ToString(), " ",
                                 OpcodeName(inst.opcode()), "(");
  if (inst.opcode() == Opcode::kParameter) {
    absl::StrAppend(&out, inst.parameter_number());
  } else if (inst.opcode() == Opcode::kConstant) {
    if (inst.attrs().literal.has_value()) {
      const bool elide = !options.print_literal_values && inst.shape().IsArray() &&
                         inst.shape().num_elements() > 1;
      absl::StrAppend(&out, elide ? std::string("{...}") : inst.literal().ValueToString());
    }
  } else {
    absl::StrAppend(&out,
                    absl::StrJoin(inst.operands(), ", ", [&](std::string* o, const Instruction* x) {
                      absl::StrAppend(o, namer.Of(x));
                    }));
  }
  absl::StrAppend(&out, ")");
  for (const std::string& attr : AttributesOf(inst, namer)) absl::StrAppend(&out, ", ", attr);
  if (metadata && !inst.metadata().empty()) {
    absl::StrAppend(&out, ", ", MetadataText(inst.metadata()));
  }
  return out;
}

std::string ComputationText(const Computation& comp, const Namer& namer,
                            const PrintOptions& options, bool is_entry) {
  std::vector<std::string> params;
  for (const Instruction* p : comp.parameters()) {
    if (p == nullptr) continue;
    params.push_back(absl::StrCat(namer.Of(p).substr(1), ": ", p->shape().ToString()));
  }
  std::string out =
      absl::StrCat(is_entry ? "ENTRY " : "", namer.Of(&comp), " (", absl::StrJoin(params, ", "),
                   ") -> ", comp.ResultShape().ToString(), " {\n");
  for (const Instruction* inst : comp.MakePostOrder()) {
    absl::StrAppend(&out, "  ", inst->IsRoot() ? "ROOT " : "",
                    InstructionText(*inst, namer, options), "\n");
  }
  return out + "}\n";
}

// Callees before callers; otherwise module order.
std::vector<const Computation*> PrintOrder(const Module& module) {
  std::vector<const Computation*> order;
  absl::flat_hash_set<const Computation*> visited;
  std::function<void(const Computation*)> visit = [&](const Computation* c) {
    if (c == nullptr || !visited.insert(c).second) return;
    for (const Instruction* inst : c->MakePostOrder()) {
      for (const Computation* callee : inst->called_computations()) visit(callee);
    }
    order.push_back(c);
  };
  for (const Computation* c : module.computations()) visit(c);
  return order;
}

}  // namespace

std::string PrintModule(const Module& module, const PrintOptions& options) {
  const std::vector<const Computation*> order = PrintOrder(module);
  Namer namer;
  if (options.canonical) {
    for (const Computation* c : order) {
      namer.Rename(c);
      for (const Instruction* inst : c->MakePostOrder()) namer.Rename(inst);
    }
  }
  std::string out = absl::StrCat("HloModule ", options.canonical ? "m" : module.name(), "\n");
  for (const Computation* c : order) {
    absl::StrAppend(&out, "\n", ComputationText(*c, namer, options, c == module.entry()));
  }
  return out;
}

std::string PrintComputation(const Computation& computation, const PrintOptions& options) {
  Namer namer;
  if (options.canonical) {
    for (const Instruction* inst : computation.MakePostOrder()) namer.Rename(inst);
  }
  const bool is_entry =
      computation.parent() != nullptr && computation.parent()->entry() == &computation;
  return ComputationText(computation, namer, options, is_entry);
}

std::string PrintInstruction(const Instruction& inst, const PrintOptions& options) {
  return InstructionText(inst, Namer(), options);
}

std::string Fingerprint(const Module& module) {
  PrintOptions options;
  options.canonical = true;
  return PrintModule(module, options);
}

}  // namespace tfjit::hlo
