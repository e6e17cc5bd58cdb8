// Fallback kernels of the fft ops (docs/DESIGN.md, "Op families"), with TF's CPU semantics,
// dtypes and error messages: FFT/IFFT (1-3 D, complex to complex over the innermost dims),
// RFFT/IRFFT (1-3 D, real <-> half spectrum, lengths from the fft_length input). Compiled code
// computes them as DFT products (compiler/tf2hlo/fft_lowerings.cc); these kernels run what is
// not compiled and are the reference the compiled forms are tested against.
//
// Transforms use Eigen's FFT module (unsupported/Eigen/FFT, KissFFT backend: MPL2, any
// length; lengths with a large prime factor go through Bluestein's algorithm on top of it, so
// no length is quadratic), always in double precision: complex64/float32 data is widened,
// transformed and rounded once, which is at least as accurate as TF's single-precision
// transform. FFTW is not an option (GPL). A transform is separable: one 1-D transform per
// line along each axis, lines spread over the pool.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/fft_lengths.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"
#include "unsupported/Eigen/FFT"

namespace tfjit::runtime {
namespace {

using C = std::complex<double>;

struct FftSpec {
  int rank;      // 1, 2 or 3 innermost dims
  bool forward;  // FFT/RFFT vs IFFT/IRFFT
  bool real;     // RFFT/IRFFT: real side, fft_length input
};

// The working buffer: `batch` blocks of dims `dims` (row-major), complex double.
struct Work {
  int64_t batch = 1;
  std::vector<int64_t> dims;
  std::vector<C> data;
  int64_t block() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
};

// Lengths whose largest prime factor exceeds this use Bluestein's algorithm: KissFFT's generic
// radix costs O(n * p) for a prime factor p, so a large prime length would be quadratic.
constexpr int64_t kBluesteinPrime = 64;

// Unscaled 1-D transforms of one length n (forward: e^{-2 pi i jk/n}; inverse: e^{+...}).
// Holds its plans and scratch: one per thread.
class LineFft {
 public:
  explicit LineFft(int64_t n) : n_(n) {
    fft_.SetFlag(Eigen::FFT<double>::Unscaled);
    if (n <= 1 || LargestPrimeFactor(n) <= kBluesteinPrime) return;
    // Bluestein: jk = (j^2 + k^2 - (k - j)^2) / 2 turns the DFT into a convolution with the
    // chirp e^{i pi t^2 / n}, done with power-of-two FFTs of length m >= 2n - 1.
    m_ = 1;
    while (m_ < 2 * n - 1) m_ *= 2;
    chirp_.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      // j^2 mod 2n keeps the phase argument small (exact in int64 for any tensor length).
      const int64_t q = static_cast<int64_t>((static_cast<__int128>(j) * j) % (2 * n));
      chirp_[static_cast<size_t>(j)] =
          std::polar(1.0, -std::numbers::pi * static_cast<double>(q) / static_cast<double>(n));
    }
    std::vector<C> b(static_cast<size_t>(m_), C(0, 0));
    for (int64_t j = 0; j < n; ++j) {
      b[static_cast<size_t>(j)] = std::conj(chirp_[static_cast<size_t>(j)]);
      if (j > 0) b[static_cast<size_t>(m_ - j)] = std::conj(chirp_[static_cast<size_t>(j)]);
    }
    b_hat_.resize(static_cast<size_t>(m_));
    fft_.fwd(b_hat_.data(), b.data(), static_cast<Eigen::Index>(m_));
    a_.resize(static_cast<size_t>(m_));
    a_hat_.resize(static_cast<size_t>(m_));
  }

  void Run(const C* src, C* dst, bool forward) {
    if (n_ <= 1) {
      if (n_ == 1) dst[0] = src[0];
      return;
    }
    if (m_ == 0) {
      if (forward) {
        fft_.fwd(dst, src, static_cast<Eigen::Index>(n_));
      } else {
        fft_.inv(dst, src, static_cast<Eigen::Index>(n_));
      }
      return;
    }
    // The inverse is conj(forward(conj(x))).
    for (int64_t j = 0; j < n_; ++j) {
      const C x = forward ? src[j] : std::conj(src[j]);
      a_[static_cast<size_t>(j)] = x * chirp_[static_cast<size_t>(j)];
    }
    std::fill(a_.begin() + n_, a_.end(), C(0, 0));
    fft_.fwd(a_hat_.data(), a_.data(), static_cast<Eigen::Index>(m_));
    for (int64_t i = 0; i < m_; ++i)
      a_hat_[static_cast<size_t>(i)] *= b_hat_[static_cast<size_t>(i)];
    fft_.inv(a_.data(), a_hat_.data(), static_cast<Eigen::Index>(m_));
    const double inv_m = 1.0 / static_cast<double>(m_);
    for (int64_t k = 0; k < n_; ++k) {
      const C y = a_[static_cast<size_t>(k)] * chirp_[static_cast<size_t>(k)] * inv_m;
      dst[k] = forward ? y : std::conj(y);
    }
  }

 private:
  int64_t n_;
  int64_t m_ = 0;  // Bluestein's FFT length; 0 when Eigen transforms length n directly
  Eigen::FFT<double> fft_;
  std::vector<C> chirp_, b_hat_, a_, a_hat_;
};

// One 1-D transform (unscaled inverse: the caller scales once) of every line along axis `a`.
void TransformAxis(const KernelContext& ctx, Work& w, int a, bool forward) {
  const int64_t n = w.dims[static_cast<size_t>(a)];
  if (n <= 1) return;  // length 1 is the identity (scaling is the caller's)
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(a) + 1; i < w.dims.size(); ++i) inner *= w.dims[i];
  const int64_t block = w.block();
  const int64_t outer_per_block = block / (n * inner);
  const int64_t lines = w.batch * outer_per_block * inner;
  // Roughly n log n multiply-adds per line.
  int64_t log_n = 1;
  while ((int64_t{1} << log_n) < n) ++log_n;
  ParallelFor(ctx, lines, 8 * n * log_n, [&](int64_t begin, int64_t end) {
    LineFft fft(n);
    std::vector<C> src(static_cast<size_t>(n)), dst(static_cast<size_t>(n));
    for (int64_t l = begin; l < end; ++l) {
      const int64_t o = l / inner, i = l % inner;  // o over batch * outer_per_block
      C* base = w.data.data() + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) src[static_cast<size_t>(k)] = base[k * inner];
      fft.Run(src.data(), dst.data(), forward);
      for (int64_t k = 0; k < n; ++k) base[k * inner] = dst[static_cast<size_t>(k)];
    }
  });
}

// Copies the input (batch x in_dims, cropped to crop_dims) into a zeroed work buffer of
// dims crop_dims, widening to complex double.
template <typename T>
void LoadInput(const KernelContext& ctx, const Tensor& in, int64_t batch,
               const std::vector<int64_t>& in_dims, Work& w) {
  const int r = static_cast<int>(in_dims.size());
  w.data.assign(static_cast<size_t>(batch * w.block()), C(0, 0));
  int64_t in_block = 1;
  for (int64_t d : in_dims) in_block *= d;
  const T* src = in.data<T>();
  const int64_t block = w.block();
  ParallelFor(ctx, batch * block, 4 * r, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      const int64_t b = e / block, k = e % block;
      int64_t rest = k, off = 0, stride = 1;
      for (int d = r - 1; d >= 0; --d) {
        const int64_t wd = w.dims[static_cast<size_t>(d)];
        off += (rest % wd) * stride;
        rest /= wd;
        stride *= in_dims[static_cast<size_t>(d)];
      }
      const T v = src[b * in_block + off];
      if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
        w.data[static_cast<size_t>(e)] = C(v.real(), v.imag());
      } else {
        w.data[static_cast<size_t>(e)] = C(static_cast<double>(v), 0.0);
      }
    }
  });
}

// Checks TF's input/output dtype pairing for the transform.
absl::Status CheckFftTypes(const KernelContext& ctx, const FftSpec& spec, DType in_type,
                           DType out_type) {
  if (spec.real) {
    const bool ok = spec.forward ? ((in_type == DType::kFloat32 && out_type == DType::kComplex64) ||
                                    (in_type == DType::kFloat64 && out_type == DType::kComplex128))
                                 : ((in_type == DType::kComplex64 && out_type == DType::kFloat32) ||
                                    (in_type == DType::kComplex128 && out_type == DType::kFloat64));
    if (!ok) {
      return KernelError(ctx, "Wrong types for %s real FFT: in=%s out=%s",
                         spec.forward ? "forward" : "backward", DTypeName(in_type),
                         DTypeName(out_type));
    }
  } else if (!IsComplexDType(in_type) || out_type != in_type) {
    return KernelError(ctx, "Wrong types for FFT: in=%s out=%s", DTypeName(in_type),
                       DTypeName(out_type));
  }
  return absl::OkStatus();
}

// RFFT/IRFFT: reads the fft_length input into the transform lengths (`fft_shape`, the last r
// dims) and the output dims (RFFT keeps n/2 + 1 of the last axis), checking the input is long
// enough.
absl::Status ReadFftLengths(const KernelContext& ctx, const FftSpec& spec, const Tensor& in,
                            std::vector<int64_t>& fft_shape, std::vector<int64_t>& out_dims) {
  const int r = spec.rank;
  const int lead = in.rank() - r;
  if (ctx.num_inputs() < 2) return KernelError(ctx, "expected an fft_length input");
  const Tensor& len = ctx.input(1);
  if (len.rank() != 1 || len.dim(0) != r || len.dtype() != DType::kInt32) {
    return KernelError(ctx, "fft_length must have shape [%d]", r);
  }
  for (int i = 0; i < r; ++i) {
    const int64_t n = len.data<int32_t>()[i];
    if (n < 0) return KernelError(ctx, "fft_length[%d] must >= 0, but got: %d", i, n);
    fft_shape[static_cast<size_t>(i)] = n;
    const bool inner_most = i == r - 1;
    const int64_t min_len = !spec.forward && inner_most ? n / 2 + 1 : n;
    const int64_t have = in.dim(lead + i);
    if (have != 0 && have < min_len) {
      return KernelError(ctx, "Input dimension %d must have length of at least %d but got: %d",
                         lead + i, min_len, have);
    }
    out_dims[static_cast<size_t>(lead + i)] = spec.forward && inner_most && n != 0 ? n / 2 + 1 : n;
  }
  return absl::OkStatus();
}

// Complex output: FFT/IFFT copy everything; RFFT keeps the first n/2 + 1 of the last axis.
// Every value is scaled by `scale` and rounded to the output's precision.
void StoreComplexOutput(const KernelContext& ctx, const Work& w, double scale, int64_t batch,
                        Tensor& out) {
  const int64_t out_block = out.num_elements() / batch;
  const int64_t full_last = w.dims.back(), keep_last = out.dims().back();
  DispatchComplex(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using R = typename T::value_type;
    T* dst = out.data<T>();
    const int64_t rows = batch * (out_block / keep_last);
    ParallelFor(ctx, rows, keep_last, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const C* src = w.data.data() + row * full_last;
        for (int64_t k = 0; k < keep_last; ++k) {
          const C v = src[k] * scale;
          dst[row * keep_last + k] = T(static_cast<R>(v.real()), static_cast<R>(v.imag()));
        }
      }
    });
  });
}

// IRFFT: completes each last-axis line to n_last values (X[n-k] = conj(X[k])), inverse
// transforms it and keeps the real part, scaled. Only real parts of X[0] (and X[n/2], n even)
// matter.
void StoreIrfftOutput(const KernelContext& ctx, const Work& w, double scale, int64_t batch,
                      int64_t n_last, Tensor& out) {
  const int64_t out_block = out.num_elements() / batch;
  const int64_t half = w.dims.back();
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = out.data<T>();
    const int64_t rows = batch * (out_block / n_last);
    int64_t log_n = 1;
    while ((int64_t{1} << log_n) < n_last) ++log_n;
    ParallelFor(ctx, rows, 8 * n_last * log_n, [&](int64_t begin, int64_t end) {
      LineFft fft(n_last);
      std::vector<C> full(static_cast<size_t>(n_last)), res(static_cast<size_t>(n_last));
      for (int64_t row = begin; row < end; ++row) {
        const C* src = w.data.data() + row * half;
        for (int64_t k = 0; k < n_last; ++k) {
          full[static_cast<size_t>(k)] = k < half ? src[k] : std::conj(src[n_last - k]);
        }
        full[0] = C(full[0].real(), 0.0);
        if (n_last % 2 == 0) {
          full[static_cast<size_t>(n_last / 2)] =
              C(full[static_cast<size_t>(n_last / 2)].real(), 0.0);
        }
        fft.Run(full.data(), res.data(), /*forward=*/false);
        for (int64_t k = 0; k < n_last; ++k) {
          dst[row * n_last + k] = static_cast<T>(res[static_cast<size_t>(k)].real() * scale);
        }
      }
    });
  });
}

absl::Status FftKernel(KernelContext& ctx, const FftSpec& spec) {
  const Tensor& in = ctx.input(0);
  const int r = spec.rank;
  if (in.rank() < r) {
    return KernelError(ctx, "Input must have rank of at least %d but got: [%s]", r,
                       absl::StrJoin(in.dims(), ","));
  }
  const tf::Node& node = ctx.node();
  DType out_type = node.output_types().empty() ? DType::kInvalid : node.output_types()[0];
  TFJIT_RETURN_IF_ERROR(CheckFftTypes(ctx, spec, in.dtype(), out_type));
  const int lead = in.rank() - r;
  std::vector<int64_t> in_inner(in.dims().begin() + lead, in.dims().end());
  std::vector<int64_t> fft_shape = in_inner;
  std::vector<int64_t> out_dims = in.dims();
  if (spec.real) TFJIT_RETURN_IF_ERROR(ReadFftLengths(ctx, spec, in, fft_shape, out_dims));
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, out_type, out_dims));
  Tensor out(out_type, out_dims);
  if (in.num_elements() == 0 || out.num_elements() == 0) {
    ctx.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  int64_t batch = 1;
  for (int i = 0; i < lead; ++i) batch *= in.dim(i);

  // The work dims: the transform lengths, except IRFFT's last axis, which starts as the half
  // spectrum (n/2 + 1 values) and is completed line by line at the end.
  Work w;
  w.batch = batch;
  w.dims = fft_shape;
  const int64_t n_last = fft_shape.back();
  if (spec.real && !spec.forward) w.dims.back() = n_last / 2 + 1;
  // Every input dim is at least the work dim here (checked above), so loading crops.
  const bool loaded =
      DispatchComplex(in.dtype(),
                      [&](auto tag) { LoadInput<decltype(tag)>(ctx, in, batch, in_inner, w); }) ||
      DispatchFloat(in.dtype(),
                    [&](auto tag) { LoadInput<decltype(tag)>(ctx, in, batch, in_inner, w); });
  if (!loaded) return UnsupportedDType(ctx, in.dtype(), "float32, float64, complex64, complex128");

  double scale = 1.0;
  if (!spec.forward) {
    for (int64_t n : fft_shape) scale /= static_cast<double>(n);
  }
  if (!(spec.real && !spec.forward)) {
    for (int a = 0; a < r; ++a) TransformAxis(ctx, w, a, spec.forward);
    StoreComplexOutput(ctx, w, scale, batch, out);
  } else {
    for (int a = 0; a < r - 1; ++a) TransformAxis(ctx, w, a, /*forward=*/false);
    StoreIrfftOutput(ctx, w, scale, batch, n_last, out);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

template <int Rank, bool Forward, bool Real>
absl::Status Fft(KernelContext& ctx) {
  return FftKernel(ctx, FftSpec{Rank, Forward, Real});
}

}  // namespace

void RegisterFftKernels(KernelRegistry& registry) {
  registry.Register("FFT", &Fft<1, true, false>);
  registry.Register("IFFT", &Fft<1, false, false>);
  registry.Register("FFT2D", &Fft<2, true, false>);
  registry.Register("IFFT2D", &Fft<2, false, false>);
  registry.Register("FFT3D", &Fft<3, true, false>);
  registry.Register("IFFT3D", &Fft<3, false, false>);
  registry.Register("RFFT", &Fft<1, true, true>);
  registry.Register("IRFFT", &Fft<1, false, true>);
  registry.Register("RFFT2D", &Fft<2, true, true>);
  registry.Register("IRFFT2D", &Fft<2, false, true>);
  registry.Register("RFFT3D", &Fft<3, true, true>);
  registry.Register("IRFFT3D", &Fft<3, false, true>);
}

}  // namespace tfjit::runtime
