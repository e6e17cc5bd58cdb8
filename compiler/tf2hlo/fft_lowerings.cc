// Lowerings of the fft family (FFT/IFFT, RFFT/IRFFT in 1-3 D) for compiled code, on complex
// values held as real parts (complex_values.h), with the kernel's semantics (fft_kernels.cc):
// inputs cropped to fft_length, TF's length checks, IRFFT's half spectrum completed by
// Hermitian symmetry with the imaginary parts of the DC and Nyquist bins ignored.
//
// A 1-D transform of length n along the last axis is a product with the DFT matrix
// W[j, k] = e^{-+2 pi i jk/n} (four real GEMMs) for n <= kDirectLength; longer ones use the
// four-step (Cooley-Tukey) split n = n1 * n2: transforms of length n1 over the columns, a
// twiddle multiply, transforms of length n2 over the rows, recursively, so the work is
// O(n (n1 + n2)) per level rather than O(n^2). Matrices and twiddles are constants computed
// in double from the exact phase (jk mod n) / n. Lengths with a prime factor above
// kLargestDirectPrime would need an O(p^2) matrix: they stay on the kernel (Eigen's FFT with
// Bluestein's algorithm), with that reason.
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/complex_values.h"
#include "core/dtype.h"
#include "core/fft_lengths.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kDirectLength = 64;
constexpr int64_t kLargestDirectPrime = 1024;

// The largest divisor of n that is at most sqrt(n) (1 for primes).
int64_t SplitFactor(int64_t n) {
  int64_t best = 1;
  for (int64_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) best = d;
  }
  return best;
}

// A [rows, cols] constant of `t` with element (j, k) = f(j, k).
template <typename F>
Instruction* Matrix(LoweringContext& ctx, DType t, int64_t rows, int64_t cols, F&& f) {
  Tensor m(t, {rows, cols});
  for (int64_t j = 0; j < rows; ++j) {
    for (int64_t k = 0; k < cols; ++k) {
      const double v = f(j, k);
      if (t == DType::kFloat32) {
        m.data<float>()[j * cols + k] = static_cast<float>(v);
      } else {
        m.data<double>()[j * cols + k] = v;
      }
    }
  }
  return ctx.b().Constant(hlo::Literal::FromTensor(m));
}

// cos and sign * sin of 2 pi (j k mod n) / n.
double Phase(int64_t j, int64_t k, int64_t n) {
  const int64_t q = static_cast<int64_t>((static_cast<__int128>(j) * k) % n);
  return 2 * std::numbers::pi * static_cast<double>(q) / static_cast<double>(n);
}

// Element-wise complex product of z (dims [..., a, b]) with a constant [a, b] matrix pair.
absl::StatusOr<ComplexParts> MultiplyConstant(LoweringContext& ctx, const ComplexParts& z,
                                              Instruction* cr, Instruction* ci) {
  const std::vector<int64_t>& dims = z.re->shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  TFJIT_ASSIGN_OR_RETURN(cr, ctx.b().Broadcast(cr, dims, {rank - 2, rank - 1}));
  TFJIT_ASSIGN_OR_RETURN(ci, ctx.b().Broadcast(ci, dims, {rank - 2, rank - 1}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ac, ctx.b().Binary(Opcode::kMultiply, z.re, cr));
  TFJIT_ASSIGN_OR_RETURN(Instruction * bd, ctx.b().Binary(Opcode::kMultiply, z.im, ci));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ad, ctx.b().Binary(Opcode::kMultiply, z.re, ci));
  TFJIT_ASSIGN_OR_RETURN(Instruction * bc, ctx.b().Binary(Opcode::kMultiply, z.im, cr));
  ComplexParts r;
  TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Binary(Opcode::kSubtract, ac, bd));
  TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Binary(Opcode::kAdd, ad, bc));
  return r;
}

// Swaps the last two dims of both parts.
absl::StatusOr<ComplexParts> SwapLastTwo(LoweringContext& ctx, const ComplexParts& z) {
  const int64_t rank = z.re->shape().rank();
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) perm.push_back(d);
  std::swap(perm[static_cast<size_t>(rank - 2)], perm[static_cast<size_t>(rank - 1)]);
  ComplexParts r;
  TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Transpose(z.re, perm));
  TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Transpose(z.im, perm));
  return r;
}

absl::StatusOr<ComplexParts> ReshapeParts(LoweringContext& ctx, const ComplexParts& z,
                                          const std::vector<int64_t>& dims) {
  ComplexParts r;
  TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Reshape(z.re, dims));
  TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Reshape(z.im, dims));
  return r;
}

// The unscaled DFT of every line along the last axis of z (length n), keeping the first
// `keep` bins: forward e^{-2 pi i jk/n}, inverse e^{+...}.
absl::StatusOr<ComplexParts> Dft(LoweringContext& ctx, const ComplexParts& z, bool forward,
                                 int64_t keep) {
  const std::vector<int64_t> dims = z.re->shape().dims();
  const int64_t n = dims.back();
  const DType t = z.re->shape().element_type();
  const double sign = forward ? -1.0 : 1.0;
  int64_t lines = 1;
  for (size_t d = 0; d + 1 < dims.size(); ++d) lines *= dims[d];
  std::vector<int64_t> out_dims = dims;
  out_dims.back() = keep;
  const int64_t split = SplitFactor(n);
  if (n <= kDirectLength || split == 1) {
    // Y = X W on [lines, n] x [n, keep]: four real products.
    Instruction* wr =
        Matrix(ctx, t, n, keep, [&](int64_t j, int64_t k) { return std::cos(Phase(j, k, n)); });
    Instruction* wi = Matrix(ctx, t, n, keep,
                             [&](int64_t j, int64_t k) { return sign * std::sin(Phase(j, k, n)); });
    TFJIT_ASSIGN_OR_RETURN(ComplexParts x, ReshapeParts(ctx, z, {lines, n}));
    hlo::DotDims dd;
    dd.lhs_contracting = {1};
    dd.rhs_contracting = {0};
    TFJIT_ASSIGN_OR_RETURN(Instruction * rr, ctx.b().Dot(x.re, wr, dd));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ii, ctx.b().Dot(x.im, wi, dd));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ri, ctx.b().Dot(x.re, wi, dd));
    TFJIT_ASSIGN_OR_RETURN(Instruction * ir, ctx.b().Dot(x.im, wr, dd));
    ComplexParts y;
    TFJIT_ASSIGN_OR_RETURN(y.re, ctx.b().Binary(Opcode::kSubtract, rr, ii));
    TFJIT_ASSIGN_OR_RETURN(y.im, ctx.b().Binary(Opcode::kAdd, ri, ir));
    return ReshapeParts(ctx, y, out_dims);
  }
  // Four-step: j = j1 n2 + j2, k = k1 + n1 k2.
  const int64_t n1 = split, n2 = n / split;
  std::vector<int64_t> lead(dims.begin(), dims.end() - 1);
  std::vector<int64_t> grid = lead;
  grid.push_back(n1);
  grid.push_back(n2);
  TFJIT_ASSIGN_OR_RETURN(ComplexParts a, ReshapeParts(ctx, z, grid));  // [.., j1, j2]
  TFJIT_ASSIGN_OR_RETURN(a, SwapLastTwo(ctx, a));                      // [.., j2, j1]
  TFJIT_ASSIGN_OR_RETURN(a, Dft(ctx, a, forward, n1));                 // [.., j2, k1]
  Instruction* tr =
      Matrix(ctx, t, n2, n1, [&](int64_t j2, int64_t k1) { return std::cos(Phase(j2, k1, n)); });
  Instruction* ti = Matrix(
      ctx, t, n2, n1, [&](int64_t j2, int64_t k1) { return sign * std::sin(Phase(j2, k1, n)); });
  TFJIT_ASSIGN_OR_RETURN(a, MultiplyConstant(ctx, a, tr, ti));
  TFJIT_ASSIGN_OR_RETURN(a, SwapLastTwo(ctx, a));       // [.., k1, j2]
  TFJIT_ASSIGN_OR_RETURN(a, Dft(ctx, a, forward, n2));  // [.., k1, k2]
  TFJIT_ASSIGN_OR_RETURN(a, SwapLastTwo(ctx, a));       // [.., k2, k1]: k = k1 + n1 k2 row-major
  std::vector<int64_t> flat = lead;
  flat.push_back(n);
  TFJIT_ASSIGN_OR_RETURN(a, ReshapeParts(ctx, a, flat));
  if (keep == n) return a;
  std::vector<hlo::SliceDim> s;
  for (int64_t d : lead) s.push_back({0, d, 1});
  s.push_back({0, keep, 1});
  ComplexParts r;
  TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Slice(a.re, s));
  TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Slice(a.im, s));
  return r;
}

// Dft along axis `axis` (moved last and back).
absl::StatusOr<ComplexParts> DftAxis(LoweringContext& ctx, const ComplexParts& z, int64_t axis,
                                     bool forward, int64_t keep) {
  const int64_t rank = z.re->shape().rank();
  if (axis == rank - 1) return Dft(ctx, z, forward, keep);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) perm.push_back(d);
  }
  perm.push_back(axis);
  std::vector<int64_t> inverse(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) inverse[static_cast<size_t>(perm[static_cast<size_t>(d)])] = d;
  ComplexParts moved;
  TFJIT_ASSIGN_OR_RETURN(moved.re, ctx.b().Transpose(z.re, perm));
  TFJIT_ASSIGN_OR_RETURN(moved.im, ctx.b().Transpose(z.im, perm));
  TFJIT_ASSIGN_OR_RETURN(moved, Dft(ctx, moved, forward, keep));
  ComplexParts r;
  TFJIT_ASSIGN_OR_RETURN(r.re, ctx.b().Transpose(moved.re, inverse));
  TFJIT_ASSIGN_OR_RETURN(r.im, ctx.b().Transpose(moved.im, inverse));
  return r;
}

// The op's rank (1-3), direction and kind from its name.
struct FftOp {
  int rank = 1;
  bool forward = true;
  bool real = false;
};
FftOp ParseFftOp(const std::string& op) {
  FftOp f;
  f.forward = op[0] != 'I';
  f.real = op.find("RFFT") != std::string::npos;
  f.rank = op.back() == 'D' ? op[op.size() - 2] - '0' : 1;
  return f;
}

absl::Status CheckLength(const tf::Node& node, int64_t n) {
  const int64_t p = LargestPrimeFactor(n);
  if (n > kDirectLength && p > kLargestDirectPrime) {
    return Unimplemented(
        "node %s: transform length %d has the prime factor %d: compiled FFTs "
        "take lengths whose prime factors are at most %d; this one runs on "
        "the kernel (Eigen's FFT, Bluestein's algorithm) under --jit auto",
        node.DebugName(), n, p, kLargestDirectPrime);
  }
  return absl::OkStatus();
}

absl::Status LowerFft(LoweringContext& ctx, const tf::Node& node) {
  const FftOp f = ParseFftOp(node.op());
  TFJIT_ASSIGN_OR_RETURN(ComplexParts z, ComplexInput(ctx, node, 0));
  const std::vector<int64_t> in_dims = z.re->shape().dims();
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  if (rank < f.rank) {
    return InvalidArgument("node %s: Input must have rank of at least %d but got: [%s]",
                           node.DebugName(), f.rank, absl::StrJoin(in_dims, ","));
  }
  const int64_t lead = rank - f.rank;
  // The transform lengths and the output dims (TF's checks, as the kernel).
  std::vector<int64_t> lengths(in_dims.begin() + lead, in_dims.end());
  std::vector<int64_t> out_dims = in_dims;
  std::vector<int64_t> crop = in_dims;  // the input as transformed
  if (f.real) {
    TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> len, ctx.ConstantInputAsInts(node, 1));
    if (static_cast<int64_t>(len.size()) != f.rank) {
      return InvalidArgument("node %s: fft_length must have shape [%d]", node.DebugName(), f.rank);
    }
    for (int64_t i = 0; i < f.rank; ++i) {
      const int64_t n = len[static_cast<size_t>(i)];
      if (n < 0) {
        return InvalidArgument("node %s: fft_length[%d] must >= 0, but got: %d", node.DebugName(),
                               i, n);
      }
      const bool inner_most = i == f.rank - 1;
      const int64_t min_len = !f.forward && inner_most ? n / 2 + 1 : n;
      const int64_t have = in_dims[static_cast<size_t>(lead + i)];
      if (have != 0 && have < min_len) {
        return InvalidArgument(
            "node %s: Input dimension %d must have length of at least %d but "
            "got: %d",
            node.DebugName(), lead + i, min_len, have);
      }
      lengths[static_cast<size_t>(i)] = n;
      crop[static_cast<size_t>(lead + i)] = std::min(have, min_len);
      out_dims[static_cast<size_t>(lead + i)] = f.forward && inner_most && n != 0 ? n / 2 + 1 : n;
    }
  }
  for (int64_t n : lengths) TFJIT_RETURN_IF_ERROR(CheckLength(node, n));
  const DType part = z.re->shape().element_type();
  const bool real_out = f.real && !f.forward;
  int64_t in_count = 1, out_count = 1;
  for (int64_t d : in_dims) in_count *= d;
  for (int64_t d : out_dims) out_count *= d;
  if (in_count == 0 || out_count == 0) {
    // Nothing to transform: zeros of the output shape, as the kernel.
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(part, 0.0, out_dims));
    if (real_out) {
      ctx.SetOutput(node, 0, zero);
      return absl::OkStatus();
    }
    return SetComplexOutput(ctx, node, 0, ComplexParts{zero, zero});
  }
  if (crop != in_dims) {
    std::vector<hlo::SliceDim> s;
    for (int64_t d : crop) s.push_back({0, d, 1});
    TFJIT_ASSIGN_OR_RETURN(z.re, ctx.b().Slice(z.re, s));
    TFJIT_ASSIGN_OR_RETURN(z.im, ctx.b().Slice(z.im, s));
  }
  double scale = 1.0;
  for (int64_t n : lengths) scale /= static_cast<double>(n);
  const int64_t last = rank - 1;
  if (!real_out) {
    // FFT/IFFT/RFFT: the last axis first (RFFT keeps n/2 + 1 bins), then the others.
    TFJIT_ASSIGN_OR_RETURN(z, DftAxis(ctx, z, last, f.forward, out_dims.back()));
    for (int64_t a = lead; a < last; ++a) {
      TFJIT_ASSIGN_OR_RETURN(z, DftAxis(ctx, z, a, f.forward, out_dims[static_cast<size_t>(a)]));
    }
    if (!f.forward) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * s, ctx.Splat(part, scale, out_dims));
      TFJIT_ASSIGN_OR_RETURN(z.re, ctx.b().Binary(Opcode::kMultiply, z.re, s));
      TFJIT_ASSIGN_OR_RETURN(z.im, ctx.b().Binary(Opcode::kMultiply, z.im, s));
    }
    return SetComplexOutput(ctx, node, 0, z);
  }
  // IRFFT: inverse transforms over the leading axes, then each last-axis line completed to
  // n values (X[n - k] = conj(X[k])) with Im X[0] (and Im X[n/2], n even) taken as 0.
  for (int64_t a = lead; a < last; ++a) {
    TFJIT_ASSIGN_OR_RETURN(z,
                           DftAxis(ctx, z, a, /*forward=*/false, out_dims[static_cast<size_t>(a)]));
  }
  const int64_t n = lengths.back();
  const int64_t half = n / 2 + 1;
  std::vector<int64_t> dims = z.re->shape().dims();
  const int64_t tail = n - half;  // bins n/2+1 .. n-1 mirror bins tail .. 1
  if (tail > 0) {
    std::vector<hlo::SliceDim> s;
    for (size_t d = 0; d + 1 < dims.size(); ++d) s.push_back({0, dims[d], 1});
    s.push_back({1, tail + 1, 1});
    ComplexParts mirror;
    TFJIT_ASSIGN_OR_RETURN(mirror.re, ctx.b().Slice(z.re, s));
    TFJIT_ASSIGN_OR_RETURN(mirror.im, ctx.b().Slice(z.im, s));
    hlo::Attributes rev;
    rev.dimensions = {last};
    TFJIT_ASSIGN_OR_RETURN(mirror.re, ctx.b().Add(Opcode::kReverse, {mirror.re}, rev));
    TFJIT_ASSIGN_OR_RETURN(mirror.im, ctx.b().Add(Opcode::kReverse, {mirror.im}, rev));
    TFJIT_ASSIGN_OR_RETURN(mirror.im, ctx.b().Unary(Opcode::kNegate, mirror.im));
    TFJIT_ASSIGN_OR_RETURN(z.re, ctx.b().Concatenate({z.re, mirror.re}, last));
    TFJIT_ASSIGN_OR_RETURN(z.im, ctx.b().Concatenate({z.im, mirror.im}, last));
  }
  // Zero the imaginary parts of bin 0 and, for even n, bin n/2.
  Instruction* keep = Matrix(ctx, part, 1, n, [&](int64_t, int64_t k) {
    return k == 0 || (n % 2 == 0 && k == n / 2) ? 0.0 : 1.0;
  });
  TFJIT_ASSIGN_OR_RETURN(keep, ctx.b().Reshape(keep, {n}));
  dims = z.im->shape().dims();
  TFJIT_ASSIGN_OR_RETURN(keep, ctx.b().Broadcast(keep, dims, {last}));
  TFJIT_ASSIGN_OR_RETURN(z.im, ctx.b().Binary(Opcode::kMultiply, z.im, keep));
  TFJIT_ASSIGN_OR_RETURN(z, Dft(ctx, z, /*forward=*/false, n));
  TFJIT_ASSIGN_OR_RETURN(Instruction * s, ctx.Splat(part, scale, out_dims));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.b().Binary(Opcode::kMultiply, z.re, s));
  ctx.SetOutput(node, 0, x);
  return absl::OkStatus();
}

}  // namespace

void AppendFftComplexLowerings(std::vector<OpLowering>* table) {
  for (const char* op : {"FFT", "IFFT", "FFT2D", "IFFT2D", "FFT3D", "IFFT3D", "RFFT", "IRFFT",
                         "RFFT2D", "IRFFT2D", "RFFT3D", "IRFFT3D"}) {
    table->push_back({op, LowerFft});
  }
}

}  // namespace tfjit::tf2hlo
