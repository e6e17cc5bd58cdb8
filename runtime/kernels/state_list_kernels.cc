// TensorList kernels (TF's list_kernels.{h,cc} semantics and messages): constructors, item
// access, push/pop, stack/gather/concat, scatter/split, resize and the metadata ops. Lists are
// values: every kernel that changes a list outputs a new TensorList and leaves its input alone.
#include <algorithm>
#include <memory>

#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor_list.h"

namespace tfjit::runtime {
namespace lists {
namespace {

std::shared_ptr<TensorList> CopyList(const TensorList& l) {
  return std::make_shared<TensorList>(l);
}

absl::Status EmptyTensorListKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  auto list = std::make_shared<TensorList>();
  TFJIT_ASSIGN_OR_RETURN(list->element_dtype, tf::GetTypeAttr(ctx.node(), "element_dtype"));
  TFJIT_RETURN_IF_ERROR(ScalarInput(
      ctx, 1, "max_num_elements expected to be a scalar but got shape: ", &list->max_num_elements));
  TFJIT_RETURN_IF_ERROR(ShapeInput(ctx, 0, &list->element_shape));
  ctx.set_output(0, MakeListTensor(std::move(list)));
  return absl::OkStatus();
}

absl::Status TensorListReserveKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  auto list = std::make_shared<TensorList>();
  TFJIT_ASSIGN_OR_RETURN(list->element_dtype, tf::GetTypeAttr(ctx.node(), "element_dtype"));
  TFJIT_RETURN_IF_ERROR(ShapeInput(ctx, 0, &list->element_shape));
  int64_t n = 0;
  TFJIT_RETURN_IF_ERROR(
      ScalarInput(ctx, 1, "The num_elements to reserve must be a tensor size 1, but got ", &n));
  if (n < 0) {
    return KernelError(ctx, "The num_elements to reserve must be a non negative number, but got %d",
                       n);
  }
  // One Tensor slot per element, allocated now: refuse counts no memory holds.
  TFJIT_RETURN_IF_ERROR(
      CheckOutputShape(ctx, DType::kInt64, {n, sizeof(Tensor) / 8}, "the list's element slots"));
  list->items.resize(static_cast<size_t>(n));
  ctx.set_output(0, MakeListTensor(std::move(list)));
  return absl::OkStatus();
}

absl::Status TensorListLengthKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  ctx.set_output(
      0, Tensor::FromVector<int32_t>(DType::kInt32, {}, {static_cast<int32_t>(l->items.size())}));
  return absl::OkStatus();
}

absl::Status TensorListElementShapeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  TFJIT_ASSIGN_OR_RETURN(DType type, tf::GetTypeAttr(ctx.node(), "shape_type"));
  if (type != DType::kInt32 && type != DType::kInt64) {
    return UnsupportedDType(ctx, type, "int32, int64");
  }
  const std::vector<int64_t> values =
      l->element_shape.unknown_rank ? std::vector<int64_t>{-1} : l->element_shape.dims;
  std::vector<int64_t> dims;
  if (!l->element_shape.unknown_rank) dims.push_back(static_cast<int64_t>(values.size()));
  Tensor out(type, dims);
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == DType::kInt32) {
      out.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      out.data<int64_t>()[i] = values[i];
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status TensorListPushBackKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& item = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "element_dtype"));
  if (dtype != item.dtype()) {
    return KernelError(ctx, "Invalid data types; list elements %s but tried to append %s",
                       TfTypeString(dtype), TfTypeString(item.dtype()));
  }
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  if (!ShapeCompatibleWithDims(l->element_shape, item.dims())) {
    return KernelError(ctx,
                       "Tried to append a tensor with incompatible shape to a list. Op element "
                       "shape: %s list shape: %s",
                       DimsString(item.dims()), l->element_shape.ToString());
  }
  TFJIT_RETURN_IF_ERROR(CheckListDType(ctx, *l));
  if (l->max_num_elements != -1 && static_cast<int64_t>(l->items.size()) >= l->max_num_elements) {
    return KernelError(ctx,
                       "Tried to push item into a full list list size: %d max_num_elements: %d",
                       l->items.size(), l->max_num_elements);
  }
  std::shared_ptr<TensorList> out = CopyList(*l);
  out->items.push_back(item);
  ctx.set_output(0, MakeListTensor(std::move(out)));
  return absl::OkStatus();
}

absl::Status TensorListPopBackKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  TFJIT_RETURN_IF_ERROR(CheckListDType(ctx, *l));
  if (l->items.empty()) return KernelError(ctx, "Trying to pop from an empty list.");
  Tensor item = l->items.back();
  if (!item.valid()) {
    tf::PartialShape shape;
    TFJIT_RETURN_IF_ERROR(ElementShapeFromInput(ctx, *l, 1, &shape));
    if (!shape.IsFullyDefined()) {
      return KernelError(ctx,
                         "Trying to read an uninitialized tensor but element_shape is not fully "
                         "defined.%s",
                         shape.ToString());
    }
    TFJIT_ASSIGN_OR_RETURN(item, Zeros(ctx, l->element_dtype, shape.dims));
  }
  std::shared_ptr<TensorList> out = CopyList(*l);
  out->items.pop_back();
  ctx.set_output(0, MakeListTensor(std::move(out)));
  ctx.set_output(1, std::move(item));
  return absl::OkStatus();
}

// Index checks shared by GetItem/SetItem: TF reads an int32 scalar.
absl::Status IndexInput(const KernelContext& ctx, int i, int64_t* index) {
  return ScalarInput(ctx, i, "index must be an int32 scalar, got ", index);
}

absl::Status TensorListGetItemKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  TFJIT_RETURN_IF_ERROR(CheckListDType(ctx, *l));
  int64_t index = 0;
  TFJIT_RETURN_IF_ERROR(IndexInput(ctx, 1, &index));
  const int64_t size = static_cast<int64_t>(l->items.size());
  if (index < 0 || index >= size) {
    return KernelError(ctx, "Trying to access element %d in a list with %d elements.", index, size);
  }
  const Tensor& item = l->items[static_cast<size_t>(index)];
  if (item.valid()) {
    ctx.set_output(0, item);
    return absl::OkStatus();
  }
  tf::PartialShape shape;
  TFJIT_RETURN_IF_ERROR(ElementShapeFromInput(ctx, *l, 2, &shape));
  // Like TF (parity with TensorArray.read): infer the shape from the set items if needed.
  if (!shape.IsFullyDefined())
    TFJIT_RETURN_IF_ERROR(MergeItemShapes(ctx, *l, AllIndices(*l), &shape));
  if (!shape.IsFullyDefined()) {
    return KernelError(ctx,
                       "Trying to read an uninitialized tensor but element_shape is not fully "
                       "defined: %s and no list element is set.",
                       shape.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(Tensor zeros, Zeros(ctx, l->element_dtype, shape.dims));
  ctx.set_output(0, std::move(zeros));
  return absl::OkStatus();
}

absl::Status TensorListSetItemKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  TFJIT_RETURN_IF_ERROR(CheckListDType(ctx, *l));
  TFJIT_ASSIGN_OR_RETURN(bool resize,
                         tf::GetBoolAttrOr(ctx.node(), "resize_if_index_out_of_bounds", false));
  int64_t index = 0;
  TFJIT_RETURN_IF_ERROR(IndexInput(ctx, 1, &index));
  const int64_t size = static_cast<int64_t>(l->items.size());
  if (index < 0 || (!resize && index >= size)) {
    return KernelError(ctx, "Trying to modify element %d in a list with %d elements.", index, size);
  }
  const Tensor& value = ctx.input(2);
  if (!ShapeCompatibleWithDims(l->element_shape, value.dims())) {
    return KernelError(ctx,
                       "Tried to set a tensor with incompatible shape at a list index. Item "
                       "element shape: %s list shape: %s",
                       DimsString(value.dims()), l->element_shape.ToString());
  }
  std::shared_ptr<TensorList> out = CopyList(*l);
  if (index >= size) out->items.resize(static_cast<size_t>(index) + 1);
  out->items[static_cast<size_t>(index)] = value;
  ctx.set_output(0, MakeListTensor(std::move(out)));
  return absl::OkStatus();
}

absl::Status TensorListResizeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  int64_t size = 0;
  TFJIT_RETURN_IF_ERROR(ScalarInput(ctx, 1, "size must be an int32 scalar, got ", &size));
  if (size < 0) {
    return KernelError(ctx, "TensorListSlice expects size to be non-negative. Got: %d", size);
  }
  std::shared_ptr<TensorList> out = CopyList(*l);
  out->items.resize(static_cast<size_t>(size));
  ctx.set_output(0, MakeListTensor(std::move(out)));
  return absl::OkStatus();
}

absl::Status TensorListStackKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  TFJIT_RETURN_IF_ERROR(CheckListDType(ctx, *l));
  TFJIT_ASSIGN_OR_RETURN(int64_t num_elements, tf::GetIntAttrOr(ctx.node(), "num_elements", -1));
  if (num_elements != -1 && static_cast<int64_t>(l->items.size()) != num_elements) {
    return KernelError(ctx,
                       "Operation expected a list with %d elements but got a list with %d "
                       "elements.",
                       num_elements, l->items.size());
  }
  tf::PartialShape shape;
  TFJIT_RETURN_IF_ERROR(ElementShapeFromInput(ctx, *l, 1, &shape));
  if (!shape.IsFullyDefined() && l->items.empty()) {
    return KernelError(
        ctx, "Tried to stack elements of an empty list with non-fully-defined element_shape: %s",
        shape.ToString());
  }
  const std::vector<int64_t> all = AllIndices(*l);
  TFJIT_RETURN_IF_ERROR(MergeItemShapes(ctx, *l, all, &shape));
  if (!shape.IsFullyDefined()) {
    return KernelError(ctx,
                       "Tried to stack list which only contains uninitialized tensors and has a "
                       "non-fully-defined element_shape: %s",
                       shape.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(Tensor out, StackItems(ctx, *l, all, shape.dims));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status TensorListGatherKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  TFJIT_RETURN_IF_ERROR(CheckListDType(ctx, *l));
  std::vector<int64_t> indices;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "indices", &indices));
  tf::PartialShape shape;
  TFJIT_RETURN_IF_ERROR(ElementShapeFromInput(ctx, *l, 2, &shape));
  if (!shape.IsFullyDefined() && indices.empty()) {
    return KernelError(ctx,
                       "Tried to gather 0-elements from a list with non-fully-defined shape: %s",
                       shape.ToString());
  }
  for (int64_t i : indices) {
    if (i < 0 || i >= static_cast<int64_t>(l->items.size())) {
      // (sic) TF's text says "out o range".
      return KernelError(ctx, "Index %d out o range; list only has %d elements.", i,
                         l->items.size());
    }
  }
  TFJIT_RETURN_IF_ERROR(MergeItemShapes(ctx, *l, indices, &shape));
  if (!shape.IsFullyDefined()) {
    return KernelError(ctx,
                       "Tried to gather uninitialized tensors from a list with "
                       "non-fully-defined element_shape: %s",
                       shape.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(Tensor out, StackItems(ctx, *l, indices, shape.dims));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// The shape of every dim but the first, or unknown rank.
tf::PartialShape DropFirstDim(const tf::PartialShape& shape) {
  if (shape.unknown_rank || shape.dims.empty()) return shape;
  return tf::PartialShape{std::vector<int64_t>(shape.dims.begin() + 1, shape.dims.end()), false};
}

// TensorListConcat(V2) steps 1-4 of TF: check the set items against `except0` (refining it)
// and infer the common leading dim when `first_dim` is unknown.
absl::Status CheckConcatItems(const KernelContext& ctx, const TensorList& l,
                              tf::PartialShape* except0, int64_t* first_dim) {
  if (l.element_shape.IsFullyDefined()) return absl::OkStatus();
  bool check_dim = *first_dim == -1;
  int64_t inferred = *first_dim;
  for (size_t i = 0; i < l.items.size(); ++i) {
    const Tensor& t = l.items[i];
    if (!t.valid()) continue;
    if (t.rank() == 0) {
      return KernelError(ctx,
                         "Concat saw a scalar shape at index %d but requires at least vectors.", i);
    }
    tf::PartialShape merged;
    TFJIT_RETURN_IF_ERROR(
        Located(ctx, MergeShapes(*except0, DropFirstDim(KnownShape(t.dims())), &merged)));
    *except0 = std::move(merged);
    if (*first_dim != -1 && *first_dim != t.dim(0)) {
      return KernelError(ctx,
                         "First entry of element_shape input does not match the first dim of "
                         "list element at index: %d Expected: %d Actual: %d",
                         i, *first_dim, t.dim(0));
    }
    if (check_dim) {
      if (inferred == -1) {
        inferred = t.dim(0);
      } else if (inferred != t.dim(0)) {
        inferred = -1;
        check_dim = false;
      }
    }
  }
  *first_dim = inferred;
  return absl::OkStatus();
}

// The leading dim of every item: its own, else the inferred one, else leading_dims[i] (V2).
absl::Status ConcatLengths(const KernelContext& ctx, const TensorList& l, int64_t first_dim,
                           std::vector<int64_t>* lengths) {
  const bool v2 = ctx.num_inputs() > 2;
  std::vector<int64_t> leading;
  if (v2) TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(2), "leading_dims", &leading));
  for (size_t i = 0; i < l.items.size(); ++i) {
    const Tensor& t = l.items[i];
    if (t.valid()) {
      lengths->push_back(t.dim(0));
    } else if ((!v2 || i >= leading.size()) && first_dim != -1) {
      lengths->push_back(first_dim);
    } else if (!v2) {
      return KernelError(ctx,
                         "Concating lists with uninitialized tensors is not supported in this "
                         "version of TensorListConcat. Consider updating your GraphDef to run "
                         "the newer version.");
    } else if (i >= leading.size()) {
      return KernelError(ctx,
                         "List contains uninitialized tensor at index %d but leading_dims has "
                         "only %d elements.",
                         i, leading.size());
    } else {
      lengths->push_back(leading[i]);
    }
  }
  return absl::OkStatus();
}

// The element shape TensorListConcat(V2) starts from: V2's input, V1's attr.
absl::Status ConcatElementShape(const KernelContext& ctx, const TensorList& l,
                                tf::PartialShape* except0, int64_t* first_dim) {
  if (ctx.num_inputs() == 1) {  // TensorListConcat: attr element_shape
    tf::PartialShape attr{{}, true};
    if (tf::FindAttr(ctx.node(), "element_shape") != nullptr) {
      TFJIT_ASSIGN_OR_RETURN(attr, tf::GetShapeAttr(ctx.node(), "element_shape"));
    }
    *except0 = DropFirstDim(attr);
    return absl::OkStatus();
  }
  tf::PartialShape shape;
  TFJIT_RETURN_IF_ERROR(ElementShapeFromInput(ctx, l, 1, &shape));
  if (!shape.unknown_rank && shape.dims.empty()) {
    return KernelError(ctx,
                       "Concat requires elements to be at least vectors, found scalars instead.");
  }
  *first_dim = shape.unknown_rank ? -1 : shape.dims[0];
  *except0 = DropFirstDim(shape);
  return absl::OkStatus();
}

absl::Status TensorListConcatKernel(KernelContext& ctx) {
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  TFJIT_RETURN_IF_ERROR(CheckListDType(ctx, *l));
  tf::PartialShape except0{{}, true};
  int64_t first_dim = -1;
  TFJIT_RETURN_IF_ERROR(ConcatElementShape(ctx, *l, &except0, &first_dim));
  if (l->items.empty() && !except0.IsFullyDefined()) {
    return KernelError(ctx,
                       "All except the first dimension must be fully defined when concating an "
                       "empty tensor list. element_shape: %s",
                       except0.ToString());
  }
  TFJIT_RETURN_IF_ERROR(CheckConcatItems(ctx, *l, &except0, &first_dim));
  if (!except0.IsFullyDefined()) {
    return KernelError(ctx,
                       "Trying to concat list with only uninitialized tensors but "
                       "element_shape_except_first_dim_ is not fully defined: %s",
                       except0.ToString());
  }
  std::vector<int64_t> lengths;
  TFJIT_RETURN_IF_ERROR(ConcatLengths(ctx, *l, first_dim, &lengths));
  if (DTypeSize(l->element_dtype) == 0) {
    return UnsupportedDType(ctx, l->element_dtype, "numeric and bool element types");
  }
  std::vector<int64_t> dims = except0.dims;
  int64_t total = 0;
  for (int64_t n : lengths) total += n;
  dims.insert(dims.begin(), total);
  Tensor out(l->element_dtype, dims);  // zero-filled: unset items stay zeros
  const size_t row_bytes =
      static_cast<size_t>(NumElements(except0.dims)) * DTypeSize(l->element_dtype);
  size_t offset = 0;
  for (size_t i = 0; i < l->items.size(); ++i) {
    const Tensor& t = l->items[i];
    if (t.valid()) CopyInto(t, out, offset);
    offset += static_cast<size_t>(lengths[i]) * row_bytes;
  }
  ctx.set_output(0, std::move(out));
  ctx.set_output(1, Tensor::FromVector<int64_t>(DType::kInt64,
                                                {static_cast<int64_t>(lengths.size())}, lengths));
  return absl::OkStatus();
}

absl::Status TensorListFromTensorKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& t = ctx.input(0);
  auto list = std::make_shared<TensorList>();
  TFJIT_RETURN_IF_ERROR(ShapeInput(ctx, 1, &list->element_shape));
  if (t.rank() == 0) {
    return KernelError(ctx, "Tensor must be at least a vector, but saw shape: %s",
                       DimsString(t.dims()));
  }
  const std::vector<int64_t> item_dims(t.dims().begin() + 1, t.dims().end());
  if (!ShapeCompatibleWithDims(list->element_shape, item_dims)) {
    return KernelError(ctx, "Specified a list with shape %s from a tensor with shape %s",
                       list->element_shape.ToString(), DimsString(item_dims));
  }
  list->element_dtype = t.dtype();
  for (int64_t i = 0; i < t.dim(0); ++i) list->items.push_back(SliceRow(t, i));
  ctx.set_output(0, MakeListTensor(std::move(list)));
  return absl::OkStatus();
}

// Reads a vector of non-negative indices (TF's Scatter messages); callers check the count.
absl::Status ReadScatterIndices(const KernelContext& ctx, int i, std::vector<int64_t>* out) {
  const Tensor& indices = ctx.input(i);
  if (indices.rank() != 1) {
    return KernelError(ctx, "Expected indices to be a vector, but received shape: %s",
                       DimsString(indices.dims()));
  }
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, indices, "indices", out));
  for (int64_t index : *out) {
    if (index < 0) {
      return KernelError(ctx, "Indices in TensorListScatter must all be non-negative.");
    }
  }
  return absl::OkStatus();
}

// TensorListScatter (3 inputs) and TensorListScatterV2 (4: + num_elements).
absl::Status TensorListScatterKernel(KernelContext& ctx) {
  const Tensor& t = ctx.input(0);
  auto list = std::make_shared<TensorList>();
  TFJIT_RETURN_IF_ERROR(ShapeInput(ctx, 2, &list->element_shape));
  int64_t num_elements = -1;
  if (ctx.num_inputs() >= 4) {
    TFJIT_RETURN_IF_ERROR(
        ScalarInput(ctx, 3, "num_elements must be an int32 scalar, got ", &num_elements));
  }
  if (num_elements < -1) {
    return KernelError(ctx, "TensorListScatter expects num_elements >= -1, found: %d",
                       num_elements);
  }
  if (t.rank() == 0) {
    return KernelError(ctx, "Tensor must be at least a vector, but saw shape: %s",
                       DimsString(t.dims()));
  }
  const std::vector<int64_t> item_dims(t.dims().begin() + 1, t.dims().end());
  if (!ShapeCompatibleWithDims(list->element_shape, item_dims)) {
    return KernelError(ctx, "Specified a list with shape %s from a tensor with shape %s",
                       list->element_shape.ToString(), DimsString(item_dims));
  }
  std::vector<int64_t> indices;
  TFJIT_RETURN_IF_ERROR(ReadScatterIndices(ctx, 1, &indices));
  if (static_cast<int64_t>(indices.size()) != t.dim(0)) {
    return KernelError(ctx, "Invalid number of rows in input tensor. Expected: %d Actual: %d",
                       indices.size(), t.dim(0));
  }
  int64_t highest = -1;
  for (int64_t i : indices) {
    if (num_elements != -1 && i >= num_elements) {
      return KernelError(ctx,
                         "TensorListScatter: Trying to scatter at index %d in list with size %d", i,
                         num_elements);
    }
    highest = std::max(highest, i);
  }
  list->element_dtype = t.dtype();
  list->items.resize(static_cast<size_t>(std::max(highest + 1, num_elements)));
  for (size_t k = 0; k < indices.size(); ++k) {
    list->items[static_cast<size_t>(indices[k])] = SliceRow(t, static_cast<int64_t>(k));
  }
  ctx.set_output(0, MakeListTensor(std::move(list)));
  return absl::OkStatus();
}

absl::Status TensorListScatterIntoExistingListKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const TensorList* l = nullptr;
  TFJIT_RETURN_IF_ERROR(GetInputList(ctx, 0, &l));
  const Tensor& t = ctx.input(1);
  if (t.dtype() != l->element_dtype) {
    return KernelError(ctx, "Invalid data types; input tensor type: %s list element_type: %s",
                       TfTypeString(t.dtype()), TfTypeString(l->element_dtype));
  }
  if (t.rank() == 0) {
    return KernelError(ctx, "Tensor must be at least a vector, but saw shape: %s",
                       DimsString(t.dims()));
  }
  const std::vector<int64_t> item_dims(t.dims().begin() + 1, t.dims().end());
  if (!ShapeCompatibleWithDims(l->element_shape, item_dims)) {
    return KernelError(ctx,
                       "Tried to set a tensor with incompatible shape at a list index. Item "
                       "element shape: %s list shape: %s",
                       DimsString(item_dims), l->element_shape.ToString());
  }
  std::vector<int64_t> indices;
  TFJIT_RETURN_IF_ERROR(ReadScatterIndices(ctx, 2, &indices));
  if (static_cast<int64_t>(indices.size()) != t.dim(0)) {
    return KernelError(ctx, "Expected len(indices) == tensor.shape[0], but saw: %d vs. %d",
                       indices.size(), t.dim(0));
  }
  std::shared_ptr<TensorList> out = CopyList(*l);
  for (size_t k = 0; k < indices.size(); ++k) {
    const size_t i = static_cast<size_t>(indices[k]);
    if (i >= out->items.size()) out->items.resize(i + 1);
    out->items[i] = SliceRow(t, static_cast<int64_t>(k));
  }
  ctx.set_output(0, MakeListTensor(std::move(out)));
  return absl::OkStatus();
}

// Checks TensorListSplit's element_shape against the tensor (all dims but the first).
absl::Status CheckSplitShape(const KernelContext& ctx, const Tensor& t,
                             const tf::PartialShape& shape) {
  if (!shape.unknown_rank && shape.dims.empty()) {
    return KernelError(ctx,
                       "TensorListSplit requires element_shape to be at least of rank 1, but "
                       "saw: %s",
                       shape.ToString());
  }
  if (t.rank() == 0) {
    return KernelError(ctx, "Tensor must be at least a vector, but saw shape: %s",
                       DimsString(t.dims()));
  }
  const std::vector<int64_t> rest(t.dims().begin() + 1, t.dims().end());
  if (!ShapesCompatible(DropFirstDim(shape), KnownShape(rest))) {
    return KernelError(ctx, "tensor shape %s is not compatible with element_shape %s",
                       DimsString(t.dims()), shape.ToString());
  }
  return absl::OkStatus();
}

absl::Status TensorListSplitKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& t = ctx.input(0);
  auto list = std::make_shared<TensorList>();
  TFJIT_RETURN_IF_ERROR(ShapeInput(ctx, 1, &list->element_shape));
  TFJIT_RETURN_IF_ERROR(CheckSplitShape(ctx, t, list->element_shape));
  const Tensor& lengths_t = ctx.input(2);
  if (lengths_t.rank() != 1) {
    return KernelError(ctx, "Expected lengths to be a vector, received shape: %s",
                       DimsString(lengths_t.dims()));
  }
  std::vector<int64_t> lengths;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, lengths_t, "lengths", &lengths));
  list->element_dtype = t.dtype();
  int64_t start = 0;
  for (int64_t length : lengths) {
    if (length < 0) return KernelError(ctx, "Invalid value in lengths: %d", length);
    const int64_t end = start + length;
    if (end > t.dim(0)) {
      return KernelError(ctx, "Attempting to slice [%d, %d] from tensor with length %d", start, end,
                         t.dim(0));
    }
    list->items.push_back(SliceRows(t, start, end));
    start = end;
  }
  if (start != t.dim(0)) {
    return KernelError(ctx, "Unused values in tensor. Length of tensor: %d Values used: %d",
                       t.dim(0), start);
  }
  ctx.set_output(0, MakeListTensor(std::move(list)));
  return absl::OkStatus();
}

}  // namespace
}  // namespace lists

void RegisterListKernels(KernelRegistry& registry) {
  using namespace lists;  // NOLINT: the kernels above
  registry.Register("EmptyTensorList", EmptyTensorListKernel);
  registry.Register("TensorListReserve", TensorListReserveKernel);
  registry.Register("TensorListLength", TensorListLengthKernel);
  registry.Register("TensorListElementShape", TensorListElementShapeKernel);
  registry.Register("TensorListPushBack", TensorListPushBackKernel);
  registry.Register("TensorListPopBack", TensorListPopBackKernel);
  registry.Register("TensorListGetItem", TensorListGetItemKernel);
  registry.Register("TensorListSetItem", TensorListSetItemKernel);
  registry.Register("TensorListResize", TensorListResizeKernel);
  registry.Register("TensorListStack", TensorListStackKernel);
  registry.Register("TensorListGather", TensorListGatherKernel);
  registry.Register("TensorListConcat", TensorListConcatKernel);
  registry.Register("TensorListConcatV2", TensorListConcatKernel);
  registry.Register("TensorListFromTensor", TensorListFromTensorKernel);
  registry.Register("TensorListScatter", TensorListScatterKernel);
  registry.Register("TensorListScatterV2", TensorListScatterKernel);
  registry.Register("TensorListScatterIntoExistingList", TensorListScatterIntoExistingListKernel);
  registry.Register("TensorListSplit", TensorListSplitKernel);
}

}  // namespace tfjit::runtime
