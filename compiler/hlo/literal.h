// Literal: a constant value of an HLO shape. Arrays are stored in a tfjit::Tensor (so the
// evaluator and runtime exchange values without copies); tuples hold element literals.
#ifndef TFJIT_COMPILER_HLO_LITERAL_H_
#define TFJIT_COMPILER_HLO_LITERAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/hlo/shape.h"
#include "tfjit/tensor.h"

namespace tfjit::hlo {

class Literal {
 public:
  Literal() = default;
  // A zero-filled array literal of `shape` (or a tuple of zero-filled elements).
  explicit Literal(const Shape& shape);
  // Wraps a tensor (shares its buffer). The tensor must have a numeric dtype.
  static Literal FromTensor(const Tensor& tensor);
  static Literal MakeTuple(std::vector<Literal> elements);
  template <typename T>
  static Literal Scalar(DType dtype, T value) {
    Literal l(Shape::Scalar(dtype));
    *l.tensor_.data<T>() = value;
    return l;
  }

  const Shape& shape() const { return shape_; }
  // Array literals only.
  const Tensor& tensor() const { return tensor_; }
  Tensor& mutable_tensor() { return tensor_; }
  template <typename T>
  const T* data() const {
    return tensor_.data<T>();
  }
  template <typename T>
  T* data() {
    return tensor_.data<T>();
  }
  // Tuple literals only.
  const std::vector<Literal>& elements() const { return elements_; }
  std::vector<Literal>& mutable_elements() { return elements_; }

  // Bitwise equality of shape and contents (NaNs with equal bits compare equal).
  bool BitwiseEquals(const Literal& other) const;
  // Element values in the text form's syntax: "1.5", "{1, 2, 3}", "{{1, 2}, {3, 4}}".
  // Floats print in shortest round-trip form; nan, inf, -inf; pred as true/false.
  std::string ValueToString() const;

 private:
  Shape shape_;
  Tensor tensor_;
  std::vector<Literal> elements_;
};

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_LITERAL_H_
