// Symbolize, Specialize and Rebase (symbolic.h).
#include "compiler/hlo/symbolic.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"
#include "core/status.h"

namespace tfjit::hlo {
namespace {

// One instruction seen in every probe, in the same place of the same computation.
using Row = std::vector<const Instruction*>;

std::string At(const std::vector<int64_t>& values, absl::Span<const BatchProbe> probes) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < values.size(); ++i) {
    parts.push_back(absl::StrCat(values[i], " at batch ", probes[i].batch));
  }
  return absl::StrJoin(parts, ", ");
}

// The extent that takes `values` at the probes' batch sizes, or nullopt when no k >= 1 and c
// do (k and c from the first two probes, checked against the rest).
std::optional<SymbolicExtent> Fit(const std::vector<int64_t>& values,
                                  absl::Span<const BatchProbe> probes) {
  const int64_t db = probes[1].batch - probes[0].batch;
  const int64_t dv = values[1] - values[0];
  if (db == 0 || dv % db != 0) return std::nullopt;
  SymbolicExtent e{dv / db, 0};
  if (e.k < 1) return std::nullopt;
  e.c = values[0] - e.k * probes[0].batch;
  for (size_t i = 0; i < values.size(); ++i) {
    if (e.At(probes[i].batch) != values[i]) return std::nullopt;
  }
  return e;
}

// Every attribute but the literal; with `dim0_follows`, a slice's limit and a dynamic-slice's
// size along dim 0 are not compared (they follow from the result's symbolic dim 0).
bool SameAttributes(const Attributes& a, const Attributes& b, bool dim0_follows,
                    bool gather_full_dim0) {
  auto same_slice = [&] {
    if (a.slice.size() != b.slice.size()) return false;
    for (size_t i = 0; i < a.slice.size(); ++i) {
      if (a.slice[i].start != b.slice[i].start || a.slice[i].stride != b.slice[i].stride ||
          (a.slice[i].limit != b.slice[i].limit && !(dim0_follows && i == 0))) {
        return false;
      }
    }
    return true;
  };
  auto same_sizes = [&] {
    if (a.dynamic_slice_sizes.size() != b.dynamic_slice_sizes.size()) return false;
    for (size_t i = 0; i < a.dynamic_slice_sizes.size(); ++i) {
      if (a.dynamic_slice_sizes[i] != b.dynamic_slice_sizes[i] && !(dim0_follows && i == 0)) {
        return false;
      }
    }
    return true;
  };
  auto same_gather = [&] {
    if (!gather_full_dim0) return a.gather == b.gather;
    GatherDims ga = a.gather;
    if (!ga.slice_sizes.empty() && !b.gather.slice_sizes.empty()) {
      ga.slice_sizes[0] = b.gather.slice_sizes[0];
    }
    return ga == b.gather;
  };
  return a.parameter_number == b.parameter_number && a.tuple_index == b.tuple_index &&
         a.iota_dimension == b.iota_dimension && a.feature_group_count == b.feature_group_count &&
         a.dimensions == b.dimensions && same_sizes() && a.comparison == b.comparison &&
         same_slice() && a.padding == b.padding && a.window == b.window && a.dot == b.dot &&
         a.conv == b.conv && same_gather() && a.scatter == b.scatter &&
         a.fusion_kind == b.fusion_kind && a.custom_call_target == b.custom_call_target &&
         a.rng_algorithm == b.rng_algorithm;
}

// Whether `literal` (an integer or float array of rank >= 1) holds its dim-0 index in every
// element: what iota with iota_dimension 0 makes.
bool IsIotaAlongDim0(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (!shape.IsArray() || shape.rank() < 1 || shape.dim(0) == 0) return false;
  const Tensor& t = literal.tensor();
  const int64_t row = shape.num_elements() / shape.dim(0);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    double v = 0;
    switch (shape.element_type()) {
      case DType::kInt32:
        v = t.data<int32_t>()[i];
        break;
      case DType::kInt64:
        v = static_cast<double>(t.data<int64_t>()[i]);
        break;
      case DType::kFloat32:
        v = t.data<float>()[i];
        break;
      case DType::kFloat64:
        v = t.data<double>()[i];
        break;
      default:
        return false;
    }
    if (v != static_cast<double>(i / row)) return false;
  }
  return true;
}

class Symbolizer {
 public:
  explicit Symbolizer(absl::Span<const BatchProbe> probes) : probes_(probes) {}

  absl::StatusOr<std::unique_ptr<Module>> Run() {
    std::vector<std::vector<Computation*>> comps;
    for (const BatchProbe& p : probes_) comps.push_back(p.module->computations());
    for (const BatchProbe& p : probes_) {
      if (p.module->batch_representative() != 0) {
        return FailedPrecondition("module '%s' at batch %d is symbolic already", p.module->name(),
                                  p.batch);
      }
      if (comps[0].size() != p.module->computations().size()) {
        return Differs(absl::StrCat("the module has ", comps[0].size(), " computations at batch ",
                                    probes_[0].batch, " and ", p.module->computations().size(),
                                    " at batch ", p.batch));
      }
      if (p.module->row_counted_outputs() != probes_[0].module->row_counted_outputs()) {
        return Differs(absl::StrCat("the module's row-counted outputs differ between batch ",
                                    probes_[0].batch, " and ", p.batch));
      }
    }
    TFJIT_ASSIGN_OR_RETURN(std::vector<RuntimeCheck> checks, UnifyChecks());
    for (size_t c = 0; c < comps[0].size(); ++c) {
      std::vector<const Computation*> row;
      for (const auto& list : comps) row.push_back(list[c]);
      TFJIT_RETURN_IF_ERROR(Compare(row));
    }
    std::unique_ptr<Module> out = probes_[0].module->Clone();
    out->set_batch_representative(probes_[0].batch);
    out->set_runtime_checks(std::move(checks));
    for (Computation* comp : out->computations()) {
      for (Instruction* inst : comp->instructions()) {
        auto it = shapes_.find(inst->name());
        if (it != shapes_.end()) inst->set_shape(it->second);
        if (std::find(iotas_.begin(), iotas_.end(), inst->name()) == iotas_.end()) continue;
        auto iota = std::make_unique<Instruction>(Opcode::kIota, inst->shape());
        iota->mutable_attrs().iota_dimension = 0;
        iota->set_metadata(inst->metadata());
        Instruction* added = comp->AddInstruction(std::move(iota), {});
        const std::string name = inst->name();
        TFJIT_RETURN_IF_ERROR(comp->ReplaceAllUsesWith(inst, added));
        TFJIT_RETURN_IF_ERROR(comp->RemoveInstruction(inst));
        added->set_name(name);
      }
    }
    return out;
  }

 private:
  // The probes' run-time checks as one list: the same at every probe but for numbers in their
  // messages that are k * b + c (an index limit that is the batch size or a multiple), which
  // become "{k*?b+c}", and the first of their position dims (a flat position's outermost
  // index needs no bound).
  absl::StatusOr<std::vector<RuntimeCheck>> UnifyChecks() const {
    std::vector<RuntimeCheck> out = probes_[0].module->runtime_checks();
    for (const BatchProbe& p : probes_) {
      if (p.module->runtime_checks().size() != out.size()) {
        return Differs(absl::StrCat("the module has ", out.size(), " run-time checks at batch ",
                                    probes_[0].batch, " and ", p.module->runtime_checks().size(),
                                    " at batch ", p.batch));
      }
    }
    for (size_t i = 0; i < out.size(); ++i) {
      RuntimeCheck& check = out[i];
      std::vector<std::vector<std::string>> tokens;
      for (const BatchProbe& p : probes_) {
        const RuntimeCheck& other = p.module->runtime_checks()[i];
        const bool dims_match =
            other.position_dims.size() == check.position_dims.size() &&
            std::equal(other.position_dims.begin() + (other.position_dims.empty() ? 0 : 1),
                       other.position_dims.end(),
                       check.position_dims.begin() + (check.position_dims.empty() ? 0 : 1));
        if (other.tf_node != check.tf_node || other.tf_op != check.tf_op ||
            other.flat_position != check.flat_position ||
            other.vector_value != check.vector_value || !dims_match) {
          return Differs(absl::StrCat("the run-time check of node '", check.tf_node,
                                      "' differs between batch ", probes_[0].batch, " and ",
                                      p.batch));
        }
        tokens.push_back(NumberTokens(other.message_template));
      }
      std::string message;
      for (size_t t = 0; t < tokens[0].size(); ++t) {
        const std::string& first = tokens[0][t];
        bool same = true;
        for (const auto& list : tokens) {
          if (list.size() != tokens[0].size()) {
            return Differs(absl::StrCat("the message of the run-time check of node '",
                                        check.tf_node, "' differs between batch sizes"));
          }
          same = same && list[t] == first;
        }
        if (same) {
          message += first;
          continue;
        }
        // A number that differs: it must be k * b + c at every probe.
        std::vector<int64_t> values;
        for (const auto& list : tokens) {
          int64_t v = 0;
          if (!std::isdigit(static_cast<unsigned char>(list[t][0])) ||
              !absl::SimpleAtoi(list[t], &v)) {
            return Differs(absl::StrCat("the message of the run-time check of node '",
                                        check.tf_node, "' differs between batch sizes: '", first,
                                        "' and '", list[t], "'"));
          }
          values.push_back(v);
        }
        const int64_t db = probes_[1].batch - probes_[0].batch;
        const int64_t dv = values[1] - values[0];
        if (db == 0 || dv % db != 0 || dv == 0) {
          return Differs(absl::StrCat("a number in the message of the run-time check of node '",
                                      check.tf_node, "' is not affine in the batch size"));
        }
        const SymbolicExtent e{dv / db, values[0] - dv / db * probes_[0].batch};
        for (size_t p = 0; p < probes_.size(); ++p) {
          if (e.At(probes_[p].batch) != values[p]) {
            return Differs(absl::StrCat("a number in the message of the run-time check of node '",
                                        check.tf_node, "' is not affine in the batch size"));
          }
        }
        absl::StrAppend(&message, "{", e.ToString(), "}");
      }
      check.message_template = std::move(message);
    }
    return out;
  }

  // `text` split into runs of digits and runs of other characters.
  static std::vector<std::string> NumberTokens(const std::string& text) {
    std::vector<std::string> out;
    for (char ch : text) {
      const bool digit = std::isdigit(static_cast<unsigned char>(ch)) != 0;
      if (out.empty() || (std::isdigit(static_cast<unsigned char>(out.back()[0])) != 0) != digit) {
        out.emplace_back();
      }
      out.back().push_back(ch);
    }
    return out;
  }

  absl::Status Differs(const std::string& what) const {
    return FailedPrecondition("the cluster's HLO is not the same at every batch size: %s", what);
  }

  absl::Status Compare(const std::vector<const Computation*>& comps) {
    std::vector<std::vector<Instruction*>> orders;
    for (const Computation* c : comps) orders.push_back(c->MakePostOrder());
    for (size_t p = 1; p < comps.size(); ++p) {
      if (comps[p]->name() != comps[0]->name() || orders[p].size() != orders[0].size() ||
          comps[p]->num_parameters() != comps[0]->num_parameters()) {
        return Differs(absl::StrCat("computation '", comps[0]->name(), "' at batch ",
                                    probes_[0].batch, " is not '", comps[p]->name(), "' at batch ",
                                    probes_[p].batch, " (", orders[0].size(), " and ",
                                    orders[p].size(), " instructions)"));
      }
    }
    for (size_t i = 0; i < orders[0].size(); ++i) {
      Row row;
      for (const auto& order : orders) row.push_back(order[i]);
      TFJIT_RETURN_IF_ERROR(CompareInstruction(row, comps));
    }
    return absl::OkStatus();
  }

  absl::Status CompareInstruction(const Row& row, const std::vector<const Computation*>& comps) {
    const Instruction& first = *row[0];
    const std::string where = absl::StrCat("%", first.name());
    for (size_t p = 1; p < row.size(); ++p) {
      const Instruction& other = *row[p];
      if (other.name() != first.name() || other.opcode() != first.opcode() ||
          other.operand_count() != first.operand_count() ||
          other.called_computations().size() != first.called_computations().size() ||
          (comps[p]->root() == &other) != (comps[0]->root() == &first)) {
        return Differs(absl::StrCat(where, " at batch ", probes_[0].batch, " is %", other.name(),
                                    " (", OpcodeName(other.opcode()), ") at batch ",
                                    probes_[p].batch));
      }
      for (int k = 0; k < first.operand_count(); ++k) {
        if (first.operand(k)->name() != other.operand(k)->name()) {
          return Differs(absl::StrCat(where, ": operand ", k, " is %", first.operand(k)->name(),
                                      " at batch ", probes_[0].batch, " and %",
                                      other.operand(k)->name(), " at batch ", probes_[p].batch));
        }
      }
      for (size_t k = 0; k < first.called_computations().size(); ++k) {
        if (first.called_computations()[k]->name() != other.called_computations()[k]->name()) {
          return Differs(
              absl::StrCat(where, ": it calls another computation at batch ", probes_[p].batch));
        }
      }
    }
    std::vector<Shape> shapes;
    for (const Instruction* inst : row) shapes.push_back(inst->shape());
    TFJIT_ASSIGN_OR_RETURN(Shape shape, CompareShapes(shapes, where));
    TFJIT_RETURN_IF_ERROR(CompareAttributes(row, shape, where));
    if (shape.IsSymbolic()) shapes_[first.name()] = std::move(shape);
    return absl::OkStatus();
  }

  // The shape of probe 0 with dim 0 symbolic where the probes' dims 0 differ.
  absl::StatusOr<Shape> CompareShapes(const std::vector<Shape>& shapes, const std::string& where) {
    const Shape& first = shapes[0];
    for (size_t p = 1; p < shapes.size(); ++p) {
      const Shape& s = shapes[p];
      if (s.IsTuple() != first.IsTuple() || s.element_type() != first.element_type() ||
          s.rank() != first.rank() || s.tuple_shapes().size() != first.tuple_shapes().size()) {
        return Differs(absl::StrCat(where, " is ", first.ToString(), " at batch ", probes_[0].batch,
                                    " and ", s.ToString(), " at batch ", probes_[p].batch));
      }
    }
    if (first.IsTuple()) {
      std::vector<Shape> elements;
      for (size_t e = 0; e < first.tuple_shapes().size(); ++e) {
        std::vector<Shape> column;
        for (const Shape& s : shapes) column.push_back(s.tuple_shape(static_cast<int>(e)));
        TFJIT_ASSIGN_OR_RETURN(Shape element,
                               CompareShapes(column, absl::StrCat(where, " element ", e)));
        elements.push_back(std::move(element));
      }
      return Shape::Tuple(std::move(elements));
    }
    Shape out = first;
    for (int d = 0; d < first.rank(); ++d) {
      std::vector<int64_t> values;
      for (const Shape& s : shapes) values.push_back(s.dim(d));
      if (std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == values[0]; })) {
        continue;
      }
      if (d != 0) {
        return Differs(absl::StrCat(where, ": dim ", d, " is ", At(values, probes_),
                                    " (only dim 0 may depend on the batch size)"));
      }
      std::optional<SymbolicExtent> e = Fit(values, probes_);
      if (!e.has_value()) {
        return Differs(
            absl::StrCat(where, ": dim 0 is ", At(values, probes_), ", not k * batch + c"));
      }
      out.SetSymbolicDim0(*e, probes_[0].batch);
    }
    return out;
  }

  // Attributes must be equal, except those that follow from a symbolic dim 0 of the result.
  absl::Status CompareAttributes(const Row& row, const Shape& shape, const std::string& where) {
    const Attributes& first = row[0]->attrs();
    const Opcode op = row[0]->opcode();
    const bool dim0_follows =
        shape.has_symbolic_dim0() && (op == Opcode::kSlice || op == Opcode::kDynamicSlice);
    // A gather that takes all of a symbolic dim 0 (slice size = the operand's dim 0 at every
    // probe): its slice size follows from the operand's shape.
    bool gather_full_dim0 = op == Opcode::kGather && !first.gather.slice_sizes.empty();
    for (const Instruction* inst : row) {
      gather_full_dim0 = gather_full_dim0 && inst->operand(0)->shape().rank() > 0 &&
                         inst->attrs().gather.slice_sizes[0] == inst->operand(0)->shape().dim(0);
    }
    for (size_t p = 1; p < row.size(); ++p) {
      const Attributes& a = row[p]->attrs();
      const bool literal_equal =
          a.literal.has_value() == first.literal.has_value() &&
          (!a.literal.has_value() || a.literal->BitwiseEquals(*first.literal));
      if (!literal_equal) {
        // A constant iota along a symbolic dim 0 (Range(0, batch) folded): an iota.
        if (op == Opcode::kConstant && shape.has_symbolic_dim0() &&
            std::all_of(row.begin(), row.end(),
                        [](const Instruction* i) { return IsIotaAlongDim0(i->literal()); })) {
          iotas_.push_back(row[0]->name());
          break;
        }
        return Differs(absl::StrCat(where, ": the constant's value depends on the batch size (",
                                    "at batch ", probes_[0].batch, " and ", probes_[p].batch, ")"));
      }
      if (!SameAttributes(a, first, dim0_follows, gather_full_dim0)) {
        return Differs(absl::StrCat(where, " (", OpcodeName(op),
                                    "): its attributes depend on the batch size (at batch ",
                                    probes_[0].batch, " and ", probes_[p].batch, ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::Span<const BatchProbe> probes_;
  absl::flat_hash_map<std::string, Shape> shapes_;  // by instruction name
  std::vector<std::string> iotas_;                  // constants that become iotas
};

// Sets every symbolic dim to its value at `batch` (AtBatch, or Rebased when `keep`), with the
// attributes that follow from them.
std::unique_ptr<Module> AtBatch(const Module& module, int64_t batch, bool keep) {
  std::unique_ptr<Module> out = module.Clone();
  if (module.batch_representative() == 0) return out;
  out->set_batch_representative(keep ? batch : 0);
  if (!keep) {
    std::vector<RuntimeCheck> checks = out->runtime_checks();
    for (RuntimeCheck& check : checks) {
      check.message_template = SubstituteBatch(check.message_template, batch);
    }
    out->set_runtime_checks(std::move(checks));
  }
  // Attributes first, while every operand still has its symbolic shape.
  for (Computation* comp : out->computations()) {
    for (Instruction* inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kGather && FullSymbolicGather(*inst)) {
        inst->mutable_attrs().gather.slice_sizes[0] =
            inst->operand(0)->shape().symbolic_dim0().At(batch);
      }
    }
  }
  for (Computation* comp : out->computations()) {
    for (Instruction* inst : comp->instructions()) {
      const Shape& shape = inst->shape();
      if (!shape.IsSymbolic()) continue;
      if (shape.has_symbolic_dim0()) {
        const int64_t extent = shape.symbolic_dim0().At(batch);
        Attributes& a = inst->mutable_attrs();
        if (inst->opcode() == Opcode::kSlice && !a.slice.empty()) {
          SliceDim& s = a.slice[0];
          s.limit = std::max(s.start, SymbolicSliceLimit(s, shape.symbolic_dim0()).At(batch));
        }
        if (inst->opcode() == Opcode::kDynamicSlice && !a.dynamic_slice_sizes.empty()) {
          a.dynamic_slice_sizes[0] = extent;
        }
      }
      inst->set_shape(keep ? shape.Rebased(batch) : shape.AtBatch(batch));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> Symbolize(absl::Span<const BatchProbe> probes) {
  if (probes.size() < 3) {
    return InvalidArgument("Symbolize needs at least 3 probes (got %d)", probes.size());
  }
  for (size_t i = 0; i < probes.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (probes[i].batch == probes[j].batch) {
        return InvalidArgument("Symbolize: two probes at batch %d", probes[i].batch);
      }
    }
  }
  return Symbolizer(probes).Run();
}

bool FullSymbolicGather(const Instruction& gather) {
  const Shape& operand = gather.operand(0)->shape();
  const std::vector<int64_t>& sizes = gather.attrs().gather.slice_sizes;
  return operand.has_symbolic_dim0() && !sizes.empty() && sizes[0] == operand.dim(0);
}

SymbolicExtent SymbolicSliceLimit(const SliceDim& slice, const SymbolicExtent& extent) {
  return SymbolicExtent{extent.k * slice.stride, slice.start + (extent.c - 1) * slice.stride + 1};
}

std::unique_ptr<Module> Specialize(const Module& module, int64_t batch) {
  return AtBatch(module, batch, /*keep=*/false);
}

std::unique_ptr<Module> Rebase(const Module& module, int64_t batch) {
  return AtBatch(module, batch, /*keep=*/true);
}

}  // namespace tfjit::hlo
