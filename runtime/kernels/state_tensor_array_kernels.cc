// TF1 TensorArray kernels: TensorArrayV3 creates a fresh array; Write/Read/Gather/Scatter/
// Concat/Split/Size/Close V3 act on it through the handle, with TF's messages; GradV3 gives
// its gradient array (writes aggregate). Flow inputs
// only order the ops in the graph; flow outputs pass the input flow through.
#include "runtime/kernels/state_tensor_array_kernels.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/run_control.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor_list.h"

namespace tfjit::runtime {

using lists::KnownShape;

TensorArray::TensorArray(Options options)
    : name_(std::move(options.name)),
      dtype_(options.dtype),
      dynamic_size_(options.dynamic_size),
      clear_after_read_(options.clear_after_read),
      identical_element_shapes_(options.identical_element_shapes),
      multiple_writes_aggregate_(options.multiple_writes_aggregate),
      element_shape_(std::move(options.element_shape)),
      slots_(static_cast<size_t>(options.size)) {}

absl::Status TensorArray::CheckOpenLocked() const {
  if (closed_) return InvalidArgument("TensorArray %s has already been closed.", name_);
  return absl::OkStatus();
}

absl::Status TensorArray::WriteLocked(int64_t index, const Tensor& value) {
  const int64_t size = static_cast<int64_t>(slots_.size());
  if (index < 0 || (!dynamic_size_ && index >= size)) {
    return InvalidArgument(
        "TensorArray %s: Tried to write to index %d but array is not resizeable and size is: %d",
        name_, index, size);
  }
  if (index >= size) {
    // A dynamic array grows to the index written: refuse indices no memory holds.
    int64_t bytes = -1;
    if (index < std::numeric_limits<int64_t>::max() / static_cast<int64_t>(sizeof(Slot))) {
      bytes = (index + 1) * static_cast<int64_t>(sizeof(Slot));
    }
    TFJIT_RETURN_IF_ERROR(CheckAllocation(bytes, absl::StrCat("slots for index ", index),
                                          absl::StrCat("TensorArray ", name_)));
    slots_.resize(static_cast<size_t>(index) + 1);
  }
  Slot& slot = slots_[static_cast<size_t>(index)];
  if (value.dtype() != dtype_) {
    return InvalidArgument(
        "TensorArray %s: Could not write to TensorArray index %d because the value dtype is %s "
        "but TensorArray dtype is %s.",
        name_, index, lists::TfTypeString(value.dtype()), lists::TfTypeString(dtype_));
  }
  if (!lists::ShapeCompatibleWithDims(element_shape_, value.dims())) {
    return InvalidArgument(
        "TensorArray %s: Could not write to TensorArray index %d because the value shape is %s "
        "which is incompatible with the TensorArray's inferred element shape: %s (consider "
        "setting infer_shape=False).",
        name_, index, DimsString(value.dims()), element_shape_.ToString());
  }
  if (identical_element_shapes_ && !element_shape_.IsFullyDefined()) {
    element_shape_ = KnownShape(value.dims());
  }
  if (slot.read) {
    return InvalidArgument(
        "TensorArray %s: Could not write to TensorArray index %d because it has already been "
        "read.",
        name_, index);
  }
  if (slot.written && multiple_writes_aggregate_) {
    // A gradient array adds a second write to the first (TF's AddToTensor).
    if (slot.shape != value.dims()) {
      return InvalidArgument(
          "TensorArray %s: Could not aggregate to TensorArray index %d because the existing "
          "shape is %s but the new input shape is %s.",
          name_, index, DimsString(slot.shape), DimsString(value.dims()));
    }
    Tensor sum(dtype_, slot.shape);
    const bool added = DispatchNumeric(dtype_, [&](auto tag) {
      using T = decltype(tag);
      const T* a = slot.tensor.data<T>();
      const T* b = value.data<T>();
      T* out = sum.data<T>();
      for (int64_t i = 0; i < sum.num_elements(); ++i) {
        if constexpr (std::is_arithmetic_v<T>) {
          out[i] = static_cast<T>(a[i] + b[i]);
        } else {  // 16-bit floats add in float
          out[i] = static_cast<T>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
        }
      }
    });
    if (!added) {
      return InvalidArgument("TensorArray %s: cannot aggregate writes of %s", name_,
                             lists::TfTypeString(dtype_));
    }
    slot.tensor = std::move(sum);
    return absl::OkStatus();
  }
  if (slot.written) {
    return InvalidArgument(
        "TensorArray %s: Could not write to TensorArray index %d because it has already been "
        "written to.",
        name_, index);
  }
  slot.tensor = value;
  slot.shape = value.dims();
  slot.written = true;
  return absl::OkStatus();
}

absl::Status TensorArray::ReadLocked(int64_t index, Tensor* value) {
  if (index < 0 || index >= static_cast<int64_t>(slots_.size())) {
    return InvalidArgument("Tried to read from index %d but array size is: %d", index,
                           slots_.size());
  }
  Slot& slot = slots_[static_cast<size_t>(index)];
  if (!slot.written) {
    // An unwritten slot reads as zeros of the element shape, which must then be known.
    if (!element_shape_.IsFullyDefined()) {
      return InvalidArgument(
          "TensorArray %s: Could not read from TensorArray index %d.  Furthermore, the element "
          "shape is not fully defined: %s.  It is possible you are working with a resizeable "
          "TensorArray and stop_gradients is not allowing the gradients to be written.  If you "
          "set the full element_shape property on the forward TensorArray, the proper "
          "all-zeros tensor will be returned instead of incurring this error.",
          name_, index, element_shape_.ToString());
    }
    if (DTypeSize(dtype_) == 0) {
      return InvalidArgument("TensorArray %s: unwritten index %d of a %s array has no zero value",
                             name_, index, lists::TfTypeString(dtype_));
    }
    slot.shape = element_shape_.dims;
    slot.tensor = Tensor(dtype_, slot.shape);
    slot.written = true;
  }
  if (slot.cleared) {
    return InvalidArgument(
        "TensorArray %s: Could not read index %d twice because it was cleared after a previous "
        "read (perhaps try setting clear_after_read = false?).",
        name_, index);
  }
  *value = slot.tensor;
  if (clear_after_read_) {
    slot.tensor = Tensor();
    slot.cleared = true;
  }
  slot.read = true;
  return absl::OkStatus();
}

absl::Status TensorArray::WriteMany(const std::vector<int64_t>& indices,
                                    const std::vector<Tensor>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  TFJIT_RETURN_IF_ERROR(CheckOpenLocked());
  for (size_t k = 0; k < indices.size(); ++k) {
    TFJIT_RETURN_IF_ERROR(WriteLocked(indices[k], values[k]));
  }
  return absl::OkStatus();
}

absl::Status TensorArray::ReadMany(const std::vector<int64_t>& indices,
                                   std::vector<Tensor>* values) {
  std::lock_guard<std::mutex> lock(mu_);
  TFJIT_RETURN_IF_ERROR(CheckOpenLocked());
  values->resize(indices.size());
  for (size_t k = 0; k < indices.size(); ++k) {
    TFJIT_RETURN_IF_ERROR(ReadLocked(indices[k], &(*values)[k]));
  }
  return absl::OkStatus();
}

absl::Status TensorArray::Size(int64_t* size) const {
  std::lock_guard<std::mutex> lock(mu_);
  TFJIT_RETURN_IF_ERROR(CheckOpenLocked());
  *size = static_cast<int64_t>(slots_.size());
  return absl::OkStatus();
}

absl::Status TensorArray::ElementShape(tf::PartialShape* shape) const {
  std::lock_guard<std::mutex> lock(mu_);
  TFJIT_RETURN_IF_ERROR(CheckOpenLocked());
  *shape = element_shape_;
  return absl::OkStatus();
}

absl::Status TensorArray::MergeElementShape(const tf::PartialShape& shape) {
  std::lock_guard<std::mutex> lock(mu_);
  TFJIT_RETURN_IF_ERROR(CheckOpenLocked());
  tf::PartialShape merged;
  TFJIT_RETURN_IF_ERROR(lists::MergeShapes(element_shape_, shape, &merged));
  element_shape_ = std::move(merged);
  return absl::OkStatus();
}

void TensorArray::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  slots_.clear();
  closed_ = true;
}

absl::StatusOr<std::shared_ptr<TensorArray>> TensorArray::GradientArray(const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  TFJIT_RETURN_IF_ERROR(CheckOpenLocked());
  std::shared_ptr<TensorArray>& grad = gradients_[source];
  if (grad == nullptr) {
    Options o;
    o.name = absl::StrCat(name_, "@", source);
    o.dtype = dtype_;
    o.element_shape = element_shape_;
    o.size = static_cast<int64_t>(slots_.size());
    o.identical_element_shapes = identical_element_shapes_;
    o.multiple_writes_aggregate = true;
    grad = std::make_shared<TensorArray>(std::move(o));
  }
  return grad;
}

std::string TensorArrayHandle::DebugString() const {
  return absl::StrCat("TensorArray '", array_->name(), "' of ", DTypeName(array_->dtype()));
}

namespace {

using lists::Located;

std::atomic<int64_t> tensor_array_counter{0};

absl::Status GetArray(const KernelContext& ctx, TensorArray** out) {
  const Tensor& t = ctx.input(0);
  const TensorArrayHandle* h = t.object_as<TensorArrayHandle>();
  if (h == nullptr) {
    return KernelError(ctx, "Input handle is not a TensorArray. Saw: '%s'",
                       t.object() != nullptr ? t.object()->DebugString() : t.ShapeString());
  }
  *out = h->array();
  return absl::OkStatus();
}

absl::Status IndexVector(const KernelContext& ctx, int i, absl::string_view what,
                         std::vector<int64_t>* out) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 1) {
    return KernelError(ctx, "Expected %s to be a vector, but received shape: %s", what,
                       DimsString(t.dims()));
  }
  return ReadIndexVector(ctx, t, what, out);
}

absl::Status CheckWriteDType(const KernelContext& ctx, const TensorArray& ta, const Tensor& v) {
  if (v.dtype() == ta.dtype()) return absl::OkStatus();
  return KernelError(ctx, "TensorArray dtype is %s but Op is trying to write dtype %s.",
                     lists::TfTypeString(ta.dtype()), lists::TfTypeString(v.dtype()));
}

absl::Status CheckReadDType(const KernelContext& ctx, const TensorArray& ta) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  if (dtype == ta.dtype()) return absl::OkStatus();
  return KernelError(ctx, "TensorArray dtype is %s but Op requested dtype %s.",
                     lists::TfTypeString(ta.dtype()), lists::TfTypeString(dtype));
}

absl::Status TensorArrayV3Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& size = ctx.input(0);
  if (size.rank() != 0 || (size.dtype() != DType::kInt32 && size.dtype() != DType::kInt64)) {
    return KernelError(ctx, "TensorArray size must be scalar, but had shape: %s",
                       DimsString(size.dims()));
  }
  TensorArray::Options o;
  o.size = ElementAsInt64(size, 0);
  if (o.size < 0) return KernelError(ctx, "Size should be >= 0.");
  // Its slots are allocated now: refuse sizes no memory holds.
  TFJIT_RETURN_IF_ERROR(
      CheckOutputShape(ctx, DType::kInt64, {o.size, sizeof(Tensor) / 8}, "the array's slots"));
  const tf::Node& node = ctx.node();
  TFJIT_ASSIGN_OR_RETURN(o.dtype, tf::GetTypeAttr(node, "dtype"));
  if (tf::FindAttr(node, "element_shape") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(o.element_shape, tf::GetShapeAttr(node, "element_shape"));
  }
  TFJIT_ASSIGN_OR_RETURN(o.dynamic_size, tf::GetBoolAttrOr(node, "dynamic_size", false));
  TFJIT_ASSIGN_OR_RETURN(o.clear_after_read, tf::GetBoolAttrOr(node, "clear_after_read", true));
  TFJIT_ASSIGN_OR_RETURN(o.identical_element_shapes,
                         tf::GetBoolAttrOr(node, "identical_element_shapes", false));
  TFJIT_ASSIGN_OR_RETURN(std::string name, tf::GetStringAttrOr(node, "tensor_array_name", ""));
  if (name.empty()) name = node.name();
  o.name = absl::StrCat(name, "_", tensor_array_counter.fetch_add(1));
  auto handle = std::make_shared<TensorArrayHandle>(std::make_shared<TensorArray>(std::move(o)));
  ctx.set_output(0, Tensor::FromObject(DType::kResource, std::move(handle)));
  ctx.set_output(1, Tensor::FromVector<float>(DType::kFloat32, {}, {0.0f}));
  return absl::OkStatus();
}

// TensorArrayGradV3(handle, flow_in; source) -> (grad_handle, flow_out): the forward array's
// gradient array for `source`, made once (TF's TensorArrayGradOp).
absl::Status TensorArrayGradV3Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const TensorArrayHandle* h = ctx.input(0).object_as<TensorArrayHandle>();
  if (h == nullptr) {
    return KernelError(ctx, "Input handle is not a TensorArray. Saw: '%s'",
                       ctx.input(0).ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(std::string source, tf::GetStringAttrOr(ctx.node(), "source", ""));
  if (source.empty()) {
    return KernelError(ctx,
                       "TensorArrayGrad: the source attr must be set (TF's "
                       "tf.gradients sets it to the gradient's name scope)");
  }
  absl::StatusOr<std::shared_ptr<TensorArray>> grad = h->array()->GradientArray(source);
  if (!grad.ok()) return KernelError(ctx, "%s", grad.status().message());
  auto handle = std::make_shared<TensorArrayHandle>(*std::move(grad));
  ctx.set_output(0, Tensor::FromObject(DType::kResource, std::move(handle)));
  ctx.set_output(1, ctx.input(1));
  return absl::OkStatus();
}

absl::Status TensorArrayWriteV3Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  TensorArray* ta = nullptr;
  TFJIT_RETURN_IF_ERROR(GetArray(ctx, &ta));
  TFJIT_RETURN_IF_ERROR(CheckWriteDType(ctx, *ta, ctx.input(2)));
  int64_t index = 0;
  TFJIT_RETURN_IF_ERROR(lists::ScalarInput(ctx, 1, "index must be an int32 scalar, got ", &index));
  TFJIT_RETURN_IF_ERROR(Located(ctx, ta->Write(index, ctx.input(2))));
  ctx.set_output(0, ctx.input(3));
  return absl::OkStatus();
}

absl::Status TensorArrayReadV3Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  TensorArray* ta = nullptr;
  TFJIT_RETURN_IF_ERROR(GetArray(ctx, &ta));
  TFJIT_RETURN_IF_ERROR(CheckReadDType(ctx, *ta));
  int64_t index = 0;
  TFJIT_RETURN_IF_ERROR(lists::ScalarInput(ctx, 1, "index must be an int32 scalar, got ", &index));
  std::vector<Tensor> values;
  TFJIT_RETURN_IF_ERROR(Located(ctx, ta->ReadMany({index}, &values)));
  ctx.set_output(0, std::move(values[0]));
  return absl::OkStatus();
}

absl::Status TensorArraySizeV3Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TensorArray* ta = nullptr;
  TFJIT_RETURN_IF_ERROR(GetArray(ctx, &ta));
  int64_t size = 0;
  TFJIT_RETURN_IF_ERROR(Located(ctx, ta->Size(&size)));
  ctx.set_output(0, Tensor::FromVector<int32_t>(DType::kInt32, {}, {static_cast<int32_t>(size)}));
  return absl::OkStatus();
}

absl::Status TensorArrayCloseV3Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TensorArray* ta = nullptr;
  TFJIT_RETURN_IF_ERROR(GetArray(ctx, &ta));
  ta->Close();
  return absl::OkStatus();
}

// Lays `values` out one after another in a new tensor of `out_dims` (stack or concat).
Tensor JoinValues(DType dtype, const std::vector<Tensor>& values,
                  const std::vector<int64_t>& out_dims) {
  Tensor out(dtype, out_dims);
  size_t offset = 0;
  for (const Tensor& v : values) {
    lists::CopyInto(v, out, offset);
    offset += v.byte_size();
  }
  return out;
}

absl::Status TensorArrayGatherV3Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  TensorArray* ta = nullptr;
  TFJIT_RETURN_IF_ERROR(GetArray(ctx, &ta));
  TFJIT_RETURN_IF_ERROR(CheckReadDType(ctx, *ta));
  std::vector<int64_t> indices;
  TFJIT_RETURN_IF_ERROR(IndexVector(ctx, 1, "indices", &indices));
  if (tf::FindAttr(ctx.node(), "element_shape") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(tf::PartialShape attr, tf::GetShapeAttr(ctx.node(), "element_shape"));
    TFJIT_RETURN_IF_ERROR(Located(ctx, ta->MergeElementShape(attr)));
  }
  if (DTypeSize(ta->dtype()) == 0) {
    return UnsupportedDType(ctx, ta->dtype(), "numeric and bool element types");
  }
  if (indices.empty()) {
    tf::PartialShape shape;
    TFJIT_RETURN_IF_ERROR(Located(ctx, ta->ElementShape(&shape)));
    if (!shape.IsFullyDefined()) {
      return KernelError(ctx,
                         "TensorArray has size zero, but element shape %s is not fully defined. "
                         "Currently only static shapes are supported when packing zero-size "
                         "TensorArrays.",
                         shape.ToString());
    }
    std::vector<int64_t> dims = shape.dims;
    dims.insert(dims.begin(), 0);
    ctx.set_output(0, JoinValues(ta->dtype(), {}, dims));
    return absl::OkStatus();
  }
  std::vector<Tensor> values;
  TFJIT_RETURN_IF_ERROR(Located(ctx, ta->ReadMany(indices, &values)));
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i].dims() != values[0].dims()) {
      return KernelError(ctx,
                         "TensorArray has inconsistent shapes.  Index 0 has shape: %s but index "
                         "%d has shape: %s",
                         DimsString(values[0].dims()), i, DimsString(values[i].dims()));
    }
  }
  std::vector<int64_t> dims = values[0].dims();
  dims.insert(dims.begin(), static_cast<int64_t>(values.size()));
  ctx.set_output(0, JoinValues(ta->dtype(), values, dims));
  return absl::OkStatus();
}

// The dims of `t` but the first.
std::vector<int64_t> Except0(const Tensor& t) {
  return std::vector<int64_t>(t.dims().begin() + 1, t.dims().end());
}

absl::Status TensorArrayConcatV3Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TensorArray* ta = nullptr;
  TFJIT_RETURN_IF_ERROR(GetArray(ctx, &ta));
  TFJIT_RETURN_IF_ERROR(CheckReadDType(ctx, *ta));
  if (DTypeSize(ta->dtype()) == 0) {
    return UnsupportedDType(ctx, ta->dtype(), "numeric and bool element types");
  }
  int64_t size = 0;
  TFJIT_RETURN_IF_ERROR(Located(ctx, ta->Size(&size)));
  if (size == 0) {
    tf::PartialShape except0{{}, true};
    if (tf::FindAttr(ctx.node(), "element_shape_except0") != nullptr) {
      TFJIT_ASSIGN_OR_RETURN(except0, tf::GetShapeAttr(ctx.node(), "element_shape_except0"));
    }
    if (!except0.IsFullyDefined()) {
      return KernelError(ctx,
                         "TensorArray has size zero, but element_shape_except0 %s is not fully "
                         "defined. Currently only static shapes are supported when concatenating "
                         "zero-size TensorArrays.",
                         except0.ToString());
    }
    std::vector<int64_t> dims = except0.dims;
    dims.insert(dims.begin(), 0);
    ctx.set_output(0, JoinValues(ta->dtype(), {}, dims));
    ctx.set_output(1, Tensor(DType::kInt64, {0}));
    return absl::OkStatus();
  }
  std::vector<int64_t> all(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) all[static_cast<size_t>(i)] = i;
  std::vector<Tensor> values;
  TFJIT_RETURN_IF_ERROR(Located(ctx, ta->ReadMany(all, &values)));
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].rank() == 0) {
      return KernelError(ctx,
                         "Concat saw a scalar shape at index %d but requires at least vectors.  "
                         "Did you mean to call TensorArray::Pack instead?",
                         i);
    }
    if (Except0(values[i]) != Except0(values[0])) {
      return KernelError(ctx,
                         "TensorArray has inconsistent shapes.  Index 0 has (excepting "
                         "dimension 0) shape: %s but index %d has (excepting dimension 0) "
                         "shape: %s",
                         DimsString(Except0(values[0])), i, DimsString(Except0(values[i])));
    }
    lengths.push_back(values[i].dim(0));
  }
  int64_t total = 0;
  for (int64_t n : lengths) total += n;
  std::vector<int64_t> dims = Except0(values[0]);
  dims.insert(dims.begin(), total);
  ctx.set_output(0, JoinValues(ta->dtype(), values, dims));
  ctx.set_output(1, Tensor::FromVector<int64_t>(DType::kInt64,
                                                {static_cast<int64_t>(lengths.size())}, lengths));
  return absl::OkStatus();
}

absl::Status TensorArrayScatterV3Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  TensorArray* ta = nullptr;
  TFJIT_RETURN_IF_ERROR(GetArray(ctx, &ta));
  const Tensor& value = ctx.input(2);
  TFJIT_RETURN_IF_ERROR(CheckWriteDType(ctx, *ta, value));
  if (value.rank() == 0) {
    return KernelError(ctx, "Expected value to be at least a vector, but received shape: %s",
                       DimsString(value.dims()));
  }
  std::vector<int64_t> indices;
  TFJIT_RETURN_IF_ERROR(IndexVector(ctx, 1, "indices", &indices));
  if (static_cast<int64_t>(indices.size()) != value.dim(0)) {
    return KernelError(ctx, "Expected len(indices) == values.shape[0], but saw: %d vs. %d",
                       indices.size(), value.dim(0));
  }
  int64_t size = 0;
  TFJIT_RETURN_IF_ERROR(Located(ctx, ta->Size(&size)));
  const int64_t max_index =
      indices.empty() ? -1 : *std::max_element(indices.begin(), indices.end());
  if (!ta->dynamic_size() && max_index >= size) {
    return KernelError(ctx, "Max scatter index must be < array size (%d vs. %d)", max_index, size);
  }
  std::vector<Tensor> rows;
  for (int64_t k = 0; k < value.dim(0); ++k) rows.push_back(lists::SliceRow(value, k));
  TFJIT_RETURN_IF_ERROR(Located(ctx, ta->WriteMany(indices, rows)));
  ctx.set_output(0, ctx.input(3));
  return absl::OkStatus();
}

absl::Status TensorArraySplitV3Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 4));
  TensorArray* ta = nullptr;
  TFJIT_RETURN_IF_ERROR(GetArray(ctx, &ta));
  const Tensor& value = ctx.input(1);
  TFJIT_RETURN_IF_ERROR(CheckWriteDType(ctx, *ta, value));
  const Tensor& lengths_t = ctx.input(2);
  if (lengths_t.rank() != 1) {
    return KernelError(ctx, "Expected lengths to be a vector, received shape: %s",
                       DimsString(lengths_t.dims()));
  }
  std::vector<int64_t> lengths;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, lengths_t, "lengths", &lengths));
  if (value.rank() == 0) {
    return KernelError(ctx, "Expected value to be at least a vector, but received shape: %s",
                       DimsString(value.dims()));
  }
  int64_t total = 0;
  for (int64_t n : lengths) {
    if (n < 0) return KernelError(ctx, "Invalid value in lengths: %d", n);
    total += n;
  }
  if (total != value.dim(0)) {
    return KernelError(ctx,
                       "Expected sum of lengths to be equal to values.shape[0], but sum of "
                       "lengths is: %d and value's shape is: %s",
                       total, DimsString(value.dims()));
  }
  int64_t size = 0;
  TFJIT_RETURN_IF_ERROR(Located(ctx, ta->Size(&size)));
  const int64_t n = static_cast<int64_t>(lengths.size());
  if (!ta->dynamic_size() && size != n) {
    return KernelError(ctx,
                       "TensorArray's size is not equal to the size of lengths (%d vs. %d), and "
                       "the TensorArray is not marked as dynamically resizeable",
                       n, size);
  }
  std::vector<int64_t> indices;
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t i = 0; i < n; ++i) {
    indices.push_back(i);
    pieces.push_back(lists::SliceRows(value, start, start + lengths[static_cast<size_t>(i)]));
    start += lengths[static_cast<size_t>(i)];
  }
  TFJIT_RETURN_IF_ERROR(Located(ctx, ta->WriteMany(indices, pieces)));
  ctx.set_output(0, ctx.input(3));
  return absl::OkStatus();
}

}  // namespace

void RegisterTensorArrayKernels(KernelRegistry& registry) {
  registry.Register("TensorArrayV3", TensorArrayV3Kernel);
  registry.Register("TensorArrayWriteV3", TensorArrayWriteV3Kernel);
  registry.Register("TensorArrayReadV3", TensorArrayReadV3Kernel);
  registry.Register("TensorArraySizeV3", TensorArraySizeV3Kernel);
  registry.Register("TensorArrayCloseV3", TensorArrayCloseV3Kernel);
  registry.Register("TensorArrayGatherV3", TensorArrayGatherV3Kernel);
  registry.Register("TensorArrayConcatV3", TensorArrayConcatV3Kernel);
  registry.Register("TensorArrayGradV3", TensorArrayGradV3Kernel);
  registry.Register("TensorArrayScatterV3", TensorArrayScatterV3Kernel);
  registry.Register("TensorArraySplitV3", TensorArraySplitV3Kernel);
}

}  // namespace tfjit::runtime
