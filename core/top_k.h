// TF's TopKV2 per row: the one selection routine behind the fallback kernel, the evaluator's
// and the CPU backend's custom-call `tfjit.top_k` (HLO.md, custom-call), so every path ranks
// ties and NaNs the same way by construction.
#ifndef TFJIT_CORE_TOP_K_H_
#define TFJIT_CORE_TOP_K_H_

#include <cstdint>

#include "tfjit/dtype.h"

namespace tfjit::topk {

// Custom-call target: operand T[..., n] → (T[..., k], s32[..., k]) (HLO.md).
inline constexpr char kTopKTarget[] = "tfjit.top_k";

// Whether TopKRows supports `dtype`: TF's real number types (every integer type, f16, bf16,
// f32, f64); not pred.
bool IsTopKDType(DType dtype);

// For rows [row_begin, row_end) of the row-major [rows, n] `input` (element type `dtype`),
// writes the k largest entries of each row, best first, to `values` [rows, k] (same type) and
// their column numbers to `indices` [rows, k]. The order is total, so the result is unique:
//   - larger values first; equal values (including -0 and +0) keep their column order, which
//     is TF's kernel order (its comparator breaks ties by the lower index);
//   - NaN ranks above +inf and all NaNs are equal (TF's kernel leaves NaN unspecified: its
//     comparator is not a strict weak order once a NaN is present).
// Requires 0 <= k <= n < 2^31. Does nothing for a dtype IsTopKDType rejects. Thread-safe: rows
// are independent, so any split of the rows gives the same result.
void TopKRows(DType dtype, const void* input, int64_t n, int64_t k, void* values, int32_t* indices,
              int64_t row_begin, int64_t row_end);

// Rough cycles per row of n columns, for sharding rows across a pool.
int64_t TopKCostPerRow(int64_t n, int64_t k);

}  // namespace tfjit::topk

#endif  // TFJIT_CORE_TOP_K_H_
