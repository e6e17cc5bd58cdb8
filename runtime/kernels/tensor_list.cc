// TensorList printing, the partial-shape helpers and the kernel-side list helpers shared by the
// list and TensorArray kernels.
#include "runtime/kernels/tensor_list.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {

std::string TensorList::DebugString() const {
  int64_t set = 0;
  for (const Tensor& t : items) set += t.valid() ? 1 : 0;
  return absl::StrCat("TensorList<", DTypeName(element_dtype), ", ", element_shape.ToString(),
                      "> with ", items.size(), " items (", set, " set)");
}

Tensor MakeListTensor(std::shared_ptr<const TensorList> list) {
  return Tensor::FromObject(DType::kVariant, std::move(list));
}

namespace lists {

const char* TfTypeString(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    case DType::kFloat16:
      return "half";
    default:
      return DTypeName(dtype);  // int32, bool, bfloat16, variant ... match TF already.
  }
}

absl::Status PartialShapeFromTensor(const Tensor& t, tf::PartialShape* out) {
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64) {
    return InvalidArgument("Expected an int32 or int64 shape tensor; found %s",
                           TfTypeString(t.dtype()));
  }
  auto at = [&](int64_t i) {
    return t.dtype() == DType::kInt32 ? int64_t{t.data<int32_t>()[i]} : t.data<int64_t>()[i];
  };
  if (t.rank() == 0) {
    if (at(0) == -1) {
      *out = tf::PartialShape{{}, true};
      return absl::OkStatus();
    }
    return InvalidArgument(
        "The only valid scalar shape tensor is the fully unknown shape specified as -1.");
  }
  if (t.rank() != 1)
    return InvalidArgument("Shape must be at most rank 1 but is rank %d", t.rank());
  tf::PartialShape shape;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const int64_t d = at(i);
    if (d < -1) return InvalidArgument("Dimension %d must be >= -1", d);
    shape.dims.push_back(d);
  }
  *out = std::move(shape);
  return absl::OkStatus();
}

bool ShapesCompatible(const tf::PartialShape& a, const tf::PartialShape& b) {
  if (a.unknown_rank || b.unknown_rank) return true;
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] >= 0 && b.dims[i] >= 0 && a.dims[i] != b.dims[i]) return false;
  }
  return true;
}

bool ShapeCompatibleWithDims(const tf::PartialShape& a, const std::vector<int64_t>& dims) {
  return ShapesCompatible(a, KnownShape(dims));
}

absl::Status MergeShapes(const tf::PartialShape& a, const tf::PartialShape& b,
                         tf::PartialShape* out) {
  if (a.unknown_rank) {
    *out = b;
    return absl::OkStatus();
  }
  if (b.unknown_rank) {
    *out = a;
    return absl::OkStatus();
  }
  if (a.dims.size() != b.dims.size()) {
    return InvalidArgument("PartialTensorShape: Incompatible ranks during merge: %d vs. %d",
                           a.dims.size(), b.dims.size());
  }
  tf::PartialShape merged;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] >= 0 && b.dims[i] >= 0 && a.dims[i] != b.dims[i]) {
      return InvalidArgument("PartialTensorShape: Incompatible shapes during merge: %s vs. %s",
                             a.ToString(), b.ToString());
    }
    merged.dims.push_back(a.dims[i] >= 0 ? a.dims[i] : b.dims[i]);
  }
  *out = std::move(merged);
  return absl::OkStatus();
}

tf::PartialShape KnownShape(const std::vector<int64_t>& dims) {
  return tf::PartialShape{dims, false};
}

void CopyInto(const Tensor& src, Tensor& dst, size_t offset) {
  if (src.byte_size() == 0) return;
  std::memcpy(static_cast<char*>(dst.raw_data()) + offset, src.raw_data(), src.byte_size());
}

Tensor SliceRows(const Tensor& t, int64_t begin, int64_t end) {
  std::vector<int64_t> dims = t.dims();
  dims[0] = end - begin;
  Tensor out(t.dtype(), dims);
  const size_t row_bytes = t.dim(0) == 0 ? 0 : t.byte_size() / static_cast<size_t>(t.dim(0));
  if (out.byte_size() > 0) {
    std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + row_bytes * begin,
                out.byte_size());
  }
  return out;
}

Tensor SliceRow(const Tensor& t, int64_t i) {
  Tensor row = SliceRows(t, i, i + 1);
  return row.Reshaped(std::vector<int64_t>(t.dims().begin() + 1, t.dims().end()));
}

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

absl::Status Located(const KernelContext& ctx, const absl::Status& status) {
  if (status.ok()) return status;
  return NodeError(ctx, status.message());
}

absl::Status GetInputList(const KernelContext& ctx, int i, const TensorList** out) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 0) {
    return KernelError(ctx, "Input list must be a scalar saw: %s", DimsString(t.dims()));
  }
  *out = t.object_as<TensorList>();
  if (*out == nullptr) {
    return KernelError(ctx, "Input handle is not a list. Saw: '%s'",
                       t.object() != nullptr ? t.object()->DebugString() : t.ShapeString());
  }
  return absl::OkStatus();
}

absl::Status CheckListDType(const KernelContext& ctx, const TensorList& l) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "element_dtype"));
  if (dtype == l.element_dtype) return absl::OkStatus();
  return KernelError(ctx, "Invalid data types; op elements %s but list elements %s",
                     TfTypeString(dtype), TfTypeString(l.element_dtype));
}

absl::Status ScalarInput(const KernelContext& ctx, int i, absl::string_view not_scalar,
                         int64_t* out) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 0 || (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)) {
    return KernelError(ctx, "%s%s", not_scalar, t.ShapeString());
  }
  *out = t.dtype() == DType::kInt32 ? int64_t{t.data<int32_t>()[0]} : t.data<int64_t>()[0];
  return absl::OkStatus();
}

absl::Status ShapeInput(const KernelContext& ctx, int i, tf::PartialShape* out) {
  return Located(ctx, PartialShapeFromTensor(ctx.input(i), out));
}

absl::Status ElementShapeFromInput(const KernelContext& ctx, const TensorList& l, int i,
                                   tf::PartialShape* out) {
  tf::PartialShape in;
  TFJIT_RETURN_IF_ERROR(ShapeInput(ctx, i, &in));
  return Located(ctx, MergeShapes(in, l.element_shape, out));
}

absl::Status MergeItemShapes(const KernelContext& ctx, const TensorList& l,
                             const std::vector<int64_t>& indices, tf::PartialShape* shape) {
  if (l.element_shape.IsFullyDefined()) return absl::OkStatus();
  for (int64_t i : indices) {
    const Tensor& t = l.items[static_cast<size_t>(i)];
    if (!t.valid()) continue;
    tf::PartialShape merged;
    TFJIT_RETURN_IF_ERROR(Located(ctx, MergeShapes(*shape, KnownShape(t.dims()), &merged)));
    *shape = std::move(merged);
  }
  return absl::OkStatus();
}

std::vector<int64_t> AllIndices(const TensorList& l) {
  std::vector<int64_t> all(l.items.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  return all;
}

absl::StatusOr<Tensor> Zeros(const KernelContext& ctx, DType dtype,
                             const std::vector<int64_t>& dims) {
  if (DTypeSize(dtype) == 0) {
    return KernelError(ctx, "an unset item of a %s list has no zero value; set it first",
                       TfTypeString(dtype));
  }
  return Tensor(dtype, dims);
}

absl::StatusOr<Tensor> StackItems(const KernelContext& ctx, const TensorList& l,
                                  const std::vector<int64_t>& indices,
                                  const std::vector<int64_t>& element_dims) {
  if (DTypeSize(l.element_dtype) == 0) {
    return UnsupportedDType(ctx, l.element_dtype, "numeric and bool element types");
  }
  std::vector<int64_t> dims = element_dims;
  dims.insert(dims.begin(), static_cast<int64_t>(indices.size()));
  Tensor out(l.element_dtype, dims);  // zero-filled: unset items need no copy
  const size_t item_bytes =
      static_cast<size_t>(NumElements(element_dims)) * DTypeSize(l.element_dtype);
  for (size_t k = 0; k < indices.size(); ++k) {
    const Tensor& t = l.items[static_cast<size_t>(indices[k])];
    if (!t.valid()) continue;
    if (t.dims() != element_dims) {
      return KernelError(ctx, "Incompatible shapes: list element %d has shape %s, expected %s",
                         indices[k], DimsString(t.dims()), DimsString(element_dims));
    }
    CopyInto(t, out, k * item_bytes);
  }
  return out;
}

}  // namespace lists
}  // namespace tfjit::runtime
