// Evaluator: data-movement opcodes (broadcast, reshape, transpose, slice, dynamic slices,
// concatenate, pad, reverse, iota). They move whole elements, so they work on bytes.
#include <algorithm>
#include <cstring>

#include "compiler/evaluator/evaluator_internal.h"
#include "core/status.h"

namespace tfjit::hlo::eval {

int64_t ElementBytes(const Literal& literal) {
  return static_cast<int64_t>(DTypeSize(literal.shape().element_type()));
}
const uint8_t* ElementPtr(const Literal& literal, int64_t linear) {
  return static_cast<const uint8_t*>(literal.tensor().raw_data()) + linear * ElementBytes(literal);
}
uint8_t* MutableElementPtr(Literal& literal, int64_t linear) {
  return static_cast<uint8_t*>(literal.mutable_tensor().raw_data()) +
         linear * ElementBytes(literal);
}

namespace {

// For every result index, copies the operand element at `map(result_index)`.
template <typename MapFn>
Literal Gather1(const Shape& shape, const Literal& src, MapFn map) {
  Literal out(shape);
  if (shape.num_elements() == 0) return out;
  const size_t bytes = static_cast<size_t>(ElementBytes(out));
  const std::vector<int64_t> src_strides = RowMajorStrides(src.shape().dims());
  std::vector<int64_t> index(shape.dims().size(), 0);
  std::vector<int64_t> src_index(src.shape().dims().size(), 0);
  int64_t linear = 0;
  do {
    map(index, src_index);
    std::memcpy(MutableElementPtr(out, linear++),
                ElementPtr(src, LinearIndex(src_index, src_strides)), bytes);
  } while (NextIndex(index, shape.dims()));
  return out;
}

// Reads a scalar integer start index operand.
int64_t ScalarIndex(const Literal& literal) { return ElementAsInt64(literal.tensor(), 0); }

std::vector<int64_t> ClampedStarts(const Operands& ops, int first, const Shape& operand,
                                   const std::vector<int64_t>& sizes) {
  std::vector<int64_t> starts(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t s = ScalarIndex(*ops[first + d]);
    starts[d] = std::clamp<int64_t>(s, 0, operand.dims()[d] - sizes[d]);
  }
  return starts;
}

}  // namespace

absl::StatusOr<Literal> EvalBroadcast(const Instruction& inst, const Operands& ops) {
  const std::vector<int64_t>& dims = inst.dimensions();
  return Gather1(inst.shape(), *ops[0], [&](const auto& idx, auto& src) {
    for (size_t i = 0; i < dims.size(); ++i) src[i] = idx[static_cast<size_t>(dims[i])];
  });
}

absl::StatusOr<Literal> EvalReshape(const Instruction& inst, const Operands& ops) {
  Literal out(inst.shape());
  if (out.tensor().byte_size() != ops[0]->tensor().byte_size()) {
    return InvalidArgument("%s: reshape of %s to %s changes the element count", inst.name(),
                           ops[0]->shape().ToString(), inst.shape().ToString());
  }
  std::memcpy(out.mutable_tensor().raw_data(), ops[0]->tensor().raw_data(),
              out.tensor().byte_size());
  return out;
}

absl::StatusOr<Literal> EvalTranspose(const Instruction& inst, const Operands& ops) {
  const std::vector<int64_t>& perm = inst.dimensions();
  return Gather1(inst.shape(), *ops[0], [&](const auto& idx, auto& src) {
    for (size_t i = 0; i < perm.size(); ++i) src[static_cast<size_t>(perm[i])] = idx[i];
  });
}

absl::StatusOr<Literal> EvalSlice(const Instruction& inst, const Operands& ops) {
  const std::vector<SliceDim>& slice = inst.attrs().slice;
  return Gather1(inst.shape(), *ops[0], [&](const auto& idx, auto& src) {
    for (size_t i = 0; i < slice.size(); ++i) src[i] = slice[i].start + idx[i] * slice[i].stride;
  });
}

absl::StatusOr<Literal> EvalDynamicSlice(const Instruction& inst, const Operands& ops) {
  const std::vector<int64_t> starts = ClampedStarts(ops, 1, ops[0]->shape(), inst.shape().dims());
  return Gather1(inst.shape(), *ops[0], [&](const auto& idx, auto& src) {
    for (size_t i = 0; i < starts.size(); ++i) src[i] = starts[i] + idx[i];
  });
}

absl::StatusOr<Literal> EvalDynamicUpdateSlice(const Instruction& inst, const Operands& ops) {
  const Literal& update = *ops[1];
  const std::vector<int64_t> starts = ClampedStarts(ops, 2, ops[0]->shape(), update.shape().dims());
  Literal out(inst.shape());
  std::memcpy(out.mutable_tensor().raw_data(), ops[0]->tensor().raw_data(),
              out.tensor().byte_size());
  if (update.shape().num_elements() == 0) return out;
  const size_t bytes = static_cast<size_t>(ElementBytes(out));
  const std::vector<int64_t> strides = RowMajorStrides(inst.shape().dims());
  std::vector<int64_t> idx(starts.size(), 0), dst(starts.size(), 0);
  int64_t linear = 0;
  do {
    for (size_t i = 0; i < idx.size(); ++i) dst[i] = starts[i] + idx[i];
    std::memcpy(MutableElementPtr(out, LinearIndex(dst, strides)), ElementPtr(update, linear++),
                bytes);
  } while (NextIndex(idx, update.shape().dims()));
  return out;
}

absl::StatusOr<Literal> EvalConcatenate(const Instruction& inst, const Operands& ops) {
  const size_t dim = static_cast<size_t>(inst.dimensions().at(0));
  Literal out(inst.shape());
  const size_t bytes = static_cast<size_t>(ElementBytes(out));
  const std::vector<int64_t> strides = RowMajorStrides(inst.shape().dims());
  int64_t offset = 0;
  for (const Literal* op : ops) {
    const std::vector<int64_t>& dims = op->shape().dims();
    if (op->shape().num_elements() > 0) {
      std::vector<int64_t> idx(dims.size(), 0);
      int64_t linear = 0;
      do {
        std::vector<int64_t> dst = idx;
        dst[dim] += offset;
        std::memcpy(MutableElementPtr(out, LinearIndex(dst, strides)), ElementPtr(*op, linear++),
                    bytes);
      } while (NextIndex(idx, dims));
    }
    offset += dims[dim];
  }
  return out;
}

// Result index r in dim d comes from operand index (r - lo) / (interior + 1) when that division
// is exact and in range; every other cell is the padding value. Negative lo/hi crop.
absl::StatusOr<Literal> EvalPad(const Instruction& inst, const Operands& ops) {
  const std::vector<PadDim>& pad = inst.attrs().padding;
  const Literal& x = *ops[0];
  Literal out(inst.shape());
  if (inst.shape().num_elements() == 0) return out;
  const size_t bytes = static_cast<size_t>(ElementBytes(out));
  const std::vector<int64_t> src_strides = RowMajorStrides(x.shape().dims());
  std::vector<int64_t> idx(inst.shape().dims().size(), 0), src(idx.size(), 0);
  int64_t linear = 0;
  do {
    bool inside = true;
    for (size_t d = 0; d < idx.size() && inside; ++d) {
      const int64_t shifted = idx[d] - pad[d].lo;
      const int64_t step = pad[d].interior + 1;
      inside = shifted >= 0 && shifted % step == 0 && shifted / step < x.shape().dims()[d];
      src[d] = inside ? shifted / step : 0;
    }
    const uint8_t* from =
        inside ? ElementPtr(x, LinearIndex(src, src_strides)) : ElementPtr(*ops[1], 0);
    std::memcpy(MutableElementPtr(out, linear++), from, bytes);
  } while (NextIndex(idx, inst.shape().dims()));
  return out;
}

absl::StatusOr<Literal> EvalReverse(const Instruction& inst, const Operands& ops) {
  const std::vector<int64_t>& dims = inst.dimensions();
  const std::vector<int64_t>& sizes = inst.shape().dims();
  return Gather1(inst.shape(), *ops[0], [&](const auto& idx, auto& src) {
    src = idx;
    for (int64_t d : dims) src[d] = sizes[d] - 1 - idx[d];
  });
}

absl::StatusOr<Literal> EvalIota(const Instruction& inst, const Operands& ops) {
  Literal out(inst.shape());
  const std::vector<int64_t>& dims = inst.shape().dims();
  const int64_t d = inst.attrs().iota_dimension;
  if (d < 0 || d >= static_cast<int64_t>(dims.size())) {
    return InvalidArgument("%s: iota_dimension %d out of range for %s", inst.name(), d,
                           inst.shape().ToString());
  }
  if (inst.shape().num_elements() == 0) return out;
  DispatchNumeric(inst.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    T* z = out.data<T>();
    std::vector<int64_t> idx(dims.size(), 0);
    int64_t linear = 0;
    do {
      z[linear++] = static_cast<T>(static_cast<ComputeT<T>>(idx[d]));
    } while (NextIndex(idx, dims));
  });
  return out;
}

}  // namespace tfjit::hlo::eval
