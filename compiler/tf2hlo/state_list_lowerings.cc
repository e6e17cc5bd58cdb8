// Lowerings of TensorList ops. In compiled code a list is a tuple (buffer, length): buffer is
// [max_elements, element dims...] of the element type, length an s32[] (the next PushBack
// index), as XLA represents TF2's TensorArrays. Sizes and element shapes must be known when
// compiling; a list without a bound is known issue C, a list that may grow is known issue D.
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "compiler/rules/c_bounded_list.h"
#include "compiler/rules/d_dynamic_array.h"
#include "compiler/tf2hlo/function_lowering.h"
#include "compiler/tf2hlo/list_lowering.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/logging.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {

using Dims = std::vector<int64_t>;

std::string ListWriteKey(const tf::Node& node) {
  return absl::StrCat(node.graph() != nullptr ? node.graph()->source() : "", "/", node.name());
}

namespace {

// The leading dim of the first array in `s` (a list's capacity, whatever its elements).
int64_t LeadingDim(const hlo::Shape& s) {
  return s.IsTuple() ? LeadingDim(s.tuple_shape(0)) : s.dims()[0];
}

// The list's (buffer, length) from input `i`. A list of lists (element_dtype variant) keeps
// its elements stacked: the buffer is the elements' (buffer, length) tuple with a leading
// capacity dim on every part (XLA's nested TensorList: [outer, inner, element...] and the
// inner lengths as s32[outer]).
struct ListValue {
  hlo::Instruction* tuple = nullptr;  // the (buffer, length) value it was read from
  hlo::Instruction* buffer = nullptr;
  hlo::Instruction* length = nullptr;
  int64_t capacity() const { return LeadingDim(buffer->shape()); }
  bool nested() const { return buffer->shape().IsTuple(); }
  std::vector<int64_t> element_dims() const {
    const std::vector<int64_t>& d = buffer->shape().dims();
    return std::vector<int64_t>(d.begin() + 1, d.end());
  }
};

// The buffer shape of `capacity` elements of shape `element` (a tuple for lists of lists).
hlo::Shape StackedShape(int64_t capacity, const hlo::Shape& element) {
  if (element.IsTuple()) {
    std::vector<hlo::Shape> parts;
    for (const hlo::Shape& part : element.tuple_shapes()) {
      parts.push_back(StackedShape(capacity, part));
    }
    return hlo::Shape::Tuple(std::move(parts));
  }
  std::vector<int64_t> dims = {capacity};
  dims.insert(dims.end(), element.dims().begin(), element.dims().end());
  return hlo::Shape(element.element_type(), std::move(dims));
}

// Zeros of StackedShape(capacity, element).
absl::StatusOr<hlo::Instruction*> StackedZeros(LoweringContext& ctx, int64_t capacity,
                                               const hlo::Shape& element) {
  if (!element.IsTuple()) {
    const hlo::Shape s = StackedShape(capacity, element);
    return ctx.Splat(s.element_type(), 0, s.dims());
  }
  std::vector<hlo::Instruction*> parts;
  for (const hlo::Shape& part : element.tuple_shapes()) {
    TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * z, StackedZeros(ctx, capacity, part));
    parts.push_back(z);
  }
  return ctx.b().Tuple(parts);
}

// A list op that needs array elements (Stack, Gather, Concat, ...) on a list of lists.
absl::Status NestedListUnsupported(const tf::Node& node) {
  return Unimplemented(
      "node %s: %s on a list of lists does not compile (its elements are "
      "lists; push, pop, set, get and length do)",
      node.DebugName(), node.op());
}

absl::StatusOr<ListValue> InputList(LoweringContext& ctx, const tf::Node& node, int i) {
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * list, ctx.Input(node, i));
  if (!list->shape().IsTuple() || list->shape().tuple_shapes().size() != 2) {
    return InvalidArgument(
        "node %s: input %d is not a TensorList built inside the compiled "
        "code (got %s)",
        node.DebugName(), i, list->shape().ToString());
  }
  ListValue v;
  v.tuple = list;
  TFJIT_ASSIGN_OR_RETURN(v.buffer, ctx.b().GetTupleElement(list, 0));
  TFJIT_ASSIGN_OR_RETURN(v.length, ctx.b().GetTupleElement(list, 1));
  return v;
}

absl::StatusOr<hlo::Instruction*> SetList(LoweringContext& ctx, const tf::Node& node, int out,
                                          const ListValue& v, bool unshaped = false) {
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * t, ctx.b().Tuple({v.buffer, v.length}));
  if (unshaped) ctx.options()->unshaped_lists.insert(t);
  ctx.SetOutput(node, out, t);
  return t;
}

// The element shape from a constant element_shape input; nullopt when some dim (or the
// rank) is unknown: the first write then decides it, as in XLA.
absl::StatusOr<std::optional<std::vector<int64_t>>> StaticElementShape(LoweringContext& ctx,
                                                                       const tf::Node& node,
                                                                       int i) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ctx.ConstantInputAsInts(node, i));
  TFJIT_ASSIGN_OR_RETURN(Tensor t, ctx.ConstantInput(node, i));
  if (t.rank() == 0 && !dims.empty() && dims[0] == -1) return std::nullopt;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
  }
  return std::optional<std::vector<int64_t>>(dims);
}

bool IsUnshaped(LoweringContext& ctx, const ListValue& list) {
  return ctx.options()->unshaped_lists.contains(list.tuple);
}

absl::Status UnknownElementShape(const tf::Node& node) {
  return Unimplemented(
      "node %s: the list's element shape is unknown and nothing was written "
      "to it before this read; compiled lists need the element shape (give "
      "the TensorArray an element_shape)",
      node.DebugName());
}

// A list of lists (element_dtype variant) starts unshaped: its first write decides the
// structure of its elements (their buffer and length), as the first write decides a plain
// list's element shape when it is not known.
bool ElementsAreLists(const tf::Node& node) {
  return tf::GetTypeAttr(node, "element_dtype").value_or(DType::kInvalid) == DType::kVariant;
}

absl::StatusOr<ListValue> NewList(LoweringContext& ctx, const tf::Node& node, int64_t capacity,
                                  const std::vector<int64_t>& element_dims, int64_t length) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(node, "element_dtype"));
  if (dtype == DType::kVariant) {  // a placeholder until the first write (ElementsAreLists)
    ListValue v;
    TFJIT_ASSIGN_OR_RETURN(v.buffer, ctx.Splat(DType::kInt32, 0, {capacity}));
    v.length = ctx.b().ScalarConstant<int32_t>(DType::kInt32, static_cast<int32_t>(length));
    return v;
  }
  if (!IsNumericDType(dtype)) {
    return Unimplemented("node %s: lists of %s do not compile", node.DebugName(), DTypeName(dtype));
  }
  std::vector<int64_t> dims = {capacity};
  dims.insert(dims.end(), element_dims.begin(), element_dims.end());
  ListValue v;
  TFJIT_ASSIGN_OR_RETURN(v.buffer, ctx.Splat(dtype, 0, dims));
  v.length = ctx.b().ScalarConstant<int32_t>(DType::kInt32, static_cast<int32_t>(length));
  return v;
}

absl::Status LowerEmptyTensorList(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> max, ctx.ConstantInputAsInts(node, 1));
  int64_t capacity = max.empty() ? -1 : max[0];
  if (capacity < 0) {
    std::optional<int64_t> bound = ctx.ListBound(node);
    TFJIT_RETURN_IF_ERROR(rules::CheckListBounded(node, capacity, bound.has_value()));
    capacity = *bound;
    Log(LogLevel::kWarning, "autofix C: %s gets max_num_elements=%d: %s", node.DebugName(),
        capacity, ctx.last_list_bound_reason());
  }
  TFJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> element,
                         StaticElementShape(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(ListValue v, NewList(ctx, node, capacity, element.value_or(Dims{}), 0));
  return SetList(ctx, node, 0, v, !element.has_value() || ElementsAreLists(node)).status();
}

absl::Status LowerTensorListReserve(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> n, ctx.ConstantInputAsInts(node, 1));
  int64_t capacity = n.empty() ? -1 : n[0];
  // With autofix, a loop that grows the list (TF2's dynamic TensorArray: size 0 and writes
  // with resize_if_index_out_of_bounds) gets the capacity its traced writes need.
  const size_t approved_before = ctx.options()->bounded_list_writes.size();
  std::optional<int64_t> bound = ctx.ListBound(node);
  TFJIT_RETURN_IF_ERROR(rules::CheckListBounded(node, capacity, bound.has_value()));
  // A fixed-size list grows only for growing writes the trace approved; plain writes past
  // its end stay the runtime's error.
  const bool grows = ctx.options()->bounded_list_writes.size() > approved_before;
  if (bound.has_value() && *bound > capacity && (capacity < 0 || grows)) {
    Log(LogLevel::kWarning, "autofix %s: %s gets num_elements=%d instead of %d: %s",
        capacity < 0 ? "C" : "D", node.DebugName(), *bound, capacity, ctx.last_list_bound_reason());
    capacity = *bound;
  }
  TFJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> element,
                         StaticElementShape(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(ListValue v,
                         NewList(ctx, node, capacity, element.value_or(Dims{}), capacity));
  return SetList(ctx, node, 0, v, !element.has_value() || ElementsAreLists(node)).status();
}

// [index, 0, 0, ...] start indices for a row of the buffer.
std::vector<hlo::Instruction*> RowStarts(LoweringContext& ctx, hlo::Instruction* index,
                                         size_t rank) {
  std::vector<hlo::Instruction*> starts = {index};
  for (size_t d = 1; d < rank; ++d)
    starts.push_back(ctx.b().ScalarConstant<int32_t>(DType::kInt32, 0));
  return starts;
}

absl::StatusOr<hlo::Instruction*> ScalarIndex(LoweringContext& ctx, const tf::Node& node, int i) {
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * index, ctx.Input(node, i));
  if (!index->shape().dims().empty()) {
    return InvalidArgument("node %s: index must be a scalar, got %s", node.DebugName(),
                           index->shape().ToString());
  }
  if (index->shape().element_type() != DType::kInt32) {
    TFJIT_ASSIGN_OR_RETURN(index, ctx.b().Convert(index, DType::kInt32));
  }
  return index;
}

// `stacked` (an array [capacity, element...], or a tuple of such for lists of lists) with
// `item` written at row `index`, part by part.
absl::StatusOr<hlo::Instruction*> WriteAt(LoweringContext& ctx, hlo::Instruction* stacked,
                                          hlo::Instruction* index, hlo::Instruction* item) {
  if (stacked->shape().IsTuple()) {
    std::vector<hlo::Instruction*> parts;
    for (int64_t k = 0; k < static_cast<int64_t>(stacked->shape().tuple_shapes().size()); ++k) {
      TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * s, ctx.b().GetTupleElement(stacked, k));
      TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * v, ctx.b().GetTupleElement(item, k));
      TFJIT_ASSIGN_OR_RETURN(s, WriteAt(ctx, s, index, v));
      parts.push_back(s);
    }
    return ctx.b().Tuple(parts);
  }
  std::vector<int64_t> row = {1};
  row.insert(row.end(), item->shape().dims().begin(), item->shape().dims().end());
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * update, ctx.b().Reshape(item, row));
  std::vector<hlo::Instruction*> operands = {stacked, update};
  for (hlo::Instruction* s : RowStarts(ctx, index, row.size())) operands.push_back(s);
  return ctx.b().Add(hlo::Opcode::kDynamicUpdateSlice, operands);
}

// Row `index` of `stacked`, part by part (a list value for lists of lists).
absl::StatusOr<hlo::Instruction*> ReadAt(LoweringContext& ctx, hlo::Instruction* stacked,
                                         hlo::Instruction* index) {
  if (stacked->shape().IsTuple()) {
    std::vector<hlo::Instruction*> parts;
    for (int64_t k = 0; k < static_cast<int64_t>(stacked->shape().tuple_shapes().size()); ++k) {
      TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * s, ctx.b().GetTupleElement(stacked, k));
      TFJIT_ASSIGN_OR_RETURN(s, ReadAt(ctx, s, index));
      parts.push_back(s);
    }
    return ctx.b().Tuple(parts);
  }
  const std::vector<int64_t>& dims = stacked->shape().dims();
  const std::vector<int64_t> element(dims.begin() + 1, dims.end());
  std::vector<int64_t> row = {1};
  row.insert(row.end(), element.begin(), element.end());
  std::vector<hlo::Instruction*> operands = {stacked};
  for (hlo::Instruction* s : RowStarts(ctx, index, row.size())) operands.push_back(s);
  hlo::Attributes attrs;
  attrs.dynamic_slice_sizes = row;
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * slice,
                         ctx.b().Add(hlo::Opcode::kDynamicSlice, operands, attrs));
  return ctx.b().Reshape(slice, element);
}

// buffer with `item` written at row `index`.
absl::StatusOr<hlo::Instruction*> WriteRow(LoweringContext& ctx, const tf::Node& node,
                                           ListValue list, hlo::Instruction* index,
                                           hlo::Instruction* item) {
  const hlo::Shape want = StackedShape(list.capacity(), item->shape());
  if (ctx.options()->probing) {  // only learning what the loop body writes
    ctx.options()->probed_items[ListWriteKey(node)] = item->shape();
    if (want != list.buffer->shape()) return list.buffer;
  } else if (IsUnshaped(ctx, list)) {  // the first write decides the element shape
    TFJIT_ASSIGN_OR_RETURN(list.buffer, StackedZeros(ctx, list.capacity(), item->shape()));
  }
  if (want != list.buffer->shape()) {
    return InvalidArgument("node %s: item %s does not match the list's elements (buffer %s)",
                           node.DebugName(), item->shape().ToString(),
                           list.buffer->shape().ToString());
  }
  return WriteAt(ctx, list.buffer, index, item);
}

absl::StatusOr<hlo::Instruction*> ReadRow(LoweringContext& ctx, const ListValue& list,
                                          hlo::Instruction* index) {
  return ReadAt(ctx, list.buffer, index);
}

// TF's list kernels fail on an index outside the list where HLO's dynamic slices clamp (as
// TF's XLA bridge lets them): a constant index is checked here, any other at run time
// (LoweringContext::AddIndexCheck) against the list's capacity, which is its size for a
// reserved list (what TF2's TensorArray is). `verb`: the kernel's word ("access", "modify").
// Where no run-time check can be returned (a probing pass, a body lowered outside a cluster)
// the index clamps as in TF's XLA; a list's length below its capacity is not checked.
absl::Status CheckListIndex(LoweringContext& ctx, const tf::Node& node, const ListValue& list,
                            hlo::Instruction* index, const char* verb) {
  if (list.nested()) return absl::OkStatus();
  const int64_t size = list.capacity();
  const std::string message =
      absl::StrCat("Trying to ", verb, " element {value} in a list with ", size, " elements.");
  absl::StatusOr<Tensor> known = ctx.ConstantInput(node, 1);
  if (known.ok() && known->num_elements() == 1) {
    const int64_t v = ElementAsInt64(*known, 0);
    if (v < 0 || v >= size) {
      return InvalidArgument("node %s: %s", node.DebugName(),
                             absl::StrReplaceAll(message, {{"{value}", absl::StrCat(v)}}));
    }
    return absl::OkStatus();
  }
  if (!ctx.CanAddRuntimeChecks() || ctx.options()->probing) return absl::OkStatus();
  return ctx.AddIndexCheck(node, index, {size}, message, /*flat_position=*/true, {},
                           /*vector_value=*/false);
}

absl::Status LowerTensorListSetItem(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_RETURN_IF_ERROR(
      rules::CheckListGrowth(node, rules::GrowsTensorList(node) && ctx.ListGrowthIsBounded(node)));
  TFJIT_ASSIGN_OR_RETURN(ListValue list, InputList(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * index, ScalarIndex(ctx, node, 1));
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * item, ctx.Input(node, 2));
  if (!tf::GetBoolAttrOr(node, "resize_if_index_out_of_bounds", false).value_or(false) &&
      !IsUnshaped(ctx, list)) {
    TFJIT_RETURN_IF_ERROR(CheckListIndex(ctx, node, list, index, "modify"));
  }
  TFJIT_ASSIGN_OR_RETURN(list.buffer, WriteRow(ctx, node, list, index, item));
  return SetList(ctx, node, 0, list).status();
}

absl::Status LowerTensorListGetItem(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ListValue list, InputList(ctx, node, 0));
  if (IsUnshaped(ctx, list)) return UnknownElementShape(node);
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * index, ScalarIndex(ctx, node, 1));
  TFJIT_RETURN_IF_ERROR(CheckListIndex(ctx, node, list, index, "access"));
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * item, ReadRow(ctx, list, index));
  ctx.SetOutput(node, 0, item);
  return absl::OkStatus();
}

absl::Status LowerTensorListPushBack(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ListValue list, InputList(ctx, node, 0));
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * item, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(list.buffer, WriteRow(ctx, node, list, list.length, item));
  TFJIT_ASSIGN_OR_RETURN(list.length,
                         ctx.b().Binary(hlo::Opcode::kAdd, list.length,
                                        ctx.b().ScalarConstant<int32_t>(DType::kInt32, 1)));
  return SetList(ctx, node, 0, list).status();
}

absl::Status LowerTensorListPopBack(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ListValue list, InputList(ctx, node, 0));
  if (IsUnshaped(ctx, list)) return UnknownElementShape(node);
  TFJIT_ASSIGN_OR_RETURN(list.length,
                         ctx.b().Binary(hlo::Opcode::kSubtract, list.length,
                                        ctx.b().ScalarConstant<int32_t>(DType::kInt32, 1)));
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * item, ReadRow(ctx, list, list.length));
  TFJIT_RETURN_IF_ERROR(SetList(ctx, node, 0, list).status());
  ctx.SetOutput(node, 1, item);
  return absl::OkStatus();
}

// As XLA: the whole buffer (every reserved element), whatever the length.
absl::Status LowerTensorListStack(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ListValue list, InputList(ctx, node, 0));
  if (IsUnshaped(ctx, list)) return UnknownElementShape(node);
  if (list.nested()) return NestedListUnsupported(node);
  ctx.SetOutput(node, 0, list.buffer);
  return absl::OkStatus();
}

absl::Status LowerTensorListFromTensor(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * tensor, ctx.Input(node, 0));
  if (tensor->shape().dims().empty()) {
    return InvalidArgument("node %s: tensor must be at least a vector, got a scalar",
                           node.DebugName());
  }
  ListValue list;
  list.buffer = tensor;
  list.length = ctx.b().ScalarConstant<int32_t>(DType::kInt32,
                                                static_cast<int32_t>(tensor->shape().dims()[0]));
  return SetList(ctx, node, 0, list).status();
}

// A list whose length its origin fixes (ListLengthOrigin) has a constant length, so a Range
// or a shape computed from it compiles; any other list's length is its run-time value.
absl::Status LowerTensorListLength(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ListValue list, InputList(ctx, node, 0));
  std::optional<int64_t> known;
  if (const std::optional<tf::Output> origin = ListLengthOrigin(node.input(0))) {
    if (origin->node->op() == "TensorListReserve") {
      if (std::optional<double> n = ctx.KnownScalar(origin->node->input(1))) {
        known = static_cast<int64_t>(*n);
      }
    } else if (absl::StatusOr<hlo::Instruction*> t = ctx.Value(origin->node->input(0));
               t.ok() && (*t)->shape().rank() > 0) {
      known = (*t)->shape().dims()[0];
    }
  }
  if (known.has_value() && *known >= 0 && *known <= std::numeric_limits<int32_t>::max()) {
    ctx.SetOutput(node, 0,
                  ctx.b().ScalarConstant<int32_t>(DType::kInt32, static_cast<int32_t>(*known)));
  } else {
    ctx.SetOutput(node, 0, list.length);
  }
  return absl::OkStatus();
}

absl::Status LowerTensorListElementShape(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ListValue list, InputList(ctx, node, 0));
  if (list.nested()) return NestedListUnsupported(node);
  TFJIT_ASSIGN_OR_RETURN(DType shape_type, tf::GetTypeAttr(node, "shape_type"));
  const std::vector<int64_t> element = list.element_dims();
  Tensor t(shape_type, {static_cast<int64_t>(element.size())});
  for (size_t i = 0; i < element.size(); ++i) {
    if (shape_type == DType::kInt32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(element[i]);
    } else {
      t.data<int64_t>()[i] = element[i];
    }
  }
  ctx.SetOutput(node, 0, ctx.b().Constant(hlo::Literal::FromTensor(t)));
  return absl::OkStatus();
}

// Element j of a rank>=1 value as a scalar/array (its first dim removed).
absl::StatusOr<hlo::Instruction*> Row(LoweringContext& ctx, hlo::Instruction* x, int64_t j) {
  std::vector<hlo::SliceDim> slice;
  const std::vector<int64_t>& dims = x->shape().dims();
  for (size_t d = 0; d < dims.size(); ++d) {
    slice.push_back(d == 0 ? hlo::SliceDim{j, j + 1, 1} : hlo::SliceDim{0, dims[d], 1});
  }
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * r, ctx.b().Slice(x, slice));
  return ctx.b().Reshape(r, std::vector<int64_t>(dims.begin() + 1, dims.end()));
}

absl::StatusOr<hlo::Instruction*> IndexVector(LoweringContext& ctx, const tf::Node& node, int i) {
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * indices, ctx.Input(node, i));
  if (indices->shape().rank() != 1) {
    return InvalidArgument("node %s: indices must be a vector, got %s", node.DebugName(),
                           indices->shape().ToString());
  }
  return indices;
}

// Gather: one dynamic-slice per index (the count is static), stacked. As in XLA, indices
// outside the list are clamped.
absl::Status LowerTensorListGather(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ListValue list, InputList(ctx, node, 0));
  if (IsUnshaped(ctx, list)) return UnknownElementShape(node);
  if (list.nested()) return NestedListUnsupported(node);
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * indices, IndexVector(ctx, node, 1));
  std::vector<int64_t> row = {1};
  for (int64_t d : list.element_dims()) row.push_back(d);
  std::vector<hlo::Instruction*> rows;
  for (int64_t j = 0; j < indices->shape().dims()[0]; ++j) {
    TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * index, Row(ctx, indices, j));
    TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * item, ReadRow(ctx, list, index));
    TFJIT_ASSIGN_OR_RETURN(item, ctx.b().Reshape(item, row));
    rows.push_back(item);
  }
  if (rows.empty()) {
    row[0] = 0;
    TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * empty,
                           ctx.Splat(list.buffer->shape().element_type(), 0, row));
    ctx.SetOutput(node, 0, empty);
    return absl::OkStatus();
  }
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * out, ctx.b().Concatenate(rows, 0));
  ctx.SetOutput(node, 0, out);
  return absl::OkStatus();
}

// Scatter into an existing list: one dynamic-update-slice per row of `tensor`.
absl::Status LowerTensorListScatterIntoExistingList(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ListValue list, InputList(ctx, node, 0));
  if (list.nested() || ElementsAreLists(node)) return NestedListUnsupported(node);
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * tensor, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * indices, IndexVector(ctx, node, 2));
  const int64_t n = indices->shape().dims()[0];
  if (tensor->shape().rank() < 1 || tensor->shape().dims()[0] != n) {
    return InvalidArgument("node %s: tensor %s must have one row per index (%d)", node.DebugName(),
                           tensor->shape().ToString(), n);
  }
  for (int64_t j = 0; j < n; ++j) {
    TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * index, Row(ctx, indices, j));
    TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * item, Row(ctx, tensor, j));
    TFJIT_ASSIGN_OR_RETURN(list.buffer, WriteRow(ctx, node, list, index, item));
    TFJIT_ASSIGN_OR_RETURN(list.tuple, ctx.b().Tuple({list.buffer, list.length}));
  }
  return SetList(ctx, node, 0, list).status();
}

// ConcatV2 of a compiled list: its buffer with the first two dims merged, as XLA does (every
// reserved element takes part); lengths are the elements' first dims.
absl::Status LowerTensorListConcatV2(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(ListValue list, InputList(ctx, node, 0));
  if (IsUnshaped(ctx, list)) return UnknownElementShape(node);
  if (list.nested()) return NestedListUnsupported(node);
  const std::vector<int64_t> element = list.element_dims();
  if (element.empty()) {
    return InvalidArgument(
        "node %s: Concat requires elements to be at least vectors, found "
        "scalars instead.",
        node.DebugName());
  }
  std::vector<int64_t> dims = {list.capacity() * element[0]};
  dims.insert(dims.end(), element.begin() + 1, element.end());
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * out, ctx.b().Reshape(list.buffer, dims));
  ctx.SetOutput(node, 0, out);
  Tensor lengths(DType::kInt64, {list.capacity()});
  for (int64_t j = 0; j < list.capacity(); ++j) lengths.data<int64_t>()[j] = element[0];
  ctx.SetOutput(node, 1, ctx.b().Constant(hlo::Literal::FromTensor(lengths)));
  return absl::OkStatus();
}

// TensorListSplit(tensor, element_shape, lengths): with constant lengths that are all equal
// (as tf2xla requires), the list of rows [i L, (i + 1) L) is the tensor reshaped to
// [n, L, ...]. TF's checks (the kernel's messages) come first.
absl::Status LowerTensorListSplit(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(hlo::Instruction * tensor, ctx.Input(node, 0));
  const std::vector<int64_t> dims = tensor->shape().dims();
  if (dims.empty()) {
    return InvalidArgument("node %s: Tensor must be at least a vector, but saw shape: []",
                           node.DebugName());
  }
  TFJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> element,
                         StaticElementShape(ctx, node, 1));
  if (element.has_value()) {
    if (element->empty()) {
      return InvalidArgument(
          "node %s: TensorListSplit requires element_shape to be at least of "
          "rank 1, but saw: []",
          node.DebugName());
    }
    bool compatible = element->size() == dims.size();
    for (size_t d = 1; compatible && d < dims.size(); ++d) {
      compatible = (*element)[d] < 0 || (*element)[d] == dims[d];
    }
    if (!compatible) {
      return InvalidArgument("node %s: tensor shape %s is not compatible with element_shape [%s]",
                             node.DebugName(), tensor->shape().ToString(),
                             absl::StrJoin(*element, ","));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, ctx.ConstantInputAsInts(node, 2));
  int64_t start = 0;
  for (int64_t length : lengths) {
    if (length < 0) {
      return InvalidArgument("node %s: Invalid value in lengths: %d", node.DebugName(), length);
    }
    if (start + length > dims[0]) {
      return InvalidArgument("node %s: Attempting to slice [%d, %d] from tensor with length %d",
                             node.DebugName(), start, start + length, dims[0]);
    }
    start += length;
  }
  if (start != dims[0]) {
    return InvalidArgument(
        "node %s: Unused values in tensor. Length of tensor: %d Values used: "
        "%d",
        node.DebugName(), dims[0], start);
  }
  if (lengths.empty()) {
    return Unimplemented(
        "node %s: Length has to be non-empty (a compiled list of no elements "
        "has no element shape)",
        node.DebugName());
  }
  for (int64_t length : lengths) {
    if (length != lengths[0]) {
      return Unimplemented(
          "node %s: All lengths have to be the same: a compiled list holds "
          "elements of one shape, and lengths [%s] make them differ (the "
          "kernel runs this under --jit auto)",
          node.DebugName(), absl::StrJoin(lengths, ","));
    }
  }
  const int64_t n = static_cast<int64_t>(lengths.size());
  std::vector<int64_t> buffer_dims = {n, lengths[0]};
  buffer_dims.insert(buffer_dims.end(), dims.begin() + 1, dims.end());
  ListValue list;
  TFJIT_ASSIGN_OR_RETURN(list.buffer, ctx.b().Reshape(tensor, buffer_dims));
  list.length = ctx.b().ScalarConstant<int32_t>(DType::kInt32, static_cast<int32_t>(n));
  return SetList(ctx, node, 0, list).status();
}

absl::Status LowerTensorListResize(LoweringContext& ctx, const tf::Node& node) {
  return rules::CheckListGrowth(node, /*bounded=*/false);
}

}  // namespace

void AppendListLowerings(std::vector<OpLowering>* table) {
  auto add = [&](const char* op, LoweringFn fn) {
    OpLowering l{op, fn};
    l.takes_list = true;
    table->push_back(l);
  };
  add("EmptyTensorList", LowerEmptyTensorList);
  add("TensorListReserve", LowerTensorListReserve);
  add("TensorListSetItem", LowerTensorListSetItem);
  add("TensorListGetItem", LowerTensorListGetItem);
  add("TensorListPushBack", LowerTensorListPushBack);
  add("TensorListPopBack", LowerTensorListPopBack);
  add("TensorListStack", LowerTensorListStack);
  add("TensorListFromTensor", LowerTensorListFromTensor);
  add("TensorListLength", LowerTensorListLength);
  add("TensorListElementShape", LowerTensorListElementShape);
  add("TensorListResize", LowerTensorListResize);
  add("TensorListGather", LowerTensorListGather);
  add("TensorListScatterIntoExistingList", LowerTensorListScatterIntoExistingList);
  add("TensorListConcatV2", LowerTensorListConcatV2);
  add("TensorListSplit", LowerTensorListSplit);
}

namespace {

bool KeepsListLength(const tf::Node& node) {
  const std::string& op = node.op();
  if (op == "TensorListSetItem") {
    return !tf::GetBoolAttrOr(node, "resize_if_index_out_of_bounds", false).value_or(true);
  }
  return op == "TensorListScatterIntoExistingList" || op == "Identity" || op == "StopGradient" ||
         op == "Snapshot";
}

std::optional<tf::Output> ListLengthOriginAt(const tf::Output& list, int depth) {
  for (tf::Output at = list; depth < 256; ++depth) {
    const tf::Node& node = *at.node;
    const std::string& op = node.op();
    if (op == "TensorListReserve" || op == "TensorListFromTensor") {
      if (node.num_inputs() < 2) return std::nullopt;
      return at;
    }
    if (op == "IdentityN" && at.index < node.num_inputs()) {
      at = node.input(at.index);
      continue;
    }
    if (KeepsListLength(node) && node.num_inputs() > 0) {
      at = node.input(0);
      continue;
    }
    if (!IsFunctionalWhile(op) || at.index >= node.num_inputs()) return std::nullopt;
    // Loop variable k keeps its length when the body returns its input k through
    // length-keeping ops.
    absl::StatusOr<tf::FunctionBody> body = InstantiateFunctionAttr(node, "body");
    if (!body.ok() || at.index >= static_cast<int>(body->outputs.size()) ||
        at.index >= static_cast<int>(body->inputs.size())) {
      return std::nullopt;
    }
    absl::StatusOr<tf::Output> arg = body->graph->FindOutput(body->inputs[at.index]);
    absl::StatusOr<tf::Output> ret = body->graph->FindOutput(body->outputs[at.index]);
    if (!arg.ok() || !ret.ok()) return std::nullopt;
    tf::Output inner = *ret;
    for (int steps = 0; !(inner.node == arg->node && inner.index == arg->index); ++steps) {
      if (steps > 256 || !KeepsListLength(*inner.node) || inner.node->num_inputs() == 0) {
        return std::nullopt;
      }
      inner = inner.node->input(0);
    }
    at = node.input(at.index);
  }
  return std::nullopt;
}

}  // namespace

std::optional<tf::Output> ListLengthOrigin(const tf::Output& list) {
  return ListLengthOriginAt(list, 0);
}

absl::StatusOr<hlo::Instruction*> StackedListZeros(LoweringContext& ctx, int64_t capacity,
                                                   const hlo::Shape& element) {
  return StackedZeros(ctx, capacity, element);
}

}  // namespace tfjit::tf2hlo
