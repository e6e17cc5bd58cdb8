// Shape helpers and printing.
#include "compiler/hlo/shape.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"

namespace tfjit::hlo {

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.is_tuple_ = true;
  s.tuple_shapes_ = std::move(elements);
  return s;
}

// Both saturate at INT64_MAX instead of overflowing (UB): a shape no machine holds, e.g. a
// Fill of [2^40, 2^40] in a cluster, then fails the allocation checks with RESOURCE_EXHAUSTED
// (found by UBSan).
int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d == 0) return 0;
    if (__builtin_mul_overflow(n, d, &n)) n = std::numeric_limits<int64_t>::max();
  }
  return n;
}

int64_t Shape::byte_size() const {
  if (is_tuple_) return 0;
  int64_t bytes;
  if (__builtin_mul_overflow(num_elements(), static_cast<int64_t>(DTypeSize(element_type_)),
                             &bytes)) {
    return std::numeric_limits<int64_t>::max();
  }
  return bytes;
}

std::string Shape::ToString() const {
  if (is_tuple_) {
    return absl::StrCat(
        "(",
        absl::StrJoin(tuple_shapes_, ", ",
                      [](std::string* out, const Shape& s) { absl::StrAppend(out, s.ToString()); }),
        ")");
  }
  std::string dims = absl::StrJoin(dims_, ",");
  if (has_symbolic_dim0()) {
    const size_t comma = dims.find(',');
    dims.replace(0, comma == std::string::npos ? dims.size() : comma, dim0_.ToString());
  }
  return absl::StrCat(DTypeHloName(element_type_), "[", dims, "]");
}

std::string SymbolicExtent::ToString() const {
  std::string out = k == 1 ? "?b" : absl::StrCat(k, "*?b");
  if (c > 0) absl::StrAppend(&out, "+", c);
  if (c < 0) absl::StrAppend(&out, c);
  return out;
}

void Shape::SetSymbolicDim0(SymbolicExtent extent, int64_t representative) {
  dim0_ = extent;
  dims_[0] = extent.At(representative);
}

bool Shape::IsSymbolic() const {
  if (has_symbolic_dim0()) return true;
  for (const Shape& s : tuple_shapes_) {
    if (s.IsSymbolic()) return true;
  }
  return false;
}

Shape Shape::AtBatch(int64_t batch) const {
  Shape out = *this;
  if (has_symbolic_dim0()) out.dims_[0] = dim0_.At(batch);
  out.dim0_ = SymbolicExtent{};
  for (Shape& s : out.tuple_shapes_) s = s.AtBatch(batch);
  return out;
}

Shape Shape::Rebased(int64_t batch) const {
  Shape out = *this;
  if (has_symbolic_dim0()) out.dims_[0] = dim0_.At(batch);
  for (Shape& s : out.tuple_shapes_) s = s.Rebased(batch);
  return out;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

}  // namespace tfjit::hlo
