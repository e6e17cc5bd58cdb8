// TF's Where (the one-input form, tf.where(cond)): the coordinates of the true elements of a
// mask in row-major order. The one routine behind the fallback kernel and the evaluator's and
// CPU backend's custom-call `tfjit.where` (HLO.md, custom-call), so every path lists the same
// rows by construction.
#ifndef TFJIT_CORE_WHERE_H_
#define TFJIT_CORE_WHERE_H_

#include <cstdint>

namespace tfjit::where {

// Custom-call target: operand pred[d0, ..., d(r-1)] → (s64[n, r], s64[]) with n the operand's
// element count: the coordinates padded with zero rows, and how many rows are real (HLO.md).
inline constexpr char kWhereTarget[] = "tfjit.where";

// The number of true elements among mask[0, n).
int64_t CountTrue(const bool* mask, int64_t n);

// The coordinates of the true elements of mask (dims[rank], row-major) into coords[rows, rank],
// in row-major order of the mask, then zero rows up to `rows` (at least the number of true
// elements). Returns the number of true elements.
int64_t TrueCoordinates(const bool* mask, const int64_t* dims, int rank, int64_t rows,
                        int64_t* coords);

}  // namespace tfjit::where

#endif  // TFJIT_CORE_WHERE_H_
