#include "frontend/xla_dims.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/proto/xla_data.pb.h"

namespace tfjit::tf {
namespace {

// The serialized proto in the node's `dimension_numbers` attr.
template <typename Proto>
absl::StatusOr<Proto> ReadDimensionNumbers(const Node& node, const char* message) {
  TFJIT_ASSIGN_OR_RETURN(std::string bytes, GetStringAttr(node, "dimension_numbers"));
  Proto proto;
  if (!proto.ParseFromString(bytes)) {
    return NodeInvalid(node,
                       "attr 'dimension_numbers' (%d bytes) is not a serialized xla.%s; "
                       "set it to the proto's SerializeToString() bytes, as tf2xla's Python "
                       "wrappers do",
                       bytes.size(), message);
  }
  return proto;
}

template <typename R>
std::vector<int64_t> ToVector(const R& repeated) {
  return std::vector<int64_t>(repeated.begin(), repeated.end());
}

// Every listed dim is in [0, rank) and named once.
absl::Status CheckDimList(const Node& node, const char* operand, int64_t rank,
                          const std::vector<int64_t>& dims) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return NodeInvalid(node,
                         "dimension number %d is out of range for the %s of rank %d "
                         "(dimension_numbers name dims in [0, %d))",
                         d, operand, rank, rank);
    }
    if (seen[static_cast<size_t>(d)]) {
      return NodeInvalid(node,
                         "dimension number %d of the %s is named twice in "
                         "dimension_numbers",
                         d, operand);
    }
    seen[static_cast<size_t>(d)] = true;
  }
  return absl::OkStatus();
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& a,
                              const std::vector<int64_t>& b) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() &&
        std::find(b.begin(), b.end(), d) == b.end()) {
      free.push_back(d);
    }
  }
  return free;
}

}  // namespace

absl::StatusOr<XlaDotPlan> PlanXlaDot(const Node& node, const std::vector<int64_t>& lhs_dims,
                                      const std::vector<int64_t>& rhs_dims) {
  TFJIT_ASSIGN_OR_RETURN(
      xla::DotDimensionNumbers dn,
      ReadDimensionNumbers<xla::DotDimensionNumbers>(node, "DotDimensionNumbers"));
  XlaDotPlan p;
  p.lhs_batch = ToVector(dn.lhs_batch_dimensions());
  p.rhs_batch = ToVector(dn.rhs_batch_dimensions());
  p.lhs_contracting = ToVector(dn.lhs_contracting_dimensions());
  p.rhs_contracting = ToVector(dn.rhs_contracting_dimensions());
  if (p.lhs_contracting.size() != p.rhs_contracting.size()) {
    return NodeInvalid(node,
                       "Must specify the same number of contracting dimensions for lhs "
                       "and rhs. Got: %d and %d",
                       p.lhs_contracting.size(), p.rhs_contracting.size());
  }
  if (p.lhs_batch.size() != p.rhs_batch.size()) {
    return NodeInvalid(node,
                       "Must specify the same number of batch dimensions for lhs and "
                       "rhs. Got: %d and %d",
                       p.lhs_batch.size(), p.rhs_batch.size());
  }
  const int64_t lr = static_cast<int64_t>(lhs_dims.size());
  const int64_t rr = static_cast<int64_t>(rhs_dims.size());
  std::vector<int64_t> lhs_named = p.lhs_batch, rhs_named = p.rhs_batch;
  lhs_named.insert(lhs_named.end(), p.lhs_contracting.begin(), p.lhs_contracting.end());
  rhs_named.insert(rhs_named.end(), p.rhs_contracting.begin(), p.rhs_contracting.end());
  TFJIT_RETURN_IF_ERROR(CheckDimList(node, "lhs", lr, lhs_named));
  TFJIT_RETURN_IF_ERROR(CheckDimList(node, "rhs", rr, rhs_named));
  for (size_t i = 0; i < p.lhs_contracting.size(); ++i) {
    const int64_t l = p.lhs_contracting[i], r = p.rhs_contracting[i];
    if (lhs_dims[static_cast<size_t>(l)] != rhs_dims[static_cast<size_t>(r)]) {
      return NodeInvalid(node,
                         "For contracting dimension %d which is lhs dimension %d and rhs "
                         "dimension %d: Dimensions must be equal, but are %d and %d (lhs %s, "
                         "rhs %s)",
                         i, l, r, lhs_dims[static_cast<size_t>(l)],
                         rhs_dims[static_cast<size_t>(r)], DimsString(lhs_dims),
                         DimsString(rhs_dims));
    }
  }
  for (size_t i = 0; i < p.lhs_batch.size(); ++i) {
    const int64_t l = p.lhs_batch[i], r = p.rhs_batch[i];
    if (lhs_dims[static_cast<size_t>(l)] != rhs_dims[static_cast<size_t>(r)]) {
      return NodeInvalid(node,
                         "For batch dimension %d which is lhs dimension %d and rhs "
                         "dimension %d: Dimensions must be equal, but are %d and %d (lhs %s, "
                         "rhs %s)",
                         i, l, r, lhs_dims[static_cast<size_t>(l)],
                         rhs_dims[static_cast<size_t>(r)], DimsString(lhs_dims),
                         DimsString(rhs_dims));
    }
    p.out_dims.push_back(lhs_dims[static_cast<size_t>(l)]);
  }
  p.lhs_free = FreeDims(lr, p.lhs_batch, p.lhs_contracting);
  p.rhs_free = FreeDims(rr, p.rhs_batch, p.rhs_contracting);
  for (int64_t d : p.lhs_free) p.out_dims.push_back(lhs_dims[static_cast<size_t>(d)]);
  for (int64_t d : p.rhs_free) p.out_dims.push_back(rhs_dims[static_cast<size_t>(d)]);
  return p;
}

absl::StatusOr<XlaConvPlan> PlanXlaConv(const Node& node, const std::vector<int64_t>& lhs_dims,
                                        const std::vector<int64_t>& rhs_dims,
                                        const std::vector<int64_t>& strides,
                                        const std::vector<int64_t>& padding,
                                        const std::vector<int64_t>& lhs_dilation,
                                        const std::vector<int64_t>& rhs_dilation,
                                        int64_t feature_group_count) {
  TFJIT_ASSIGN_OR_RETURN(
      xla::ConvolutionDimensionNumbers dn,
      ReadDimensionNumbers<xla::ConvolutionDimensionNumbers>(node, "ConvolutionDimensionNumbers"));
  TFJIT_ASSIGN_OR_RETURN(int64_t batch_groups, GetIntAttrOr(node, "batch_group_count", 1));
  if (batch_groups != 1) {
    return NodeStatus(absl::StatusCode::kUnimplemented, node,
                      "batch_group_count %d is not supported (only 1); it comes from the "
                      "gradient of a grouped convolution's filter, which TF graphs express with "
                      "Conv2DBackpropFilter",
                      batch_groups);
  }
  XlaConvPlan p;
  p.input_batch = dn.input_batch_dimension();
  p.input_feature = dn.input_feature_dimension();
  p.input_spatial = ToVector(dn.input_spatial_dimensions());
  p.kernel_input_feature = dn.kernel_input_feature_dimension();
  p.kernel_output_feature = dn.kernel_output_feature_dimension();
  p.kernel_spatial = ToVector(dn.kernel_spatial_dimensions());
  p.output_batch = dn.output_batch_dimension();
  p.output_feature = dn.output_feature_dimension();
  p.output_spatial = ToVector(dn.output_spatial_dimensions());
  p.feature_group_count = feature_group_count;
  const size_t n = p.input_spatial.size();
  if (p.kernel_spatial.size() != n || p.output_spatial.size() != n) {
    return NodeInvalid(node,
                       "dimension_numbers name %d input, %d kernel and %d output spatial "
                       "dims; they must agree",
                       n, p.kernel_spatial.size(), p.output_spatial.size());
  }
  const int64_t rank = static_cast<int64_t>(n) + 2;
  if (static_cast<int64_t>(lhs_dims.size()) != rank ||
      static_cast<int64_t>(rhs_dims.size()) != rank) {
    return NodeInvalid(node,
                       "the input %s and kernel %s must have rank %d (batch, feature and "
                       "%d spatial dims)",
                       DimsString(lhs_dims), DimsString(rhs_dims), rank, n);
  }
  std::vector<int64_t> in = {p.input_batch, p.input_feature};
  in.insert(in.end(), p.input_spatial.begin(), p.input_spatial.end());
  std::vector<int64_t> ker = {p.kernel_input_feature, p.kernel_output_feature};
  ker.insert(ker.end(), p.kernel_spatial.begin(), p.kernel_spatial.end());
  std::vector<int64_t> out = {p.output_batch, p.output_feature};
  out.insert(out.end(), p.output_spatial.begin(), p.output_spatial.end());
  TFJIT_RETURN_IF_ERROR(CheckDimList(node, "input", rank, in));
  TFJIT_RETURN_IF_ERROR(CheckDimList(node, "kernel", rank, ker));
  TFJIT_RETURN_IF_ERROR(CheckDimList(node, "output", rank, out));
  if (strides.size() != n || lhs_dilation.size() != n || rhs_dilation.size() != n ||
      padding.size() != 2 * n) {
    return NodeInvalid(node,
                       "window_strides (%d values), lhs_dilation (%d), rhs_dilation (%d) "
                       "need one value per spatial dim (%d) and padding (%d values) two",
                       strides.size(), lhs_dilation.size(), rhs_dilation.size(), n, padding.size());
  }
  const int64_t in_features = lhs_dims[static_cast<size_t>(p.input_feature)];
  const int64_t k_in = rhs_dims[static_cast<size_t>(p.kernel_input_feature)];
  const int64_t k_out = rhs_dims[static_cast<size_t>(p.kernel_output_feature)];
  if (feature_group_count <= 0 || in_features % feature_group_count != 0 ||
      in_features / feature_group_count != k_in || k_out % feature_group_count != 0) {
    return NodeInvalid(node,
                       "feature_group_count %d does not fit the input's %d features and "
                       "the kernel's %d input and %d output features (input features / groups "
                       "must equal the kernel's input features, and groups divide both)",
                       feature_group_count, in_features, k_in, k_out);
  }
  p.out_dims.assign(static_cast<size_t>(rank), 0);
  p.out_dims[static_cast<size_t>(p.output_batch)] = lhs_dims[static_cast<size_t>(p.input_batch)];
  p.out_dims[static_cast<size_t>(p.output_feature)] = k_out;
  for (size_t i = 0; i < n; ++i) {
    XlaConvWindow w;
    w.size = rhs_dims[static_cast<size_t>(p.kernel_spatial[i])];
    w.stride = strides[i];
    w.pad_lo = padding[2 * i];
    w.pad_hi = padding[2 * i + 1];
    w.lhs_dilation = lhs_dilation[i];
    w.rhs_dilation = rhs_dilation[i];
    if (w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1) {
      return NodeInvalid(node,
                         "spatial dim %d: window stride %d, lhs_dilation %d and "
                         "rhs_dilation %d must be at least 1",
                         i, w.stride, w.lhs_dilation, w.rhs_dilation);
    }
    if (w.pad_lo < 0 || w.pad_hi < 0) {
      return NodeStatus(absl::StatusCode::kUnimplemented, node,
                        "spatial dim %d: negative padding (%d, %d) is not supported", i, w.pad_lo,
                        w.pad_hi);
    }
    const int64_t extent = lhs_dims[static_cast<size_t>(p.input_spatial[i])];
    const int64_t dilated = extent == 0 ? 0 : (extent - 1) * w.lhs_dilation + 1;
    const int64_t padded = dilated + w.pad_lo + w.pad_hi;
    const int64_t window = (w.size - 1) * w.rhs_dilation + 1;
    const int64_t size = w.size == 0 || padded < window ? 0 : (padded - window) / w.stride + 1;
    p.out_dims[static_cast<size_t>(p.output_spatial[i])] = size;
    p.window.push_back(w);
  }
  return p;
}

}  // namespace tfjit::tf
