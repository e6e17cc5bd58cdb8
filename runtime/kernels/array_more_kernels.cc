// Fallback kernels of the array_more ops (docs/DESIGN.md, "Op families"), with TF's CPU
// semantics, dtypes and error messages: reversals and rolls, permutations, LinSpace,
// BroadcastArgs, searches (Bucketize, Lower/UpperBound), bit casts and counts, data-format
// maps, the v1 space/batch ops, ReverseSequence, ControlTrigger and the runtime-only ops XLA
// leaves to TF (Unique, ListDiff, Empty, ...). Fake quantization is in array_quantize_kernels.cc.
// Ops of other families filed here say so in the catalog; ControlTrigger stays because the
// control_flow family has no kernel file (the executor runs its other ops itself).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/attr.h"
#include "runtime/kernels/cwise_ops.h"

namespace tfjit::runtime {

void RegisterImageKernels(KernelRegistry& registry);  // image_kernels.cc (the ND space ops)

namespace {

// ---- Per-dimension index maps: Reverse, Roll ----

// out[o_0, .., o_r] = in[maps[0][o_0], .., maps[r][o_r]] (out has in's shape).
Tensor PerDimCopy(const KernelContext& ctx, const Tensor& in,
                  const std::vector<std::vector<int64_t>>& maps) {
  Tensor out(in.dtype(), in.dims());
  const int rank = in.rank();
  if (in.num_elements() == 0 || rank == 0) {
    if (rank == 0) out = in.Clone();
    return out;
  }
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  for (int d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * in.dim(d);
  const int64_t inner = in.dim(rank - 1);
  const int64_t rows = in.num_elements() / inner;
  DispatchByWidth(in.dtype(), [&](auto tag) {
    using U = decltype(tag);
    const U* src = static_cast<const U*>(in.raw_data());
    U* dst = static_cast<U*>(out.raw_data());
    const std::vector<int64_t>& last = maps.back();
    ParallelFor(ctx, rows, inner + rank, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t rest = r, base = 0;
        for (int d = rank - 2; d >= 0; --d) {
          const int64_t o = rest % in.dim(d);
          rest /= in.dim(d);
          base += maps[static_cast<size_t>(d)][static_cast<size_t>(o)] * strides[d];
        }
        U* row = dst + r * inner;
        for (int64_t j = 0; j < inner; ++j) row[j] = src[base + last[static_cast<size_t>(j)]];
      }
    });
  });
  return out;
}

std::vector<int64_t> IdentityMap(int64_t n) {
  std::vector<int64_t> m(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) m[static_cast<size_t>(i)] = i;
  return m;
}

// Reverse (v1): dims is a bool vector with one entry per input dim.
absl::Status ReverseKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  const Tensor& dims = ctx.input(1);
  if (dims.rank() != 1 || dims.dtype() != DType::kBool) {
    return KernelError(ctx, "'dims' must be 1-dimension, not %d", dims.rank());
  }
  if (dims.num_elements() != in.rank()) {
    return KernelError(ctx,
                       "'dims' must have the same number of values as 'input' has dimensions. "
                       "'input' has %d'dimensions, but 'dims' has %d values",
                       in.rank(), dims.num_elements());
  }
  if (DTypeSize(in.dtype()) == 0)
    return UnsupportedDType(ctx, in.dtype(), "numeric types and bool");
  std::vector<std::vector<int64_t>> maps;
  for (int d = 0; d < in.rank(); ++d) {
    std::vector<int64_t> m = IdentityMap(in.dim(d));
    if (dims.data<bool>()[d]) std::reverse(m.begin(), m.end());
    maps.push_back(std::move(m));
  }
  ctx.set_output(0, PerDimCopy(ctx, in, maps));
  return absl::OkStatus();
}

// Roll: elements move `shift` places along `axis` (both scalars or equal-length vectors; shifts
// of a repeated axis add up), wrapping around.
absl::Status RollKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& in = ctx.input(0);
  const Tensor& shift_t = ctx.input(1);
  const Tensor& axis_t = ctx.input(2);
  if (in.rank() < 1) return KernelError(ctx, "input must be 1-D or higher");
  if (shift_t.rank() > 1) {
    return KernelError(ctx, "shift must be a scalar or a 1-D vector. Found: %s",
                       shift_t.ShapeString());
  }
  if (axis_t.rank() > 1) {
    return KernelError(ctx, "axis must be a scalar or a 1-D vector. Found: %s",
                       axis_t.ShapeString());
  }
  std::vector<int64_t> shift, axis;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, shift_t, "shift", &shift));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, axis_t, "axis", &axis));
  if (shift.size() != axis.size()) {
    return KernelError(ctx, "shift and axis must have the same size");
  }
  if (DTypeSize(in.dtype()) == 0)
    return UnsupportedDType(ctx, in.dtype(), "numeric types and bool");
  std::vector<int64_t> total(static_cast<size_t>(in.rank()), 0);
  for (size_t i = 0; i < axis.size(); ++i) {
    int64_t a = axis[i] < 0 ? axis[i] + in.rank() : axis[i];
    if (a < 0 || a >= in.rank()) {
      return KernelError(ctx, "axis %d is out of range", axis[i]);
    }
    total[static_cast<size_t>(a)] += shift[i];
  }
  std::vector<std::vector<int64_t>> maps;
  for (int d = 0; d < in.rank(); ++d) {
    const int64_t n = in.dim(d);
    std::vector<int64_t> m(static_cast<size_t>(n));
    const int64_t s = n == 0 ? 0 : ((total[static_cast<size_t>(d)] % n) + n) % n;
    for (int64_t o = 0; o < n; ++o) m[static_cast<size_t>(o)] = (o - s + n) % n;
    maps.push_back(std::move(m));
  }
  ctx.set_output(0, PerDimCopy(ctx, in, maps));
  return absl::OkStatus();
}

// ReverseSequence: along seq_dim, the first seq_lengths[b] entries of batch row b reverse.
absl::Status ReverseSequenceKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  const Tensor& lens_t = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(int64_t seq_dim, tf::GetIntAttr(ctx.node(), "seq_dim"));
  TFJIT_ASSIGN_OR_RETURN(int64_t batch_dim, tf::GetIntAttrOr(ctx.node(), "batch_dim", 0));
  const int rank = in.rank();
  if (seq_dim < 0) seq_dim += rank;
  if (batch_dim < 0) batch_dim += rank;
  if (batch_dim == seq_dim) {
    return KernelError(ctx, "batch_dim == seq_dim == %d", seq_dim);
  }
  if (seq_dim < 0 || seq_dim >= rank) {
    return KernelError(ctx, "seq_dim must be < input rank( %d vs. %d)", seq_dim, rank);
  }
  if (batch_dim < 0 || batch_dim >= rank) {
    return KernelError(ctx, "batch_dim must be < input rank( %d vs. %d)", batch_dim, rank);
  }
  if (lens_t.rank() != 1) {
    return KernelError(ctx, "seq_lengths must be 1-dim, not %d", lens_t.rank());
  }
  std::vector<int64_t> lens;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, lens_t, "seq_lengths", &lens));
  if (static_cast<int64_t>(lens.size()) != in.dim(static_cast<int>(batch_dim))) {
    return KernelError(ctx, "Length of seq_lengths != input.dims(%d), (%d vs. %d)", batch_dim,
                       lens.size(), in.dim(static_cast<int>(batch_dim)));
  }
  for (size_t b = 0; b < lens.size(); ++b) {
    if (lens[b] < 0) return KernelError(ctx, "seq_lengths(%d) < 0", b);
    if (lens[b] > in.dim(static_cast<int>(seq_dim))) {
      return KernelError(ctx, "seq_lengths(%d) > input.dims(%d)", b, seq_dim);
    }
  }
  if (DTypeSize(in.dtype()) == 0)
    return UnsupportedDType(ctx, in.dtype(), "numeric types and bool");
  Tensor out(in.dtype(), in.dims());
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  for (int d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * in.dim(d);
  const int64_t n = in.num_elements();
  DispatchByWidth(in.dtype(), [&](auto tag) {
    using U = decltype(tag);
    const U* src = static_cast<const U*>(in.raw_data());
    U* dst = static_cast<U*>(out.raw_data());
    ParallelFor(ctx, n, 4 * rank, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const int64_t b = (k / strides[batch_dim]) % in.dim(static_cast<int>(batch_dim));
        const int64_t j = (k / strides[seq_dim]) % in.dim(static_cast<int>(seq_dim));
        const int64_t len = lens[static_cast<size_t>(b)];
        const int64_t from = j < len ? len - 1 - j : j;
        dst[k] = src[k + (from - j) * strides[seq_dim]];
      }
    });
  });
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Permutations, sequences, shapes ----

// InvertPermutation: y[x[i]] = i; x must be a permutation of [0, n).
absl::Status InvertPermutationKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (x.rank() != 1) return KernelError(ctx, "invert_permutation expects a 1D vector.");
  std::vector<int64_t> perm;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, x, "x", &perm));
  const int64_t n = static_cast<int64_t>(perm.size());
  if (n > std::numeric_limits<int32_t>::max()) {
    return KernelError(ctx, "permutation of %d elements is larger than int32 max", n);
  }
  std::vector<int64_t> inv(static_cast<size_t>(n), -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = perm[static_cast<size_t>(i)];
    if (d < 0 || d >= n) return KernelError(ctx, "%d is not between 0 and %d", d, n);
    if (inv[static_cast<size_t>(d)] != -1)
      return KernelError(ctx, "%d is duplicated in the input.", d);
    inv[static_cast<size_t>(d)] = i;
  }
  Tensor out(x.dtype(), {n});
  for (int64_t i = 0; i < n; ++i) {
    if (x.dtype() == DType::kInt32) {
      out.data<int32_t>()[i] = static_cast<int32_t>(inv[static_cast<size_t>(i)]);
    } else {
      out.data<int64_t>()[i] = inv[static_cast<size_t>(i)];
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// LinSpace: num evenly spaced values from start to stop; the last is exactly stop.
absl::Status LinSpaceKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& start_t = ctx.input(0);
  const Tensor& stop_t = ctx.input(1);
  const Tensor& num_t = ctx.input(2);
  if (start_t.rank() != 0) {
    return KernelError(ctx, "start must be a scalar, not shape %s", DimsString(start_t.dims()));
  }
  if (stop_t.rank() != 0) {
    return KernelError(ctx, "stop must be a scalar, not shape %s", DimsString(stop_t.dims()));
  }
  if (num_t.rank() != 0) {
    return KernelError(ctx, "num must be a scalar, not shape %s", DimsString(num_t.dims()));
  }
  std::vector<int64_t> num_v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, num_t, "num", &num_v));
  const int64_t num = num_v[0];
  if (num <= 0) return KernelError(ctx, "Requires num > 0: %d", num);
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, start_t.dtype(), {num}));
  Tensor out(start_t.dtype(), {num});
  const bool ok = DispatchFloat(start_t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const C start = C(start_t.data<T>()[0]);
    const C stop = C(stop_t.data<T>()[0]);
    T* y = out.data<T>();
    y[0] = static_cast<T>(start);
    if (num > 1) {
      const C step = (stop - start) / static_cast<C>(num - 1);
      for (int64_t i = 1; i < num - 1; ++i) y[i] = static_cast<T>(start + step * static_cast<C>(i));
      y[num - 1] = static_cast<T>(stop);
    }
  });
  if (!ok) return UnsupportedDType(ctx, start_t.dtype(), TypeSetName(TypeSet::kFloat));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// BroadcastArgs: the broadcast shape of two shape vectors.
absl::Status BroadcastArgsKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  std::vector<int64_t> s0, s1;
  for (int i = 0; i < 2; ++i) {
    if (ctx.input(i).rank() != 1) {
      return KernelError(ctx, "In[%d] must be a vector. %s", i, ctx.input(i).ShapeString());
    }
  }
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(0), "s0", &s0));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "s1", &s1));
  const size_t n = std::max(s0.size(), s1.size());
  std::vector<int64_t> r(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = i < s0.size() ? s0[s0.size() - 1 - i] : 1;
    const int64_t b = i < s1.size() ? s1[s1.size() - 1 - i] : 1;
    if (a != b && a != 1 && b != 1) {
      return KernelError(ctx, "Incompatible shapes: %s vs. %s", DimsString(s0), DimsString(s1));
    }
    r[n - 1 - i] = a == 1 ? b : a;
  }
  Tensor out(ctx.input(0).dtype(), {static_cast<int64_t>(n)});
  for (size_t i = 0; i < n; ++i) {
    if (out.dtype() == DType::kInt32) {
      out.data<int32_t>()[i] = static_cast<int32_t>(r[i]);
    } else {
      out.data<int64_t>()[i] = r[i];
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Searches ----

// Bucketize: the index of the bucket of each value, i.e. how many boundaries are <= it
// (TF's upper_bound over the float boundaries, compared in C++'s promoted type).
absl::Status BucketizeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(std::vector<float> bounds, tf::GetFloatListAttr(ctx.node(), "boundaries"));
  if (!std::is_sorted(bounds.begin(), bounds.end())) {
    return KernelError(ctx, "Expected sorted boundaries");
  }
  Tensor out(DType::kInt32, in.dims());
  bool ok = false;
  DispatchReal(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                  std::is_same_v<T, float> || std::is_same_v<T, double>) {
      ok = true;
      const T* x = in.data<T>();
      int32_t* y = out.data<int32_t>();
      ParallelFor(ctx, in.num_elements(), 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          y[i] = static_cast<int32_t>(std::upper_bound(bounds.begin(), bounds.end(), x[i],
                                                       [](T v, float b) { return v < b; }) -
                                      bounds.begin());
        }
      });
    }
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), "int32, int64, float32, float64");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// LowerBound/UpperBound: per row of sorted_inputs, the insertion index of each value of the
// same row of values (first position with sorted >= v, resp. > v).
template <bool kUpper>
absl::Status BoundKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& sorted = ctx.input(0);
  const Tensor& values = ctx.input(1);
  if (sorted.rank() != 2) {
    return KernelError(ctx, "sorted input argument must be a matrix, got %s", sorted.ShapeString());
  }
  if (values.rank() != 2) {
    return KernelError(ctx, "values must be a matrix, got %s", values.ShapeString());
  }
  if (sorted.dim(0) != values.dim(0)) {
    return KernelError(ctx,
                       "Leading dim_size of both tensors must match. (sorted_inputs is %s, "
                       "values is %s)",
                       sorted.ShapeString(), values.ShapeString());
  }
  if (sorted.dtype() != values.dtype()) {
    return KernelError(ctx, "sorted_inputs and values must have one dtype: %s vs %s",
                       sorted.ShapeString(), values.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(DType out_type, tf::GetTypeAttr(ctx.node(), "out_type"));
  if (out_type != DType::kInt32 && out_type != DType::kInt64) {
    return KernelError(ctx, "out_type must be int32 or int64, got %s", DTypeName(out_type));
  }
  const int64_t n = sorted.dim(1), m = values.dim(1);
  Tensor out(out_type, values.dims());
  const bool ok = DispatchReal(sorted.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* s = sorted.data<T>();
    const T* v = values.data<T>();
    ParallelFor(ctx, values.num_elements(), 4 + n / 8, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const T* row = s + (k / std::max<int64_t>(m, 1)) * n;
        const C x = C(v[k]);
        const T* at =
            kUpper ? std::upper_bound(row, row + n, x, [](C a, const T& b) { return a < C(b); })
                   : std::lower_bound(row, row + n, x, [](const T& a, C b) { return C(a) < b; });
        const int64_t idx = at - row;
        if (out_type == DType::kInt32) {
          out.data<int32_t>()[k] = static_cast<int32_t>(idx);
        } else {
          out.data<int64_t>()[k] = idx;
        }
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, sorted.dtype(), TypeSetName(TypeSet::kReal));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Bits ----

// Bitcast: the same bytes as another type; a wider input grows a last dim of
// in_size / out_size, a narrower one consumes a last dim of out_size / in_size.
absl::Status BitcastKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(DType to, tf::GetTypeAttr(ctx.node(), "type"));
  const size_t in_size = DTypeSize(in.dtype()), out_size = DTypeSize(to);
  if (in_size == 0 || out_size == 0 || in.dtype() == DType::kBool || to == DType::kBool) {
    return KernelError(ctx, "Bitcast works on numeric types other than bool, got %s to %s",
                       DTypeName(in.dtype()), DTypeName(to));
  }
  std::vector<int64_t> dims = in.dims();
  if (in_size > out_size) {
    dims.push_back(static_cast<int64_t>(in_size / out_size));
  } else if (in_size < out_size) {
    if (dims.empty() || dims.back() != static_cast<int64_t>(out_size / in_size)) {
      return KernelError(ctx, "Cannot bitcast from %s to %s: shape %s", DTypeName(in.dtype()),
                         DTypeName(to), DimsString(in.dims()));
    }
    dims.pop_back();
  }
  Tensor out(to, dims);
  if (in.byte_size() > 0) std::memcpy(out.raw_data(), in.raw_data(), in.byte_size());
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// PopulationCount: the number of set bits of each integer, as uint8.
absl::Status PopulationCountKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  Tensor out(DType::kUInt8, in.dims());
  const bool ok = DispatchInt(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using U = std::make_unsigned_t<T>;
    const T* x = in.data<T>();
    uint8_t* y = out.data<uint8_t>();
    ParallelFor(ctx, in.num_elements(), 4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        y[i] = static_cast<uint8_t>(__builtin_popcountll(static_cast<U>(x[i])));
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kInt));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// CompareAndBitpack: each run of 8 last-dim entries becomes one byte, most significant bit
// first, bit set where the entry is > threshold (bool inputs: where it is true).
absl::Status CompareAndBitpackKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  const Tensor& th = ctx.input(1);
  if (th.rank() != 0) {
    return KernelError(ctx, "Compare must be a scalar, but saw shape: %s", DimsString(th.dims()));
  }
  if (in.rank() < 1) {
    return KernelError(ctx, "Input should be at least a vector, but saw a scalar.");
  }
  if (in.dims().back() % 8 != 0) {
    return KernelError(ctx, "Inner dimension of input should be divisible by 8, but saw shape: %s",
                       DimsString(in.dims()));
  }
  std::vector<int64_t> dims = in.dims();
  dims.back() /= 8;
  Tensor out(DType::kUInt8, dims);
  const bool ok = DispatchNumeric(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data<T>();
    const T t = th.data<T>()[0];
    uint8_t* y = out.data<uint8_t>();
    for (int64_t i = 0; i < out.num_elements(); ++i) {
      uint8_t byte = 0;
      for (int j = 0; j < 8; ++j) {
        bool bit;
        if constexpr (std::is_same_v<T, bool>) {
          bit = x[8 * i + j];
        } else {
          bit = ComputeType<T>(x[8 * i + j]) > ComputeType<T>(t);
        }
        byte = static_cast<uint8_t>(byte | (bit ? 1 << (7 - j) : 0));
      }
      y[i] = byte;
    }
  });
  if (!ok) return UnsupportedDType(ctx, in.dtype(), TypeSetName(TypeSet::kAll));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Data formats ----

// The src/dst format attrs, checked as TF does: 4 or 5 letters, dst a permutation of src.
absl::Status ReadFormats(const KernelContext& ctx, std::string* src, std::string* dst) {
  TFJIT_ASSIGN_OR_RETURN(*src, tf::GetStringAttrOr(ctx.node(), "src_format", "NHWC"));
  TFJIT_ASSIGN_OR_RETURN(*dst, tf::GetStringAttrOr(ctx.node(), "dst_format", "NCHW"));
  if (src->size() != 4 && src->size() != 5) {
    return KernelError(ctx, "Source format must be of length 4 or 5, received src_format = %s",
                       *src);
  }
  if (dst->size() != 4 && dst->size() != 5) {
    return KernelError(ctx, "Destination format must be of length 4 or 5, received dst_format = %s",
                       *dst);
  }
  std::string a = *src, b = *dst;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b) {
    return KernelError(ctx, "Destination format %s is not a permutation of source format %s", *dst,
                       *src);
  }
  return absl::OkStatus();
}

// DataFormatDimMap: a dim index of src_format (negative counts from the end) to its index in
// dst_format. As TF's functor: (x + n) % n selects, and any other remainder maps like n - 1.
absl::Status DataFormatDimMapKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  std::string src, dst;
  TFJIT_RETURN_IF_ERROR(ReadFormats(ctx, &src, &dst));
  const Tensor& x = ctx.input(0);
  const int64_t n = static_cast<int64_t>(src.size());
  std::vector<int64_t> map(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) map[static_cast<size_t>(i)] = dst.find(src[i]);
  Tensor out(x.dtype(), x.dims());
  const bool ok = DispatchInt(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        const int64_t r = (static_cast<int64_t>(x.data<T>()[i]) + n) % n;
        out.data<T>()[i] = static_cast<T>(map[static_cast<size_t>(r >= 0 && r < n ? r : n - 1)]);
      }
    }
  });
  if (!ok || (x.dtype() != DType::kInt32 && x.dtype() != DType::kInt64)) {
    return UnsupportedDType(ctx, x.dtype(), "int32, int64");
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// DataFormatVecPermute: a shape vector (or [n, 2] block of per-dim pairs) in src_format order
// to dst_format order; vectors of the spatial size permute the spatial dims only.
absl::Status DataFormatVecPermuteKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  std::string src, dst;
  TFJIT_RETURN_IF_ERROR(ReadFormats(ctx, &src, &dst));
  const Tensor& x = ctx.input(0);
  const int64_t full = static_cast<int64_t>(src.size()), spatial = full - 2;
  if (x.rank() != 1 && x.rank() != 2) {
    return KernelError(ctx, "input must be a vector or 2D tensor, but got shape %s",
                       DimsString(x.dims()));
  }
  if (x.rank() == 1 && x.dim(0) != spatial && x.dim(0) != full) {
    return KernelError(ctx, "1D input must be of size %d or %d, but got shape %s", spatial, full,
                       DimsString(x.dims()));
  }
  if (x.rank() == 2 && x.dim(0) != spatial && x.dim(0) != full) {
    return KernelError(ctx,
                       "First dimension of 2D input must be of size %d or %d, but got shape "
                       "%s",
                       spatial, full, DimsString(x.dims()));
  }
  if (x.rank() == 2 && x.dim(1) != 2) {
    return KernelError(ctx, "Second dimension of 2D input must be of size 2, but got shape %s",
                       DimsString(x.dims()));
  }
  if (x.dim(0) == spatial) {
    auto strip = [](std::string s) {
      s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == 'N' || c == 'C'; }),
              s.end());
      return s;
    };
    src = strip(src);
    dst = strip(dst);
  }
  if (x.dtype() != DType::kInt32 && x.dtype() != DType::kInt64) {
    return UnsupportedDType(ctx, x.dtype(), "int32, int64");
  }
  Tensor out(x.dtype(), x.dims());
  const int64_t width = x.rank() == 2 ? 2 : 1;
  const size_t elem = DTypeSize(x.dtype());
  for (size_t i = 0; i < dst.size(); ++i) {
    const size_t from = src.find(dst[i]);
    std::memcpy(static_cast<char*>(out.raw_data()) + i * width * elem,
                static_cast<const char*>(x.raw_data()) + from * width * elem, width * elem);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- SpaceToBatch / BatchToSpace (v1): the ND kernels with block_shape [b, b] ----

KernelFn ImageKernel(const char* op) {
  static const KernelRegistry* const registry = [] {
    auto* r = new KernelRegistry;
    RegisterImageKernels(*r);
    return r;
  }();
  return registry->Find(op);
}

template <bool kToBatch>
absl::Status SpaceBatchV1Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  TFJIT_ASSIGN_OR_RETURN(int64_t block, tf::GetIntAttr(ctx.node(), "block_size"));
  if (block <= 1) return KernelError(ctx, "Block size should be > 1: %d", block);
  const Tensor& in = ctx.input(0);
  if (in.rank() != 4) {
    return KernelError(ctx, "input rank should be 4 instead of %d", in.rank());
  }
  const std::vector<Tensor> inputs = {
      in, Tensor::FromVector<int64_t>(DType::kInt64, {2}, {block, block}), ctx.input(1)};
  KernelFn nd = ImageKernel(kToBatch ? "SpaceToBatchND" : "BatchToSpaceND");
  if (nd == nullptr) return absl::InternalError("the ND space/batch kernels are not registered");
  KernelContext inner(ctx.node(), inputs, ctx.pool());
  TFJIT_RETURN_IF_ERROR(nd(inner));
  ctx.set_output(0, std::move(inner.outputs()[0]));
  return absl::OkStatus();
}

// ---- ControlTrigger ----

absl::Status ControlTriggerKernel(KernelContext&) { return absl::OkStatus(); }

// ---- Ops XLA leaves to TF ----

// AccumulateNV2: the elementwise sum of N same-shaped tensors (AddN without the wait).
absl::Status AccumulateNV2Kernel(KernelContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1) return KernelError(ctx, "AccumulateNV2 needs at least one input; got none");
  const Tensor& first = ctx.input(0);
  for (int i = 1; i < n; ++i) {
    if (ctx.input(i).dtype() != first.dtype() || ctx.input(i).dims() != first.dims()) {
      return KernelError(ctx,
                         "Inputs to AccumulateNV2 must have the same dtype and shape: "
                         "input 0 is %s, input %d is %s",
                         first.ShapeString(), i, ctx.input(i).ShapeString());
    }
  }
  Tensor out(first.dtype(), first.dims());
  bool ok = DispatchReal(first.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    ParallelFor(ctx, first.num_elements(), n, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        C acc = C(ctx.input(0).data<T>()[k]);
        for (int i = 1; i < n; ++i) {
          acc = Wrapping(acc, C(ctx.input(i).data<T>()[k]), [](auto a, auto b) { return a + b; });
        }
        out.data<T>()[k] = static_cast<T>(acc);
      }
    });
  });
  ok = ok || DispatchComplex(first.dtype(), [&](auto tag) {
         using T = decltype(tag);
         ParallelFor(ctx, first.num_elements(), n, [&](int64_t begin, int64_t end) {
           for (int64_t k = begin; k < end; ++k) {
             T acc = ctx.input(0).data<T>()[k];
             for (int i = 1; i < n; ++i) acc += ctx.input(i).data<T>()[k];
             out.data<T>()[k] = acc;
           }
         });
       });
  if (!ok) return UnsupportedDType(ctx, first.dtype(), "number types");
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Writes int64 `v` into element i of an int32/int64 tensor.
void SetIndex(Tensor& t, int64_t i, int64_t v) {
  if (t.dtype() == DType::kInt32) {
    t.data<int32_t>()[i] = static_cast<int32_t>(v);
  } else {
    t.data<int64_t>()[i] = v;
  }
}

absl::StatusOr<DType> IndexTypeAttr(const KernelContext& ctx, const char* name) {
  TFJIT_ASSIGN_OR_RETURN(DType t, tf::GetTypeAttr(ctx.node(), name));
  if (t != DType::kInt32 && t != DType::kInt64) {
    return KernelError(ctx, "%s must be int32 or int64, got %s", name, DTypeName(t));
  }
  return t;
}

// Unique / UniqueWithCounts: the distinct values of a vector in order of first appearance,
// each input's index into them, and (with counts) how often each occurs. Floats compare by
// value (-0 == 0; every NaN is distinct), as TF's hash map does.
template <bool kCounts>
absl::Status UniqueKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (x.rank() != 1) return KernelError(ctx, "unique expects a 1D vector.");
  TFJIT_ASSIGN_OR_RETURN(DType idx_t, IndexTypeAttr(ctx, "out_idx"));
  const int64_t n = x.num_elements();
  Tensor idx(idx_t, {n});
  std::vector<int64_t> firsts, counts;
  const bool ok = DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    std::unordered_map<C, int64_t> seen;
    for (int64_t i = 0; i < n; ++i) {
      const C v = C(x.data<T>()[i]);
      auto [it, inserted] = seen.emplace(v, static_cast<int64_t>(firsts.size()));
      if (inserted) firsts.push_back(i), counts.push_back(0);
      ++counts[static_cast<size_t>(it->second)];
      SetIndex(idx, i, it->second);
    }
  });
  if (!ok) return UnsupportedDType(ctx, x.dtype(), TypeSetName(TypeSet::kAll));
  const int64_t m = static_cast<int64_t>(firsts.size());
  Tensor y(x.dtype(), {m});
  const size_t elem = DTypeSize(x.dtype());
  for (int64_t j = 0; j < m; ++j) {
    std::memcpy(static_cast<char*>(y.raw_data()) + j * elem,
                static_cast<const char*>(x.raw_data()) + firsts[static_cast<size_t>(j)] * elem,
                elem);
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, std::move(idx));
  if constexpr (kCounts) {
    Tensor count(idx_t, {m});
    for (int64_t j = 0; j < m; ++j) SetIndex(count, j, counts[static_cast<size_t>(j)]);
    ctx.set_output(2, std::move(count));
  }
  return absl::OkStatus();
}

// ListDiff: the entries of x that are not in y, in x's order, and their positions in x.
absl::Status ListDiffKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.rank() != 1) return KernelError(ctx, "x should be a 1D vector.");
  if (y.rank() != 1) return KernelError(ctx, "y should be a 1D vector.");
  if (x.dtype() != y.dtype()) {
    return KernelError(ctx, "x and y must have one dtype: %s vs %s", x.ShapeString(),
                       y.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(DType idx_t, IndexTypeAttr(ctx, "out_idx"));
  std::vector<int64_t> kept;
  const bool ok = DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    std::unordered_map<C, bool> drop;
    for (int64_t i = 0; i < y.num_elements(); ++i) drop.emplace(C(y.data<T>()[i]), true);
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      if (!drop.contains(C(x.data<T>()[i]))) kept.push_back(i);
    }
  });
  if (!ok) return UnsupportedDType(ctx, x.dtype(), TypeSetName(TypeSet::kAll));
  const int64_t m = static_cast<int64_t>(kept.size());
  Tensor out(x.dtype(), {m}), idx(idx_t, {m});
  const size_t elem = DTypeSize(x.dtype());
  for (int64_t j = 0; j < m; ++j) {
    std::memcpy(static_cast<char*>(out.raw_data()) + j * elem,
                static_cast<const char*>(x.raw_data()) + kept[static_cast<size_t>(j)] * elem, elem);
    SetIndex(idx, j, kept[static_cast<size_t>(j)]);
  }
  ctx.set_output(0, std::move(out));
  ctx.set_output(1, std::move(idx));
  return absl::OkStatus();
}

// Empty: a tensor of the given shape; tfjit always zeroes it (init=true's contents, which are
// one valid choice for init=false's unspecified ones).
absl::Status EmptyKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& shape = ctx.input(0);
  if (shape.rank() != 1 || shape.dtype() != DType::kInt32) {
    return KernelError(ctx, "shape must be a vector of int32, got shape %s", shape.ShapeString());
  }
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, shape, "shape", &dims));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  if (!IsNumericOrComplexDType(dtype)) {
    return UnsupportedDType(ctx, dtype, "numeric types, bool and complex");
  }
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, dtype, dims));
  ctx.set_output(0, Tensor(dtype, dims));
  return absl::OkStatus();
}

// DeepCopy: a copy that shares no buffer with the input.
absl::Status DeepCopyKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  ctx.set_output(0, ctx.input(0).Clone());
  return absl::OkStatus();
}

// ParallelConcat: N tensors of shape [1, ...] stacked along dim 0 (TF rewrites the op into
// in-place updates; the result is this concatenation).
absl::Status ParallelConcatKernel(KernelContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1) return KernelError(ctx, "ParallelConcat needs at least one input; got none");
  const Tensor& first = ctx.input(0);
  for (int i = 0; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.rank() < 1 || t.dim(0) != 1 || t.dims() != first.dims() || t.dtype() != first.dtype()) {
      return KernelError(ctx,
                         "ParallelConcat's inputs must all have shape [1, ...] of one dtype "
                         "and shape: input 0 is %s, input %d is %s",
                         first.ShapeString(), i, t.ShapeString());
    }
  }
  if (DTypeSize(first.dtype()) == 0) {
    return UnsupportedDType(ctx, first.dtype(), TypeSetName(TypeSet::kAll));
  }
  std::vector<int64_t> dims = first.dims();
  dims[0] = n;
  Tensor out(first.dtype(), dims);
  for (int i = 0; i < n; ++i) {
    if (first.byte_size() == 0) break;
    std::memcpy(static_cast<char*>(out.raw_data()) + i * first.byte_size(), ctx.input(i).raw_data(),
                first.byte_size());
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// HistogramFixedWidth: counts of values in nbins equal-width bins over value_range; values
// outside fall into the first or last bin. The bin is computed as TF's functor does: the
// clamped difference in T, divided in double by the bin width.
absl::Status HistogramFixedWidthKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& values = ctx.input(0);
  const Tensor& range = ctx.input(1);
  const Tensor& nbins_t = ctx.input(2);
  if (range.rank() != 1) return KernelError(ctx, "value_range should be a vector.");
  if (range.num_elements() != 2) {
    return KernelError(ctx, "value_range should be a vector of 2 elements.");
  }
  if (nbins_t.rank() != 0) return KernelError(ctx, "nbins should be a scalar.");
  if (range.dtype() != values.dtype()) {
    return KernelError(ctx, "value_range must have the dtype of values: %s vs %s",
                       range.ShapeString(), values.ShapeString());
  }
  std::vector<int64_t> nbins_v;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, nbins_t, "nbins", &nbins_v));
  const int64_t nbins = nbins_v[0];
  TFJIT_ASSIGN_OR_RETURN(DType out_t, IndexTypeAttr(ctx, "dtype"));
  if (nbins <= 0) {
    return KernelError(ctx, "nbins should be a positive number, but got '%d'", nbins);
  }
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, out_t, {nbins}));
  Tensor out(out_t, {nbins});
  absl::Status status;
  const bool ok = DispatchReal(values.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const C lo = C(range.data<T>()[0]), hi = C(range.data<T>()[1]);
    if (!(lo < hi)) {
      status = KernelError(ctx,
                           "value_range should satisfy value_range[0] < value_range[1], "
                           "but got '[%g, %g]'",
                           static_cast<double>(lo), static_cast<double>(hi));
      return;
    }
    if (nbins <= 0) {
      status = KernelError(ctx, "nbins should be a positive number, but got '%d'", nbins);
      return;
    }
    // Integer differences in double: T's subtraction could overflow (TF's would).
    auto diff = [](C a, C b) {
      if constexpr (kIsFloat<C>) return static_cast<double>(static_cast<C>(a - b));
      return static_cast<double>(a) - static_cast<double>(b);
    };
    const double step = diff(hi, lo) / static_cast<double>(nbins);
    std::vector<int64_t> counts(static_cast<size_t>(nbins), 0);
    for (int64_t i = 0; i < values.num_elements(); ++i) {
      const C v = C(values.data<T>()[i]);
      if constexpr (kIsFloat<C>) {
        if (std::isnan(v)) {
          status = KernelError(ctx, "Histogram values must not contain NaN");
          return;
        }
      }
      const double bin = std::min(diff(std::max(v, lo), lo) / step, static_cast<double>(nbins - 1));
      ++counts[static_cast<size_t>(static_cast<int64_t>(bin))];
    }
    for (int64_t b = 0; b < nbins; ++b) SetIndex(out, b, counts[static_cast<size_t>(b)]);
  });
  if (!ok) return UnsupportedDType(ctx, values.dtype(), "int32, int64, float32, float64");
  TFJIT_RETURN_IF_ERROR(status);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterArrayMoreKernels(KernelRegistry& registry) {
  registry.Register("Reverse", &ReverseKernel);
  registry.Register("Roll", &RollKernel);
  registry.Register("ReverseSequence", &ReverseSequenceKernel);
  registry.Register("InvertPermutation", &InvertPermutationKernel);
  registry.Register("LinSpace", &LinSpaceKernel);
  registry.Register("BroadcastArgs", &BroadcastArgsKernel);
  registry.Register("Bucketize", &BucketizeKernel);
  registry.Register("LowerBound", &BoundKernel<false>);
  registry.Register("UpperBound", &BoundKernel<true>);
  registry.Register("Bitcast", &BitcastKernel);
  registry.Register("PopulationCount", &PopulationCountKernel);
  registry.Register("CompareAndBitpack", &CompareAndBitpackKernel);
  registry.Register("DataFormatDimMap", &DataFormatDimMapKernel);
  registry.Register("DataFormatVecPermute", &DataFormatVecPermuteKernel);
  registry.Register("SpaceToBatch", &SpaceBatchV1Kernel<true>);
  registry.Register("BatchToSpace", &SpaceBatchV1Kernel<false>);
  registry.Register("ControlTrigger", &ControlTriggerKernel);
  registry.Register("AccumulateNV2", &AccumulateNV2Kernel);
  registry.Register("Unique", &UniqueKernel<false>);
  registry.Register("UniqueWithCounts", &UniqueKernel<true>);
  registry.Register("ListDiff", &ListDiffKernel);
  registry.Register("Empty", &EmptyKernel);
  registry.Register("DeepCopy", &DeepCopyKernel);
  registry.Register("ParallelConcat", &ParallelConcatKernel);
  registry.Register("HistogramFixedWidth", &HistogramFixedWidthKernel);
  RegisterArrayQuantizeKernels(registry);  // array_quantize_kernels.cc
}

}  // namespace tfjit::runtime
