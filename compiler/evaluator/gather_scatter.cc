// Evaluator: XLA's general gather (out-of-bounds starts clamp) and scatter (updates whose
// window falls outside the operand are skipped), plus rng-bit-generator (Philox-4x32-10) and
// the custom-calls (Philox fills, top-k).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "compiler/evaluator/evaluator_internal.h"
#include "core/linalg.h"
#include "core/nms.h"
#include "core/random_fill.h"
#include "core/status.h"
#include "core/top_k.h"
#include "core/where.h"

namespace tfjit::hlo::eval {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The start-index vector of batch position `batch` (indices dims without index_vector_dim):
// component k is indices[batch with k inserted at index_vector_dim].
std::vector<int64_t> IndexVector(const Literal& indices, int64_t index_vector_dim,
                                 const std::vector<int64_t>& batch) {
  const std::vector<int64_t>& dims = indices.shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t count = index_vector_dim < rank ? dims[index_vector_dim] : 1;
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> result(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    std::vector<int64_t> full = batch;
    if (index_vector_dim < rank) full.insert(full.begin() + index_vector_dim, k);
    result[k] = ElementAsInt64(indices.tensor(), LinearIndex(full, strides));
  }
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalGather(const Instruction& inst, const Operands& ops) {
  const GatherDims& gd = inst.attrs().gather;
  const Literal& operand = *ops[0];
  const std::vector<int64_t>& op_dims = operand.shape().dims();
  const std::vector<int64_t> op_strides = RowMajorStrides(op_dims);
  const std::vector<int64_t>& out_dims = inst.shape().dims();
  Literal out(inst.shape());
  if (inst.shape().num_elements() == 0) return out;
  const size_t bytes = static_cast<size_t>(ElementBytes(out));
  std::vector<int64_t> oi(out_dims.size(), 0);
  int64_t linear = 0;
  do {
    std::vector<int64_t> batch, offset;
    for (int64_t d = 0; d < static_cast<int64_t>(oi.size()); ++d) {
      (Contains(gd.offset_dims, d) ? offset : batch).push_back(oi[d]);
    }
    const std::vector<int64_t> starts = IndexVector(*ops[1], gd.index_vector_dim, batch);
    std::vector<int64_t> src(op_dims.size(), 0);
    for (size_t k = 0; k < gd.start_index_map.size() && k < starts.size(); ++k) {
      const int64_t d = gd.start_index_map[k];
      src[d] = std::clamp<int64_t>(starts[k], 0, op_dims[d] - gd.slice_sizes[d]);
    }
    size_t next_offset = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(op_dims.size()); ++d) {
      if (!Contains(gd.collapsed_slice_dims, d)) src[d] += offset[next_offset++];
    }
    std::memcpy(MutableElementPtr(out, linear++), ElementPtr(operand, LinearIndex(src, op_strides)),
                bytes);
  } while (NextIndex(oi, out_dims));
  return out;
}

absl::StatusOr<Literal> EvalScatter(const Instruction& inst, const Operands& ops) {
  const ScatterDims& sd = inst.attrs().scatter;
  const Literal& updates = *ops[2];
  const std::vector<int64_t>& op_dims = ops[0]->shape().dims();
  const std::vector<int64_t> op_strides = RowMajorStrides(op_dims);
  const std::vector<int64_t>& up_dims = updates.shape().dims();
  Literal out(inst.shape());
  std::memcpy(out.mutable_tensor().raw_data(), ops[0]->tensor().raw_data(),
              out.tensor().byte_size());
  if (updates.shape().num_elements() == 0) return out;
  // Window extent per operand dim: 1 for inserted dims, the update window sizes otherwise.
  std::vector<int64_t> window(op_dims.size(), 1);
  size_t w = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(op_dims.size()); ++d) {
    if (!Contains(sd.inserted_window_dims, d)) window[d] = up_dims[sd.update_window_dims[w++]];
  }
  Combiner combiner(*inst.to_apply(), {inst.shape().element_type()});
  std::vector<int64_t> ui(up_dims.size(), 0);
  int64_t linear = 0;
  do {
    std::vector<int64_t> batch, offset;
    for (int64_t d = 0; d < static_cast<int64_t>(ui.size()); ++d) {
      (Contains(sd.update_window_dims, d) ? offset : batch).push_back(ui[d]);
    }
    const std::vector<int64_t> starts = IndexVector(*ops[1], sd.index_vector_dim, batch);
    std::vector<int64_t> base(op_dims.size(), 0);
    for (size_t k = 0; k < sd.scatter_dims_to_operand_dims.size() && k < starts.size(); ++k) {
      base[sd.scatter_dims_to_operand_dims[k]] = starts[k];
    }
    bool in_bounds = true;
    for (size_t d = 0; d < op_dims.size(); ++d) {
      in_bounds = in_bounds && base[d] >= 0 && base[d] + window[d] <= op_dims[d];
    }
    if (in_bounds) {
      std::vector<int64_t> dst = base;
      size_t next_offset = 0;
      for (int64_t d = 0; d < static_cast<int64_t>(op_dims.size()); ++d) {
        if (!Contains(sd.inserted_window_dims, d)) dst[d] += offset[next_offset++];
      }
      TFJIT_RETURN_IF_ERROR(combiner.Combine({MutableElementPtr(out, LinearIndex(dst, op_strides))},
                                             {ElementPtr(updates, linear)}));
    }
    ++linear;
  } while (NextIndex(ui, up_dims));
  return out;
}

namespace {

// One Philox-4x32-10 block (shared/docs/known-issues.md E).
void PhiloxBlock(uint32_t key[2], const uint32_t counter[4], uint32_t out[4]) {
  constexpr uint32_t kW32A = 0x9E3779B9, kW32B = 0xBB67AE85;
  constexpr uint64_t kM4x32A = 0xD2511F53, kM4x32B = 0xCD9E8D57;
  uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = kM4x32A * c[0];
    const uint64_t p1 = kM4x32B * c[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    const uint32_t n[4] = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
    std::memcpy(c, n, sizeof(c));
    k0 += kW32A;
    k1 += kW32B;
  }
  std::memcpy(out, c, sizeof(c));
}

}  // namespace

// state u64[3] = [key, counter_lo, counter_hi]; result (new_state, bits). Element i of 32-bit
// (or narrower, truncated) bits is word i%4 of block counter+i/4; 64-bit elements take words
// (2j, 2j+1) of block i/2 as lo|hi<<32.
absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& inst, const Operands& ops) {
  const Literal& state = *ops[0];
  if (state.shape().element_type() != DType::kUInt64 || state.shape().num_elements() < 3 ||
      !inst.shape().IsTuple() || inst.shape().tuple_shapes().size() != 2) {
    return Unimplemented("%s: rng-bit-generator needs a u64[3] state and a (state, bits) result",
                         inst.name());
  }
  const uint64_t* s = state.data<uint64_t>();
  uint32_t key[2] = {static_cast<uint32_t>(s[0]), static_cast<uint32_t>(s[0] >> 32)};
  uint64_t counter_lo = s[1], counter_hi = s[2];
  Literal bits(inst.shape().tuple_shape(1));
  const int64_t n = bits.shape().num_elements();
  const int64_t bytes = ElementBytes(bits);
  const int64_t per_block = bytes == 8 ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint32_t c[4] = {
        static_cast<uint32_t>(counter_lo), static_cast<uint32_t>(counter_lo >> 32),
        static_cast<uint32_t>(counter_hi), static_cast<uint32_t>(counter_hi >> 32)};
    uint32_t words[4];
    PhiloxBlock(key, c, words);
    for (int64_t j = 0; j < per_block && b * per_block + j < n; ++j) {
      uint8_t* dst = MutableElementPtr(bits, b * per_block + j);
      if (bytes == 8) {
        const uint64_t v = words[2 * j] | (static_cast<uint64_t>(words[2 * j + 1]) << 32);
        std::memcpy(dst, &v, 8);
      } else {
        std::memcpy(dst, &words[j], static_cast<size_t>(bytes));  // little-endian truncation
      }
    }
    if (++counter_lo == 0) ++counter_hi;
  }
  Literal new_state(state.shape());
  uint64_t* ns = new_state.data<uint64_t>();
  std::memcpy(ns, s, state.tensor().byte_size());
  ns[1] = counter_lo;
  ns[2] = counter_hi;
  std::vector<Literal> parts;
  parts.push_back(std::move(new_state));
  parts.push_back(std::move(bits));
  return Literal::MakeTuple(std::move(parts));
}

namespace {

// Whether `s` is top-k's result for operand `in`: (T[..., k], s32[..., k]) with in T[..., n],
// the same leading dims and k <= n < 2^31.
bool IsTopKShape(const Shape& in, const Shape& s) {
  if (!in.IsArray() || in.rank() < 1 || !topk::IsTopKDType(in.element_type()) || !s.IsTuple() ||
      s.tuple_shapes().size() != 2) {
    return false;
  }
  const Shape& values = s.tuple_shape(0);
  if (!values.IsArray() || values.element_type() != in.element_type() ||
      values.rank() != in.rank() || s.tuple_shape(1) != Shape(DType::kInt32, values.dims())) {
    return false;
  }
  for (int64_t d = 0; d + 1 < in.rank(); ++d) {
    if (values.dims()[static_cast<size_t>(d)] != in.dims()[static_cast<size_t>(d)]) return false;
  }
  return values.dims().back() <= in.dims().back() && in.dims().back() <= INT32_MAX;
}

// tfjit.top_k (core/top_k.h): operand T[..., n], result (T[..., k], s32[..., k]); the rows are
// selected by the same routine as the fallback kernel and the CPU runtime.
absl::StatusOr<Literal> EvalTopK(const Instruction& inst, const Operands& ops) {
  const Shape& s = inst.shape();
  if (ops.size() != 1 || !IsTopKShape(ops[0]->shape(), s)) {
    return InvalidArgument(
        "%s: custom-call \"%s\" takes one T[..., n] and returns (T[..., k], "
        "s32[..., k]) with k <= n < 2^31, not %d operand(s) -> %s",
        inst.name(), topk::kTopKTarget, static_cast<int>(ops.size()), s.ToString());
  }
  const Literal& in = *ops[0];
  const int64_t n = in.shape().dims().back();
  const int64_t k = s.tuple_shape(0).dims().back();
  std::vector<Literal> parts;
  parts.emplace_back(s.tuple_shape(0));
  parts.emplace_back(s.tuple_shape(1));
  const int64_t rows = n == 0 ? 0 : in.shape().num_elements() / n;
  topk::TopKRows(in.shape().element_type(), in.tensor().raw_data(), n, k,
                 parts[0].mutable_tensor().raw_data(), parts[1].data<int32_t>(), 0, rows);
  return Literal::MakeTuple(std::move(parts));
}

// tfjit.linalg.<op>.<flags> (core/linalg.h): the decomposition or solver the fallback kernels
// and the CPU runtime run, over the whole batch; the result is a tuple of the call's outputs.
absl::StatusOr<Literal> EvalLinalg(const Instruction& inst, const linalg::Call& call,
                                   const Operands& ops) {
  const Shape& s = inst.shape();
  std::vector<std::vector<int64_t>> ins;
  for (const Literal* op : ops)
    ins.push_back(op->shape().IsArray() ? op->shape().dims() : std::vector<int64_t>{});
  std::vector<std::pair<DType, std::vector<int64_t>>> outs;
  if (s.IsTuple()) {
    for (const Shape& t : s.tuple_shapes()) outs.push_back({t.element_type(), t.dims()});
  }
  const DType dtype = ops.empty() ? DType::kInvalid : ops[0]->shape().element_type();
  const std::optional<linalg::Problem> p = linalg::MatchShapes(call, dtype, ins, outs);
  if (!p.has_value()) {
    return InvalidArgument("%s: custom-call \"%s\" does not take these shapes (result %s)",
                           inst.name(), inst.attrs().custom_call_target, s.ToString());
  }
  std::vector<const void*> in_ptrs;
  for (const Literal* op : ops) in_ptrs.push_back(op->tensor().raw_data());
  std::vector<Literal> parts;
  for (const Shape& t : s.tuple_shapes()) parts.emplace_back(t);
  std::vector<void*> out_ptrs;
  for (Literal& part : parts) out_ptrs.push_back(part.mutable_tensor().raw_data());
  linalg::Run(call, dtype, *p, in_ptrs.data(), out_ptrs.data(), 0, p->batch);
  return Literal::MakeTuple(std::move(parts));
}

// tfjit.non_max_suppression (core/nms.h): boxes f32[n, 4], scores f32[n], iou_threshold and
// score_threshold f32[] → (s32[max_output_size], s32[]); with a fifth operand soft_nms_sigma
// f32[] → (s32[max_output_size], s32[], f32[max_output_size]): the fallback kernel's selection.
bool IsNmsShape(const Operands& ops, const Shape& s) {
  if ((ops.size() != 4 && ops.size() != 5) || !s.IsTuple() ||
      s.tuple_shapes().size() != ops.size() - 2) {
    return false;
  }
  const Shape& boxes = ops[0]->shape();
  if (!boxes.IsArray() || boxes.element_type() != DType::kFloat32 || boxes.rank() != 2 ||
      boxes.dims()[1] != 4) {
    return false;
  }
  for (size_t i = 2; i < ops.size(); ++i) {
    if (ops[i]->shape() != Shape(DType::kFloat32, {})) return false;
  }
  const int64_t n = boxes.dims()[0];
  const Shape& idx = s.tuple_shape(0);
  return ops[1]->shape() == Shape(DType::kFloat32, {n}) && idx.IsArray() &&
         idx.element_type() == DType::kInt32 && idx.rank() == 1 &&
         s.tuple_shape(1) == Shape(DType::kInt32, {}) &&
         (ops.size() == 4 || s.tuple_shape(2) == Shape(DType::kFloat32, idx.dims()));
}

absl::StatusOr<Literal> EvalNms(const Instruction& inst, const Operands& ops) {
  const Shape& s = inst.shape();
  if (!IsNmsShape(ops, s)) {
    return InvalidArgument(
        "%s: custom-call \"%s\" takes boxes f32[n, 4], scores f32[n], two "
        "f32[] thresholds and an optional f32[] sigma and returns (s32[k], "
        "s32[]) or, with sigma, (s32[k], s32[], f32[k]); not %d operand(s) -> "
        "%s",
        inst.name(), nms::kNmsTarget, static_cast<int>(ops.size()), s.ToString());
  }
  const bool soft = ops.size() == 5;
  std::vector<Literal> parts;
  for (const Shape& part : s.tuple_shapes()) parts.emplace_back(part);
  nms::SelectPadded(ops[0]->data<float>(), ops[1]->data<float>(), ops[0]->shape().dims()[0],
                    s.tuple_shape(0).dims()[0], ops[2]->data<float>()[0], ops[3]->data<float>()[0],
                    soft ? ops[4]->data<float>()[0] : 0.0f, parts[0].data<int32_t>(),
                    parts[1].data<int32_t>(), soft ? parts[2].data<float>() : nullptr);
  return Literal::MakeTuple(std::move(parts));
}

// tfjit.where (core/where.h): pred[d...] → (s64[n, rank], s64[]), n the operand's element
// count: the true elements' coordinates padded with zero rows, and their number.
absl::StatusOr<Literal> EvalWhere(const Instruction& inst, const Operands& ops) {
  const Shape& s = inst.shape();
  const bool ok = ops.size() == 1 && ops[0]->shape().IsArray() &&
                  ops[0]->shape().element_type() == DType::kBool && s.IsTuple() &&
                  s.tuple_shapes().size() == 2 &&
                  s.tuple_shape(0) == Shape(DType::kInt64, {ops[0]->shape().num_elements(),
                                                            ops[0]->shape().rank()}) &&
                  s.tuple_shape(1) == Shape(DType::kInt64, {});
  if (!ok) {
    return InvalidArgument(
        "%s: custom-call \"%s\" takes one pred array of n elements and rank r "
        "and returns (s64[n, r], s64[]), not %d operand(s) -> %s",
        inst.name(), where::kWhereTarget, static_cast<int>(ops.size()), s.ToString());
  }
  std::vector<Literal> parts;
  parts.emplace_back(s.tuple_shape(0));
  parts.emplace_back(s.tuple_shape(1));
  const Shape& in = ops[0]->shape();
  parts[1].data<int64_t>()[0] =
      where::TrueCoordinates(ops[0]->data<bool>(), in.dims().data(), in.rank(), in.num_elements(),
                             parts[0].data<int64_t>());
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace

// Philox fills (core/random_fill.h): operand u64[3] = [key, counter_lo, counter_hi], result
// the distribution's values in a float array, exactly the fallback kernels' bits.
absl::StatusOr<Literal> EvalCustomCall(const Instruction& inst, const Operands& ops) {
  const std::string& target = inst.attrs().custom_call_target;
  if (target == topk::kTopKTarget) return EvalTopK(inst, ops);
  if (target == nms::kNmsTarget) return EvalNms(inst, ops);
  if (target == where::kWhereTarget) return EvalWhere(inst, ops);
  if (const std::optional<linalg::Call> call = linalg::CallOfTarget(target)) {
    return EvalLinalg(inst, *call, ops);
  }
  const std::optional<random::RandomDistribution> dist = random::RandomDistributionOfTarget(target);
  if (!dist.has_value()) {
    return Unimplemented(
        "the evaluator does not implement custom-call target \"%s\" (instruction "
        "%s)",
        target, inst.name());
  }
  if (ops.size() != 1 || ops[0]->shape() != Shape(DType::kUInt64, {3}) || !inst.shape().IsArray() ||
      !random::IsRandomFillDType(inst.shape().element_type())) {
    return InvalidArgument(
        "%s: custom-call \"%s\" takes a u64[3] state and returns a float "
        "array, not %s",
        inst.name(), target, inst.shape().ToString());
  }
  Literal out(inst.shape());
  const int64_t n = inst.shape().num_elements();
  if (n > 0) {
    random::FillRandom(*dist, inst.shape().element_type(),
                       random::StateFromU64x3(ops[0]->data<uint64_t>()),
                       out.mutable_tensor().raw_data(), 0, n);
  }
  return out;
}

}  // namespace tfjit::hlo::eval
