// HLO shapes: an array (element type + static dims, row-major) or a tuple of shapes.
#ifndef TFJIT_COMPILER_HLO_SHAPE_H_
#define TFJIT_COMPILER_HLO_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tfjit/dtype.h"

namespace tfjit::hlo {

class Shape {
 public:
  // An invalid shape (element type kInvalid, not a tuple).
  Shape() = default;
  Shape(DType element_type, std::vector<int64_t> dims)
      : element_type_(element_type), dims_(std::move(dims)) {}
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Scalar(DType element_type) { return Shape(element_type, {}); }

  bool IsTuple() const { return is_tuple_; }
  bool IsArray() const { return !is_tuple_ && element_type_ != DType::kInvalid; }
  bool IsScalar() const { return IsArray() && dims_.empty(); }

  DType element_type() const { return element_type_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int i) const { return dims_[static_cast<size_t>(i)]; }
  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t num_elements() const;
  // Bytes of a dense array; 0 for tuples.
  int64_t byte_size() const;

  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  const Shape& tuple_shape(int i) const { return tuple_shapes_[static_cast<size_t>(i)]; }

  Shape WithElementType(DType t) const { return Shape(t, dims_); }

  // "f32[2,3]", "pred[]", "(f32[2], s32[])".
  std::string ToString() const;

  bool operator==(const Shape& o) const {
    return is_tuple_ == o.is_tuple_ && element_type_ == o.element_type_ && dims_ == o.dims_ &&
           tuple_shapes_ == o.tuple_shapes_;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  bool is_tuple_ = false;
  DType element_type_ = DType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<Shape> tuple_shapes_;
};

// Row-major strides (in elements) of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_SHAPE_H_
