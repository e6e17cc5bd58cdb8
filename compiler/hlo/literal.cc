// Literal construction, bitwise comparison and the text form of constant values.
#include "compiler/hlo/literal.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"

namespace tfjit::hlo {
namespace {

// Shortest decimal that parses back to the same float (std::to_chars guarantees this).
template <typename F>
std::string ShortestFloat(F value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, result.ptr);
}

std::string ElementToString(const Tensor& t, int64_t i) {
  std::string out;
  DispatchNumeric(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = t.data<T>()[i];
    if constexpr (std::is_same_v<T, bool>) {
      out = v ? "true" : "false";
    } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      // A half/bfloat16 value is exactly representable as float, so the float's shortest
      // form parses back (as float, then rounded to the narrow type) to the same bits.
      out = ShortestFloat(static_cast<float>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      out = ShortestFloat(v);
    } else {
      out = absl::StrCat(v);
    }
  });
  return out;
}

// Appends the elements of dims[d..] starting at flat index `*index`, nested in braces.
void AppendNested(const Tensor& t, int d, int64_t* index, std::string* out) {
  if (d == t.rank()) {
    absl::StrAppend(out, ElementToString(t, *index));
    ++*index;
    return;
  }
  absl::StrAppend(out, "{");
  for (int64_t i = 0; i < t.dim(d); ++i) {
    if (i > 0) absl::StrAppend(out, ", ");
    AppendNested(t, d + 1, index, out);
  }
  absl::StrAppend(out, "}");
}

}  // namespace

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) elements_.emplace_back(element);
  } else if (shape.IsArray()) {
    tensor_ = Tensor(shape.element_type(), shape.dims());
  }
}

Literal Literal::FromTensor(const Tensor& tensor) {
  Literal l;
  l.shape_ = Shape(tensor.dtype(), tensor.dims());
  l.tensor_ = tensor;
  return l;
}

Literal Literal::MakeTuple(std::vector<Literal> elements) {
  Literal l;
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& e : elements) shapes.push_back(e.shape());
  l.shape_ = Shape::Tuple(std::move(shapes));
  l.elements_ = std::move(elements);
  return l;
}

bool Literal::BitwiseEquals(const Literal& other) const {
  if (shape_ != other.shape_) return false;
  if (shape_.IsTuple()) {
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (!elements_[i].BitwiseEquals(other.elements_[i])) return false;
    }
    return true;
  }
  const size_t bytes = tensor_.byte_size();
  if (bytes == 0) return true;
  return std::memcmp(tensor_.raw_data(), other.tensor_.raw_data(), bytes) == 0;
}

std::string Literal::ValueToString() const {
  if (shape_.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i > 0) absl::StrAppend(&out, ", ");
      absl::StrAppend(&out, elements_[i].ValueToString());
    }
    return absl::StrCat(out, ")");
  }
  if (!tensor_.valid()) return "";
  std::string out;
  int64_t index = 0;
  AppendNested(tensor_, 0, &index, &out);
  return out;
}

}  // namespace tfjit::hlo
