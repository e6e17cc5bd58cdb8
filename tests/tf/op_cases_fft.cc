// Differential cases of the fft family (FFT/IFFT/RFFT/IRFFT, 1-3 D) and the complex math ops
// (Complex, Real, Imag, Angle, Conj, ComplexAbs and the complex paths of Add, Mul, Cast, Sum,
// MatMul, data movement, ...). The ops tfjit compiles with complex values (CompilesComplex)
// run three ways; jit all must refuse the others. References are independent: naive O(n^2) DFTs and
// std::complex formulas written here.
#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "tests/tf/op_cases.h"

namespace tfjit::optest {
namespace {

using C = std::complex<double>;

C GetC(const Tensor& t, int64_t k) { return ElementAsComplex(t, k); }

void SetC(Tensor& t, int64_t k, C v) {
  if (t.dtype() == DType::kComplex64) {
    t.data<complex64>()[k] = complex64(static_cast<float>(v.real()), static_cast<float>(v.imag()));
  } else if (t.dtype() == DType::kComplex128) {
    t.data<complex128>()[k] = v;
  } else {
    SetFromDouble(t, k, v.real());
  }
}

int64_t Prod(const Dims& d, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= d[i];
  return n;
}

// Naive multi-dim DFT over the last `r` dims of a [batch..., n_1..n_r] complex array (given
// as doubles), of lengths `n` (the input is cropped to them; every input dim is >= n).
// sign -1 forward, +1 inverse (unscaled).
std::vector<C> NaiveDft(const std::vector<C>& in, const Dims& in_dims, const Dims& n, int sign) {
  const size_t r = n.size();
  const size_t lead = in_dims.size() - r;
  const int64_t batch = Prod(in_dims, 0, lead);
  const int64_t in_block = Prod(in_dims, lead, in_dims.size());
  const int64_t block = Prod(n, 0, r);
  std::vector<C> out(static_cast<size_t>(batch * block));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t ko = 0; ko < block; ++ko) {
      const Dims k = Unravel(ko, n);
      C sum = 0;
      for (int64_t jo = 0; jo < block; ++jo) {
        const Dims j = Unravel(jo, n);
        double phase = 0;
        for (size_t d = 0; d < r; ++d) {
          phase += static_cast<double>(k[d] * j[d] % n[d]) / static_cast<double>(n[d]);
        }
        Dims idx(j);
        const int64_t src =
            Ravel(idx, Dims(in_dims.begin() + static_cast<long>(lead), in_dims.end()));
        sum += in[static_cast<size_t>(b * in_block + src)] *
               std::polar(1.0, sign * 2 * std::numbers::pi * phase);
      }
      out[static_cast<size_t>(b * block + ko)] = sum;
    }
  }
  return out;
}

std::vector<C> ToComplex(const Tensor& t) {
  std::vector<C> v(static_cast<size_t>(t.num_elements()));
  for (int64_t k = 0; k < t.num_elements(); ++k) v[static_cast<size_t>(k)] = GetC(t, k);
  return v;
}

DType ComplexFor(DType real) {
  return real == DType::kFloat64 ? DType::kComplex128 : DType::kComplex64;
}
DType RealFor(DType complex) {
  return complex == DType::kComplex128 ? DType::kFloat64 : DType::kFloat32;
}

// FFT/IFFT reference: the DFT over the last r dims, scaled 1/N when inverse.
RefFn FftRef(int r, bool forward) {
  return [r, forward](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    const Dims n(x.dims().end() - r, x.dims().end());
    std::vector<C> y = NaiveDft(ToComplex(x), x.dims(), n, forward ? -1 : 1);
    Tensor out(x.dtype(), x.dims());
    const double scale = forward ? 1.0 : 1.0 / static_cast<double>(Prod(n, 0, n.size()));
    for (int64_t k = 0; k < out.num_elements(); ++k)
      SetC(out, k, y[static_cast<size_t>(k)] * scale);
    return out;
  };
}

// RFFT reference: the full DFT of the cropped real input, keeping n/2 + 1 of the last dim.
RefFn RfftRef(const Dims& len) {
  return [len](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    const size_t r = len.size(), lead = x.dims().size() - r;
    std::vector<C> y = NaiveDft(ToComplex(x), x.dims(), len, -1);
    Dims out_dims(x.dims().begin(), x.dims().begin() + static_cast<long>(lead));
    for (size_t i = 0; i < r; ++i) {
      out_dims.push_back(i + 1 == r && len[i] != 0 ? len[i] / 2 + 1 : len[i]);
    }
    Tensor out(ComplexFor(x.dtype()), out_dims);
    const Dims inner_out(out_dims.begin() + static_cast<long>(lead), out_dims.end());
    const int64_t block_out = Prod(inner_out, 0, r), block = Prod(len, 0, r);
    for (int64_t k = 0; k < out.num_elements(); ++k) {
      const int64_t b = k / block_out;
      const Dims idx = Unravel(k % block_out, inner_out);
      SetC(out, k, y[static_cast<size_t>(b * block + Ravel(idx, len))]);
    }
    return out;
  };
}

// IRFFT reference: inverse DFT over the outer r-1 dims of the cropped half spectrum, then the
// 1-D Hermitian formula on the last dim: x[t] = (Re X0 + 2 sum_k Re(X_k w^kt) + Re X_{n/2}
// (-1)^t) / N.
RefFn IrfftRef(const Dims& len) {
  return [len](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    const size_t r = len.size(), lead = x.dims().size() - r;
    const int64_t n_last = len.back(), half = n_last / 2 + 1;
    Dims half_dims = len;
    half_dims.back() = half;
    // Crop the input to half_dims.
    const Dims in_inner(x.dims().begin() + static_cast<long>(lead), x.dims().end());
    const int64_t batch = Prod(x.dims(), 0, lead);
    const int64_t hb = Prod(half_dims, 0, r), ib = Prod(in_inner, 0, r);
    std::vector<C> cropped(static_cast<size_t>(batch * hb));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t k = 0; k < hb; ++k) {
        cropped[static_cast<size_t>(b * hb + k)] =
            GetC(x, b * ib + Ravel(Unravel(k, half_dims), in_inner));
      }
    }
    // For each last-dim index, a naive inverse DFT over the outer dims [0, r-1).
    const Dims outer(len.begin(), len.end() - 1);
    const int64_t ob = Prod(outer, 0, outer.size());
    std::vector<C> mid(cropped.size());
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t m = 0; m < ob; ++m) {
        const Dims mi = Unravel(m, outer);
        for (int64_t t = 0; t < half; ++t) {
          C sum = 0;
          for (int64_t j = 0; j < ob; ++j) {
            const Dims ji = Unravel(j, outer);
            double phase = 0;
            for (size_t d = 0; d < outer.size(); ++d) {
              phase +=
                  static_cast<double>(mi[d] * ji[d] % outer[d]) / static_cast<double>(outer[d]);
            }
            sum += cropped[static_cast<size_t>(b * hb + j * half + t)] *
                   std::polar(1.0, 2 * std::numbers::pi * phase);
          }
          mid[static_cast<size_t>(b * hb + m * half + t)] = sum;
        }
      }
    }
    Dims out_dims(x.dims().begin(), x.dims().begin() + static_cast<long>(lead));
    for (int64_t d : len) out_dims.push_back(d);
    Tensor out(RealFor(x.dtype()), out_dims);
    const double scale = 1.0 / static_cast<double>(Prod(len, 0, r));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t m = 0; m < ob; ++m) {
        const C* X = &mid[static_cast<size_t>(b * hb + m * half)];
        for (int64_t t = 0; t < n_last; ++t) {
          double v = X[0].real();
          for (int64_t k = 1; 2 * k < n_last; ++k) {
            v += 2 * (X[k] *
                      std::polar(1.0, 2 * std::numbers::pi * static_cast<double>(k * t % n_last) /
                                          static_cast<double>(n_last)))
                         .real();
          }
          if (n_last % 2 == 0) v += X[n_last / 2].real() * (t % 2 == 0 ? 1.0 : -1.0);
          SetFromDouble(out, (b * ob + m) * n_last + t, v * scale);
        }
      }
    }
    return out;
  };
}

// Compiled transforms are DFT products in the part type: with inputs in [-1, 1] an output's
// rounding error is about eps * n for n points (the kernel computes in double).
double TransformTolerance(DType t, int64_t n) {
  const bool single = t == DType::kFloat32 || t == DType::kComplex64;
  return (single ? 2e-7 : 4e-16) * static_cast<double>(std::max<int64_t>(n, 1));
}

OpCase FftCase(const char* op, int r, bool forward, DType t, const Dims& shape) {
  OpCase c{absl::StrCat(op, "_", DTypeName(t), "_", DimsName(shape)), op, t, {shape}};
  c.has_t = false;
  c.attrs["Tcomplex"] = TypeAttr(t);
  c.reference = FftRef(r, forward);
  c.atol = TransformTolerance(t, Prod(shape, shape.size() - static_cast<size_t>(r), shape.size()));
  return c;
}

OpCase RealFftCase(const char* op, bool forward, DType real, const Dims& shape, const Dims& len) {
  const DType complex = ComplexFor(real);
  const DType in = forward ? real : complex;
  std::vector<int32_t> l(len.begin(), len.end());
  OpCase c{absl::StrCat(op, "_", DTypeName(in), "_", DimsName(shape), "_len", DimsName(len)),
           op,
           in,
           {shape},
           {Ints(l)}};
  c.has_t = false;
  c.attrs["Treal"] = TypeAttr(real);
  c.attrs["Tcomplex"] = TypeAttr(complex);
  c.reference = forward ? RfftRef(len) : IrfftRef(len);
  c.atol = TransformTolerance(real, Prod(len, 0, len.size()));
  return c;
}

// Elementwise references on complex values.
RefFn ComplexUnaryRef(std::function<C(C)> f, DType out = DType::kInvalid) {
  return [f, out](const std::vector<Tensor>& in) {
    Tensor y(out == DType::kInvalid ? in[0].dtype() : out, in[0].dims());
    for (int64_t k = 0; k < y.num_elements(); ++k) SetC(y, k, f(GetC(in[0], k)));
    return y;
  };
}

// Broadcasting binary reference (numpy rules, right-aligned).
RefFn ComplexBinaryRef(std::function<C(C, C)> f, DType out = DType::kInvalid) {
  return [f, out](const std::vector<Tensor>& in) {
    const Tensor& a = in[0];
    const Tensor& b = in[1];
    const size_t rank = std::max(a.dims().size(), b.dims().size());
    Dims od(rank);
    auto dim_of = [&](const Tensor& t, size_t i) -> int64_t {
      const size_t off = rank - t.dims().size();
      return i < off ? 1 : t.dims()[i - off];
    };
    for (size_t i = 0; i < rank; ++i) {  // a 1 takes the other size (0 included)
      od[i] = dim_of(a, i) == 1 ? dim_of(b, i) : dim_of(a, i);
    }
    DType ot = out == DType::kInvalid
                   ? (IsComplexDType(a.dtype()) ? a.dtype() : ComplexFor(a.dtype()))
                   : out;
    Tensor y(ot, od);
    auto index_in = [&](const Tensor& t, const Dims& o) {
      const size_t off = rank - t.dims().size();
      Dims idx;
      for (size_t i = off; i < rank; ++i) idx.push_back(t.dims()[i - off] == 1 ? 0 : o[i]);
      return Ravel(idx, t.dims());
    };
    for (int64_t k = 0; k < y.num_elements(); ++k) {
      const Dims o = Unravel(k, od);
      SetC(y, k, f(GetC(a, index_in(a, o)), GetC(b, index_in(b, o))));
    }
    return y;
  };
}

// The ops tfjit compiles with complex values (compiler/tf2hlo/complex_values.h: the fft and
// math_complex families, the complex arithmetic and comparisons, Cast, MatMul and the linear
// ops). Their cases run three ways; the others stay kernel-only, and must-compile mode must
// refuse them.
bool CompilesComplex(const std::string& op) {
  static const std::set<std::string> ops = {
      "FFT", "IFFT", "FFT2D", "IFFT2D", "FFT3D", "IFFT3D", "RFFT", "IRFFT", "RFFT2D", "IRFFT2D",
      "RFFT3D", "IRFFT3D", "Complex", "Real", "Imag", "Conj", "ComplexAbs", "Angle", "Mul", "Div",
      "RealDiv", "DivNoNan", "MulNoNan", "SquaredDifference", "Square", "Reciprocal", "Inv", "Exp",
      "Log", "Sqrt", "Rsqrt", "Sign", "Tanh", "Tan", "Sin", "Cos", "Sinh", "Cosh", "Expm1", "Log1p",
      "Sigmoid", "OnesLike", "Pow", "Xdivy", "Xlogy", "Equal", "NotEqual", "Prod", "Cumprod",
      "Asin", "Acos", "Atan", "Asinh", "Acosh", "Atanh", "Einsum", "ApproximateEqual", "Cast",
      "MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3",
      // Linear: the real lowering once per part.
      "Add", "AddN", "AddV2", "BroadcastTo", "Concat", "ConcatV2", "Cumsum", "ExpandDims", "Fill",
      "Gather", "GatherNd", "GatherV2", "Identity", "Mean", "MirrorPad", "Neg", "Pack", "Pad",
      "PadV2", "Reshape", "ReverseV2", "Select", "SelectV2", "Slice", "Snapshot", "Split", "SplitV",
      "Squeeze", "StopGradient", "StridedSlice", "Sub", "Sum", "Tile", "Transpose", "Unpack",
      "ZerosLike", "EnsureShape", "IdentityN", "Rank", "Roll", "Shape", "ShapeN", "Size", "BiasAdd",
      "ConjugateTranspose"};
  return ops.count(op) > 0;
}

OpCase Kernel(OpCase c) {
  c.kernel_only = !CompilesComplex(c.op);
  return c;
}

}  // namespace

std::vector<OpCase> FftCases() {
  std::vector<OpCase> cases;
  const DType c64 = DType::kComplex64, c128 = DType::kComplex128;
  // ---- FFT / IFFT (1-3 D) ----
  for (DType t : {c64, c128}) {
    for (const Dims& s : {Dims{8}, Dims{3, 5}, Dims{2, 7}, Dims{1}, Dims{0, 4}, Dims{3, 0}}) {
      cases.push_back(FftCase("FFT", 1, true, t, s));
      cases.push_back(FftCase("IFFT", 1, false, t, s));
    }
    for (const Dims& s : {Dims{4, 6}, Dims{2, 3, 5}}) {
      cases.push_back(FftCase("FFT2D", 2, true, t, s));
      cases.push_back(FftCase("IFFT2D", 2, false, t, s));
    }
    for (const Dims& s : {Dims{2, 3, 4}, Dims{2, 3, 2, 5}}) {
      cases.push_back(FftCase("FFT3D", 3, true, t, s));
      cases.push_back(FftCase("IFFT3D", 3, false, t, s));
    }
  }
  cases.push_back(FftCase("FFT", 1, true, c64, {2, 64}));
  // Lengths with a prime factor > 64 (Bluestein's algorithm in the kernel).
  cases.push_back(FftCase("FFT", 1, true, c64, {2, 67}));
  cases.push_back(FftCase("IFFT", 1, false, c128, {134}));
  cases.push_back(FftCase("FFT2D", 2, true, c128, {3, 71}));
  cases.push_back(RealFftCase("RFFT", true, DType::kFloat32, {2, 131}, {131}));
  cases.push_back(RealFftCase("IRFFT", false, DType::kFloat64, {72}, {142}));
  cases.push_back(RealFftCase("IRFFT", false, DType::kFloat32, {2, 70}, {139}));
  // ---- RFFT / IRFFT: fft_length equal to or cropping the input ----
  for (DType r : {DType::kFloat32, DType::kFloat64}) {
    cases.push_back(RealFftCase("RFFT", true, r, {3, 8}, {8}));
    cases.push_back(RealFftCase("RFFT", true, r, {2, 9}, {7}));
    cases.push_back(RealFftCase("RFFT", true, r, {5}, {1}));
    cases.push_back(RealFftCase("RFFT", true, r, {4}, {0}));
    cases.push_back(RealFftCase("RFFT2D", true, r, {2, 4, 6}, {4, 6}));
    cases.push_back(RealFftCase("RFFT2D", true, r, {5, 7}, {3, 5}));
    cases.push_back(RealFftCase("RFFT3D", true, r, {2, 3, 4}, {2, 3, 4}));
    cases.push_back(RealFftCase("IRFFT", false, r, {3, 5}, {8}));
    cases.push_back(RealFftCase("IRFFT", false, r, {2, 6}, {9}));
    cases.push_back(RealFftCase("IRFFT", false, r, {4}, {6}));
    cases.push_back(RealFftCase("IRFFT", false, r, {2}, {1}));
    cases.push_back(RealFftCase("IRFFT2D", false, r, {3, 4}, {3, 6}));
    cases.push_back(RealFftCase("IRFFT2D", false, r, {2, 4, 5}, {3, 7}));
    cases.push_back(RealFftCase("IRFFT3D", false, r, {2, 3, 3}, {2, 3, 4}));
  }

  // ---- Complex, Real, Imag, Angle, ComplexAbs, Conj ----
  for (DType r : {DType::kFloat32, DType::kFloat64}) {
    const DType c = ComplexFor(r);
    for (const auto& [a, b] : std::vector<std::pair<Dims, Dims>>{
             {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{}, {4}}, {{0, 2}, {2}}}) {
      OpCase k{absl::StrCat("Complex_", DTypeName(r), "_", DimsName(a), "_", DimsName(b)),
               "Complex",
               r,
               {a, b}};
      k.attrs["Tout"] = TypeAttr(c);
      k.reference = ComplexBinaryRef([](C x, C y) { return C(x.real(), y.real()); }, c);
      cases.push_back(Kernel(k));
    }
    const std::vector<std::pair<const char*, std::function<C(C)>>> parts = {
        {"Real", [](C x) { return C(x.real()); }},
        {"Imag", [](C x) { return C(x.imag()); }},
        {"Angle", [](C x) { return C(std::atan2(x.imag(), x.real())); }},
        {"ComplexAbs", [](C x) { return C(std::hypot(x.real(), x.imag())); }}};
    for (const auto& [op, f] : parts) {
      for (const Dims& s : {Dims{}, Dims{7}, Dims{3, 4}, Dims{0}}) {
        OpCase k{absl::StrCat(op, "_", DTypeName(c), "_", DimsName(s)), op, c, {s}};
        k.attrs["Tout"] = TypeAttr(r);
        k.reference = ComplexUnaryRef(f, r);
        cases.push_back(Kernel(k));
      }
    }
    OpCase conj{absl::StrCat("Conj_", DTypeName(c)), "Conj", c, {{3, 5}}};
    conj.reference = ComplexUnaryRef([](C x) { return std::conj(x); });
    cases.push_back(Kernel(conj));
  }

  // ---- Complex paths of existing elementwise ops ----
  const std::vector<std::pair<const char*, std::function<C(C, C)>>> binaries = {
      {"Add", [](C x, C y) { return x + y; }}, {"AddV2", [](C x, C y) { return x + y; }},
      {"Sub", [](C x, C y) { return x - y; }}, {"Mul", [](C x, C y) { return x * y; }},
      {"Div", [](C x, C y) { return x / y; }}, {"RealDiv", [](C x, C y) { return x / y; }}};
  for (DType c : {c64, c128}) {
    for (const auto& [op, f] : binaries) {
      for (const auto& [a, b] : std::vector<std::pair<Dims, Dims>>{
               {{2, 3}, {2, 3}}, {{4, 1}, {1, 5}}, {{}, {3}}, {{0, 3}, {3}}}) {
        OpCase k{
            absl::StrCat(op, "_", DTypeName(c), "_", DimsName(a), "_", DimsName(b)), op, c, {a, b}};
        k.reference = ComplexBinaryRef(f);
        cases.push_back(Kernel(k));
      }
    }
    for (const char* op : {"Equal", "NotEqual"}) {
      OpCase k{absl::StrCat(op, "_", DTypeName(c)), op, c, {{3, 4}, {3, 4}}};
      // Random feeds differ; feed fixed values with some equal elements.
      Tensor a(c, {2, 3}), b(c, {2, 3});
      for (int64_t i = 0; i < 6; ++i) {
        SetC(a, i, C(i % 3, i % 2));
        SetC(b, i, C(i % 3, i < 3 ? i % 2 : 1));
      }
      k.inputs = {{2, 3}, {2, 3}};
      k.feed_values = {a, b};
      const bool eq = std::string(op) == "Equal";
      k.reference = [eq](const std::vector<Tensor>& in) {
        Tensor y(DType::kBool, in[0].dims());
        for (int64_t i = 0; i < y.num_elements(); ++i) {
          y.data<bool>()[i] = (GetC(in[0], i) == GetC(in[1], i)) == eq;
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    const std::vector<std::pair<const char*, std::function<C(C)>>> unaries = {
        {"Neg", [](C x) { return -x; }},
        {"Square", [](C x) { return x * x; }},
        {"Exp", [](C x) { return std::exp(x); }},
        {"Log", [](C x) { return std::log(x); }},
        {"Sqrt", [](C x) { return std::sqrt(x); }},
        {"Rsqrt", [](C x) { return 1.0 / std::sqrt(x); }},
        {"Reciprocal", [](C x) { return 1.0 / x; }},
        {"Sign", [](C x) { return x == C(0) ? C(0) : x / std::abs(x); }},
        {"Tanh", [](C x) { return std::tanh(x); }},
        {"Sin", [](C x) { return std::sin(x); }},
        {"Cos", [](C x) { return std::cos(x); }}};
    for (const auto& [op, f] : unaries) {
      OpCase k{absl::StrCat(op, "_", DTypeName(c), "_3x5"), op, c, {{3, 5}}};
      k.reference = ComplexUnaryRef(f);
      cases.push_back(Kernel(k));
    }
    const std::vector<std::pair<const char*, std::function<C(C, C)>>> more_binaries = {
        {"SquaredDifference", [](C x, C y) { return (x - y) * std::conj(x - y); }},
        {"Pow", [](C x, C y) { return std::pow(x, y); }},
        {"Xdivy", [](C x, C y) { return x == C(0) ? C(0) : x / y; }},
        {"Xlogy", [](C x, C y) { return x == C(0) ? C(0) : x * std::log(y); }},
        {"DivNoNan", [](C x, C y) { return y == C(0) ? C(0) : x / y; }},
        {"MulNoNan", [](C x, C y) { return y == C(0) ? C(0) : x * y; }}};
    for (const auto& [op, f] : more_binaries) {
      OpCase k{absl::StrCat(op, "_", DTypeName(c), "_2x3_3"), op, c, {{2, 3}, {3}}};
      k.reference = ComplexBinaryRef(f);
      cases.push_back(Kernel(k));
    }
    {
      // DivNoNan / MulNoNan with zero divisors: fixed feeds.
      Tensor x(c, {3}), y(c, {3});
      SetC(x, 0, C(1, 2));
      SetC(x, 1, C(-3, 0.5));
      SetC(x, 2, C(0, 0));
      SetC(y, 0, C(0, 0));
      SetC(y, 1, C(2, -1));
      SetC(y, 2, C(0, 0));
      for (const char* op : {"DivNoNan", "MulNoNan"}) {
        OpCase k{absl::StrCat(op, "_", DTypeName(c), "_zeros"), op, c, {{3}, {3}}};
        k.feed_values = {x, y};
        const bool div = std::string(op) == "DivNoNan";
        k.reference = ComplexBinaryRef([div](C a, C b) {
          return b == C(0) ? C(0) : div ? a / b : a * b;
        });
        cases.push_back(Kernel(k));
      }
    }
    const std::vector<std::pair<const char*, std::function<C(C)>>> more_unaries = {
        {"Expm1", [](C x) { return std::exp(x) - 1.0; }},
        {"Log1p", [](C x) { return std::log(1.0 + x); }},
        {"Tan", [](C x) { return std::tan(x); }},
        {"Sinh", [](C x) { return std::sinh(x); }},
        {"Cosh", [](C x) { return std::cosh(x); }},
        {"Sigmoid", [](C x) { return 1.0 / (1.0 + std::exp(-x)); }},
        {"Inv", [](C x) { return 1.0 / x; }}};
    for (const auto& [op, f] : more_unaries) {
      OpCase k{absl::StrCat(op, "_", DTypeName(c), "_7"), op, c, {{7}}};
      k.reference = ComplexUnaryRef(f);
      cases.push_back(Kernel(k));
    }
    // Inverse trigonometry (and the square root and log it is built on): random values, then
    // both sides of every branch cut (C99: a zero imaginary part's sign picks the side; the
    // cuts lie on the real axis beyond ±1 or below 1 and on the imaginary axis beyond ±i),
    // the points ±1 and ±i, zero and large values.
    const std::vector<std::pair<const char*, std::function<C(C)>>> inverse = {
        {"Asin", [](C x) { return std::asin(x); }},   {"Acos", [](C x) { return std::acos(x); }},
        {"Atan", [](C x) { return std::atan(x); }},   {"Asinh", [](C x) { return std::asinh(x); }},
        {"Acosh", [](C x) { return std::acosh(x); }}, {"Atanh", [](C x) { return std::atanh(x); }},
        {"Sqrt", [](C x) { return std::sqrt(x); }},   {"Log", [](C x) { return std::log(x); }}};
    const double nz = -0.0;
    const std::vector<C> cut_points = {
        C(2, 0),     C(2, nz),  C(-2, 0),       C(-2, nz),   C(0.5, 0),     C(0.5, nz),
        C(-0.5, nz), C(0, 2),   C(nz, 2),       C(0, -2),    C(nz, -2),     C(0, 0.5),
        C(1, 0),     C(-1, 0),  C(0, 1),        C(0, -1),    C(0, 0),       C(nz, nz),
        C(3, 4),     C(-3, -4), C(1e-4, -2e-4), C(120, -75), C(-0.9, 1e-3), C(1.5, -1e-6)};
    for (const auto& [op, f] : inverse) {
      if (std::string(op) != "Sqrt" && std::string(op) != "Log") {
        OpCase k{absl::StrCat(op, "_", DTypeName(c), "_3x5"), op, c, {{3, 5}}};
        k.reference = ComplexUnaryRef(f);
        cases.push_back(Kernel(k));
      }
      OpCase cut{absl::StrCat(op, "_", DTypeName(c), "_branch_cuts"),
                 op,
                 c,
                 {{static_cast<int64_t>(cut_points.size())}}};
      Tensor v(c, {static_cast<int64_t>(cut_points.size())});
      for (size_t i = 0; i < cut_points.size(); ++i)
        SetC(v, static_cast<int64_t>(i), cut_points[i]);
      cut.feed_values = {v};
      cut.reference = ComplexUnaryRef(f);
      cases.push_back(Kernel(cut));
    }
    {
      // ApproximateEqual: |x - y| < tolerance on the modulus, values just inside and outside.
      OpCase k{absl::StrCat("ApproximateEqual_", DTypeName(c)), "ApproximateEqual", c, {{6}, {6}}};
      Tensor a(c, {6}), b(c, {6});
      const std::vector<C> xs = {C(1, 1), C(1, 1), C(0, 0), C(-2, 3), C(5, 5), C(0, 0)};
      const std::vector<C> ys = {C(1.3, 1.35), C(1.2, 1.2),  C(0.25, 0.4),
                                 C(-2, 3.6),   C(5.3, 5.39), C(0, 0.5)};
      for (int64_t i = 0; i < 6; ++i) {
        SetC(a, i, xs[static_cast<size_t>(i)]);
        SetC(b, i, ys[static_cast<size_t>(i)]);
      }
      k.feed_values = {a, b};
      k.attrs["tolerance"] = FloatAttr(0.5f);
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(DType::kBool, in[0].dims());
        for (int64_t i = 0; i < y.num_elements(); ++i) {
          y.data<bool>()[i] = std::abs(GetC(in[0], i) - GetC(in[1], i)) < 0.5;
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    // Einsum: two operands (the bilinear form, four real contractions; a batch dim, a summed
    // label present in one operand only) and one (linear: a transpose, a sum).
    struct Es {
      const char* name;
      const char* eq;
      std::vector<Dims> in;
    };
    for (const Es& e : std::vector<Es>{{"matmul", "ij,jk->ik", {{2, 3}, {3, 4}}},
                                       {"batch", "bij,bkj->bik", {{2, 3, 4}, {2, 5, 4}}},
                                       {"outer_sum", "ij,k->jk", {{3, 2}, {4}}},
                                       {"transpose", "ij->ji", {{3, 4}}},
                                       {"sum", "ij->j", {{3, 4}}}}) {
      OpCase k{absl::StrCat("Einsum_", DTypeName(c), "_", e.name), "Einsum", c, e.in};
      k.attrs["equation"] = StringAttr(e.eq);
      k.attrs["N"] = IntAttr(static_cast<int64_t>(e.in.size()));
      k.reference = EinsumRef(e.eq);
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("AddN_", DTypeName(c), "_3"), "AddN", c, {{2, 3}, {2, 3}, {2, 3}}};
      k.attrs["N"] = IntAttr(3);
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {2, 3});
        for (int64_t i = 0; i < 6; ++i)
          SetC(y, i, GetC(in[0], i) + GetC(in[1], i) + GetC(in[2], i));
        return y;
      };
      cases.push_back(Kernel(k));
    }
    for (const char* op : {"Cumsum", "Cumprod"}) {
      for (bool exclusive : {false, true}) {
        for (bool reverse : {false, true}) {
          OpCase k{absl::StrCat(op, "_", DTypeName(c), "_3x4_axis1", exclusive ? "_excl" : "",
                                reverse ? "_rev" : ""),
                   op,
                   c,
                   {{3, 4}},
                   {Ints({1}, true)}};
          k.attrs["exclusive"] = BoolAttr(exclusive);
          k.attrs["reverse"] = BoolAttr(reverse);
          k.attrs["Tidx"] = TypeAttr(DType::kInt32);
          const bool prod = std::string(op) == "Cumprod";
          k.reference = [prod, exclusive, reverse](const std::vector<Tensor>& in) {
            Tensor y(in[0].dtype(), {3, 4});
            for (int64_t i = 0; i < 3; ++i) {
              for (int64_t j = 0; j < 4; ++j) {
                C acc = prod ? C(1) : C(0);
                for (int64_t t = 0; t < 4; ++t) {
                  const bool take =
                      reverse ? (exclusive ? t > j : t >= j) : (exclusive ? t < j : t <= j);
                  if (take)
                    acc = prod ? acc * GetC(in[0], i * 4 + t) : acc + GetC(in[0], i * 4 + t);
                }
                SetC(y, i * 4 + j, acc);
              }
            }
            return y;
          };
          cases.push_back(Kernel(k));
        }
      }
    }
    for (const char* op : {"Sum", "Prod", "Mean"}) {
      // Axes 0 and 2 of [2,3,4] (as -3, -1), keep_dims.
      OpCase k{absl::StrCat(op, "_", DTypeName(c), "_2x3x4_axes0_2"),
               op,
               c,
               {{2, 3, 4}},
               {Ints({-3, -1})}};
      k.attrs["keep_dims"] = BoolAttr(true);
      k.attrs["Tidx"] = TypeAttr(DType::kInt32);
      const std::string name = op;
      k.reference = [name](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {1, 3, 1});
        for (int64_t j = 0; j < 3; ++j) {
          C acc = name == "Prod" ? C(1) : C(0);
          for (int64_t i = 0; i < 2; ++i) {
            for (int64_t l = 0; l < 4; ++l) {
              const C v = GetC(in[0], (i * 3 + j) * 4 + l);
              acc = name == "Prod" ? acc * v : acc + v;
            }
          }
          SetC(y, j, name == "Mean" ? acc / 8.0 : acc);
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("Sum_", DTypeName(c), "_0x3_axis0"), "Sum", c, {{0, 3}}, {Ints({0})}};
      k.attrs["Tidx"] = TypeAttr(DType::kInt32);
      k.reference = [](const std::vector<Tensor>& in) { return Tensor(in[0].dtype(), {3}); };
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("BatchMatMul_", DTypeName(c), "_adj_y"),
               "BatchMatMul",
               c,
               {{2, 2, 3}, {2, 4, 3}}};
      k.attrs["adj_x"] = BoolAttr(false);
      k.attrs["adj_y"] = BoolAttr(true);
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {2, 2, 4});
        for (int64_t b = 0; b < 2; ++b) {
          for (int64_t i = 0; i < 2; ++i) {
            for (int64_t j = 0; j < 4; ++j) {
              C s = 0;
              for (int64_t p = 0; p < 3; ++p) {
                s += GetC(in[0], b * 6 + i * 3 + p) * std::conj(GetC(in[1], b * 12 + j * 3 + p));
              }
              SetC(y, (b * 2 + i) * 4 + j, s);
            }
          }
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    // Cast to and from complex.
    for (DType other : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kBool,
                        DType::kFloat16, DType::kBFloat16, DType::kInt64, c64, c128}) {
      if (other == c) continue;
      for (bool to_complex : {true, false}) {
        if (!to_complex && IsComplexDType(other)) continue;  // covered the other way round
        const DType src = to_complex ? other : c, dst = to_complex ? c : other;
        OpCase k{
            absl::StrCat("Cast_", DTypeName(src), "_to_", DTypeName(dst)), "Cast", src, {{3, 7}}};
        k.has_t = false;
        k.attrs["SrcT"] = TypeAttr(src);
        k.attrs["DstT"] = TypeAttr(dst);
        k.reference = [dst](const std::vector<Tensor>& in) {
          Tensor y(dst, in[0].dims());
          for (int64_t i = 0; i < y.num_elements(); ++i) {
            const C v = GetC(in[0], i);
            if (IsComplexDType(dst)) {
              SetC(y, i, v);
            } else if (dst == DType::kBool) {
              y.data<bool>()[i] = v != C(0);
            } else if (dst == DType::kInt32) {
              y.data<int32_t>()[i] = static_cast<int32_t>(v.real());
            } else if (dst == DType::kInt64) {
              y.data<int64_t>()[i] = static_cast<int64_t>(v.real());
            } else {
              SetFromDouble(y, i, v.real());
            }
          }
          return y;
        };
        cases.push_back(Kernel(k));
      }
    }
    // Reductions.
    for (const Dims& shape : {Dims{2, 5}, Dims{3, 0}}) {
      // Prod over an odd length (the compiled halving pads with ones) and an empty one (1).
      OpCase k{absl::StrCat("Prod_", DTypeName(c), "_", DimsName(shape), "_axis1"),
               "Prod",
               c,
               {shape},
               {Ints({1})}};
      k.attrs["Tidx"] = TypeAttr(DType::kInt32);
      k.reference = [](const std::vector<Tensor>& in) {
        const int64_t rows = in[0].dim(0), cols = in[0].dim(1);
        Tensor y(in[0].dtype(), {rows});
        for (int64_t i = 0; i < rows; ++i) {
          C acc(1);
          for (int64_t j = 0; j < cols; ++j) acc *= GetC(in[0], i * cols + j);
          SetC(y, i, acc);
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    for (const char* op : {"Sum", "Prod", "Mean"}) {
      for (bool keep : {false, true}) {
        OpCase k{absl::StrCat(op, "_", DTypeName(c), "_3x4_axis1", keep ? "_keep" : ""),
                 op,
                 c,
                 {{3, 4}},
                 {Ints({1})}};
        k.attrs["keep_dims"] = BoolAttr(keep);
        k.attrs["Tidx"] = TypeAttr(DType::kInt32);
        const std::string name = op;
        k.reference = [name, keep](const std::vector<Tensor>& in) {
          Tensor y(in[0].dtype(), keep ? Dims{3, 1} : Dims{3});
          for (int64_t i = 0; i < 3; ++i) {
            C acc = name == "Prod" ? C(1) : C(0);
            for (int64_t j = 0; j < 4; ++j) {
              acc = name == "Prod" ? acc * GetC(in[0], i * 4 + j) : acc + GetC(in[0], i * 4 + j);
            }
            SetC(y, i, name == "Mean" ? acc / 4.0 : acc);
          }
          return y;
        };
        cases.push_back(Kernel(k));
      }
    }
    // MatMul and BatchMatMulV2 (adj_* conjugates).
    for (bool ta : {false, true}) {
      OpCase k{absl::StrCat("MatMul_", DTypeName(c), ta ? "_ta" : ""),
               "MatMul",
               c,
               {ta ? Dims{4, 3} : Dims{3, 4}, {4, 5}}};
      k.attrs["transpose_a"] = BoolAttr(ta);
      k.attrs["transpose_b"] = BoolAttr(false);
      k.reference = [ta](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {3, 5});
        for (int64_t i = 0; i < 3; ++i) {
          for (int64_t j = 0; j < 5; ++j) {
            C s = 0;
            for (int64_t p = 0; p < 4; ++p) {
              s += GetC(in[0], ta ? p * 3 + i : i * 4 + p) * GetC(in[1], p * 5 + j);
            }
            SetC(y, i * 5 + j, s);
          }
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    for (const char* op : {"BatchMatMulV2", "BatchMatMulV3"}) {
      OpCase k{absl::StrCat(op, "_", DTypeName(c), "_adj_x_bcast"), op, c, {{2, 3, 2}, {1, 3, 4}}};
      k.attrs["adj_x"] = BoolAttr(true);
      k.attrs["adj_y"] = BoolAttr(false);
      if (std::string(op) == "BatchMatMulV3") {  // Ta, Tb and Tout instead of T
        k.has_t = false;
        for (const char* attr : {"Ta", "Tb", "Tout"}) k.attrs[attr] = TypeAttr(c);
      }
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {2, 2, 4});
        for (int64_t b = 0; b < 2; ++b) {
          for (int64_t i = 0; i < 2; ++i) {
            for (int64_t j = 0; j < 4; ++j) {
              C s = 0;
              for (int64_t p = 0; p < 3; ++p) {
                s += std::conj(GetC(in[0], b * 6 + p * 2 + i)) * GetC(in[1], p * 4 + j);
              }
              SetC(y, (b * 2 + i) * 4 + j, s);
            }
          }
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    // Data movement (16-byte elements for complex128).
    {
      OpCase k{absl::StrCat("Transpose_", DTypeName(c), "_2x3x4"),
               "Transpose",
               c,
               {{2, 3, 4}},
               {Ints({2, 0, 1})}};
      k.attrs["Tperm"] = TypeAttr(DType::kInt32);
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {4, 2, 3});
        for (int64_t k2 = 0; k2 < 24; ++k2) {
          const Dims o = Unravel(k2, {4, 2, 3});
          SetC(y, k2, GetC(in[0], Ravel({o[1], o[2], o[0]}, {2, 3, 4})));
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("ConcatV2_", DTypeName(c), "_axis1"),
               "ConcatV2",
               c,
               {{2, 3}, {2, 2}},
               {Ints({1}, true)}};
      k.attrs["N"] = IntAttr(2);
      k.attrs["Tidx"] = TypeAttr(DType::kInt32);
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {2, 5});
        for (int64_t i = 0; i < 2; ++i) {
          for (int64_t j = 0; j < 5; ++j) {
            SetC(y, i * 5 + j, j < 3 ? GetC(in[0], i * 3 + j) : GetC(in[1], i * 2 + j - 3));
          }
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("Pack_", DTypeName(c), "_axis1"), "Pack", c, {{2, 3}, {2, 3}}};
      k.attrs["N"] = IntAttr(2);
      k.attrs["axis"] = IntAttr(1);
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {2, 2, 3});
        for (int64_t k2 = 0; k2 < 12; ++k2) {
          const Dims o = Unravel(k2, {2, 2, 3});
          SetC(y, k2, GetC(in[static_cast<size_t>(o[1])], o[0] * 3 + o[2]));
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("Slice_", DTypeName(c), "_3x4"),
               "Slice",
               c,
               {{3, 4}},
               {Ints({1, 1}), Ints({2, 2})}};
      k.attrs["Index"] = TypeAttr(DType::kInt32);
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {2, 2});
        for (int64_t i = 0; i < 2; ++i) {
          for (int64_t j = 0; j < 2; ++j) SetC(y, i * 2 + j, GetC(in[0], (i + 1) * 4 + j + 1));
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("Reshape_", DTypeName(c)), "Reshape", c, {{2, 6}}, {Ints({3, 4})}};
      k.attrs["Tshape"] = TypeAttr(DType::kInt32);
      k.reference = [](const std::vector<Tensor>& in) { return in[0].Reshaped({3, 4}); };
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("Identity_", DTypeName(c)), "Identity", c, {{5}}};
      k.reference = [](const std::vector<Tensor>& in) { return in[0]; };
      cases.push_back(Kernel(k));
    }
    // More data movement: each output element is one input element (or zero / one).
    // `src(out_index)` gives the input element's flat index, or -1 for a zero.
    auto moved = [&](const std::string& op, std::vector<Dims> in, std::vector<Tensor> consts,
                     Dims out_dims, std::function<int64_t(const Dims&)> src) {
      OpCase k{absl::StrCat(op, "_", DTypeName(c), "_moves"), op, c, std::move(in),
               std::move(consts)};
      k.reference = [out_dims, src](const std::vector<Tensor>& inputs) {
        Tensor y(inputs[0].dtype(), out_dims);
        for (int64_t i = 0; i < y.num_elements(); ++i) {
          const int64_t from = src(Unravel(i, out_dims));
          SetC(y, i, from < 0 ? C(0) : GetC(inputs[0], from));
        }
        return y;
      };
      return k;
    };
    {
      OpCase k = moved("Tile", {{2, 3}}, {Ints({2, 1})}, {4, 3},
                       [](const Dims& o) { return (o[0] % 2) * 3 + o[1]; });
      k.attrs["Tmultiples"] = TypeAttr(DType::kInt32);
      cases.push_back(Kernel(k));
    }
    {
      OpCase k = moved("GatherV2", {{4, 2}}, {Ints({3, 0, 3}), Ints({0}, true)}, {3, 2},
                       [](const Dims& o) { return (o[0] == 1 ? 0 : 3) * 2 + o[1]; });
      k.has_t = false;
      k.attrs["Tparams"] = TypeAttr(c);
      k.attrs["Tindices"] = TypeAttr(DType::kInt32);
      k.attrs["Taxis"] = TypeAttr(DType::kInt32);
      cases.push_back(Kernel(k));
    }
    {
      const Tensor paddings = Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {1, 0, 0, 2});
      OpCase k = moved("Pad", {{2, 3}}, {paddings}, {3, 5}, [](const Dims& o) -> int64_t {
        return o[0] >= 1 && o[1] < 3 ? (o[0] - 1) * 3 + o[1] : -1;
      });
      k.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
      cases.push_back(Kernel(k));
    }
    {
      OpCase k = moved("ReverseV2", {{2, 3}}, {Ints({1})}, {2, 3},
                       [](const Dims& o) { return o[0] * 3 + 2 - o[1]; });
      k.attrs["Tidx"] = TypeAttr(DType::kInt32);
      cases.push_back(Kernel(k));
    }
    {
      OpCase k = moved("StridedSlice", {{5}}, {Ints({1}), Ints({5}), Ints({2})}, {2},
                       [](const Dims& o) { return 1 + 2 * o[0]; });
      k.attrs["Index"] = TypeAttr(DType::kInt32);
      cases.push_back(Kernel(k));
    }
    {
      OpCase k =
          moved("ExpandDims", {{3}}, {Ints({0}, true)}, {1, 3}, [](const Dims& o) { return o[1]; });
      k.attrs["Tdim"] = TypeAttr(DType::kInt32);
      cases.push_back(Kernel(k));
    }
    cases.push_back(
        Kernel(moved("Squeeze", {{1, 3, 1}}, {}, {3}, [](const Dims& o) { return o[0]; })));
    cases.push_back(
        Kernel(moved("ZerosLike", {{4}}, {}, {4}, [](const Dims&) -> int64_t { return -1; })));
    {
      OpCase k = moved("Unpack", {{2, 3}}, {}, {3}, [](const Dims& o) { return 3 + o[0]; });
      k.attrs["num"] = IntAttr(2);
      k.attrs["axis"] = IntAttr(0);
      k.output = 1;
      cases.push_back(Kernel(k));
    }
    {
      OpCase k =
          moved("BroadcastTo", {{3}}, {Ints({2, 3})}, {2, 3}, [](const Dims& o) { return o[1]; });
      k.attrs["Tidx"] = TypeAttr(DType::kInt32);
      cases.push_back(Kernel(k));
    }
    {
      OpCase k = moved("Split", {{4, 3}}, {Ints({0}, true)}, {2, 3},
                       [](const Dims& o) { return (2 + o[0]) * 3 + o[1]; });
      k.consts_first = true;
      k.attrs["num_split"] = IntAttr(2);
      k.output = 1;
      cases.push_back(Kernel(k));
    }
    {
      // REFLECT with paddings [[1, 1], [0, 2]] of [3, 4]: rows -1 -> 1, 3 -> 1; cols 4 -> 2, 5
      // -> 1.
      const Tensor pads = Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {1, 1, 0, 2});
      OpCase k = moved("MirrorPad", {{3, 4}}, {pads}, {5, 6}, [](const Dims& o) -> int64_t {
        const int64_t r = o[0] - 1, col = o[1];
        const int64_t rr = r < 0 ? -r : r > 2 ? 4 - r : r;
        const int64_t cc = col > 3 ? 6 - col : col;
        return rr * 4 + cc;
      });
      k.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
      k.attrs["mode"] = StringAttr("REFLECT");
      cases.push_back(Kernel(k));
    }
    {
      const Tensor idx = Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {2, 1, 0, 3});
      OpCase k = moved("GatherNd", {{3, 4}}, {idx}, {2},
                       [](const Dims& o) { return o[0] == 0 ? 2 * 4 + 1 : 3; });
      k.has_t = false;
      k.attrs["Tparams"] = TypeAttr(c);
      k.attrs["Tindices"] = TypeAttr(DType::kInt32);
      cases.push_back(Kernel(k));
    }
    {
      OpCase k = moved("Roll", {{5}}, {Ints({2}, true), Ints({0}, true)}, {5},
                       [](const Dims& o) { return (o[0] + 3) % 5; });
      k.attrs["Tshift"] = TypeAttr(DType::kInt32);
      k.attrs["Taxis"] = TypeAttr(DType::kInt32);
      cases.push_back(Kernel(k));
    }
    for (const char* op : {"Shape", "Size", "Rank"}) {
      // Ops that read a complex tensor's dims only.
      OpCase k{absl::StrCat(op, "_", DTypeName(c)), op, c, {{2, 3}}};
      if (std::string(op) != "Rank") k.attrs["out_type"] = TypeAttr(DType::kInt32);
      const std::string name = op;
      k.reference = [name](const std::vector<Tensor>&) {
        return name == "Shape" ? Ints({2, 3}) : name == "Size" ? Ints({6}, true) : Ints({2}, true);
      };
      cases.push_back(Kernel(k));
    }
    {
      // [2, 3, 4] with perm [2, 0, 1], conjugated.
      OpCase k{absl::StrCat("ConjugateTranspose_", DTypeName(c)),
               "ConjugateTranspose",
               c,
               {{2, 3, 4}},
               {Ints({2, 0, 1})}};
      k.attrs["Tperm"] = TypeAttr(DType::kInt32);
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {4, 2, 3});
        for (int64_t i = 0; i < y.num_elements(); ++i) {
          const Dims o = Unravel(i, {4, 2, 3});
          SetC(y, i, std::conj(GetC(in[0], Ravel({o[1], o[2], o[0]}, {2, 3, 4}))));
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    for (const char* format : {"NHWC", "NCHW"}) {
      // value [2, 3, 4] + bias [4] (NHWC: last dim) or bias [3] (NCHW: dim 1).
      const bool nhwc = std::string(format) == "NHWC";
      OpCase k{absl::StrCat("BiasAdd_", DTypeName(c), "_", format),
               "BiasAdd",
               c,
               {{2, 3, 4}, {nhwc ? 4 : 3}}};
      k.attrs["data_format"] = StringAttr(format);
      k.reference = [nhwc](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {2, 3, 4});
        for (int64_t i = 0; i < 24; ++i) {
          const Dims o = Unravel(i, {2, 3, 4});
          SetC(y, i, GetC(in[0], i) + GetC(in[1], nhwc ? o[2] : o[1]));
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("OnesLike_", DTypeName(c)), "OnesLike", c, {{4}}};
      k.reference = ComplexUnaryRef([](C) { return C(1); });
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("Fill_", DTypeName(c)), "Fill", c, {{}}, {Ints({2, 3})}};
      k.consts_first = true;
      k.attrs["index_type"] = TypeAttr(DType::kInt32);
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(in[0].dtype(), {2, 3});
        for (int64_t i = 0; i < 6; ++i) SetC(y, i, GetC(in[0], 0));
        return y;
      };
      cases.push_back(Kernel(k));
    }
    {
      OpCase k{absl::StrCat("SelectV2_", DTypeName(c)), "SelectV2", c, {{2, 3}, {2, 3}, {3}}};
      k.input_dtypes = {DType::kBool, c, c};
      k.reference = [](const std::vector<Tensor>& in) {
        Tensor y(in[1].dtype(), {2, 3});
        for (int64_t i = 0; i < 6; ++i) {
          SetC(y, i, in[0].data<bool>()[i] ? GetC(in[1], i) : GetC(in[2], i % 3));
        }
        return y;
      };
      cases.push_back(Kernel(k));
    }
  }
  return cases;
}

}  // namespace tfjit::optest
