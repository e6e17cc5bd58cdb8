#include "frontend/conv_attrs.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf {
namespace {

absl::StatusOr<Padding> ReadPadding(const Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::string padding, GetStringAttr(node, "padding"));
  if (padding == "SAME") return Padding::kSame;
  if (padding == "VALID") return Padding::kValid;
  if (padding == "EXPLICIT") return Padding::kExplicit;
  return NodeInvalid(node, "padding must be SAME, VALID or EXPLICIT, got '%s'", padding);
}

// The node's data_format when `layouts` accepts it: true for NCHW; `CheckNhwc`'s error for a
// layout the caller does not run.
absl::StatusOr<bool> ReadLayout(const Node& node, Layouts layouts, absl::StatusCode code) {
  if (layouts == Layouts::kNhwcOrNchw) {
    TFJIT_ASSIGN_OR_RETURN(std::string format, GetStringAttrOr(node, "data_format", "NHWC"));
    if (format == "NCHW") return true;
    if (format != "NHWC") {
      return NodeStatus(code, node,
                        "data_format '%s' is not supported; NHWC and NCHW are (convert the "
                        "model to one of them)",
                        format);
    }
  }
  TFJIT_RETURN_IF_ERROR(CheckNhwc(node, code));
  return false;
}

// An NCHW list attr in NHWC order (lists of the wrong length are left for the checks).
std::vector<int64_t> ListToNhwc(const std::vector<int64_t>& v, bool nchw) {
  return nchw && v.size() == 4 ? NchwToNhwc(v) : v;
}

// explicit_paddings holds a (before, after) pair per dim.
std::vector<int64_t> PairsToNhwc(const std::vector<int64_t>& p, bool nchw) {
  if (!nchw || p.size() != 8) return p;
  return {p[0], p[1], p[4], p[5], p[6], p[7], p[2], p[3]};
}

}  // namespace

std::vector<int64_t> NchwToNhwc(const std::vector<int64_t>& v) { return {v[0], v[2], v[3], v[1]}; }

std::vector<int64_t> NhwcToNchw(const std::vector<int64_t>& v) { return {v[0], v[3], v[1], v[2]}; }

absl::Status CheckNhwc(const Node& node, absl::StatusCode code) {
  TFJIT_ASSIGN_OR_RETURN(std::string format, GetStringAttrOr(node, "data_format", "NHWC"));
  if (format == "NHWC") return absl::OkStatus();
  return NodeStatus(code, node,
                    "data_format '%s' is not supported; only NHWC is (as in TF's CPU kernels; "
                    "convert the model with NHWC layout)",
                    format);
}

absl::StatusOr<WindowAttrs> ReadConvAttrs(const Node& node, Layouts layouts) {
  // The layout comes first: NCHW strides ([1, 1, s, s]) would otherwise read as bad strides.
  WindowAttrs a;
  TFJIT_ASSIGN_OR_RETURN(a.nchw, ReadLayout(node, layouts, absl::StatusCode::kUnimplemented));
  TFJIT_ASSIGN_OR_RETURN(a.strides, GetIntListAttr(node, "strides"));
  a.strides = ListToNhwc(a.strides, a.nchw);
  TFJIT_ASSIGN_OR_RETURN(a.padding, ReadPadding(node));
  if (FindAttr(node, "dilations") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(a.dilations, GetIntListAttr(node, "dilations"));
    a.dilations = ListToNhwc(a.dilations, a.nchw);
  }
  for (const auto* list : {&a.strides, &a.dilations}) {
    const char* what = list == &a.strides ? "strides" : "dilations";
    if (list->size() != 4) {
      return NodeInvalid(node, "%s must have 4 entries (NHWC), got %s", what, DimsString(*list));
    }
    if ((*list)[0] != 1 || (*list)[3] != 1) {
      return NodeInvalid(node, "%s in the batch and depth dimensions must be 1, got %s", what,
                         DimsString(*list));
    }
    if ((*list)[1] < 1 || (*list)[2] < 1) {
      return NodeInvalid(node, "%s must be >= 1, got %s", what, DimsString(*list));
    }
  }
  if (a.padding == Padding::kExplicit) {
    TFJIT_ASSIGN_OR_RETURN(a.explicit_paddings, GetIntListAttr(node, "explicit_paddings"));
    a.explicit_paddings = PairsToNhwc(a.explicit_paddings, a.nchw);
    const std::vector<int64_t>& p = a.explicit_paddings;
    if (p.size() != 8 || p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0 ||
        *std::min_element(p.begin(), p.end()) < 0) {
      return NodeInvalid(node,
                         "explicit_paddings must have 8 non-negative entries with zero batch "
                         "and depth padding, got %s",
                         DimsString(p));
    }
  }
  return a;
}

absl::StatusOr<WindowAttrs> ReadPoolAttrs(const Node& node, const std::vector<int64_t>& input_dims,
                                          Layouts layouts) {
  WindowAttrs a;
  TFJIT_ASSIGN_OR_RETURN(a.nchw, ReadLayout(node, layouts, absl::StatusCode::kUnimplemented));
  if (input_dims.size() != 4) {
    return NodeInvalid(node, "input must be 4-dimensional, got %s", DimsString(input_dims));
  }
  TFJIT_ASSIGN_OR_RETURN(a.ksize, GetIntListAttr(node, "ksize"));
  TFJIT_ASSIGN_OR_RETURN(a.strides, GetIntListAttr(node, "strides"));
  a.ksize = ListToNhwc(a.ksize, a.nchw);
  a.strides = ListToNhwc(a.strides, a.nchw);
  TFJIT_ASSIGN_OR_RETURN(a.padding, ReadPadding(node));
  // TF's messages, verbatim where TF has one.
  if (a.ksize.size() != 4) {
    return NodeInvalid(node, "Sliding window ksize field must specify 4 dimensions");
  }
  if (a.strides.size() != 4) {
    return NodeInvalid(node, "Sliding window stride field must specify 4 dimensions");
  }
  if (a.ksize[0] != 1 || a.strides[0] != 1) {
    return NodeInvalid(node, "Pooling is not yet supported on the batch dimension.");
  }
  if (a.ksize[3] != 1 || a.strides[3] != 1) {
    return NodeInvalid(node,
                       "%s does not pool across the depth dimension (ksize[3] and strides[3] "
                       "must be 1), got ksize %s strides %s",
                       node.op(), DimsString(a.ksize), DimsString(a.strides));
  }
  for (int d = 1; d <= 2; ++d) {
    const int64_t k = a.ksize[static_cast<size_t>(d)], s = a.strides[static_cast<size_t>(d)];
    if (k <= 0 || s <= 0) {
      return NodeInvalid(node, "ksize and strides must be positive, got ksize %d stride %d", k, s);
    }
  }
  if (a.padding == Padding::kExplicit) {
    TFJIT_ASSIGN_OR_RETURN(a.explicit_paddings, GetIntListAttr(node, "explicit_paddings"));
    a.explicit_paddings = PairsToNhwc(a.explicit_paddings, a.nchw);
    if (a.explicit_paddings.size() != 8) {
      return NodeInvalid(node, "explicit_paddings must have 8 values, got %d",
                         a.explicit_paddings.size());
    }
  }
  return a;
}

absl::StatusOr<SpatialDim> ComputeSpatialDim(const Node& node, const WindowAttrs& attrs, int d,
                                             int64_t in, int64_t k) {
  const size_t i = static_cast<size_t>(d);
  SpatialDim s;
  s.in = in;
  s.k = k;
  s.stride = attrs.strides[i];
  s.dilation = attrs.dilations[i];
  const int64_t eff = s.effective_k();
  switch (attrs.padding) {
    case Padding::kSame: {
      s.out = (in + s.stride - 1) / s.stride;
      const int64_t total = std::max<int64_t>((s.out - 1) * s.stride + eff - in, 0);
      s.pad_before = total / 2;
      s.pad_after = total - s.pad_before;
      return s;
    }
    case Padding::kExplicit:
      s.pad_before = attrs.explicit_paddings[2 * i];
      s.pad_after = attrs.explicit_paddings[2 * i + 1];
      break;
    case Padding::kValid:
      break;
  }
  // C++ division truncates toward zero, as TF's does: a window that misses the input by less
  // than a stride gives size 0, not an error.
  s.out = (in + s.pad_before + s.pad_after - eff + s.stride) / s.stride;
  if (s.out < 0) {
    return NodeInvalid(node,
                       "Computed output size would be negative: %d [input_size: %d, "
                       "effective_filter_size: %d, stride: %d]",
                       s.out, in, eff, s.stride);
  }
  return s;
}

absl::StatusOr<Window2D> ComputeWindow(const Node& node, const WindowAttrs& attrs, int64_t in_h,
                                       int64_t in_w, int64_t kh, int64_t kw) {
  Window2D w;
  TFJIT_ASSIGN_OR_RETURN(w.h, ComputeSpatialDim(node, attrs, 1, in_h, kh));
  TFJIT_ASSIGN_OR_RETURN(w.w, ComputeSpatialDim(node, attrs, 2, in_w, kw));
  return w;
}

absl::StatusOr<Window2D> PoolWindow(const Node& node, const std::vector<int64_t>& input_dims) {
  TFJIT_ASSIGN_OR_RETURN(WindowAttrs a, ReadPoolAttrs(node, input_dims));
  return ComputeWindow(node, a, input_dims[1], input_dims[2], a.ksize[1], a.ksize[2]);
}

absl::StatusOr<ConvGeometry> Conv2DGeometry(const Node& node, const WindowAttrs& attrs,
                                            const std::vector<int64_t>& input_dims,
                                            const std::vector<int64_t>& filter_dims,
                                            bool depthwise) {
  const std::vector<int64_t>& x = input_dims;
  const std::vector<int64_t>& f = filter_dims;
  if (x.size() != 4 || f.size() != 4) {
    return NodeInvalid(node, "input must be 4-D (NHWC) and filter 4-D, got %s and %s",
                       DimsString(x), DimsString(f));
  }
  ConvGeometry g;
  if (depthwise) {
    if (f[2] != x[3]) {
      return NodeInvalid(node, "filter %s must be [h, w, %d, multiplier] for input %s",
                         DimsString(f), x[3], DimsString(x));
    }
    g.groups = x[3];
    g.out_channels = x[3] * f[3];
  } else {
    if (f[2] == 0 || x[3] % f[2] != 0 || f[3] % (x[3] / f[2]) != 0) {
      return NodeInvalid(node,
                         "input depth must be evenly divisible by filter depth, and the "
                         "filter's output depth by the group count: input %s, filter %s",
                         DimsString(x), DimsString(f));
    }
    g.groups = x[3] / f[2];
    g.out_channels = f[3];
  }
  TFJIT_ASSIGN_OR_RETURN(g.window, ComputeWindow(node, attrs, x[1], x[2], f[0], f[1]));
  return g;
}

absl::StatusOr<Window2D> BackpropInputGeometry(const Node& node, const WindowAttrs& attrs,
                                               const std::vector<int64_t>& input_sizes,
                                               const std::vector<int64_t>& filter_dims,
                                               const std::vector<int64_t>& out_backprop_dims) {
  const std::vector<int64_t>& x = input_sizes;
  const std::vector<int64_t>& f = filter_dims;
  const std::vector<int64_t>& dy = out_backprop_dims;
  if (x.size() != 4 || f.size() != 4 || dy.size() != 4) {
    return NodeInvalid(node,
                       "input_sizes must have 4 entries, filter and out_backprop must be 4-D; "
                       "got input_sizes %s, filter %s, out_backprop %s",
                       DimsString(x), DimsString(f), DimsString(dy));
  }
  if (*std::min_element(x.begin(), x.end()) < 0 || x[3] != f[2] || dy[0] != x[0] || dy[3] != f[3]) {
    return NodeInvalid(node,
                       "input_sizes %s, filter %s and out_backprop %s disagree: need input "
                       "depth = filter in_channels, out_backprop depth = filter out_channels, "
                       "equal batch",
                       DimsString(x), DimsString(f), DimsString(dy));
  }
  TFJIT_ASSIGN_OR_RETURN(Window2D w, ComputeWindow(node, attrs, x[1], x[2], f[0], f[1]));
  if (w.h.out != dy[1] || w.w.out != dy[2]) {
    return NodeInvalid(node,
                       "Conv2DBackpropInput: out_backprop %s does not match the forward output "
                       "size [%d, %d] computed from input_sizes %s and the filter",
                       DimsString(dy), w.h.out, w.w.out, DimsString(x));
  }
  return w;
}

absl::StatusOr<FusedEpilogue> ParseFusedOps(const Node& node) {
  FusedEpilogue e;
  std::vector<std::string> raw, ops;
  if (const tensorflow::AttrValue* v = FindAttr(node, "fused_ops"); v != nullptr) {
    raw.assign(v->list().s().begin(), v->list().s().end());
  }
  for (const std::string& s : raw) ops.push_back(absl::AsciiStrToLower(s));
  TFJIT_ASSIGN_OR_RETURN(e.epsilon, GetFloatAttrOr(node, "epsilon", 1e-4f));
  TFJIT_ASSIGN_OR_RETURN(e.leakyrelu_alpha, GetFloatAttrOr(node, "leakyrelu_alpha", 0.2f));
  auto unsupported = [&] {
    return NodeStatus(absl::StatusCode::kUnimplemented, node,
                      "fused_ops [%s] is not supported; supported: [BiasAdd|FusedBatchNorm|"
                      "NoOp] optionally followed by one of Relu, Relu6, Elu, LeakyRelu, "
                      "Sigmoid, Tanh, Prelu",
                      absl::StrJoin(raw, ","));
  };
  if (!ops.empty()) {
    if (ops[0] == "biasadd") {
      e.bias = true;
      e.num_args = 1;
    } else if (ops[0] == "fusedbatchnorm") {
      e.batch_norm = true;
      e.num_args = 4;
    } else if (ops[0] != "noop") {
      return unsupported();
    }
    if (ops.size() > 2) return unsupported();
  }
  if (ops.size() == 2) {
    static constexpr std::pair<const char*, FusedActivation> kActivations[] = {
        {"relu", FusedActivation::kRelu},       {"relu6", FusedActivation::kRelu6},
        {"elu", FusedActivation::kElu},         {"leakyrelu", FusedActivation::kLeakyRelu},
        {"sigmoid", FusedActivation::kSigmoid}, {"tanh", FusedActivation::kTanh},
        {"prelu", FusedActivation::kPrelu}};
    const auto* it = std::find_if(std::begin(kActivations), std::end(kActivations),
                                  [&](const auto& p) { return ops[1] == p.first; });
    if (it == std::end(kActivations)) return unsupported();
    e.activation = it->second;
    if (e.activation == FusedActivation::kPrelu) ++e.num_args;
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t num_args, GetIntAttrOr(node, "num_args", 0));
  if (num_args != e.num_args || node.num_inputs() < 2 + num_args) {
    return NodeInvalid(node,
                       "fused_ops [%s] needs %d extra input(s) (num_args), but num_args is %d "
                       "and the node has %d input(s)",
                       absl::StrJoin(raw, ","), e.num_args, num_args, node.num_inputs());
  }
  return e;
}

absl::StatusOr<bool> PreluAlphaIsScalar(const Node& node, const std::vector<int64_t>& alpha_dims,
                                        int64_t channels) {
  int64_t elements = 1;
  for (int64_t d : alpha_dims) elements *= d;
  if (elements == 1) return true;
  bool leading_ones = !alpha_dims.empty();
  for (size_t d = 0; d + 1 < alpha_dims.size(); ++d) {
    leading_ones = leading_ones && alpha_dims[d] == 1;
  }
  if (leading_ones && alpha_dims.back() == channels) return false;
  return NodeStatus(absl::StatusCode::kUnimplemented, node,
                    "prelu alpha %s must hold one value or one per output channel (%d)",
                    DimsString(alpha_dims), channels);
}

}  // namespace tfjit::tf
