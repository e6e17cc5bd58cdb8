// TF's dense decompositions and solvers, one routine per op: the code behind the fallback
// kernels, the evaluator's and the CPU backend's custom-calls `tfjit.linalg.<op>.<flags>`
// (HLO.md, custom-call), so every path returns the same bits by construction. Where TF leaves a
// sign free (QR, eigenvectors, singular vectors) the routine fixes one (see Run).
#ifndef TFJIT_CORE_LINALG_H_
#define TFJIT_CORE_LINALG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "tfjit/dtype.h"

namespace tfjit::linalg {

enum class Kind : int32_t {
  kCholesky = 0,      // a[B,n,n] -> l[B,n,n]
  kTriangularSolve,   // a[B,n,n], b[B,n,k] -> x[B,n,k]   (kLower, kAdjoint)
  kInverse,           // a[B,n,n] -> inv[B,n,n]           (kAdjoint)
  kSolve,             // a[B,n,n], b[B,n,k] -> x[B,n,k]   (kAdjoint)
  kLogDeterminant,    // a[B,n,n] -> (sign[B], log_abs_det[B])
  kLu,                // a[B,n,n] -> (lu[B,n,n], p s32[B,n])
  kQr,                // a[B,m,n] -> (q[B,m,m|p], r[B,m|p,n])  (kFullMatrices), p = min(m,n)
  kEig,               // a[B,n,n] -> (e[B,n], v[B,n,n])  (self-adjoint; lower triangle read)
  kSvd,               // a[B,m,n] -> (s[B,p], u[B,m,p|m], v[B,n,p|n])  (kFullMatrices)
  kTridiagonalSolve,  // d[B,3,n], b[B,n,k] -> x[B,n,k]   (kPartialPivoting)
  kDeterminant,       // a[B,n,n] -> det[B] (sign * exp(log_abs_det) of kLogDeterminant)
};
inline constexpr int kLower = 1;
inline constexpr int kAdjoint = 2;
inline constexpr int kFullMatrices = 4;
inline constexpr int kPartialPivoting = 8;

struct Call {
  Kind kind = Kind::kCholesky;
  int flags = 0;
};

// "tfjit.linalg.<op>.<flags>" and back (nullopt for any other target).
std::string TargetOf(const Call& call);
std::optional<Call> CallOfTarget(absl::string_view target);

// float32, float64, complex64 and complex128; callers compute 16-bit floats in float32, and
// complex64 is computed in complex128 (each matrix widened, its results rounded back). For
// complex values "adjoint" is the conjugate transpose, the eigenvalues and singular values are
// real (held in the complex dtype), and the sign conventions below fix a unit phase.
bool IsLinalgDType(DType dtype);

// The problem sizes: `batch` matrices of [m, n]; k columns of right-hand side.
struct Problem {
  int64_t batch = 0, m = 0, n = 0, k = 0;
};

// Whether operands `ins` and results `outs` (dtype, dims) are the call's shapes for element type
// `dtype` (see Kind; p of kLu is s32, every other result is `dtype`); the sizes when they are.
std::optional<Problem> MatchShapes(const Call& call, DType dtype,
                                   const std::vector<std::vector<int64_t>>& ins,
                                   const std::vector<std::pair<DType, std::vector<int64_t>>>& outs);

// Runs matrices [begin, end) of a problem MatchShapes accepted; `ins`/`outs` are the row-major
// buffers in the order of Kind. Returns false when some matrix failed the way TF's CPU kernel
// reports as an error: Cholesky of a matrix that is not positive definite (its result is then
// all NaN, as XLA's), a singular matrix for kTriangularSolve, kInverse, kSolve, kLu and
// kTridiagonalSolve (results are then inf/NaN). Results are always written. Signs (phases, for
// complex values): R of kQr has a real nonnegative diagonal; every eigenvector and every left
// singular vector has its largest-magnitude entry (the first such) real and positive, right
// singular vectors follow. kLogDeterminant of complex values: the sign is the unit-modulus
// phase of the determinant, the log of its modulus real. Thread-safe.
bool Run(const Call& call, DType dtype, const Problem& problem, const void* const* ins,
         void* const* outs, int64_t begin, int64_t end);

// Rough cycles per matrix, for sharding the batch across a pool.
int64_t CostPerMatrix(const Call& call, const Problem& problem);

}  // namespace tfjit::linalg

#endif  // TFJIT_CORE_LINALG_H_
