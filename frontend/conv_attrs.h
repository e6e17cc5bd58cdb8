// TF semantics of convolution and pooling nodes, shared by the fallback kernels
// (runtime/kernels/nn_conv_kernels.cc, nn_kernels.cc) and the lowerings (compiler/tf2hlo/
// nn_conv_lowerings.cc, image_lowerings.cc) so that both layers accept the same attrs, compute the
// same window geometry and say the same thing about a bad node: attr validation, TF's
// GetWindowedOutputSizeVerbose (output size, padding before/after per spatial dim) and the
// fused_ops epilogue of _FusedConv2D / FusedDepthwiseConv2dNative / _FusedMatMul.
//
// Errors read "node 'c' (Conv2D): ..." and carry the node payload (core/status.h). Codes:
// INVALID_ARGUMENT for a node TF rejects too, UNIMPLEMENTED for valid TF that tfjit does not
// run (other layouts, other fused_ops). NHWC is the layout of the arithmetic (TF's CPU kernels
// have no other); callers that accept NCHW (Layouts::kNhwcOrNchw) get NHWC-order attrs back.
#ifndef TFJIT_FRONTEND_CONV_ATTRS_H_
#define TFJIT_FRONTEND_CONV_ATTRS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "frontend/graph.h"

namespace tfjit::tf {

// OK when data_format (default NHWC) is NHWC; otherwise `code` (UNIMPLEMENTED by default; TF's
// CPU pooling and depth-to-space kernels say INVALID_ARGUMENT) naming the format.
absl::Status CheckNhwc(const Node& node, absl::StatusCode code = absl::StatusCode::kUnimplemented);

enum class Padding { kValid, kSame, kExplicit };

// The layouts a caller of ReadConvAttrs / ReadPoolAttrs runs. With kNhwcOrNchw an NCHW node is
// accepted: its per-dim lists come back permuted to NHWC order and WindowAttrs::nchw is set,
// so the caller transposes its tensors (or sets HLO dimension numbers) and computes the
// window geometry on NHWC dims as for an NHWC node.
enum class Layouts { kNhwc, kNhwcOrNchw };

// [N, C, H, W] -> [N, H, W, C] and back, for dims and per-dim attr lists.
std::vector<int64_t> NchwToNhwc(const std::vector<int64_t>& v);
std::vector<int64_t> NhwcToNchw(const std::vector<int64_t>& v);

// The validated window attrs of a 4-D NHWC convolution or pooling node. Every list has one
// entry per NHWC dim (explicit_paddings two: before, after); the batch and depth entries are 1
// (padding 0).
struct WindowAttrs {
  Padding padding = Padding::kValid;
  std::vector<int64_t> ksize = {1, 1, 1, 1};  // pooling only; convolutions take the filter's
  std::vector<int64_t> strides = {1, 1, 1, 1};
  std::vector<int64_t> dilations = {1, 1, 1, 1};  // convolutions only
  std::vector<int64_t> explicit_paddings = std::vector<int64_t>(8, 0);
  bool nchw = false;  // the node's data_format is NCHW (lists above are still NHWC order)
};

// Conv2D, DepthwiseConv2dNative, Conv2DBackpropInput and the fused convolutions: data_format,
// strides, dilations (default 1), padding, explicit_paddings (EXPLICIT only).
absl::StatusOr<WindowAttrs> ReadConvAttrs(const Node& node, Layouts layouts = Layouts::kNhwc);

// MaxPool / AvgPool on an input of `input_dims`: data_format, the input's rank (4), ksize,
// strides, padding, explicit_paddings. Pooling across the batch or depth dim is rejected.
absl::StatusOr<WindowAttrs> ReadPoolAttrs(const Node& node, const std::vector<int64_t>& input_dims,
                                          Layouts layouts = Layouts::kNhwc);

// One spatial dim of a window: the input size, window (filter) size, stride and dilation, and
// what TF computes from them. Input position of window tap t at output o:
// o * stride + t * dilation - pad_before.
struct SpatialDim {
  int64_t in = 0, k = 1, stride = 1, dilation = 1;
  int64_t out = 0, pad_before = 0, pad_after = 0;
  int64_t effective_k() const { return (k - 1) * dilation + 1; }
};

// TF's windowed output size and padding of spatial dim `d` (1 = height, 2 = width) for an input
// of size `in` and a window of size `k`. SAME pads the odd cell after; VALID/EXPLICIT sizes
// truncate toward zero as TF does, so only a size below zero is an error.
absl::StatusOr<SpatialDim> ComputeSpatialDim(const Node& node, const WindowAttrs& attrs, int d,
                                             int64_t in, int64_t k);

// The H and W dims of a convolution or pool whose window is `kh` x `kw`.
struct Window2D {
  SpatialDim h, w;
};
absl::StatusOr<Window2D> ComputeWindow(const Node& node, const WindowAttrs& attrs, int64_t in_h,
                                       int64_t in_w, int64_t kh, int64_t kw);

// MaxPool / AvgPool: ReadPoolAttrs, then the window of ksize over the input's H and W.
absl::StatusOr<Window2D> PoolWindow(const Node& node, const std::vector<int64_t>& input_dims);

// Conv2D-family geometry: the output's spatial dims, the feature group count (input depth /
// filter in_channels; 1 for ordinary convolutions) and the output depth. `depthwise` reads the
// filter as [h, w, in_channels, multiplier] (TF's DepthwiseConv2dNative); its group count is
// the input depth.
struct ConvGeometry {
  Window2D window;
  int64_t groups = 1, out_channels = 0;
};
absl::StatusOr<ConvGeometry> Conv2DGeometry(const Node& node, const WindowAttrs& attrs,
                                            const std::vector<int64_t>& input_dims,
                                            const std::vector<int64_t>& filter_dims,
                                            bool depthwise);

// Conv2DBackpropInput(input_sizes, filter, out_backprop): checks that the three agree and that
// out_backprop has the forward convolution's output size; returns the forward geometry.
absl::StatusOr<Window2D> BackpropInputGeometry(const Node& node, const WindowAttrs& attrs,
                                               const std::vector<int64_t>& input_sizes,
                                               const std::vector<int64_t>& filter_dims,
                                               const std::vector<int64_t>& out_backprop_dims);

// ---- fused_ops ----

enum class FusedActivation { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kSigmoid, kTanh, kPrelu };

// The epilogue after the contraction, in order: bias, batch norm, activation. Its extra inputs
// start at input 2: bias; or scale, offset, mean, variance; then Prelu's alpha.
struct FusedEpilogue {
  bool bias = false;        // BiasAdd
  bool batch_norm = false;  // FusedBatchNorm: (y - mean) * scale / sqrt(variance + eps) + offset
  FusedActivation activation = FusedActivation::kNone;
  int num_args = 0;
  float epsilon = 1e-4f;         // attr "epsilon"
  float leakyrelu_alpha = 0.2f;  // attr "leakyrelu_alpha"
  bool empty() const { return !bias && !batch_norm && activation == FusedActivation::kNone; }
};

// fused_ops as TF's remapper and the tfjs converter write them (case-insensitive, as tfjs
// matches): [], or [BiasAdd|FusedBatchNorm|NoOp] optionally followed by one activation; the
// node's num_args and input count must match.
absl::StatusOr<FusedEpilogue> ParseFusedOps(const Node& node);

// Prelu's alpha in a fused epilogue: true when it holds one value, false when it holds one per
// output channel ([..., 1, channels]); UNIMPLEMENTED for other shapes.
absl::StatusOr<bool> PreluAlphaIsScalar(const Node& node, const std::vector<int64_t>& alpha_dims,
                                        int64_t channels);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_CONV_ATTRS_H_
