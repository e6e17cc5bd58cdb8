// TensorList: the value a TF2 TensorArray / list op carries in a scalar kVariant tensor, plus
// the partial-shape helpers (TF's PartialTensorShape rules) the list and TensorArray kernels share.
#ifndef TFJIT_RUNTIME_KERNELS_TENSOR_LIST_H_
#define TFJIT_RUNTIME_KERNELS_TENSOR_LIST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontend/tensor_proto.h"
#include "runtime/kernels/kernel.h"
#include "tfjit/tensor.h"

namespace tfjit::runtime {

// A list of tensors of one element dtype. Lists are values: once a TensorList is stored in a
// tensor it is never mutated; a kernel that "modifies" a list copies it (the vector of shared
// Tensors, which is cheap) and outputs the copy.
class TensorList : public TensorObject {
 public:
  DType element_dtype = DType::kInvalid;
  // Unknown rank, or dims where -1 is an unknown dim.
  tf::PartialShape element_shape{{}, /*unknown_rank=*/true};
  // -1: unbounded. PushBack fails once items.size() reaches it.
  int64_t max_num_elements = -1;
  // An invalid Tensor is an item not yet set (it reads as zeros when the shape is known).
  std::vector<Tensor> items;

  // "TensorList<float32, [?,3]> with 2 items (1 set)".
  std::string DebugString() const override;
};

// Wraps `list` in a scalar kVariant tensor.
Tensor MakeListTensor(std::shared_ptr<const TensorList> list);

// Helpers shared by the list and TensorArray kernels (a namespace of their own so their short
// names never clash with other kernel families).
namespace lists {

// TF's DataTypeString spelling ("float", "double", "int32", "variant") for messages whose text
// users know from TF.
const char* TfTypeString(DType dtype);

// A shape from a tensor the way TF's TensorShapeFromTensor reads it: scalar -1 is an unknown
// rank; otherwise an int32/int64 vector whose -1 entries are unknown dims. Errors carry TF's
// message text (no node prefix; callers add it).
absl::Status PartialShapeFromTensor(const Tensor& t, tf::PartialShape* out);

// TF's PartialTensorShape::IsCompatibleWith / MergeWith / AsTensorShape.
bool ShapesCompatible(const tf::PartialShape& a, const tf::PartialShape& b);
bool ShapeCompatibleWithDims(const tf::PartialShape& a, const std::vector<int64_t>& dims);
absl::Status MergeShapes(const tf::PartialShape& a, const tf::PartialShape& b,
                         tf::PartialShape* out);
tf::PartialShape KnownShape(const std::vector<int64_t>& dims);

// Copies `src` (row-major, any dtype with a byte width) into `dst` starting at byte `offset`.
void CopyInto(const Tensor& src, Tensor& dst, size_t offset);
// Row `i` of `t` along dim 0, as a new tensor with `t`'s dims minus the first.
Tensor SliceRow(const Tensor& t, int64_t i);
// Rows [begin, end) of `t` along dim 0 as a new tensor.
Tensor SliceRows(const Tensor& t, int64_t begin, int64_t end);

// ---- Kernel-side helpers (errors are INVALID_ARGUMENT "node 'n' (Op): <TF's text>") ----

// A message-only status (from the shape helpers above) re-located at the node.
absl::Status Located(const KernelContext& ctx, const absl::Status& status);
// The TensorList held by input `i` (a scalar kVariant), or TF's "Input handle is not a list".
absl::Status GetInputList(const KernelContext& ctx, int i, const TensorList** out);
// Checks the op's element_dtype attr against the list's (TF's "Invalid data types" message).
absl::Status CheckListDType(const KernelContext& ctx, const TensorList& l);
// An int32/int64 scalar input; `not_scalar` prefixes the shape in the error otherwise.
absl::Status ScalarInput(const KernelContext& ctx, int i, absl::string_view not_scalar,
                         int64_t* out);
// Input `i` read by PartialShapeFromTensor.
absl::Status ShapeInput(const KernelContext& ctx, int i, tf::PartialShape* out);
// TF's GetElementShapeFromInput: input `i` merged with the list's element shape.
absl::Status ElementShapeFromInput(const KernelContext& ctx, const TensorList& l, int i,
                                   tf::PartialShape* out);
// Refines `shape` with the shapes of the set items among `indices`, when the list's own
// element shape is partial (TF does this before stacking / reading unset items).
absl::Status MergeItemShapes(const KernelContext& ctx, const TensorList& l,
                             const std::vector<int64_t>& indices, tf::PartialShape* shape);
// 0, 1, ..., size-1.
std::vector<int64_t> AllIndices(const TensorList& l);
// A zero tensor for an unset item; an error for dtypes without a byte width (variant).
absl::StatusOr<Tensor> Zeros(const KernelContext& ctx, DType dtype,
                             const std::vector<int64_t>& dims);
// Stacks items[indices] (unset ones as zeros) into [indices.size()] + element_dims.
absl::StatusOr<Tensor> StackItems(const KernelContext& ctx, const TensorList& l,
                                  const std::vector<int64_t>& indices,
                                  const std::vector<int64_t>& element_dims);
// Product of dims (1 for a scalar).
int64_t NumElements(const std::vector<int64_t>& dims);

}  // namespace lists

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_KERNELS_TENSOR_LIST_H_
