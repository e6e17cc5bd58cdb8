// XLA's own ops in TF graphs (XlaDotV2/XlaDot, XlaConvV2/XlaConv; written by jax2tf's graph
// serialization and tf2xla's Python API): their dimension numbers decoded from the serialized
// xla::DotDimensionNumbers / xla::ConvolutionDimensionNumbers in the `dimension_numbers` attr
// (frontend/proto/xla_data.proto), validated against the operands as XLA's shape inference
// does, with the output dims. Shared by the fallback kernels (runtime/kernels/xla_kernels.cc)
// and the lowerings (compiler/tf2hlo/xla_lowerings.cc) so that the two cannot disagree.
//
// Errors read "node 'd' (XlaDotV2): ..." with the node payload: INVALID_ARGUMENT for what XLA
// rejects, UNIMPLEMENTED for valid XLA tfjit does not run (batch_group_count > 1).
#ifndef TFJIT_FRONTEND_XLA_DIMS_H_
#define TFJIT_FRONTEND_XLA_DIMS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/graph.h"

namespace tfjit::tf {

// DotGeneral: result dims = batch dims, then lhs free dims, then rhs free dims (each in
// operand order).
struct XlaDotPlan {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  std::vector<int64_t> lhs_free, rhs_free;  // the remaining dims, in order
  std::vector<int64_t> out_dims;
};
absl::StatusOr<XlaDotPlan> PlanXlaDot(const Node& node, const std::vector<int64_t>& lhs_dims,
                                      const std::vector<int64_t>& rhs_dims);

// ConvGeneralDilated. One window entry per spatial dim (in the order of the dimension
// numbers' spatial lists).
struct XlaConvWindow {
  int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0, lhs_dilation = 1, rhs_dilation = 1;
};
struct XlaConvPlan {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
  std::vector<XlaConvWindow> window;
  int64_t feature_group_count = 1;
  std::vector<int64_t> out_dims;
};
// `strides`, `lhs_dilation`, `rhs_dilation` have one entry per spatial dim, `padding` two
// (low, high) per spatial dim, flattened; the values of inputs 2-6.
absl::StatusOr<XlaConvPlan> PlanXlaConv(const Node& node, const std::vector<int64_t>& lhs_dims,
                                        const std::vector<int64_t>& rhs_dims,
                                        const std::vector<int64_t>& strides,
                                        const std::vector<int64_t>& padding,
                                        const std::vector<int64_t>& lhs_dilation,
                                        const std::vector<int64_t>& rhs_dilation,
                                        int64_t feature_group_count);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_XLA_DIMS_H_
