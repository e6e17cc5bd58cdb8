// TF's strided-slice rule; see strided_slice_rule.h.
#include "frontend/strided_slice_rule.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf {

absl::StatusOr<StridedMasks> GetStridedMasks(const Node& node) {
  StridedMasks m;
  TFJIT_ASSIGN_OR_RETURN(m.begin, GetIntAttrOr(node, "begin_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(m.end, GetIntAttrOr(node, "end_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(m.ellipsis, GetIntAttrOr(node, "ellipsis_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(m.new_axis, GetIntAttrOr(node, "new_axis_mask", 0));
  TFJIT_ASSIGN_OR_RETURN(m.shrink, GetIntAttrOr(node, "shrink_axis_mask", 0));
  return m;
}

// TF's ValidateStridedSliceOp for an input of dims `shape`; "" or the error message.
std::string PlanStridedSlice(const std::vector<int64_t>& shape, const std::vector<int64_t>& begin,
                             const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                             const StridedMasks& m, StridedPlan* plan) {
  const int rank = static_cast<int>(shape.size());
  const int n = static_cast<int>(begin.size());
  int64_t ellipsis = m.ellipsis;
  if ((ellipsis & (ellipsis - 1)) != 0) {
    return absl::StrFormat("Multiple ellipses in slice spec not allowed (ellipsis_mask %d)",
                           ellipsis);
  }
  int sparse_dims = n;
  if (ellipsis == 0) ellipsis = int64_t{1} << sparse_dims++;
  int new_axes_after_ellipsis = 0;
  for (int i = n - 1; i >= 0 && !((ellipsis >> i) & 1); --i) {
    if ((m.new_axis >> i) & 1) ++new_axes_after_ellipsis;
  }
  // Dense entries: begin, end, stride, begin masked, end masked, shrink.
  struct Dense {
    int64_t b = 0, e = 0, s = 1;
    bool bm = true, em = true, shrink = false;
  };
  std::vector<Dense> dense(static_cast<size_t>(rank));
  std::vector<int> final_src;  // dense dim per output dim; -1 = new axis
  int full = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if ((ellipsis >> i) & 1) {
      const int next = std::min(rank - (sparse_dims - i) + 1 + new_axes_after_ellipsis, rank);
      for (; full < next; ++full) final_src.push_back(full);
    } else if ((m.new_axis >> i) & 1) {
      final_src.push_back(-1);
    } else {
      if (full >= rank) {
        return absl::StrFormat(
            "Index out of range using input dim %d; input has only %d dims; "
            "the slice spec names more dimensions than the input has",
            full, rank);
      }
      const size_t k = static_cast<size_t>(i);
      dense[static_cast<size_t>(full)] = {begin[k],
                                          end[k],
                                          strides[k],
                                          ((m.begin >> i) & 1) != 0,
                                          ((m.end >> i) & 1) != 0,
                                          ((m.shrink >> i) & 1) != 0};
      if (!dense[static_cast<size_t>(full)].shrink) final_src.push_back(full);
      ++full;
    }
  }
  plan->dims.assign(static_cast<size_t>(rank), {});
  for (int d = 0; d < rank; ++d) {
    const Dense& x = dense[static_cast<size_t>(d)];
    const int64_t dim = shape[static_cast<size_t>(d)];
    StridedDimPlan& p = plan->dims[static_cast<size_t>(d)];
    if (x.s == 0) return absl::StrFormat("strides[%d] must be non-zero", d);
    if (x.shrink) {
      if (x.s < 0) return "only stride 1 allowed on non-range indexing.";
      const int64_t at = x.b < 0 ? x.b + dim : x.b;
      if (at < 0 || at >= dim) {
        return absl::StrFormat(
            "slice index %d of dimension %d out of bounds. (the dimension "
            "has size %d)",
            x.b, d, dim);
      }
      p = {at, 1, 1};
      continue;
    }
    const bool fwd = x.s > 0;
    const int64_t lo = fwd ? 0 : -1, hi = fwd ? dim : dim - 1;
    auto canon = [&](int64_t v, bool masked, bool is_end) {
      if (masked) return fwd == is_end ? hi : lo;
      return std::clamp(v < 0 ? v + dim : v, lo, hi);
    };
    const int64_t b = canon(x.b, x.bm, false), e = canon(x.e, x.em, true);
    const int64_t span = fwd ? e - b : b - e;
    const int64_t step = fwd ? x.s : -x.s;
    p = {b, x.s, span <= 0 ? 0 : (span + step - 1) / step};
  }
  plan->final_dims.clear();
  for (int src : final_src) {
    plan->final_dims.push_back(src < 0 ? 1 : plan->dims[static_cast<size_t>(src)].size);
  }
  return "";
}

}  // namespace tfjit::tf
