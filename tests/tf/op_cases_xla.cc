// Differential cases of the xla family (docs/DESIGN.md, "Op families"): XlaDotV2/XlaDot and
// XlaConvV2/XlaConv with their dimension numbers serialized into the string attrs as TF's
// tf2xla wrappers write them. The references compute by another route than the kernel: the
// dot pairs every lhs element with every rhs element and accumulates the pairs whose batch and
// contracting coordinates agree; the convolution scatters every (input, kernel) pair to the
// output position it feeds.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "frontend/proto/xla_data.pb.h"
#include "tests/tf/op_cases.h"

namespace tfjit::optest {
namespace {

using I64s = std::vector<int64_t>;

struct DotSpec {
  std::string name;
  Dims lhs, rhs;
  I64s lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
};

std::string DotBytes(const DotSpec& s) {
  tfjit::xla::DotDimensionNumbers dn;
  for (int64_t d : s.lhs_contracting) dn.add_lhs_contracting_dimensions(d);
  for (int64_t d : s.rhs_contracting) dn.add_rhs_contracting_dimensions(d);
  for (int64_t d : s.lhs_batch) dn.add_lhs_batch_dimensions(d);
  for (int64_t d : s.rhs_batch) dn.add_rhs_batch_dimensions(d);
  return dn.SerializeAsString();
}

int64_t IndexOf(const I64s& v, int64_t d) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == d) return static_cast<int64_t>(i);
  }
  return -1;
}

// DotGeneral by pairs: every (lhs, rhs) element pair whose batch and contracting coordinates
// agree adds its product at (batch, lhs free, rhs free).
RefFn DotRef(DotSpec s, DType out_type) {
  return [s, out_type](const std::vector<Tensor>& in) {
    const Dims &ld = in[0].dims(), &rd = in[1].dims();
    Dims out_dims;
    for (int64_t d : s.lhs_batch) out_dims.push_back(ld[static_cast<size_t>(d)]);
    for (size_t d = 0; d < ld.size(); ++d) {
      if (IndexOf(s.lhs_batch, static_cast<int64_t>(d)) < 0 &&
          IndexOf(s.lhs_contracting, static_cast<int64_t>(d)) < 0) {
        out_dims.push_back(ld[d]);
      }
    }
    for (size_t d = 0; d < rd.size(); ++d) {
      if (IndexOf(s.rhs_batch, static_cast<int64_t>(d)) < 0 &&
          IndexOf(s.rhs_contracting, static_cast<int64_t>(d)) < 0) {
        out_dims.push_back(rd[d]);
      }
    }
    std::vector<double> acc(static_cast<size_t>(Tensor(out_type, out_dims).num_elements()), 0);
    for (int64_t a = 0; a < in[0].num_elements(); ++a) {
      const Dims li = Unravel(a, ld);
      for (int64_t b = 0; b < in[1].num_elements(); ++b) {
        const Dims ri = Unravel(b, rd);
        bool match = true;
        for (size_t k = 0; k < s.lhs_batch.size(); ++k) {
          match &=
              li[static_cast<size_t>(s.lhs_batch[k])] == ri[static_cast<size_t>(s.rhs_batch[k])];
        }
        for (size_t k = 0; k < s.lhs_contracting.size(); ++k) {
          match &= li[static_cast<size_t>(s.lhs_contracting[k])] ==
                   ri[static_cast<size_t>(s.rhs_contracting[k])];
        }
        if (!match) continue;
        Dims o;
        for (int64_t d : s.lhs_batch) o.push_back(li[static_cast<size_t>(d)]);
        for (size_t d = 0; d < ld.size(); ++d) {
          if (IndexOf(s.lhs_batch, static_cast<int64_t>(d)) < 0 &&
              IndexOf(s.lhs_contracting, static_cast<int64_t>(d)) < 0) {
            o.push_back(li[d]);
          }
        }
        for (size_t d = 0; d < rd.size(); ++d) {
          if (IndexOf(s.rhs_batch, static_cast<int64_t>(d)) < 0 &&
              IndexOf(s.rhs_contracting, static_cast<int64_t>(d)) < 0) {
            o.push_back(ri[d]);
          }
        }
        acc[static_cast<size_t>(Ravel(o, out_dims))] +=
            ElementAsDouble(in[0], a) * ElementAsDouble(in[1], b);
      }
    }
    return Build(out_type, out_dims,
                 [&](const Dims& o) { return acc[static_cast<size_t>(Ravel(o, out_dims))]; });
  };
}

struct ConvSpec {
  std::string name;
  Dims lhs, rhs;
  // Dimension numbers: batch, feature, spatial... for input/output; in, out, spatial... for the
  // kernel.
  I64s in_dims, kernel_dims, out_dims;
  I64s strides, padding, lhs_dilation, rhs_dilation;
  int64_t groups = 1;
};

std::string ConvBytes(const ConvSpec& s) {
  tfjit::xla::ConvolutionDimensionNumbers dn;
  dn.set_input_batch_dimension(s.in_dims[0]);
  dn.set_input_feature_dimension(s.in_dims[1]);
  dn.set_kernel_input_feature_dimension(s.kernel_dims[0]);
  dn.set_kernel_output_feature_dimension(s.kernel_dims[1]);
  dn.set_output_batch_dimension(s.out_dims[0]);
  dn.set_output_feature_dimension(s.out_dims[1]);
  for (size_t i = 2; i < s.in_dims.size(); ++i) {
    dn.add_input_spatial_dimensions(s.in_dims[i]);
    dn.add_kernel_spatial_dimensions(s.kernel_dims[i]);
    dn.add_output_spatial_dimensions(s.out_dims[i]);
  }
  return dn.SerializeAsString();
}

// ConvGeneralDilated by scattering: input element x (spatial position p, feature c) and kernel
// element (spatial k, in-feature ci, out-feature f) meet at output position
// (p * lhs_dilation + pad_lo - k * rhs_dilation) / stride when that divides and lies inside,
// and only when c is in f's feature group.
RefFn ConvRef(ConvSpec s, DType out_type) {
  return [s, out_type](const std::vector<Tensor>& in) {
    const Dims &ld = in[0].dims(), &rd = in[1].dims();
    const size_t n = s.in_dims.size() - 2;
    const int64_t k_in = rd[static_cast<size_t>(s.kernel_dims[0])];
    const int64_t k_out = rd[static_cast<size_t>(s.kernel_dims[1])];
    Dims od(ld.size());
    od[static_cast<size_t>(s.out_dims[0])] = ld[static_cast<size_t>(s.in_dims[0])];
    od[static_cast<size_t>(s.out_dims[1])] = k_out;
    for (size_t i = 0; i < n; ++i) {
      const int64_t x = ld[static_cast<size_t>(s.in_dims[i + 2])];
      const int64_t k = rd[static_cast<size_t>(s.kernel_dims[i + 2])];
      const int64_t padded =
          (x - 1) * s.lhs_dilation[i] + 1 + s.padding[2 * i] + s.padding[2 * i + 1];
      const int64_t window = (k - 1) * s.rhs_dilation[i] + 1;
      od[static_cast<size_t>(s.out_dims[i + 2])] =
          padded < window ? 0 : (padded - window) / s.strides[i] + 1;
    }
    std::vector<double> acc(static_cast<size_t>(Tensor(out_type, od).num_elements()), 0);
    for (int64_t a = 0; a < in[0].num_elements(); ++a) {
      const Dims li = Unravel(a, ld);
      const int64_t c = li[static_cast<size_t>(s.in_dims[1])];
      for (int64_t b = 0; b < in[1].num_elements(); ++b) {
        const Dims ki = Unravel(b, rd);
        const int64_t f = ki[static_cast<size_t>(s.kernel_dims[1])];
        const int64_t ci = ki[static_cast<size_t>(s.kernel_dims[0])];
        if (c != (f / (k_out / s.groups)) * k_in + ci) continue;
        Dims o(ld.size());
        o[static_cast<size_t>(s.out_dims[0])] = li[static_cast<size_t>(s.in_dims[0])];
        o[static_cast<size_t>(s.out_dims[1])] = f;
        bool inside = true;
        for (size_t i = 0; i < n && inside; ++i) {
          const int64_t num = li[static_cast<size_t>(s.in_dims[i + 2])] * s.lhs_dilation[i] +
                              s.padding[2 * i] -
                              ki[static_cast<size_t>(s.kernel_dims[i + 2])] * s.rhs_dilation[i];
          const int64_t pos = num / s.strides[i];
          inside = num >= 0 && num % s.strides[i] == 0 &&
                   pos < od[static_cast<size_t>(s.out_dims[i + 2])];
          o[static_cast<size_t>(s.out_dims[i + 2])] = pos;
        }
        if (inside) {
          acc[static_cast<size_t>(Ravel(o, od))] +=
              ElementAsDouble(in[0], a) * ElementAsDouble(in[1], b);
        }
      }
    }
    return Build(out_type, od,
                 [&](const Dims& o) { return acc[static_cast<size_t>(Ravel(o, od))]; });
  };
}

Tensor Ints64Matrix(const I64s& v, int64_t rows) {
  Tensor t = Ints64(v);
  return t.Reshaped({rows, static_cast<int64_t>(v.size()) / rows});
}

}  // namespace

std::vector<OpCase> XlaCases() {
  std::vector<OpCase> cases;
  const std::vector<DotSpec> dots = {
      {"matmul", {3, 4}, {4, 5}, {}, {}, {1}, {0}},
      {"batch", {2, 3, 4}, {2, 4, 5}, {0}, {0}, {2}, {1}},
      // Batch and contracting dims in the middle and at the front, in neither operand's
      // matmul order.
      {"scattered_dims", {4, 2, 3}, {5, 2, 4}, {1}, {1}, {0}, {2}},
      {"two_contracting", {2, 3, 4}, {4, 3, 5}, {}, {}, {1, 2}, {1, 0}},
      {"outer_product", {3}, {4}, {}, {}, {}, {}},
      {"vector_dot", {7}, {7}, {}, {}, {0}, {0}},
      {"empty_free", {0, 4}, {4, 3}, {}, {}, {1}, {0}},
      {"empty_contracting", {3, 0}, {0, 2}, {}, {}, {1}, {0}},
      {"odd_widths", {2, 17, 9}, {2, 9, 13}, {0}, {0}, {2}, {1}},
  };
  for (const DotSpec& s : dots) {
    // XlaDotV2 in float, double and int32, f16 inputs accumulated to f32, and int8 inputs to
    // int32 (the quantized-inference pattern); XlaDot (v1) in float.
    struct Types {
      DType lhs, rhs, out;
      bool v2;
    };
    for (const Types& t : {Types{DType::kFloat32, DType::kFloat32, DType::kFloat32, true},
                           Types{DType::kFloat64, DType::kFloat64, DType::kFloat64, true},
                           Types{DType::kInt32, DType::kInt32, DType::kInt32, true},
                           Types{DType::kFloat16, DType::kFloat16, DType::kFloat32, true},
                           Types{DType::kInt8, DType::kInt8, DType::kInt32, true},
                           Types{DType::kFloat32, DType::kFloat32, DType::kFloat32, false}}) {
      const std::string op = t.v2 ? "XlaDotV2" : "XlaDot";
      OpCase c{absl::StrCat(op, "_", s.name, "_", DTypeHloName(t.lhs), "_", DTypeHloName(t.out)),
               op,
               t.out,
               {s.lhs, s.rhs}};
      c.attrs["dimension_numbers"] = StringAttr(DotBytes(s));
      c.attrs["precision_config"] = StringAttr("");
      if (t.v2) {
        c.has_t = false;
        c.input_dtypes = {t.lhs, t.rhs};
        c.attrs["LhsT"] = TypeAttr(t.lhs);
        c.attrs["RhsT"] = TypeAttr(t.rhs);
        c.attrs["preferred_element_type"] = TypeAttr(t.out);
      }
      c.reference = DotRef(s, t.out);
      cases.push_back(c);
    }
  }
  const std::vector<ConvSpec> convs = {
      // NHWC input, HWIO kernel (TF's layout), SAME-style padding.
      {"nhwc_hwio",
       {1, 5, 5, 2},
       {3, 3, 2, 4},
       {0, 3, 1, 2},
       {2, 3, 0, 1},
       {0, 3, 1, 2},
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       {1, 1}},
      // NCHW input, OIHW kernel, stride 2, no padding, odd sizes.
      {"nchw_oihw_stride2",
       {2, 3, 7, 5},
       {4, 3, 2, 2},
       {0, 1, 2, 3},
       {1, 0, 2, 3},
       {0, 1, 2, 3},
       {2, 2},
       {0, 0, 0, 0},
       {1, 1},
       {1, 1}},
      // 1-D, lhs dilation (a transposed convolution) and rhs dilation together.
      {"dilated_1d", {1, 4, 1}, {3, 1, 2}, {0, 2, 1}, {1, 2, 0}, {0, 2, 1}, {1}, {2, 2}, {2}, {2}},
      // Two feature groups: features 0-1 feed outputs 0-2, features 2-3 outputs 3-5.
      {"feature_groups",
       {1, 4, 4, 4},
       {2, 2, 2, 6},
       {0, 3, 1, 2},
       {2, 3, 0, 1},
       {0, 3, 1, 2},
       {1, 1},
       {0, 1, 1, 0},
       {1, 1},
       {1, 1},
       2},
      // Output layout differs from the input's: NHWC in, NCHW out.
      {"nhwc_to_nchw",
       {2, 4, 3, 3},
       {2, 2, 3, 2},
       {0, 3, 1, 2},
       {2, 3, 0, 1},
       {0, 1, 2, 3},
       {1, 2},
       {1, 0, 0, 1},
       {1, 1},
       {1, 1}},
      // 3-D.
      {"conv3d",
       {1, 3, 4, 4, 1},
       {2, 2, 2, 1, 2},
       {0, 4, 1, 2, 3},
       {3, 4, 0, 1, 2},
       {0, 4, 1, 2, 3},
       {1, 1, 2},
       {0, 0, 1, 0, 0, 1},
       {1, 1, 1},
       {1, 1, 1}},
      // A window larger than the padded input: an empty output.
      {"empty_output",
       {1, 2, 2, 1},
       {3, 3, 1, 1},
       {0, 3, 1, 2},
       {2, 3, 0, 1},
       {0, 3, 1, 2},
       {1, 1},
       {0, 0, 0, 0},
       {1, 1},
       {1, 1}},
  };
  for (const ConvSpec& s : convs) {
    struct Types {
      DType in, out;
      bool v2;
    };
    for (const Types& t :
         {Types{DType::kFloat32, DType::kFloat32, true},
          Types{DType::kFloat64, DType::kFloat64, true}, Types{DType::kInt8, DType::kInt32, true},
          Types{DType::kFloat32, DType::kFloat32, false}}) {
      const std::string op = t.v2 ? "XlaConvV2" : "XlaConv";
      const int64_t n = static_cast<int64_t>(s.strides.size());
      OpCase c{absl::StrCat(op, "_", s.name, "_", DTypeHloName(t.in), "_", DTypeHloName(t.out)),
               op,
               t.out,
               {s.lhs, s.rhs},
               {Ints64(s.strides), Ints64Matrix(s.padding, n), Ints64(s.lhs_dilation),
                Ints64(s.rhs_dilation), Ints64({s.groups}, /*scalar=*/true)}};
      c.attrs["Tindices"] = TypeAttr(DType::kInt64);
      c.attrs["dimension_numbers"] = StringAttr(ConvBytes(s));
      c.attrs["precision_config"] = StringAttr("");
      if (t.v2) {
        c.has_t = false;
        c.input_dtypes = {t.in, t.in};
        c.attrs["LhsT"] = TypeAttr(t.in);
        c.attrs["RhsT"] = TypeAttr(t.in);
        c.attrs["preferred_element_type"] = TypeAttr(t.out);
      }
      c.reference = ConvRef(s, t.out);
      cases.push_back(c);
    }
  }
  return cases;
}

}  // namespace tfjit::optest
