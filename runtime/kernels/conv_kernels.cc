// Convolution-family kernels (NHWC): Conv2D, DepthwiseConv2dNative, Conv2DBackpropInput, the
// fused contractions _FusedConv2D / FusedDepthwiseConv2dNative / _FusedMatMul (formats.md 3.5)
// and tfjs's Prelu.
//
// Conv2D and the transposed convolution gather one patch row per output pixel (im2col) into a
// small per-chunk buffer and multiply it with the filter matrix (Eigen GEMM). Chunks of output
// pixels run on the intra-op pool, and each chunk's fused epilogue runs while it is in cache.
// Depthwise convolution is a direct loop whose inner loop runs over contiguous channels.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

template <typename T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;

absl::Status NodeUnimplemented(const KernelContext& ctx, const std::string& message) {
  return AttachNode(Unimplemented("node '%s' (%s): %s", ctx.node().name(), ctx.node().op(),
                                  message),
                    ctx.node().name(), ctx.node().op());
}

// ---- Window geometry (TF's GetWindowedOutputSize) ----

struct ConvAttrs {
  std::string padding;
  std::vector<int64_t> strides, dilations, explicit_paddings;
};

absl::StatusOr<ConvAttrs> ReadConvAttrs(const KernelContext& ctx) {
  const tf::Node& node = ctx.node();
  TFJIT_ASSIGN_OR_RETURN(std::string format, tf::GetStringAttrOr(node, "data_format", "NHWC"));
  if (format != "NHWC") {
    return NodeUnimplemented(ctx, absl::StrCat("data_format '", format,
                                               "' is not supported on CPU; only NHWC is (TF's "
                                               "CPU kernels also require NHWC)"));
  }
  ConvAttrs a;
  TFJIT_ASSIGN_OR_RETURN(a.strides, tf::GetIntListAttr(node, "strides"));
  TFJIT_ASSIGN_OR_RETURN(a.padding, tf::GetStringAttr(node, "padding"));
  a.dilations = {1, 1, 1, 1};
  if (tf::FindAttr(node, "dilations") != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(a.dilations, tf::GetIntListAttr(node, "dilations"));
  }
  for (const auto* list : {&a.strides, &a.dilations}) {
    const char* what = list == &a.strides ? "strides" : "dilations";
    if (list->size() != 4) {
      return KernelError(ctx, "%s must have 4 entries (NHWC), got [%s]", what,
                         absl::StrJoin(*list, ","));
    }
    if ((*list)[0] != 1 || (*list)[3] != 1) {
      return KernelError(ctx, "%s in the batch and depth dimensions must be 1, got [%s]", what,
                         absl::StrJoin(*list, ","));
    }
    if ((*list)[1] < 1 || (*list)[2] < 1) {
      return KernelError(ctx, "%s must be >= 1, got [%s]", what, absl::StrJoin(*list, ","));
    }
  }
  if (a.padding == "EXPLICIT") {
    TFJIT_ASSIGN_OR_RETURN(a.explicit_paddings, tf::GetIntListAttr(node, "explicit_paddings"));
    const auto& p = a.explicit_paddings;
    if (p.size() != 8 || p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0 ||
        *std::min_element(p.begin(), p.end()) < 0) {
      return KernelError(ctx,
                         "explicit_paddings must have 8 non-negative entries with zero batch "
                         "and depth padding, got [%s]",
                         absl::StrJoin(p, ","));
    }
  } else if (a.padding != "SAME" && a.padding != "VALID") {
    return KernelError(ctx, "padding must be SAME, VALID or EXPLICIT, got '%s'", a.padding);
  }
  return a;
}

struct SpatialDim {
  int64_t in = 0, k = 0, stride = 1, dilation = 1, out = 0, pad_before = 0;
};

// Output size and leading padding of spatial dim `d` (1 = height, 2 = width).
absl::StatusOr<SpatialDim> Spatial(const KernelContext& ctx, const ConvAttrs& a, int d,
                                   int64_t in, int64_t k) {
  SpatialDim s;
  s.in = in;
  s.k = k;
  s.stride = a.strides[static_cast<size_t>(d)];
  s.dilation = a.dilations[static_cast<size_t>(d)];
  const int64_t eff = (k - 1) * s.dilation + 1;
  int64_t padded = in;
  if (a.padding == "SAME") {
    s.out = (in + s.stride - 1) / s.stride;
    const int64_t total = std::max<int64_t>((s.out - 1) * s.stride + eff - in, 0);
    s.pad_before = total / 2;
    return s;
  }
  if (a.padding == "EXPLICIT") {
    s.pad_before = a.explicit_paddings[static_cast<size_t>(2 * d)];
    padded += s.pad_before + a.explicit_paddings[static_cast<size_t>(2 * d + 1)];
  }
  const int64_t num = padded - eff + s.stride;
  if (num < 0) {
    return KernelError(ctx,
                       "Computed output size would be negative: %d [input_size: %d, "
                       "effective_filter_size: %d, stride: %d]",
                       num / s.stride - (num % s.stride != 0), in, eff, s.stride);
  }
  s.out = num / s.stride;
  return s;
}

// ---- Fused epilogues ----

enum class Activation { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kSigmoid, kTanh, kPrelu };

struct EpilogueSpec {
  bool bias = false, batch_norm = false;
  Activation act = Activation::kNone;
  int num_args = 0;  // args the fused_ops need
  float epsilon = 1e-4f, alpha = 0.2f;
};

// fused_ops as TF's remapper and the tfjs converter write them (case-insensitive, as tfjs
// matches): [], [BiasAdd|FusedBatchNorm|NoOp] optionally followed by one activation.
absl::StatusOr<EpilogueSpec> ParseEpilogue(const KernelContext& ctx) {
  EpilogueSpec e;
  const tf::Node& node = ctx.node();
  std::vector<std::string> ops;
  if (const tensorflow::AttrValue* v = tf::FindAttr(node, "fused_ops"); v != nullptr) {
    for (const std::string& s : v->list().s()) ops.push_back(absl::AsciiStrToLower(s));
  }
  TFJIT_ASSIGN_OR_RETURN(e.epsilon, tf::GetFloatAttrOr(node, "epsilon", 1e-4f));
  TFJIT_ASSIGN_OR_RETURN(e.alpha, tf::GetFloatAttrOr(node, "leakyrelu_alpha", 0.2f));
  auto unsupported = [&] {
    std::vector<std::string> raw;
    if (const tensorflow::AttrValue* v = tf::FindAttr(node, "fused_ops"); v != nullptr) {
      raw.assign(v->list().s().begin(), v->list().s().end());
    }
    return NodeUnimplemented(ctx, absl::StrCat("fused_ops [", absl::StrJoin(raw, ","),
                                               "] is not supported; supported: [BiasAdd|"
                                               "FusedBatchNorm|NoOp] optionally followed by one "
                                               "of Relu, Relu6, Elu, LeakyRelu, Sigmoid, Tanh, "
                                               "Prelu"));
  };
  if (ops.empty()) return e;
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
  if (ops.size() == 2) {
    const std::string& a = ops[1];
    if (a == "relu") e.act = Activation::kRelu;
    else if (a == "relu6") e.act = Activation::kRelu6;
    else if (a == "elu") e.act = Activation::kElu;
    else if (a == "leakyrelu") e.act = Activation::kLeakyRelu;
    else if (a == "sigmoid") e.act = Activation::kSigmoid;
    else if (a == "tanh") e.act = Activation::kTanh;
    else if (a == "prelu") e.act = Activation::kPrelu;
    else return unsupported();
    if (e.act == Activation::kPrelu) ++e.num_args;
  }
  TFJIT_ASSIGN_OR_RETURN(int64_t num_args, tf::GetIntAttrOr(node, "num_args", 0));
  if (num_args != e.num_args || ctx.num_inputs() < 2 + num_args) {
    return KernelError(ctx, "fused_ops needs %d extra input(s) (num_args), but num_args is %d "
                       "and the node has %d input(s)", e.num_args, num_args, ctx.num_inputs());
  }
  return e;
}

// The epilogue bound to its argument tensors, applied to rows of `channels` values.
template <typename T>
struct Epilogue {
  EpilogueSpec spec;
  int64_t channels = 0;
  const T* bias = nullptr;
  std::vector<T> bn_mean, bn_scale, bn_offset;  // y = (y - mean) * scale + offset
  const T* alpha = nullptr;
  bool alpha_scalar = false;

  bool empty() const {
    return !spec.bias && !spec.batch_norm && spec.act == Activation::kNone;
  }

  void Apply(T* y, int64_t rows) const {
    const int64_t c_n = channels;
    const T six = T(6), zero = T(0), leaky = static_cast<T>(spec.alpha);
    for (int64_t r = 0; r < rows; ++r) {
      T* row = y + r * c_n;
      if (bias != nullptr) {
        for (int64_t c = 0; c < c_n; ++c) row[c] += bias[c];
      }
      if (spec.batch_norm) {
        for (int64_t c = 0; c < c_n; ++c) {
          row[c] = (row[c] - bn_mean[static_cast<size_t>(c)]) * bn_scale[static_cast<size_t>(c)] +
                   bn_offset[static_cast<size_t>(c)];
        }
      }
      switch (spec.act) {
        case Activation::kNone: break;
        case Activation::kRelu:
          for (int64_t c = 0; c < c_n; ++c) row[c] = row[c] < zero ? zero : row[c];
          break;
        case Activation::kRelu6:
          for (int64_t c = 0; c < c_n; ++c) {
            row[c] = row[c] < zero ? zero : (row[c] > six ? six : row[c]);
          }
          break;
        case Activation::kElu:
          for (int64_t c = 0; c < c_n; ++c) row[c] = row[c] < zero ? std::expm1(row[c]) : row[c];
          break;
        case Activation::kLeakyRelu:
          for (int64_t c = 0; c < c_n; ++c) row[c] = row[c] > zero ? row[c] : row[c] * leaky;
          break;
        case Activation::kSigmoid:
          for (int64_t c = 0; c < c_n; ++c) row[c] = T(1) / (T(1) + std::exp(-row[c]));
          break;
        case Activation::kTanh:
          for (int64_t c = 0; c < c_n; ++c) row[c] = std::tanh(row[c]);
          break;
        case Activation::kPrelu:
          for (int64_t c = 0; c < c_n; ++c) {
            const T a = alpha[alpha_scalar ? 0 : c];
            row[c] = row[c] >= zero ? row[c] : a * row[c];
          }
          break;
      }
    }
  }
};

// Binds the spec's args (inputs 2..) after checking their shapes against `channels`.
template <typename T>
absl::StatusOr<Epilogue<T>> BindEpilogue(const KernelContext& ctx, const EpilogueSpec& spec,
                                         int64_t channels, DType dtype) {
  Epilogue<T> e;
  e.spec = spec;
  e.channels = channels;
  for (int i = 2; i < 2 + spec.num_args; ++i) {
    if (ctx.input(i).dtype() != dtype) {
      return KernelError(ctx, "fused argument %d is %s but the input is %s", i - 2,
                         ctx.input(i).ShapeString(), DTypeName(dtype));
    }
  }
  int next = 2;
  auto vector_arg = [&](const char* what) -> absl::StatusOr<const T*> {
    const Tensor& t = ctx.input(next++);
    if (t.rank() != 1 || t.dim(0) != channels) {
      return KernelError(ctx, "%s must be a vector of the %d output channels, got %s", what,
                         channels, t.ShapeString());
    }
    return t.data<T>();
  };
  if (spec.bias) {
    TFJIT_ASSIGN_OR_RETURN(e.bias, vector_arg("bias"));
  }
  if (spec.batch_norm) {
    TFJIT_ASSIGN_OR_RETURN(const T* scale, vector_arg("batch-norm scale"));
    TFJIT_ASSIGN_OR_RETURN(const T* offset, vector_arg("batch-norm offset"));
    TFJIT_ASSIGN_OR_RETURN(const T* mean, vector_arg("batch-norm mean"));
    TFJIT_ASSIGN_OR_RETURN(const T* variance, vector_arg("batch-norm variance"));
    for (int64_t c = 0; c < channels; ++c) {
      e.bn_mean.push_back(mean[c]);
      e.bn_offset.push_back(offset[c]);
      e.bn_scale.push_back(scale[c] / std::sqrt(variance[c] + static_cast<T>(spec.epsilon)));
    }
  }
  if (spec.act == Activation::kPrelu) {
    const Tensor& a = ctx.input(next++);
    bool leading_ones = true;
    for (int d = 0; d + 1 < a.rank(); ++d) leading_ones = leading_ones && a.dim(d) == 1;
    e.alpha_scalar = a.num_elements() == 1;
    if (!e.alpha_scalar && !(leading_ones && a.rank() >= 1 && a.dim(a.rank() - 1) == channels)) {
      return NodeUnimplemented(ctx, absl::StrCat("prelu alpha ", a.ShapeString(),
                                                 " must hold one value or one per output "
                                                 "channel (", channels, ")"));
    }
    e.alpha = a.data<T>();
  }
  return e;
}

// ---- Patch GEMM driver ----

// out[rows, n] (row-major, leading dim ldo) = patches * weights[k, n] (leading dim ldw), where
// fill(row, dst) writes the k-wide patch of `row`. Runs in chunks of rows on the pool; each
// chunk calls done(first_row, count) when its rows are final (the epilogue).
template <typename T, typename Fill, typename Done>
void PatchGemm(const KernelContext& ctx, int64_t rows, int64_t k, int64_t n, const T* weights,
               int64_t ldw, T* out, int64_t ldo, const Fill& fill, const Done& done) {
  // About 64K patch values per chunk: the buffer stays in L2 while the GEMM streams it.
  const int64_t chunk = std::max<int64_t>(8, 65536 / std::max<int64_t>(k, 1));
  const int64_t chunks = (rows + chunk - 1) / chunk;
  Eigen::Map<const RowMajor<T>, 0, Stride> w(weights, k, n, Stride(ldw));
  ParallelFor(ctx, chunks, chunk * k * n * 2 + 1, [&](int64_t begin, int64_t end) {
    RowMajor<T> patches;
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * chunk, count = std::min(chunk, rows - r0);
      patches.resize(count, k);
      for (int64_t r = 0; r < count; ++r) fill(r0 + r, patches.data() + r * k);
      Eigen::Map<RowMajor<T>, 0, Stride> o(out + r0 * ldo, count, n, Stride(ldo));
      if (k == 0) {
        o.setZero();
      } else {
        o.noalias() = patches * w;
      }
      done(r0, count);
    }
  });
}

// ---- Conv2D / _FusedConv2D ----

template <typename T>
absl::Status Conv2DTyped(KernelContext& ctx, const SpatialDim& h, const SpatialDim& w,
                         const EpilogueSpec& spec, Tensor& out) {
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  const int64_t batch = input.dim(0), in_c = input.dim(3);
  const int64_t group_c = filter.dim(2), out_c = filter.dim(3);
  const int64_t groups = in_c / group_c, group_out = out_c / groups;
  TFJIT_ASSIGN_OR_RETURN(Epilogue<T> epi, BindEpilogue<T>(ctx, spec, out_c, input.dtype()));
  const T* x = input.data<T>();
  const T* f = filter.data<T>();
  T* y = out.data<T>();
  const int64_t rows = batch * h.out * w.out;
  const int64_t k = h.k * w.k * group_c;
  auto done = [&](int64_t r0, int64_t count) {
    if (!epi.empty()) epi.Apply(y + r0 * out_c, count);
  };
  // A 1x1 stride-1 unpadded convolution is a plain matrix product of the pixels.
  const bool pointwise = h.k == 1 && w.k == 1 && h.stride == 1 && w.stride == 1 &&
                         h.out == h.in && w.out == w.in && groups == 1;
  for (int64_t g = 0; g < groups; ++g) {
    const bool last_group = g + 1 == groups;
    auto fill = [&](int64_t row, T* dst) {
      const int64_t ox = row % w.out, oy = (row / w.out) % h.out, n = row / (w.out * h.out);
      if (pointwise) {
        std::copy_n(x + row * in_c, in_c, dst);
        return;
      }
      for (int64_t kh = 0; kh < h.k; ++kh) {
        const int64_t iy = oy * h.stride + kh * h.dilation - h.pad_before;
        for (int64_t kw = 0; kw < w.k; ++kw, dst += group_c) {
          const int64_t ix = ox * w.stride + kw * w.dilation - w.pad_before;
          if (iy < 0 || iy >= h.in || ix < 0 || ix >= w.in) {
            std::fill_n(dst, group_c, T(0));
          } else {
            std::copy_n(x + ((n * h.in + iy) * w.in + ix) * in_c + g * group_c, group_c, dst);
          }
        }
      }
    };
    // The epilogue needs every group's channels: it runs with the last group.
    PatchGemm<T>(ctx, rows, k, group_out, f + g * group_out, out_c, y + g * group_out, out_c,
                 fill, [&](int64_t r0, int64_t count) {
                   if (last_group) done(r0, count);
                 });
  }
  return absl::OkStatus();
}

absl::Status Conv2DKernel(KernelContext& ctx) {
  const bool fused = ctx.node().op() == "_FusedConv2D";
  if (ctx.num_inputs() < 2) return KernelError(ctx, "needs input and filter");
  EpilogueSpec spec;
  if (fused) {
    TFJIT_ASSIGN_OR_RETURN(spec, ParseEpilogue(ctx));
  } else {
    TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  }
  TFJIT_ASSIGN_OR_RETURN(ConvAttrs attrs, ReadConvAttrs(ctx));
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  if (input.rank() != 4 || filter.rank() != 4) {
    return KernelError(ctx, "input must be 4-D (NHWC) and filter 4-D (HWIO), got %s and %s",
                       input.ShapeString(), filter.ShapeString());
  }
  if (input.dtype() != filter.dtype()) {
    return KernelError(ctx, "input and filter dtypes differ: %s vs %s", input.ShapeString(),
                       filter.ShapeString());
  }
  const int64_t in_c = input.dim(3), group_c = filter.dim(2), out_c = filter.dim(3);
  if (group_c == 0 || in_c % group_c != 0 || out_c % (in_c / std::max<int64_t>(group_c, 1)) != 0) {
    return KernelError(ctx,
                       "input depth must be evenly divisible by filter depth, and the filter's "
                       "output depth by the group count: input %s, filter %s",
                       input.ShapeString(), filter.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(SpatialDim h, Spatial(ctx, attrs, 1, input.dim(1), filter.dim(0)));
  TFJIT_ASSIGN_OR_RETURN(SpatialDim w, Spatial(ctx, attrs, 2, input.dim(2), filter.dim(1)));
  Tensor out(input.dtype(), {input.dim(0), h.out, w.out, out_c});
  absl::Status status = absl::OkStatus();
  bool ok = true;
  if (out.num_elements() > 0) {
    ok = DispatchFloat(input.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        status = Conv2DTyped<T>(ctx, h, w, spec, out);
      } else {
        status = UnsupportedDType(ctx, input.dtype(), "float32, float64");
      }
    });
  }
  if (!ok) return UnsupportedDType(ctx, input.dtype(), "float32, float64");
  TFJIT_RETURN_IF_ERROR(status);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- DepthwiseConv2dNative / FusedDepthwiseConv2dNative ----

template <typename T>
absl::Status DepthwiseTyped(KernelContext& ctx, const SpatialDim& h, const SpatialDim& w,
                            const EpilogueSpec& spec, Tensor& out) {
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  const int64_t in_c = input.dim(3), mult = filter.dim(3), out_c = in_c * mult;
  TFJIT_ASSIGN_OR_RETURN(Epilogue<T> epi, BindEpilogue<T>(ctx, spec, out_c, input.dtype()));
  const T* x = input.data<T>();
  const T* f = filter.data<T>();
  T* y = out.data<T>();
  const int64_t out_rows = input.dim(0) * h.out;  // one task = one output image row
  const int64_t cost = w.out * h.k * w.k * out_c * 2 + 1;
  ParallelFor(ctx, out_rows, cost, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / h.out, oy = r % h.out;
      T* row = y + r * w.out * out_c;
      std::fill_n(row, w.out * out_c, T(0));
      for (int64_t ox = 0; ox < w.out; ++ox) {
        T* acc = row + ox * out_c;
        for (int64_t kh = 0; kh < h.k; ++kh) {
          const int64_t iy = oy * h.stride + kh * h.dilation - h.pad_before;
          if (iy < 0 || iy >= h.in) continue;
          for (int64_t kw = 0; kw < w.k; ++kw) {
            const int64_t ix = ox * w.stride + kw * w.dilation - w.pad_before;
            if (ix < 0 || ix >= w.in) continue;
            const T* px = x + ((n * h.in + iy) * w.in + ix) * in_c;
            const T* pf = f + (kh * w.k + kw) * out_c;
            if (mult == 1) {
              for (int64_t c = 0; c < in_c; ++c) acc[c] += px[c] * pf[c];
            } else {
              for (int64_t c = 0; c < in_c; ++c) {
                for (int64_t m = 0; m < mult; ++m) acc[c * mult + m] += px[c] * pf[c * mult + m];
              }
            }
          }
        }
      }
      if (!epi.empty()) epi.Apply(row, w.out);
    }
  });
  return absl::OkStatus();
}

absl::Status DepthwiseKernel(KernelContext& ctx) {
  const bool fused = ctx.node().op() == "FusedDepthwiseConv2dNative";
  if (ctx.num_inputs() < 2) return KernelError(ctx, "needs input and filter");
  EpilogueSpec spec;
  if (fused) {
    TFJIT_ASSIGN_OR_RETURN(spec, ParseEpilogue(ctx));
  } else {
    TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  }
  TFJIT_ASSIGN_OR_RETURN(ConvAttrs attrs, ReadConvAttrs(ctx));
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  if (input.rank() != 4 || filter.rank() != 4 || filter.dim(2) != input.dim(3) ||
      input.dtype() != filter.dtype()) {
    return KernelError(ctx,
                       "input must be 4-D (NHWC) and filter [h, w, in_channels, multiplier] "
                       "of the same dtype with in_channels = input depth; got %s and %s",
                       input.ShapeString(), filter.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(SpatialDim h, Spatial(ctx, attrs, 1, input.dim(1), filter.dim(0)));
  TFJIT_ASSIGN_OR_RETURN(SpatialDim w, Spatial(ctx, attrs, 2, input.dim(2), filter.dim(1)));
  Tensor out(input.dtype(), {input.dim(0), h.out, w.out, input.dim(3) * filter.dim(3)});
  absl::Status status = absl::OkStatus();
  bool ok = true;
  if (out.num_elements() > 0) {
    ok = DispatchFloat(input.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        status = DepthwiseTyped<T>(ctx, h, w, spec, out);
      } else {
        status = UnsupportedDType(ctx, input.dtype(), "float32, float64");
      }
    });
  }
  if (!ok) return UnsupportedDType(ctx, input.dtype(), "float32, float64");
  TFJIT_RETURN_IF_ERROR(status);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Conv2DBackpropInput ----

// dx[n, iy, ix, c] = sum over (kh, kw, o) with iy = oy * stride + kh * dilation - pad_before
// of dy[n, oy, ox, o] * filter[kh, kw, c, o]. Each input pixel gathers its (kh, kw) taps of dy
// into one patch row, multiplied by the filter transposed to [(kh, kw, o), c]; rows are
// independent, so they parallelise without scatter conflicts.
template <typename T>
void BackpropInputTyped(KernelContext& ctx, const SpatialDim& h, const SpatialDim& w,
                        Tensor& out) {
  const Tensor& filter = ctx.input(1);
  const Tensor& dy = ctx.input(2);
  const int64_t in_c = filter.dim(2), out_c = filter.dim(3);
  const int64_t taps = h.k * w.k;
  std::vector<T> wt(static_cast<size_t>(taps * out_c * in_c));
  const T* f = filter.data<T>();
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t c = 0; c < in_c; ++c) {
      for (int64_t o = 0; o < out_c; ++o) {
        wt[static_cast<size_t>((t * out_c + o) * in_c + c)] = f[(t * in_c + c) * out_c + o];
      }
    }
  }
  const T* g = dy.data<T>();
  auto fill = [&](int64_t row, T* dst) {
    const int64_t ix = row % w.in, iy = (row / w.in) % h.in, n = row / (w.in * h.in);
    for (int64_t kh = 0; kh < h.k; ++kh) {
      const int64_t ty = iy + h.pad_before - kh * h.dilation;
      const int64_t oy = ty / h.stride;
      const bool y_ok = ty >= 0 && ty % h.stride == 0 && oy < h.out;
      for (int64_t kw = 0; kw < w.k; ++kw, dst += out_c) {
        const int64_t tx = ix + w.pad_before - kw * w.dilation;
        const int64_t ox = tx / w.stride;
        if (y_ok && tx >= 0 && tx % w.stride == 0 && ox < w.out) {
          std::copy_n(g + ((n * h.out + oy) * w.out + ox) * out_c, out_c, dst);
        } else {
          std::fill_n(dst, out_c, T(0));
        }
      }
    }
  };
  PatchGemm<T>(ctx, out.num_elements() / in_c, taps * out_c, in_c, wt.data(), in_c,
               out.data<T>(), in_c, fill, [](int64_t, int64_t) {});
}

absl::Status BackpropInputKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  TFJIT_ASSIGN_OR_RETURN(ConvAttrs attrs, ReadConvAttrs(ctx));
  std::vector<int64_t> sizes;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(0), "input_sizes", &sizes));
  const Tensor& filter = ctx.input(1);
  const Tensor& dy = ctx.input(2);
  if (sizes.size() != 4 || filter.rank() != 4 || dy.rank() != 4 ||
      filter.dtype() != dy.dtype()) {
    return KernelError(ctx,
                       "input_sizes must have 4 entries, filter and out_backprop must be 4-D "
                       "of one dtype; got input_sizes %s, filter %s, out_backprop %s",
                       DimsString(sizes), filter.ShapeString(), dy.ShapeString());
  }
  if (*std::min_element(sizes.begin(), sizes.end()) < 0 || sizes[3] != filter.dim(2) ||
      dy.dim(0) != sizes[0] || dy.dim(3) != filter.dim(3)) {
    return KernelError(ctx,
                       "input_sizes %s, filter %s and out_backprop %s disagree: need "
                       "input depth = filter in_channels, out_backprop depth = filter "
                       "out_channels, equal batch",
                       DimsString(sizes), filter.ShapeString(), dy.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(SpatialDim h, Spatial(ctx, attrs, 1, sizes[1], filter.dim(0)));
  TFJIT_ASSIGN_OR_RETURN(SpatialDim w, Spatial(ctx, attrs, 2, sizes[2], filter.dim(1)));
  if (h.out != dy.dim(1) || w.out != dy.dim(2)) {
    return KernelError(ctx,
                       "Conv2DBackpropInput: out_backprop %s does not match the forward "
                       "output size [%d, %d] computed from input_sizes %s and the filter",
                       dy.ShapeString(), h.out, w.out, DimsString(sizes));
  }
  Tensor out(dy.dtype(), sizes);
  bool ok = true;
  if (out.num_elements() > 0) {
    ok = DispatchFloat(dy.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        BackpropInputTyped<T>(ctx, h, w, out);
      } else {
        ok = false;
      }
    }) && ok;
  }
  if (!ok) return UnsupportedDType(ctx, dy.dtype(), "float32, float64");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- _FusedMatMul ----

absl::Status FusedMatMulKernel(KernelContext& ctx) {
  if (ctx.num_inputs() < 2) return KernelError(ctx, "needs a and b");
  TFJIT_ASSIGN_OR_RETURN(EpilogueSpec spec, ParseEpilogue(ctx));
  TFJIT_ASSIGN_OR_RETURN(bool ta, tf::GetBoolAttrOr(ctx.node(), "transpose_a", false));
  TFJIT_ASSIGN_OR_RETURN(bool tb, tf::GetBoolAttrOr(ctx.node(), "transpose_b", false));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() != 2 || b.rank() != 2 || a.dtype() != b.dtype()) {
    return KernelError(ctx, "a and b must be matrices of one dtype, got %s and %s",
                       a.ShapeString(), b.ShapeString());
  }
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t kb = tb ? b.dim(1) : b.dim(0), n = tb ? b.dim(0) : b.dim(1);
  if (k != kb) {
    return KernelError(ctx,
                       "Matrix size-incompatible: In[0]: %s, In[1]: %s (transpose_a=%d, "
                       "transpose_b=%d)",
                       a.ShapeString(), b.ShapeString(), ta, tb);
  }
  Tensor out(a.dtype(), {m, n});
  absl::Status status = absl::OkStatus();
  const bool ok = DispatchFloat(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      absl::StatusOr<Epilogue<T>> epi = BindEpilogue<T>(ctx, spec, n, a.dtype());
      if (!epi.ok()) {
        status = epi.status();
        return;
      }
      Eigen::Map<const RowMajor<T>> am(a.data<T>(), a.dim(0), a.dim(1));
      Eigen::Map<const RowMajor<T>> bm(b.data<T>(), b.dim(0), b.dim(1));
      const RowMajor<T> bt = tb ? RowMajor<T>(bm.transpose()) : RowMajor<T>(bm);
      const int64_t chunk = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n));
      const int64_t chunks = (m + chunk - 1) / chunk;
      ParallelFor(ctx, chunks, chunk * k * n * 2 + 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          const int64_t r0 = c * chunk, count = std::min(chunk, m - r0);
          Eigen::Map<RowMajor<T>> o(out.data<T>() + r0 * n, count, n);
          if (k == 0) {
            o.setZero();
          } else if (ta) {
            o.noalias() = am.transpose().middleRows(r0, count) * bt;
          } else {
            o.noalias() = am.middleRows(r0, count) * bt;
          }
          if (!epi->empty()) epi->Apply(o.data(), count);
        }
      });
    } else {
      status = UnsupportedDType(ctx, a.dtype(), "float32, float64");
    }
  });
  if (!ok) return UnsupportedDType(ctx, a.dtype(), "float32, float64");
  TFJIT_RETURN_IF_ERROR(status);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Prelu ----

// y = x >= 0 ? x : alpha * x, alpha broadcast against x (NumPy rules), as tfjs's prelu.
absl::Status PreluKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& alpha = ctx.input(1);
  if (x.dtype() != alpha.dtype()) {
    return KernelError(ctx, "x and alpha dtypes differ: %s vs %s", x.ShapeString(),
                       alpha.ShapeString());
  }
  std::optional<BroadcastPlan> plan = MakeBroadcastPlan({x.dims(), alpha.dims()});
  if (!plan.has_value()) {
    return KernelError(ctx, "x %s and alpha %s are not broadcast-compatible", x.ShapeString(),
                       alpha.ShapeString());
  }
  Tensor out(x.dtype(), plan->out_dims);
  const bool ok = DispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* px = x.data<T>();
    const T* pa = alpha.data<T>();
    T* py = out.data<T>();
    ParallelFor(ctx, plan->num_elements, 4, [&](int64_t begin, int64_t end) {
      ForEachRun(*plan, begin, end, [&](int64_t i, const int64_t* off, int64_t len) {
        const int64_t sx = plan->inner_stride(0), sa = plan->inner_stride(1);
        for (int64_t j = 0; j < len; ++j) {
          const C v = static_cast<C>(px[off[0] + j * sx]);
          const C a = static_cast<C>(pa[off[1] + j * sa]);
          py[i + j] = static_cast<T>(v >= C(0) ? v : a * v);
        }
      });
    });
  });
  if (!ok) return UnsupportedDType(ctx, x.dtype(), "float16, bfloat16, float32, float64");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterConvKernels(KernelRegistry& registry) {
  registry.Register("Conv2D", &Conv2DKernel);
  registry.Register("_FusedConv2D", &Conv2DKernel);
  registry.Register("DepthwiseConv2dNative", &DepthwiseKernel);
  registry.Register("FusedDepthwiseConv2dNative", &DepthwiseKernel);
  registry.Register("Conv2DBackpropInput", &BackpropInputKernel);
  registry.Register("_FusedMatMul", &FusedMatMulKernel);
  registry.Register("Prelu", &PreluKernel);
}

}  // namespace tfjit::runtime
