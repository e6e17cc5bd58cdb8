// Between tensors and tests/tf/linalg_ref.h's matrices: the batch of [..., r, c] tensors as
// double or std::complex<double> matrices, and a reference built from one function per matrix.
// Shared by op_cases_linalg.cc (real) and op_cases_linalg_complex.cc (complex).
#ifndef TFJIT_TESTS_TF_LINALG_TENSOR_REF_H_
#define TFJIT_TESTS_TF_LINALG_TENSOR_REF_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>

#include "core/dtype.h"
#include "tests/tf/linalg_ref.h"
#include "tests/tf/op_cases.h"

namespace tfjit::optest::linalg_ref {

// The number of matrices in a [..., r, c] tensor, and its batch dimensions.
inline int64_t BatchCount(const Tensor& t) {
  int64_t b = 1;
  for (int i = 0; i + 2 < t.rank(); ++i) b *= t.dim(i);
  return b;
}
inline Dims BatchDims(const Tensor& t) { return Dims(t.dims().begin(), t.dims().end() - 2); }
inline Dims WithTail(Dims d, std::initializer_list<int64_t> tail) {
  d.insert(d.end(), tail.begin(), tail.end());
  return d;
}

// Element k of `t` as S (double: the real value; std::complex<double>: the complex value), and
// the other way round, rounded to t's dtype.
template <typename S>
S ElementAs(const Tensor& t, int64_t k) {
  if constexpr (kIsComplex<S>) {
    return ElementAsComplex(t, k);
  } else {
    return ElementAsDouble(t, k);
  }
}
template <typename S>
void SetElement(Tensor& t, int64_t k, S v) {
  if constexpr (kIsComplex<S>) {
    if (t.dtype() == DType::kComplex64) {
      t.data<complex64>()[k] =
          complex64(static_cast<float>(v.real()), static_cast<float>(v.imag()));
    } else {
      t.data<complex128>()[k] = v;
    }
  } else {
    SetFromDouble(t, k, v);
  }
}

// Matrix `b` of the batch in `t`; `m` stored at element `at` of `t`.
template <typename S>
Mat<S> MatrixAt(const Tensor& t, int64_t b) {
  const int64_t r = t.dim(t.rank() - 2), c = t.dim(t.rank() - 1);
  Mat<S> m(r, c);
  for (int64_t k = 0; k < r * c; ++k) m.v[static_cast<size_t>(k)] = ElementAs<S>(t, b * r * c + k);
  return m;
}
template <typename S>
void StoreAt(Tensor& t, int64_t at, const Mat<S>& m) {
  for (size_t k = 0; k < m.v.size(); ++k) SetElement(t, at + static_cast<int64_t>(k), m.v[k]);
}

// The dims after the batch of a per-matrix result, from input 0 (and input 1, when given).
using TailFn = std::function<Dims(const Tensor& a, const Tensor* b)>;
inline Dims SquareTail(const Tensor& a, const Tensor*) {
  return {a.dim(a.rank() - 1), a.dim(a.rank() - 1)};
}
inline Dims RhsTail(const Tensor&, const Tensor* b) {
  return {b->dim(b->rank() - 2), b->dim(b->rank() - 1)};
}
inline Dims VecTail(const Tensor& a, const Tensor*) { return {a.dim(a.rank() - 1)}; }
inline Dims NoTail(const Tensor&, const Tensor*) { return {}; }

// A reference that maps each matrix of input 0 (and the same-numbered matrix of input 1, when
// there is one) to one result matrix; the output has input 0's dtype and dims batch + tail.
template <typename S>
using PerMatrix = std::function<Mat<S>(const Mat<S>& a, const Mat<S>* b)>;
template <typename S>
RefFn Batched(TailFn tail, PerMatrix<S> f) {
  return [tail, f](const std::vector<Tensor>& in) {
    const Tensor* b = in.size() > 1 ? &in[1] : nullptr;
    const Dims t = tail(in[0], b);
    Dims dims = BatchDims(in[0]);
    dims.insert(dims.end(), t.begin(), t.end());
    Tensor out(in[0].dtype(), dims);
    int64_t per = 1;
    for (int64_t d : t) per *= d;
    for (int64_t k = 0; k < BatchCount(in[0]); ++k) {
      const Mat<S> bm = b != nullptr ? MatrixAt<S>(*b, k) : Mat<S>(0, 0);
      StoreAt(out, k * per, f(MatrixAt<S>(in[0], k), b != nullptr ? &bm : nullptr));
    }
    return out;
  };
}

}  // namespace tfjit::optest::linalg_ref

#endif  // TFJIT_TESTS_TF_LINALG_TENSOR_REF_H_
