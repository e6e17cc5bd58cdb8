// TF's Reshape rule; see reshape_rule.h.
#include "frontend/reshape_rule.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"

namespace tfjit::tf {

absl::StatusOr<std::vector<int64_t>> ResolveReshape(const std::vector<int64_t>& input_dims,
                                                    std::vector<int64_t> sizes) {
  const std::string requested = absl::StrCat("[", absl::StrJoin(sizes, ","), "]");
  const std::string input = absl::StrCat("[", absl::StrJoin(input_dims, ","), "]");
  int unknown = -1;
  int64_t product = 1;  // of the requested sizes other than -1 and 0
  bool sizes_have_zero = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (unknown >= 0) {
        return InvalidArgument("Only one input size may be -1, not both %d and %d in %s", unknown,
                               i, requested);
      }
      unknown = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      return InvalidArgument("Size %d must be non-negative, not %d in %s", i, sizes[i], requested);
    } else if (sizes[i] == 0) {
      sizes_have_zero = true;
    } else if (__builtin_mul_overflow(product, sizes[i], &product)) {
      return InvalidArgument("Shape %s has too many elements", requested);
    }
  }
  int64_t n = 1;
  for (int64_t d : input_dims) n *= d;
  if (unknown >= 0) {
    // Zero-sized input dims are left out too when the request has one, so the other dims can
    // still be inferred; the element counts then agree because both are zero.
    int64_t counted = 1;
    bool input_has_zero = false;
    for (int64_t d : input_dims) {
      if (d > 0 || !sizes_have_zero) {
        counted *= d;
      } else {
        input_has_zero = true;
      }
    }
    const int64_t missing = counted / product;
    if (!input_has_zero && product * missing != counted) {
      return InvalidArgument(
          "Input to reshape is a tensor with %d values, but the requested "
          "shape requires a multiple of %d: input is %s, shape is %s",
          counted, product, input, requested);
    }
    sizes[static_cast<size_t>(unknown)] = missing;
  }
  int64_t out = 1;
  for (int64_t d : sizes) out *= d;
  if (out != n) {
    return InvalidArgument(
        "Input to reshape is a tensor with %d values, but the requested "
        "shape has %d: input is %s, shape is %s",
        n, out, input, requested);
  }
  return sizes;
}

}  // namespace tfjit::tf
