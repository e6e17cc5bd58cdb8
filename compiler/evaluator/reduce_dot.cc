// Evaluator: reduce, reduce-window (through a Combiner calling `to_apply`), dot and
// convolution (accumulating f16/bf16 in f32, integers with wrap-around).
#include <cstring>
#include <utility>

#include "compiler/evaluator/evaluator.h"
#include "compiler/evaluator/evaluator_internal.h"
#include "core/status.h"

namespace tfjit::hlo::eval {

// A combiner `ROOT op(p0, p1)` of two scalar parameters is applied directly (the common
// sum/max/min/product reductions); anything else evaluates the computation per element.
Combiner::Combiner(const Computation& computation, std::vector<DType> types)
    : computation_(computation), types_(std::move(types)) {
  const Instruction* root = computation.root();
  if (types_.size() != 1 || computation.num_parameters() != 2 || root == nullptr ||
      !IsElementwiseBinary(root->opcode()) || root->shape().element_type() != types_[0]) {
    return;
  }
  const Instruction* p0 = computation.parameter(0);
  const Instruction* p1 = computation.parameter(1);
  if (root->operand(0) == p0 && root->operand(1) == p1) {
    fast_ = true;
  } else if (root->operand(0) == p1 && root->operand(1) == p0) {
    fast_ = swapped_ = true;
  }
  fast_opcode_ = root->opcode();
}

absl::Status Combiner::Combine(const std::vector<uint8_t*>& acc,
                               const std::vector<const uint8_t*>& x) {
  if (fast_) {
    return swapped_ ? ApplyBinary(fast_opcode_, types_[0], x[0], acc[0], acc[0], 1)
                    : ApplyBinary(fast_opcode_, types_[0], acc[0], x[0], acc[0], 1);
  }
  std::vector<Literal> args;
  args.reserve(types_.size() * 2);
  for (int side = 0; side < 2; ++side) {
    for (size_t i = 0; i < types_.size(); ++i) {
      Literal s(Shape::Scalar(types_[i]));
      std::memcpy(MutableElementPtr(s, 0), side == 0 ? acc[i] : x[i], DTypeSize(types_[i]));
      args.push_back(std::move(s));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(Literal result, EvaluateComputation(computation_, args));
  for (size_t i = 0; i < types_.size(); ++i) {
    const Literal& r = result.shape().IsTuple() ? result.elements()[i] : result;
    std::memcpy(acc[i], ElementPtr(r, 0), DTypeSize(types_[i]));
  }
  return absl::OkStatus();
}

namespace {

std::vector<DType> ElementTypes(const Operands& ops, size_t n) {
  std::vector<DType> types;
  for (size_t i = 0; i < n; ++i) types.push_back(ops[i]->shape().element_type());
  return types;
}

// Result literal of a (possibly variadic) reduction: one array, or a tuple of them.
Literal MakeResult(const Shape& shape) { return Literal(shape); }
Literal& ResultPart(Literal& result, size_t i) {
  return result.shape().IsTuple() ? result.mutable_elements()[i] : result;
}

}  // namespace

// Each output element starts at init and combines the inputs in row-major order of the reduced
// dims; HLO.md lets backends reassociate, the evaluator fixes this order.
absl::StatusOr<Literal> EvalReduce(const Instruction& inst, const Operands& ops) {
  const size_t n = ops.size() / 2;
  const std::vector<int64_t>& in_dims = ops[0]->shape().dims();
  std::vector<bool> reduced(in_dims.size(), false);
  for (int64_t d : inst.dimensions()) reduced[static_cast<size_t>(d)] = true;
  Literal result = MakeResult(inst.shape());
  const Shape& part_shape = ResultPart(result, 0).shape();
  const std::vector<int64_t> out_strides = RowMajorStrides(part_shape.dims());
  for (int64_t o = 0; o < part_shape.num_elements(); ++o) {
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(MutableElementPtr(ResultPart(result, i), o), ElementPtr(*ops[n + i], 0),
                  static_cast<size_t>(ElementBytes(*ops[n + i])));
    }
  }
  if (ops[0]->shape().num_elements() == 0) return result;
  Combiner combiner(*inst.to_apply(), ElementTypes(ops, n));
  std::vector<int64_t> idx(in_dims.size(), 0), out_idx;
  std::vector<uint8_t*> acc(n);
  std::vector<const uint8_t*> x(n);
  int64_t linear = 0;
  do {
    out_idx.clear();
    for (size_t d = 0; d < idx.size(); ++d) {
      if (!reduced[d]) out_idx.push_back(idx[d]);
    }
    const int64_t o = LinearIndex(out_idx, out_strides);
    for (size_t i = 0; i < n; ++i) {
      acc[i] = MutableElementPtr(ResultPart(result, i), o);
      x[i] = ElementPtr(*ops[i], linear);
    }
    TFJIT_RETURN_IF_ERROR(combiner.Combine(acc, x));
    ++linear;
  } while (NextIndex(idx, in_dims));
  return result;
}

// Window position k of output o reads input (o*stride + k*rhs_dilate - pad_lo) / lhs_dilate
// when that lands on a real (not padding, not dilation hole) element; otherwise it reads init.
absl::StatusOr<Literal> EvalReduceWindow(const Instruction& inst, const Operands& ops) {
  const size_t n = ops.size() / 2;
  const std::vector<WindowDim>& window = inst.attrs().window;
  const std::vector<int64_t>& in_dims = ops[0]->shape().dims();
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  Literal result = MakeResult(inst.shape());
  const Shape& part_shape = ResultPart(result, 0).shape();
  if (part_shape.num_elements() == 0) return result;
  std::vector<int64_t> win_sizes;
  for (const WindowDim& w : window) win_sizes.push_back(w.size);
  Combiner combiner(*inst.to_apply(), ElementTypes(ops, n));
  std::vector<int64_t> out_idx(in_dims.size(), 0), src(in_dims.size(), 0);
  std::vector<uint8_t*> acc(n);
  std::vector<const uint8_t*> x(n);
  int64_t o = 0;
  do {
    for (size_t i = 0; i < n; ++i) {
      acc[i] = MutableElementPtr(ResultPart(result, i), o);
      std::memcpy(acc[i], ElementPtr(*ops[n + i], 0), static_cast<size_t>(ElementBytes(*ops[i])));
    }
    std::vector<int64_t> k(in_dims.size(), 0);
    do {
      bool real = true;
      for (size_t d = 0; d < k.size(); ++d) {
        const WindowDim& w = window[d];
        const int64_t pos = out_idx[d] * w.stride + k[d] * w.rhs_dilate - w.pad_lo;
        real = real && pos >= 0 && pos % w.lhs_dilate == 0 && pos / w.lhs_dilate < in_dims[d];
        src[d] = real ? pos / w.lhs_dilate : 0;
      }
      for (size_t i = 0; i < n; ++i) {
        x[i] =
            real ? ElementPtr(*ops[i], LinearIndex(src, in_strides)) : ElementPtr(*ops[n + i], 0);
      }
      TFJIT_RETURN_IF_ERROR(combiner.Combine(acc, x));
    } while (NextIndex(k, win_sizes));
    ++o;
  } while (NextIndex(out_idx, part_shape.dims()));
  return result;
}

namespace {

// Accumulator type of dot/convolution: f32 for f16/bf16, the type itself otherwise.
template <typename T>
using AccT = ComputeT<T>;

template <typename T>
AccT<T> MulAdd(AccT<T> acc, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return acc || (a && b);
  } else if constexpr (kIsFloat<T>) {
    return acc + static_cast<AccT<T>>(a) * static_cast<AccT<T>>(b);
  } else {
    using U = std::make_unsigned_t<T>;
    using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(
        static_cast<U>(static_cast<P>(static_cast<U>(acc)) +
                       static_cast<P>(static_cast<U>(a)) * static_cast<P>(static_cast<U>(b))));
  }
}

std::vector<int64_t> FreeDims(int rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    bool used = false;
    for (int64_t b : batch) used = used || b == d;
    for (int64_t c : contracting) used = used || c == d;
    if (!used) free.push_back(d);
  }
  return free;
}

}  // namespace

namespace {

// (lhs offset, rhs offset) of every point of the contracting index space, in row-major
// order: computed once, so the per-output loop is a plain multiply-accumulate.
std::vector<std::pair<int64_t, int64_t>> ContractingOffsets(const DotDims& dn,
                                                            const std::vector<int64_t>& sizes,
                                                            const std::vector<int64_t>& ls,
                                                            const std::vector<int64_t>& rs) {
  std::vector<std::pair<int64_t, int64_t>> offsets;
  for (int64_t s : sizes) {
    if (s == 0) return offsets;
  }
  std::vector<int64_t> c(sizes.size(), 0);
  do {
    int64_t lo = 0, ro = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      lo += c[i] * ls[dn.lhs_contracting[i]];
      ro += c[i] * rs[dn.rhs_contracting[i]];
    }
    offsets.emplace_back(lo, ro);
  } while (NextIndex(c, sizes));
  return offsets;
}

}  // namespace

absl::StatusOr<Literal> EvalDot(const Instruction& inst, const Operands& ops) {
  const DotDims& dn = inst.attrs().dot;
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  const std::vector<int64_t> lfree = FreeDims(lhs.shape().rank(), dn.lhs_batch, dn.lhs_contracting);
  const std::vector<int64_t> rfree = FreeDims(rhs.shape().rank(), dn.rhs_batch, dn.rhs_contracting);
  std::vector<int64_t> csizes;
  for (int64_t d : dn.lhs_contracting) csizes.push_back(lhs.shape().dims()[d]);
  const std::vector<int64_t> ls = RowMajorStrides(lhs.shape().dims());
  const std::vector<int64_t> rs = RowMajorStrides(rhs.shape().dims());
  const std::vector<std::pair<int64_t, int64_t>> offsets = ContractingOffsets(dn, csizes, ls, rs);
  Literal out(inst.shape());
  if (inst.shape().num_elements() == 0) return out;
  DispatchNumeric(inst.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* a = lhs.data<T>();
    const T* b = rhs.data<T>();
    T* z = out.data<T>();
    std::vector<int64_t> oi(inst.shape().dims().size(), 0);
    int64_t linear = 0;
    do {
      // Base offsets of the batch and free dims; contracting dims come from `offsets`.
      int64_t lbase = 0, rbase = 0;
      size_t p = 0;
      for (size_t i = 0; i < dn.lhs_batch.size(); ++i, ++p) {
        lbase += oi[p] * ls[dn.lhs_batch[i]];
        rbase += oi[p] * rs[dn.rhs_batch[i]];
      }
      for (int64_t d : lfree) lbase += oi[p++] * ls[d];
      for (int64_t d : rfree) rbase += oi[p++] * rs[d];
      AccT<T> acc = AccT<T>(0);
      for (const auto& [lo, ro] : offsets) acc = MulAdd<T>(acc, a[lbase + lo], b[rbase + ro]);
      z[linear++] = static_cast<T>(acc);
    } while (NextIndex(oi, inst.shape().dims()));
  });
  return out;
}

}  // namespace tfjit::hlo::eval
