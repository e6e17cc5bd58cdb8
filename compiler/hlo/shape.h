// HLO shapes: an array (element type + dims, row-major) or a tuple of shapes. A dim is static,
// except that dim 0 of an array may be symbolic: affine in the module's batch size, known only
// when the executable runs (docs/HLO.md, "Symbolic batch size").
#ifndef TFJIT_COMPILER_HLO_SHAPE_H_
#define TFJIT_COMPILER_HLO_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tfjit/dtype.h"

namespace tfjit::hlo {

// The extent k * b + c of a symbolic dim (k >= 1), b being the module's batch size.
struct SymbolicExtent {
  int64_t k = 0;
  int64_t c = 0;
  int64_t At(int64_t batch) const { return k * batch + c; }
  // "?b", "4*?b", "?b+1", "2*?b-3".
  std::string ToString() const;
  bool operator==(const SymbolicExtent&) const = default;
};

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

  Shape WithElementType(DType t) const {
    Shape out = *this;
    out.element_type_ = t;
    return out;
  }

  // Symbolic dim 0. When it is symbolic, dims()[0] holds its extent at the module's
  // representative batch size (Module::batch_representative), so code that only needs a size
  // (cost heuristics) may read it; code that emits loops, sizes or offsets must ask here.
  bool has_symbolic_dim0() const { return dim0_.k != 0; }
  const SymbolicExtent& symbolic_dim0() const { return dim0_; }
  // Makes dim 0 (of an array of rank >= 1) symbolic with `extent`, valued at `representative`.
  void SetSymbolicDim0(SymbolicExtent extent, int64_t representative);
  // Whether this shape, or one of its tuple elements, has a symbolic dim.
  bool IsSymbolic() const;
  // The shape at batch size `batch`: symbolic dims become static ones (AtBatch) or keep their
  // form with `batch` as the representative (Rebased).
  Shape AtBatch(int64_t batch) const;
  Shape Rebased(int64_t batch) const;

  // "f32[2,3]", "pred[]", "(f32[2], s32[])", "f32[?b,3]".
  std::string ToString() const;

  bool operator==(const Shape& o) const {
    return is_tuple_ == o.is_tuple_ && element_type_ == o.element_type_ && dims_ == o.dims_ &&
           dim0_ == o.dim0_ && tuple_shapes_ == o.tuple_shapes_;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  bool is_tuple_ = false;
  DType element_type_ = DType::kInvalid;
  std::vector<int64_t> dims_;
  SymbolicExtent dim0_;  // k == 0: dim 0 is static
  std::vector<Shape> tuple_shapes_;
};

// Row-major strides (in elements) of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_SHAPE_H_
