// LoweringContext: value bindings, compile-time constant evaluation and broadcasting helpers.
#include "compiler/tf2hlo/lowering_context.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/rules/f_constant_inputs.h"
#include "compiler/tf2hlo/dynamic_sizes.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::tf2hlo {
namespace {

// Collects the instructions `root` depends on, operands first.
void CollectPostOrder(hlo::Instruction* root, std::vector<hlo::Instruction*>* order) {
  absl::flat_hash_set<hlo::Instruction*> seen;
  std::vector<std::pair<hlo::Instruction*, size_t>> stack = {{root, 0}};
  seen.insert(root);
  while (!stack.empty()) {
    auto& [inst, next] = stack.back();
    if (next < inst->operands().size()) {
      hlo::Instruction* op = inst->operand(static_cast<int>(next++));
      if (seen.insert(op).second) stack.push_back({op, 0});
      continue;
    }
    order->push_back(inst);
    stack.pop_back();
  }
}

}  // namespace

void LoweringContext::Bind(const tf::Output& output, hlo::Instruction* value) {
  std::vector<hlo::Instruction*>& outs = values_[output.node];
  if (outs.size() <= static_cast<size_t>(output.index)) outs.resize(output.index + 1, nullptr);
  outs[output.index] = value;
}

void LoweringContext::BindConstantValue(hlo::Instruction* parameter, Tensor value) {
  known_parameters_[parameter] = std::move(value);
}

absl::StatusOr<hlo::Instruction*> LoweringContext::Value(const tf::Output& output) const {
  // A TF1 variable reference that the cluster updates: its readers see its current value, as
  // the runtime dereferences a reference when each consumer runs.
  if (auto r = resources_.find({output.node, output.index});
      r != resources_.end() && r->second->ref) {
    if (r->second->value == nullptr) {
      return FailedPrecondition("Attempting to use uninitialized value %s", r->second->name);
    }
    return r->second->value;
  }
  auto it = values_.find(output.node);
  if (it == values_.end() || static_cast<size_t>(output.index) >= it->second.size() ||
      it->second[output.index] == nullptr) {
    return Internal("tf2hlo: no value for %s:%d", output.node->name(), output.index);
  }
  return it->second[output.index];
}

void LoweringContext::BindResource(const tf::Output& handle, ResourceState state) {
  resources_[{handle.node, handle.index}] = std::make_shared<ResourceState>(std::move(state));
}

bool LoweringContext::AliasResource(const tf::Output& alias, const tf::Output& of) {
  auto it = resources_.find({of.node, of.index});
  if (it == resources_.end()) return false;
  std::shared_ptr<ResourceState> state = it->second;
  resources_[{alias.node, alias.index}] = std::move(state);
  return true;
}

ResourceState* LoweringContext::ResourceOf(const tf::Output& handle) {
  auto it = resources_.find({handle.node, handle.index});
  return it == resources_.end() ? nullptr : it->second.get();
}

absl::StatusOr<ResourceState*> LoweringContext::Resource(const tf::Node& node, int i) {
  if (i < node.num_inputs()) {
    if (ResourceState* state = ResourceOf(node.input(i))) return state;
  }
  return InvalidArgument(
      "node %s: input %d must be a variable handle that enters the compiled "
      "cluster (a VarHandleOp output or a resource argument)",
      node.DebugName(), i);
}

std::vector<const ResourceState*> LoweringContext::Resources() const {
  std::vector<const ResourceState*> out;
  absl::flat_hash_set<const ResourceState*> seen;
  for (const auto& [key, state] : resources_) {
    if (seen.insert(state.get()).second) out.push_back(state.get());
  }
  std::sort(out.begin(), out.end(), [](const ResourceState* a, const ResourceState* b) {
    return a->arg_index < b->arg_index;
  });
  return out;
}

absl::StatusOr<std::pair<hlo::Instruction*, hlo::Instruction*>>
LoweringContext::BroadcastBinaryInputs(const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * a, Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * b, Input(node, 1));
  absl::StatusOr<std::vector<int64_t>> dims = BroadcastDims(a->shape().dims(), b->shape().dims());
  if (!dims.ok()) {
    return InvalidArgument("%s; the two inputs of %s must have broadcast-compatible shapes",
                           dims.status().message(), node.op());
  }
  TFJIT_ASSIGN_OR_RETURN(a, BroadcastTo(a, *dims));
  TFJIT_ASSIGN_OR_RETURN(b, BroadcastTo(b, *dims));
  return std::make_pair(a, b);
}

absl::StatusOr<hlo::Instruction*> LoweringContext::Input(const tf::Node& node, int i) const {
  if (i >= node.num_inputs()) {
    return InvalidArgument("node %s has %d inputs, input %d requested", node.DebugName(),
                           node.num_inputs(), i);
  }
  if (override_node_ == &node && static_cast<size_t>(i) < override_values_.size() &&
      override_values_[static_cast<size_t>(i)] != nullptr) {
    return override_values_[static_cast<size_t>(i)];
  }
  if (const DynamicDim* d = DynamicOf(node.input(i));
      d != nullptr && DynamicReadOf(node, i) == DynamicRead::kNone) {
    return AttachNode(PaddedReadError(node, i, *d), node.name(), node.op());
  }
  return Value(node.input(i));
}

SymExpr LoweringContext::NewSizeAtom(hlo::Instruction* value, int64_t bound) {
  atoms_.push_back({value, bound});
  SymExpr e;
  e.terms.push_back({static_cast<int>(atoms_.size()) - 1, 1});
  return e;
}

int64_t LoweringContext::UpperBound(const SymExpr& e) const {
  int64_t bound = e.constant;
  for (const auto& [atom, coef] : e.terms) {
    if (coef > 0) bound += coef * atoms_[static_cast<size_t>(atom)].bound;
  }
  return bound;
}

void LoweringContext::SetDynamic(const tf::Output& output, DynamicDim dim) {
  if (dim.size.IsConstant()) {
    absl::StatusOr<hlo::Instruction*> value = Value(output);
    if (value.ok() && dim.dim < (*value)->shape().rank() && dim.size.constant >= 0 &&
        dim.size.constant <= (*value)->shape().dim(dim.dim)) {
      if (dim.size.constant == (*value)->shape().dim(dim.dim)) return;
      std::vector<hlo::SliceDim> slice;
      for (int64_t d : (*value)->shape().dims()) slice.push_back({0, d, 1});
      slice[static_cast<size_t>(dim.dim)].limit = dim.size.constant;
      absl::StatusOr<hlo::Instruction*> cut = builder_.Slice(*value, slice);
      if (cut.ok()) {
        Bind(output, *cut);
        return;
      }
    }
  }
  dynamic_[{output.node, output.index}] = std::move(dim);
}

std::optional<int64_t> LoweringContext::AtomBound(const hlo::Instruction* value) const {
  for (const Atom& a : atoms_) {
    if (a.value == value) return a.bound;
  }
  return std::nullopt;
}

absl::StatusOr<hlo::Instruction*> LoweringContext::SizeValue(const SymExpr& e) {
  if (e.constant == 0 && e.terms.size() == 1 && e.terms[0].second == 1) {
    return atoms_[static_cast<size_t>(e.terms[0].first)].value;
  }
  hlo::Instruction* sum = builder_.ScalarConstant<int64_t>(DType::kInt64, e.constant);
  for (const auto& [atom, coef] : e.terms) {
    hlo::Instruction* term = atoms_[static_cast<size_t>(atom)].value;
    if (coef != 1) {
      TFJIT_ASSIGN_OR_RETURN(
          term, builder_.Binary(hlo::Opcode::kMultiply, term,
                                builder_.ScalarConstant<int64_t>(DType::kInt64, coef)));
    }
    TFJIT_ASSIGN_OR_RETURN(sum, builder_.Binary(hlo::Opcode::kAdd, sum, term));
  }
  return sum;
}

const DynamicDim* LoweringContext::DynamicOf(const tf::Output& output) const {
  auto it = dynamic_.find(std::make_pair(static_cast<const tf::Node*>(output.node), output.index));
  return it == dynamic_.end() ? nullptr : &it->second;
}

const DynamicDim* LoweringContext::DynamicInput(const tf::Node& node, int i) const {
  if (i >= node.num_inputs()) return nullptr;
  if (override_node_ == &node && static_cast<size_t>(i) < override_values_.size() &&
      override_values_[static_cast<size_t>(i)] != nullptr) {
    return nullptr;
  }
  return DynamicOf(node.input(i));
}

std::optional<std::vector<SymExpr>> LoweringContext::SymbolicInput(const tf::Node& node,
                                                                   int i) const {
  if (i >= node.num_inputs()) return std::nullopt;
  const tf::Output in = node.input(i);
  auto it = symbolic_.find(std::make_pair(static_cast<const tf::Node*>(in.node), in.index));
  if (it != symbolic_.end() && override_node_ != &node) return it->second;
  absl::StatusOr<hlo::Instruction*> value = Input(node, i);
  if (!value.ok() || !IsIntegerDType((*value)->shape().element_type())) return std::nullopt;
  absl::StatusOr<Tensor> t = TryEvaluate(*value);
  if (!t.ok()) return std::nullopt;
  std::vector<SymExpr> out(static_cast<size_t>(t->num_elements()));
  for (int64_t k = 0; k < t->num_elements(); ++k) out[k].constant = ElementAsInt64(*t, k);
  return out;
}

std::vector<hlo::Instruction*> LoweringContext::OutputsOf(const tf::Node& node) const {
  auto it = values_.find(&node);
  return it == values_.end() ? std::vector<hlo::Instruction*>{} : it->second;
}

void LoweringContext::RestoreOutputs(const tf::Node& node, std::vector<hlo::Instruction*> values) {
  values_[&node] = std::move(values);
}

absl::StatusOr<Tensor> LoweringContext::TryEvaluate(hlo::Instruction* value) const {
  std::vector<hlo::Instruction*> order;
  CollectPostOrder(value, &order);
  hlo::Module scratch("constant_input");
  hlo::Computation* comp = scratch.AddComputation("eval");
  absl::flat_hash_map<hlo::Instruction*, hlo::Instruction*> clones;
  for (hlo::Instruction* inst : order) {
    std::unique_ptr<hlo::Instruction> copy;
    std::vector<hlo::Instruction*> operands;
    if (not_constant_.contains(inst)) return absl::FailedPreconditionError("not constant");
    if (inst->opcode() == hlo::Opcode::kParameter) {
      auto it = known_parameters_.find(inst);
      if (it == known_parameters_.end()) return absl::FailedPreconditionError("parameter");
      copy = std::make_unique<hlo::Instruction>(hlo::Opcode::kConstant, inst->shape());
      copy->mutable_attrs().literal = hlo::Literal::FromTensor(it->second);
    } else {
      copy = std::make_unique<hlo::Instruction>(inst->opcode(), inst->shape());
      copy->mutable_attrs() = inst->attrs();
      copy->set_called_computations(inst->called_computations());
      for (hlo::Instruction* op : inst->operands()) operands.push_back(clones.at(op));
    }
    clones[inst] = comp->AddInstruction(std::move(copy), operands);
  }
  comp->set_root(clones.at(value));
  scratch.set_entry(comp);
  TFJIT_ASSIGN_OR_RETURN(hlo::Literal result, hlo::EvaluateComputation(*comp, {}));
  return result.tensor();
}

absl::StatusOr<Tensor> LoweringContext::ConstantInput(const tf::Node& node, int i) const {
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * value, Input(node, i));
  absl::StatusOr<Tensor> result = TryEvaluate(value);
  if (result.ok()) return result;
  if (result.status().code() != absl::StatusCode::kFailedPrecondition) return result.status();
  return rules::NotConstantError(node, i);
}

absl::StatusOr<std::vector<int64_t>> LoweringContext::ConstantInputAsInts(const tf::Node& node,
                                                                          int i) const {
  TFJIT_ASSIGN_OR_RETURN(Tensor t, ConstantInput(node, i));
  if (!IsIntegerDType(t.dtype())) {
    return InvalidArgument("node %s: input %d must be an integer tensor, got %s", node.DebugName(),
                           i, t.ShapeString());
  }
  std::vector<int64_t> out(static_cast<size_t>(t.num_elements()));
  for (int64_t k = 0; k < t.num_elements(); ++k) out[k] = ElementAsInt64(t, k);
  return out;
}

bool LoweringContext::CanAddRuntimeChecks() const { return options_ != nullptr; }

absl::StatusOr<hlo::Instruction*> LoweringContext::RandomStateFor(const tf::Node& node) {
  auto it = options()->random_states.find(&node);
  if (it != options()->random_states.end() && it->second.state != nullptr) {
    return it->second.state;
  }
  if (body_random_state_ != nullptr) return body_random_state_;
  return Unimplemented(
      "%s draws random numbers in a function body (While/If) that carries no "
      "random state here (a While condition, or a body lowered outside a "
      "cluster); call it outside the loop or use tf.random.stateless_*",
      node.DebugName());
}

void LoweringContext::SetNextRandomState(const tf::Node& node, hlo::Instruction* next) {
  auto it = options()->random_states.find(&node);
  if (it != options()->random_states.end() && it->second.state != nullptr) {
    it->second.next = next;
  } else {
    body_random_state_ = next;
  }
}

void LoweringContext::AddCheckValue(hlo::RuntimeCheck check, hlo::Instruction* value) {
  if (options_ != nullptr && builder_.computation() == module_->entry()) {
    module_->AddRuntimeCheck(std::move(check));
    options_->runtime_checks.push_back(value);
  } else {
    pending_checks_.push_back({std::move(check), value});
  }
}

absl::Status LoweringContext::AddConditionCheck(const tf::Node& node, hlo::Instruction* bad,
                                                std::string message) {
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * flags, builder_.Convert(bad, DType::kInt32));
  TFJIT_ASSIGN_OR_RETURN(flags, builder_.Reshape(flags, {flags->shape().num_elements()}));
  return AddIndexCheck(node, flags, {1}, std::move(message), /*flat_position=*/true, {},
                       /*vector_value=*/false);
}

// In HLO: bad[r, j] = !(0 <= rows[r, j] < limits[j]); first = min over bad of r (INT64_MAX if
// none); position = first, or -1; the row's components come from a dynamic-slice at the
// position (clamped by dynamic-slice itself when it is -1).
absl::Status LoweringContext::AddIndexCheck(const tf::Node& node, hlo::Instruction* indices,
                                            const std::vector<int64_t>& limits,
                                            std::string message_template, bool flat_position,
                                            std::vector<int64_t> position_dims, bool vector_value,
                                            hlo::Instruction* dim0_of) {
  if (!CanAddRuntimeChecks()) {
    return Internal("node %s: run-time checks exist only in a cluster's computations",
                    node.DebugName());
  }
  using hlo::ComparisonDirection;
  using hlo::Instruction;
  const int64_t k = static_cast<int64_t>(limits.size());
  const int64_t total = indices->shape().num_elements();
  if (k == 0 || total == 0) return absl::OkStatus();  // nothing that can be out of range
  if (!index_checks_
           .insert(
               absl::StrCat(node.name(), "\n", message_template, "\n", absl::StrJoin(limits, ",")))
           .second) {
    return absl::OkStatus();
  }
  const int64_t n = total / k;
  const DType s64 = DType::kInt64;
  hlo::Builder& b = builder_;
  Instruction* x = indices;
  if (x->shape().element_type() != s64) {
    TFJIT_ASSIGN_OR_RETURN(x, b.Convert(x, s64));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * rows, b.Reshape(x, {n, k}));
  Instruction* limit_row =
      b.Constant(hlo::Literal::FromTensor(Tensor::FromVector<int64_t>(s64, {k}, limits)));
  if (dim0_of != nullptr && dim0_of->shape().IsArray() && dim0_of->shape().rank() >= 1 &&
      dim0_of->shape().dim(0) == limits[0]) {
    hlo::Attributes dim0;
    dim0.dimensions = {0};
    TFJIT_ASSIGN_OR_RETURN(Instruction * size,
                           b.Add(hlo::Opcode::kGetDimensionSize, {dim0_of}, dim0));
    TFJIT_ASSIGN_OR_RETURN(size, b.Convert(size, s64));
    TFJIT_ASSIGN_OR_RETURN(size, b.Reshape(size, {1}));
    if (k == 1) {
      limit_row = size;
    } else {
      std::vector<int64_t> rest(limits.begin() + 1, limits.end());
      Instruction* others =
          b.Constant(hlo::Literal::FromTensor(Tensor::FromVector<int64_t>(s64, {k - 1}, rest)));
      TFJIT_ASSIGN_OR_RETURN(limit_row, b.Concatenate({size, others}, 0));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * limit, b.Broadcast(limit_row, {n, k}, {1}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Splat(s64, 0, {n, k}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * low, b.Compare(ComparisonDirection::kLt, rows, zero));
  TFJIT_ASSIGN_OR_RETURN(Instruction * high, b.Compare(ComparisonDirection::kGe, rows, limit));
  TFJIT_ASSIGN_OR_RETURN(Instruction * bad, b.Binary(hlo::Opcode::kOr, low, high));
  TFJIT_ASSIGN_OR_RETURN(Instruction * row_ids, b.Iota(hlo::Shape(s64, {n, k}), 0));
  const int64_t kNone = std::numeric_limits<int64_t>::max();
  Instruction* none = b.ScalarConstant<int64_t>(s64, kNone);
  TFJIT_ASSIGN_OR_RETURN(Instruction * nones, b.Broadcast(none, {n, k}, {}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * candidates, b.Select(bad, row_ids, nones));
  hlo::Computation* min = hlo::GetOrAddScalarBinaryComputation(module_, hlo::Opcode::kMinimum, s64);
  TFJIT_ASSIGN_OR_RETURN(Instruction * first, b.Reduce(candidates, none, {0, 1}, min));
  TFJIT_ASSIGN_OR_RETURN(Instruction * found, b.Compare(ComparisonDirection::kNe, first, none));
  Instruction* minus_one = b.ScalarConstant<int64_t>(s64, -1);
  TFJIT_ASSIGN_OR_RETURN(Instruction * position, b.Select(found, first, minus_one));
  hlo::Attributes attrs;
  attrs.dynamic_slice_sizes = {1, k};
  TFJIT_ASSIGN_OR_RETURN(Instruction * row,
                         b.Add(hlo::Opcode::kDynamicSlice,
                               {rows, position, b.ScalarConstant<int64_t>(s64, 0)}, attrs));
  TFJIT_ASSIGN_OR_RETURN(row, b.Reshape(row, {k}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * pos1, b.Reshape(position, {1}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * result, b.Concatenate({pos1, row}, 0));
  hlo::RuntimeCheck check;
  check.tf_node = node.name();
  check.tf_op = node.op();
  check.message_template = std::move(message_template);
  check.flat_position = flat_position;
  check.position_dims = std::move(position_dims);
  check.vector_value = vector_value;
  AddCheckValue(std::move(check), result);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& a,
                                                   const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    const int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return InvalidArgument("Incompatible shapes: [%s] vs. [%s]", absl::StrJoin(a, ","),
                             absl::StrJoin(b, ","));
    }
    out[k] = da == 1 ? db : da;
  }
  return out;
}

absl::StatusOr<hlo::Instruction*> LoweringContext::BroadcastTo(hlo::Instruction* x,
                                                               const std::vector<int64_t>& dims) {
  const std::vector<int64_t>& xd = x->shape().dims();
  if (xd == dims) return x;
  if (xd.size() > dims.size()) {
    return InvalidArgument("cannot broadcast [%s] to [%s]", absl::StrJoin(xd, ","),
                           absl::StrJoin(dims, ","));
  }
  // Drop size-1 dims that expand, then broadcast the rest to their aligned positions.
  const size_t offset = dims.size() - xd.size();
  std::vector<int64_t> kept_dims, mapping;
  for (size_t k = 0; k < xd.size(); ++k) {
    if (xd[k] == dims[k + offset]) {
      kept_dims.push_back(xd[k]);
      mapping.push_back(static_cast<int64_t>(k + offset));
    } else if (xd[k] != 1) {
      return InvalidArgument("cannot broadcast [%s] to [%s]", absl::StrJoin(xd, ","),
                             absl::StrJoin(dims, ","));
    }
  }
  hlo::Instruction* operand = x;
  if (kept_dims.size() != xd.size()) {
    TFJIT_ASSIGN_OR_RETURN(operand, b().Reshape(x, kept_dims));
  }
  return b().Broadcast(operand, dims, mapping);
}

absl::StatusOr<hlo::Instruction*> LoweringContext::Splat(DType dtype, double value,
                                                         const std::vector<int64_t>& dims) {
  Tensor t(dtype, {});
  DispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    *t.data<T>() = static_cast<T>(value);
  });
  hlo::Instruction* scalar = b().Constant(hlo::Literal::FromTensor(t));
  if (dims.empty()) return scalar;
  return b().Broadcast(scalar, dims, {});
}

}  // namespace tfjit::tf2hlo
