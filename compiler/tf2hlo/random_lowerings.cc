// Lowerings of TF's random ops. Uniform floats and ints: an explicit Philox-4x32-10 in
// elementwise HLO over an iota of block indices. Normals and truncated normals: a custom-call
// (core/random_fill.h) that runs the kernels' own fill, since Box-Muller needs libm's exact
// logf/sincosf and truncation is rejection sampling. Both are bit-identical with the fallback
// kernels (runtime/kernels/random_kernels.cc). Stateful ops (known issue E) draw from a u64[3]
// state parameter the runtime supplies and return the advanced state. The random_more ops that
// share this Philox HLO also lower here: StatelessRandomUniformFullInt(V2), XlaRngBitGenerator
// and (Stateless)Multinomial (kernels in runtime/kernels/random_more_kernels.cc).
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/hlo/builder.h"
#include "compiler/rules/e_random_seeds.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/logging.h"
#include "core/philox.h"
#include "core/random_fill.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::ComparisonDirection;
using hlo::Instruction;
using hlo::Opcode;
using Dims = std::vector<int64_t>;

// A builder with a sticky error: every op returns nullptr once something failed, and
// status() reports the first failure. Keeps the bit-twiddling below readable.
class Rng {
 public:
  explicit Rng(LoweringContext& ctx) : ctx_(ctx) {}
  const absl::Status& status() const { return status_; }

  Instruction* Take(absl::StatusOr<Instruction*> r) {
    if (!r.ok()) {
      if (status_.ok()) status_ = r.status();
      return nullptr;
    }
    return *r;
  }
  bool ok(std::initializer_list<Instruction*> xs) const {
    if (!status_.ok()) return false;
    for (Instruction* x : xs) {
      if (x == nullptr) return false;
    }
    return true;
  }

  // Integer constants are built from their exact value (Splat goes through double).
  template <typename T>
  Instruction* Const(DType t, T v, const Dims& dims) {
    if (!status_.ok()) return nullptr;
    Instruction* s = ctx_.b().ScalarConstant<T>(t, v);
    return dims.empty() ? s : Take(ctx_.BroadcastTo(s, dims));
  }
  Instruction* U32(uint32_t v, const Dims& d) { return Const<uint32_t>(DType::kUInt32, v, d); }
  Instruction* U64(uint64_t v, const Dims& d) { return Const<uint64_t>(DType::kUInt64, v, d); }
  Instruction* F(DType t, double v, const Dims& d) {
    return ok({}) ? Take(ctx_.Splat(t, v, d)) : nullptr;
  }
  Instruction* Bin(Opcode op, Instruction* a, Instruction* b) {
    return ok({a, b}) ? Take(ctx_.b().Binary(op, a, b)) : nullptr;
  }
  Instruction* Un(Opcode op, Instruction* a) {
    return ok({a}) ? Take(ctx_.b().Unary(op, a)) : nullptr;
  }
  Instruction* Cvt(Instruction* a, DType t) {
    return ok({a}) ? Take(ctx_.b().Convert(a, t)) : nullptr;
  }
  Instruction* Bitcast(Instruction* a, DType t) {
    if (!ok({a})) return nullptr;
    return Take(
        ctx_.b().Add(Opcode::kBitcastConvert, {a}, {}, {}, hlo::Shape(t, a->shape().dims())));
  }
  Instruction* Lt(Instruction* a, Instruction* b) {
    return ok({a, b}) ? Take(ctx_.b().Compare(ComparisonDirection::kLt, a, b)) : nullptr;
  }
  Instruction* Reshape(Instruction* a, const Dims& d) {
    return ok({a}) ? Take(ctx_.b().Reshape(a, d)) : nullptr;
  }
  Instruction* Bcast(Instruction* a, const Dims& d) {
    return ok({a}) ? Take(ctx_.BroadcastTo(a, d)) : nullptr;
  }
  Instruction* IotaU32(int64_t n) {
    return ok({}) ? Take(ctx_.b().Iota(hlo::Shape(DType::kUInt32, {n}), 0)) : nullptr;
  }
  Instruction* Concat(const std::vector<Instruction*>& xs, int64_t dim) {
    for (Instruction* x : xs) {
      if (!ok({x})) return nullptr;
    }
    return Take(ctx_.b().Concatenate(xs, dim));
  }
  // Element i of a rank-1 value, as a scalar.
  Instruction* At(Instruction* a, int64_t i) {
    if (!ok({a})) return nullptr;
    return Reshape(Take(ctx_.b().Slice(a, {{i, i + 1, 1}})), {});
  }
  Instruction* Lo32(Instruction* u64) { return Cvt(u64, DType::kUInt32); }
  Instruction* Hi32(Instruction* u64) {
    return Cvt(Bin(Opcode::kShiftRightLogical, u64, U64(32, u64 ? u64->shape().dims() : Dims{})),
               DType::kUInt32);
  }
  // lo | hi << 32 as u64.
  Instruction* Join64(Instruction* lo, Instruction* hi) {
    if (!ok({lo, hi})) return nullptr;
    const Dims& d = lo->shape().dims();
    return Bin(Opcode::kOr, Cvt(lo, DType::kUInt64),
               Bin(Opcode::kShiftLeft, Cvt(hi, DType::kUInt64), U64(32, d)));
  }

  // Words k of blocks 0..nb-1 interleaved: element i = words[i % k][i / k], first n of them,
  // shaped `dims`. Built as a [nb, k] select over the words broadcast along k rather than a
  // concatenate: every lane of a block reads its words at the same index, so the emitters
  // evaluate one block's Philox rounds once for all k words (ElementalEmitter::Cached) and
  // the fusion pass keeps the rounds in one kernel (a concatenate reads each word in a
  // branch of its own, which would repeat the shared rounds per word).
  Instruction* Interleave(const std::vector<Instruction*>& words, int64_t n, const Dims& dims) {
    if (!ok({})) return nullptr;
    for (Instruction* w : words) {
      if (!ok({w})) return nullptr;
    }
    const int64_t nb = words[0]->shape().dim(0);
    const int64_t k = static_cast<int64_t>(words.size());
    const Dims grid = {nb, k};
    Instruction* m = Take(ctx_.b().Broadcast(words.back(), grid, {0}));
    if (k > 1) {
      Instruction* lane = Take(ctx_.b().Iota(hlo::Shape(DType::kUInt32, grid), 1));
      for (int64_t j = k - 1; j-- > 0;) {
        Instruction* w = Take(ctx_.b().Broadcast(words[static_cast<size_t>(j)], grid, {0}));
        Instruction* is_j = ok({lane}) ? Take(ctx_.b().Compare(ComparisonDirection::kEq, lane,
                                                               U32(static_cast<uint32_t>(j), grid)))
                                       : nullptr;
        m = ok({is_j, w, m}) ? Take(ctx_.b().Select(is_j, w, m)) : nullptr;
      }
    }
    if (!ok({m})) return nullptr;
    const int64_t total = nb * k;
    Instruction* flat = Reshape(m, {total});
    if (total != n && ok({flat})) flat = Take(ctx_.b().Slice(flat, {{0, n, 1}}));
    return Reshape(flat, dims);
  }

 private:
  LoweringContext& ctx_;
  absl::Status status_;
};

using Words = std::array<Instruction*, 4>;
using KeyWords = std::array<Instruction*, 2>;

// Ten Philox rounds on counters of shape `dims` under a scalar key.
Words PhiloxRounds(Rng& r, Words c, KeyWords key, const Dims& dims) {
  for (int round = 0; round < 10; ++round) {
    Instruction* k0 = r.Bcast(key[0], dims);
    Instruction* k1 = r.Bcast(key[1], dims);
    Instruction* p0 =
        r.Bin(Opcode::kMultiply, r.Cvt(c[0], DType::kUInt64), r.U64(random::kPhiloxM4x32A, dims));
    Instruction* p1 =
        r.Bin(Opcode::kMultiply, r.Cvt(c[2], DType::kUInt64), r.U64(random::kPhiloxM4x32B, dims));
    Instruction* hi0 = r.Hi32(p0);
    Instruction* lo0 = r.Lo32(p0);
    Instruction* hi1 = r.Hi32(p1);
    Instruction* lo1 = r.Lo32(p1);
    c = {r.Bin(Opcode::kXor, r.Bin(Opcode::kXor, hi1, c[1]), k0), lo1,
         r.Bin(Opcode::kXor, r.Bin(Opcode::kXor, hi0, c[3]), k1), lo0};
    if (round < 9) {
      key = {r.Bin(Opcode::kAdd, key[0], r.U32(random::kPhiloxW32A, {})),
             r.Bin(Opcode::kAdd, key[1], r.U32(random::kPhiloxW32B, {}))};
    }
  }
  return c;
}

// The Philox stream (key, counter words; scalars) evaluated at blocks 0..nb-1: the 128-bit
// counter + block index with carries, then the rounds.
Words PhiloxBlocks(Rng& r, KeyWords key, Words counter, int64_t nb) {
  const Dims d = {nb};
  Instruction* idx = r.IotaU32(nb);
  Words c;
  c[0] = r.Bin(Opcode::kAdd, r.Bcast(counter[0], d), idx);
  Instruction* carry = r.Cvt(r.Lt(c[0], idx), DType::kUInt32);
  for (int k = 1; k < 4; ++k) {
    c[k] = r.Bin(Opcode::kAdd, r.Bcast(counter[k], d), carry);
    if (k < 3) carry = r.Cvt(r.Lt(c[k], carry), DType::kUInt32);
  }
  return PhiloxRounds(r, c, key, d);
}

// ---- Bits to values (core/philox.h has the scalar reference) ----

Instruction* And(Rng& r, Instruction* x, uint32_t mask) {
  return x ? r.Bin(Opcode::kAnd, x, r.U32(mask, x->shape().dims())) : nullptr;
}
Instruction* Or(Rng& r, Instruction* x, uint32_t bits) {
  return x ? r.Bin(Opcode::kOr, x, r.U32(bits, x->shape().dims())) : nullptr;
}
Instruction* MinusOne(Rng& r, Instruction* x) {
  return x ? r.Bin(Opcode::kSubtract, x, r.F(x->shape().element_type(), 1.0, x->shape().dims()))
           : nullptr;
}

// TF's Uint32ToFloat: low 23 bits as the mantissa of [1, 2), minus 1.
Instruction* UniformF32(Rng& r, Instruction* bits) {
  return MinusOne(r, r.Bitcast(Or(r, And(r, bits, 0x7fffffu), 0x3f800000u), DType::kFloat32));
}
// Half / bfloat16: low 10 / 7 bits as the mantissa of [1, 2), minus 1 (exact).
Instruction* Uniform16(Rng& r, Instruction* bits, DType t) {
  const bool is_half = t == DType::kFloat16;
  Instruction* x = Or(r, And(r, bits, is_half ? 0x3ffu : 0x7fu), is_half ? 0x3c00u : 0x3f80u);
  return MinusOne(r, r.Bitcast(r.Cvt(x, DType::kUInt16), t));
}
// TF's Uint64ToDouble: x0's low 20 bits above x1's 32 as the mantissa of [1, 2), minus 1.
Instruction* UniformF64(Rng& r, Instruction* x0, Instruction* x1) {
  Instruction* man = r.Join64(x1, And(r, x0, 0xfffffu));
  if (man == nullptr) return nullptr;
  Instruction* bits = r.Bin(Opcode::kOr, man, r.U64(uint64_t{1023} << 52, man->shape().dims()));
  return MinusOne(r, r.Bitcast(bits, DType::kFloat64));
}

// Element i: 32-bit types use word i%4 of block i/4, 64-bit types words (2j, 2j+1), j = i%2,
// of block i/2 (TF's FillPhiloxRandom: one block per output group).
Instruction* UniformValues(Rng& r, DType t, const Words& w, int64_t n, const Dims& dims) {
  if (t == DType::kFloat64) {
    return UniformF64(r, r.Interleave({w[0], w[2]}, n, dims), r.Interleave({w[1], w[3]}, n, dims));
  }
  Instruction* bits = r.Interleave({w[0], w[1], w[2], w[3]}, n, dims);
  return t == DType::kFloat32 ? UniformF32(r, bits) : Uniform16(r, bits, t);
}

// ---- Inputs ----

struct Stream {
  KeyWords key;
  Words counter;
};

// v1 seed (int32/int64 [2], sign-extended) scrambled as TF's GenerateKey, in HLO.
absl::StatusOr<Stream> SeedStream(Rng& r, LoweringContext& ctx, const tf::Node& node, int i) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * seed, ctx.Input(node, i));
  if (seed->shape().dims() != Dims{2}) {
    return InvalidArgument("seed must have shape [2], not %s", seed->shape().ToString());
  }
  const DType t = seed->shape().element_type();
  if (t != DType::kInt32 && t != DType::kInt64) {
    return InvalidArgument("Invalid seed type: %s", DTypeName(t));
  }
  // A seed known at compile time folds the scramble below into constants. A seed computed at
  // run time leaves it as scalar HLO: the backends emit such rank-0 values once per launch,
  // ahead of the output loop (ElementalEmitter's hoist region), not per element.
  Instruction* u =
      r.Bitcast(t == DType::kInt32 ? r.Cvt(seed, DType::kInt64) : seed, DType::kUInt64);
  Instruction* s0 = r.At(u, 0);
  Instruction* s1 = r.At(u, 1);
  const Words in = {r.Lo32(s0), r.Hi32(s0), r.Lo32(s1), r.Hi32(s1)};
  const Words mix = PhiloxRounds(
      r, in, {r.U32(random::kSeedScrambleKey0, {}), r.U32(random::kSeedScrambleKey1, {})}, {});
  return Stream{{mix[0], mix[1]}, {r.U32(0, {}), r.U32(0, {}), mix[2], mix[3]}};
}

// V2 key u64[1], counter u64[>=2] and the compile-time constant alg.
absl::StatusOr<Stream> KeyCounterStream(Rng& r, LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> alg, ctx.ConstantInputAsInts(node, 3));
  if (alg.size() != 1) return InvalidArgument("alg must be a scalar, got %d values", alg.size());
  const int64_t id = alg[0] == 3 ? 1 : alg[0];  // auto-select = Philox
  if (id == 2) {
    return Unimplemented(
        "RNG algorithm 2 (ThreeFry) is not implemented by tfjit; use alg 1 "
        "(Philox)");
  }
  if (id != 1) return InvalidArgument("Unsupported algorithm id: %d", id);
  TFJIT_ASSIGN_OR_RETURN(Instruction * key, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * counter, ctx.Input(node, 2));
  if (key->shape().dims() != Dims{1}) {
    return InvalidArgument(
        "key must have shape [1], not %s. (Note that batched keys are not "
        "supported yet.)",
        key->shape().ToString());
  }
  if (counter->shape().rank() != 1 || counter->shape().dim(0) < 2) {
    return InvalidArgument(
        "counter must be a vector with length at least 2; got shape: %s. "
        "(Note that batched counters are not supported yet.)",
        counter->shape().ToString());
  }
  Instruction* k = r.At(key, 0);
  Instruction* c0 = r.At(counter, 0);
  Instruction* c1 = r.At(counter, 1);
  return Stream{{r.Lo32(k), r.Hi32(k)}, {r.Lo32(c0), r.Hi32(c0), r.Lo32(c1), r.Hi32(c1)}};
}

absl::StatusOr<Dims> OutputDims(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Dims dims, ctx.ConstantInputAsInts(node, 0));
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("shape has a negative dimension %d", d);
  }
  return dims;
}

int64_t NumElements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Philox blocks for n outputs of `per_block` per block; the block index is a u32 iota.
absl::StatusOr<Words> BlocksFor(Rng& r, const Stream& s, int64_t n, int per_block) {
  const int64_t nb = (n + per_block - 1) / per_block;
  if (nb > (int64_t{1} << 32)) {
    return Unimplemented("random outputs of %d elements are too large to compile", n);
  }
  return PhiloxBlocks(r, s.key, s.counter, nb);
}

// ---- Values ----

// The Philox state as the u64[3] [key, counter_lo, counter_hi] of the fill custom-calls.
Instruction* StateWords(Rng& r, const Stream& s) {
  return r.Concat({r.Reshape(r.Join64(s.key[0], s.key[1]), {1}),
                   r.Reshape(r.Join64(s.counter[0], s.counter[1]), {1}),
                   r.Reshape(r.Join64(s.counter[2], s.counter[3]), {1})},
                  0);
}

// n floats of `dist` from stream `s`: uniform as explicit Philox HLO (fusible, vectorised);
// normal and truncated normal through the kernels' fill as a custom-call.
absl::StatusOr<Instruction*> FloatValues(Rng& r, LoweringContext& ctx,
                                         random::RandomDistribution dist, DType dtype,
                                         const Stream& s, const Dims& dims) {
  const int64_t n = NumElements(dims);
  if (n == 0) return r.F(dtype, 0.0, dims);
  if (dist == random::RandomDistribution::kUniform) {
    TFJIT_ASSIGN_OR_RETURN(Words w, BlocksFor(r, s, n, dtype == DType::kFloat64 ? 2 : 4));
    return UniformValues(r, dtype, w, n, dims);
  }
  Instruction* state = StateWords(r, s);
  TFJIT_RETURN_IF_ERROR(r.status());
  hlo::Attributes attrs;
  attrs.custom_call_target = random::RandomFillTarget(dist);
  return ctx.b().Add(Opcode::kCustomCall, {state}, std::move(attrs), {}, hlo::Shape(dtype, dims));
}

// TF's UniformDistribution<int>: lo + bits % (hi - lo), in unsigned arithmetic.
absl::StatusOr<Instruction*> IntValues(Rng& r, DType dtype, const Stream& s, Instruction* lo,
                                       Instruction* hi, const Dims& dims) {
  const int64_t n = NumElements(dims);
  if (n == 0) return r.Cvt(r.Const<int32_t>(DType::kInt32, 0, dims), dtype);
  const bool wide = dtype == DType::kInt64;
  const DType u = wide ? DType::kUInt64 : DType::kUInt32;
  TFJIT_ASSIGN_OR_RETURN(Words w, BlocksFor(r, s, n, wide ? 2 : 4));
  Instruction* bits =
      wide ? r.Join64(r.Interleave({w[0], w[2]}, n, dims), r.Interleave({w[1], w[3]}, n, dims))
           : r.Interleave({w[0], w[1], w[2], w[3]}, n, dims);
  Instruction* ulo = r.Bitcast(lo, u);
  Instruction* range = r.Bin(Opcode::kSubtract, r.Bitcast(hi, u), ulo);
  Instruction* offset = r.Bin(Opcode::kRemainder, bits, r.Bcast(range, dims));
  return r.Bitcast(r.Bin(Opcode::kAdd, r.Bcast(ulo, dims), offset), dtype);
}

absl::StatusOr<DType> FloatDType(const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(node, "dtype"));
  if (!random::IsRandomFillDType(dtype)) {
    return InvalidArgument("%s: dtype must be a floating-point type, got %s", node.op(),
                           DTypeName(dtype));
  }
  return dtype;
}

// minval/maxval inputs range_i, range_i + 1: scalars; known bounds are checked like TF's
// kernel (unknown ones cannot fail at run time).
absl::Status IntRange(LoweringContext& ctx, const tf::Node& node, int range_i, int64_t n,
                      Instruction** lo, Instruction** hi) {
  TFJIT_ASSIGN_OR_RETURN(*lo, ctx.Input(node, range_i));
  TFJIT_ASSIGN_OR_RETURN(*hi, ctx.Input(node, range_i + 1));
  if ((*lo)->shape().rank() != 0) {
    return InvalidArgument("minval must be 0-D, got shape %s", (*lo)->shape().ToString());
  }
  if ((*hi)->shape().rank() != 0) {
    return InvalidArgument("maxval must be 0-D, got shape %s", (*hi)->shape().ToString());
  }
  absl::StatusOr<std::vector<int64_t>> lo_v = ctx.ConstantInputAsInts(node, range_i);
  absl::StatusOr<std::vector<int64_t>> hi_v = ctx.ConstantInputAsInts(node, range_i + 1);
  if (n > 0 && lo_v.ok() && hi_v.ok() && !((*lo_v)[0] < (*hi_v)[0])) {
    return InvalidArgument("Need minval < maxval, got %d >= %d", (*lo_v)[0], (*hi_v)[0]);
  }
  return absl::OkStatus();
}

absl::StatusOr<DType> IntDType(const tf::Node& node, const char* attr) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(node, attr));
  if (dtype != DType::kInt32 && dtype != DType::kInt64) {
    return InvalidArgument("%s: dtype must be int32 or int64, got %s", node.op(), DTypeName(dtype));
  }
  return dtype;
}

// ---- Stateless ops ----

absl::Status LowerStatelessFloat(LoweringContext& ctx, const tf::Node& node,
                                 random::RandomDistribution dist, bool v2) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, FloatDType(node));
  TFJIT_ASSIGN_OR_RETURN(Dims dims, OutputDims(ctx, node));
  Rng r(ctx);
  TFJIT_ASSIGN_OR_RETURN(Stream s,
                         v2 ? KeyCounterStream(r, ctx, node) : SeedStream(r, ctx, node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * out, FloatValues(r, ctx, dist, dtype, s, dims));
  TFJIT_RETURN_IF_ERROR(r.status());
  ctx.SetOutput(node, 0, out);
  return absl::OkStatus();
}

absl::Status LowerStatelessInt(LoweringContext& ctx, const tf::Node& node, bool v2) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, IntDType(node, "dtype"));
  TFJIT_ASSIGN_OR_RETURN(Dims dims, OutputDims(ctx, node));
  Instruction *lo, *hi;
  TFJIT_RETURN_IF_ERROR(IntRange(ctx, node, v2 ? 4 : 2, NumElements(dims), &lo, &hi));
  Rng r(ctx);
  TFJIT_ASSIGN_OR_RETURN(Stream s,
                         v2 ? KeyCounterStream(r, ctx, node) : SeedStream(r, ctx, node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * out, IntValues(r, dtype, s, lo, hi, dims));
  TFJIT_RETURN_IF_ERROR(r.status());
  ctx.SetOutput(node, 0, out);
  return absl::OkStatus();
}

using random::RandomDistribution;

absl::Status LowerStatelessRandomUniform(LoweringContext& c, const tf::Node& n) {
  return LowerStatelessFloat(c, n, RandomDistribution::kUniform, /*v2=*/false);
}
absl::Status LowerStatelessRandomNormal(LoweringContext& c, const tf::Node& n) {
  return LowerStatelessFloat(c, n, RandomDistribution::kNormal, /*v2=*/false);
}
absl::Status LowerStatelessTruncatedNormal(LoweringContext& c, const tf::Node& n) {
  return LowerStatelessFloat(c, n, RandomDistribution::kTruncatedNormal, /*v2=*/false);
}
absl::Status LowerStatelessRandomUniformV2(LoweringContext& c, const tf::Node& n) {
  return LowerStatelessFloat(c, n, RandomDistribution::kUniform, /*v2=*/true);
}
absl::Status LowerStatelessRandomNormalV2(LoweringContext& c, const tf::Node& n) {
  return LowerStatelessFloat(c, n, RandomDistribution::kNormal, /*v2=*/true);
}
absl::Status LowerStatelessTruncatedNormalV2(LoweringContext& c, const tf::Node& n) {
  return LowerStatelessFloat(c, n, RandomDistribution::kTruncatedNormal, /*v2=*/true);
}
absl::Status LowerStatelessRandomUniformInt(LoweringContext& c, const tf::Node& n) {
  return LowerStatelessInt(c, n, /*v2=*/false);
}
absl::Status LowerStatelessRandomUniformIntV2(LoweringContext& c, const tf::Node& n) {
  return LowerStatelessInt(c, n, /*v2=*/true);
}

bool IsFullIntDType(DType t) {
  return t == DType::kInt32 || t == DType::kInt64 || t == DType::kUInt32 || t == DType::kUInt64;
}

// TF's UniformFullIntDistribution (and XLA's Philox bit generator): the raw words (32-bit
// types) or word pairs, low first (64-bit types), bitcast to the output type.
absl::StatusOr<Instruction*> FullIntBits(Rng& r, const Stream& s, DType dtype, const Dims& dims) {
  const int64_t n = NumElements(dims);
  if (n == 0) return r.Cvt(r.Const<int32_t>(DType::kInt32, 0, dims), dtype);
  const bool wide = dtype == DType::kInt64 || dtype == DType::kUInt64;
  TFJIT_ASSIGN_OR_RETURN(Words w, BlocksFor(r, s, n, wide ? 2 : 4));
  Instruction* bits =
      wide ? r.Join64(r.Interleave({w[0], w[2]}, n, dims), r.Interleave({w[1], w[3]}, n, dims))
           : r.Interleave({w[0], w[1], w[2], w[3]}, n, dims);
  return (dtype == DType::kUInt32 || dtype == DType::kUInt64) ? bits : r.Bitcast(bits, dtype);
}

absl::Status LowerStatelessFullInt(LoweringContext& ctx, const tf::Node& node, bool v2) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(node, "dtype"));
  if (!IsFullIntDType(dtype)) {
    return InvalidArgument("%s: dtype must be int32, int64, uint32 or uint64, got %s", node.op(),
                           DTypeName(dtype));
  }
  TFJIT_ASSIGN_OR_RETURN(Dims dims, OutputDims(ctx, node));
  Rng r(ctx);
  TFJIT_ASSIGN_OR_RETURN(Stream s,
                         v2 ? KeyCounterStream(r, ctx, node) : SeedStream(r, ctx, node, 1));
  TFJIT_ASSIGN_OR_RETURN(Instruction * out, FullIntBits(r, s, dtype, dims));
  TFJIT_RETURN_IF_ERROR(r.status());
  ctx.SetOutput(node, 0, out);
  return absl::OkStatus();
}

// XlaRngBitGenerator (XLA's RngBitGenerator, xla/hlo/builder/lib/prng.cc): algorithm 0
// (default, Philox on CPU) or 2 (Philox) on state u64[3] = [key, counter_lo, counter_hi]; the
// bits are FullIntBits of that stream and the new state advances the 128-bit counter by the
// blocks used. ThreeFry (1) is not implemented.
absl::Status LowerXlaRngBitGenerator(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> alg, ctx.ConstantInputAsInts(node, 0));
  if (alg.size() != 1) {
    return InvalidArgument("algorithm must be a scalar, got %d values", alg.size());
  }
  if (alg[0] == 1) {
    return Unimplemented("RNG algorithm 1 (ThreeFry) is not implemented by tfjit; use 2 (Philox)");
  }
  if (alg[0] != 0 && alg[0] != 2) return InvalidArgument("Unsupported algorithm id: %d", alg[0]);
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(node, "dtype"));
  if (!IsFullIntDType(dtype)) {
    return InvalidArgument("%s: dtype must be int32, int64, uint32 or uint64, got %s", node.op(),
                           DTypeName(dtype));
  }
  TFJIT_ASSIGN_OR_RETURN(Dims dims, ctx.ConstantInputAsInts(node, 2));
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("shape has a negative dimension %d", d);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * state, ctx.Input(node, 1));
  if (state->shape().dims() != Dims{3}) {
    return InvalidArgument("initial_state must be u64[3] for the Philox algorithm, got %s",
                           state->shape().ToString());
  }
  Rng r(ctx);
  Instruction* key = r.At(state, 0);
  Instruction* c0 = r.At(state, 1);
  Instruction* c1 = r.At(state, 2);
  const Stream s{{r.Lo32(key), r.Hi32(key)}, {r.Lo32(c0), r.Hi32(c0), r.Lo32(c1), r.Hi32(c1)}};
  TFJIT_ASSIGN_OR_RETURN(Instruction * out, FullIntBits(r, s, dtype, dims));
  const int64_t per_block = dtype == DType::kInt64 || dtype == DType::kUInt64 ? 2 : 4;
  const uint64_t blocks = static_cast<uint64_t>((NumElements(dims) + per_block - 1) / per_block);
  Instruction* lo = r.Bin(Opcode::kAdd, c0, r.U64(blocks, {}));
  Instruction* hi = r.Bin(Opcode::kAdd, c1, r.Cvt(r.Lt(lo, c0), DType::kUInt64));
  Instruction* next = r.Concat({r.Reshape(key, {1}), r.Reshape(lo, {1}), r.Reshape(hi, {1})}, 0);
  TFJIT_RETURN_IF_ERROR(r.status());
  ctx.SetOutput(node, 0, next);
  ctx.SetOutput(node, 1, out);
  return absl::OkStatus();
}

absl::Status LowerStatelessRandomUniformFullInt(LoweringContext& c, const tf::Node& n) {
  return LowerStatelessFullInt(c, n, /*v2=*/false);
}
absl::Status LowerStatelessRandomUniformFullIntV2(LoweringContext& c, const tf::Node& n) {
  return LowerStatelessFullInt(c, n, /*v2=*/true);
}

// ---- Multinomial, StatelessMultinomial ----

// The lowest finite value of a float type, as a double.
double LowestOf(DType t) {
  switch (t) {
    case DType::kFloat16:
      return -65504.0;
    case DType::kBFloat16:
      return -3.3895313892515355e38;
    case DType::kFloat32:
      return -static_cast<double>(std::numeric_limits<float>::max());
    default:
      return -std::numeric_limits<double>::max();
  }
}

// The running sums of e [C, B] along dim 0, in order (cdf[j] = cdf[j-1] + e[j]), as a while
// loop: a sum reduction may reassociate (HLO.md), and TF's CDF is a sequential sum. Returns
// {cdf [C, B], total [B]}.
absl::StatusOr<std::pair<Instruction*, Instruction*>> SequentialCumsum(LoweringContext& ctx,
                                                                       Instruction* e) {
  const int64_t classes = e->shape().dim(0), batch = e->shape().dim(1);
  const hlo::Shape row(DType::kFloat64, {batch});
  const hlo::Shape state_shape =
      hlo::Shape::Tuple({hlo::Shape::Scalar(DType::kInt32), row, e->shape(), e->shape()});
  hlo::Computation* cond = ctx.module()->AddComputation("multinomial_cdf_cond");
  {
    hlo::Builder cb(cond);
    Instruction* p = cb.Parameter(0, state_shape, "state");
    TFJIT_ASSIGN_OR_RETURN(Instruction * j, cb.GetTupleElement(p, 0));
    TFJIT_ASSIGN_OR_RETURN(
        Instruction * lt,
        cb.Compare(ComparisonDirection::kLt, j,
                   cb.ScalarConstant<int32_t>(DType::kInt32, static_cast<int32_t>(classes))));
    cond->set_root(lt);
  }
  hlo::Computation* body = ctx.module()->AddComputation("multinomial_cdf_body");
  {
    hlo::Builder lb(body);
    Instruction* p = lb.Parameter(0, state_shape, "state");
    TFJIT_ASSIGN_OR_RETURN(Instruction * j, lb.GetTupleElement(p, 0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * total, lb.GetTupleElement(p, 1));
    TFJIT_ASSIGN_OR_RETURN(Instruction * values, lb.GetTupleElement(p, 2));
    TFJIT_ASSIGN_OR_RETURN(Instruction * cdf, lb.GetTupleElement(p, 3));
    Instruction* zero = lb.ScalarConstant<int32_t>(DType::kInt32, 0);
    hlo::Attributes attrs;
    attrs.dynamic_slice_sizes = {1, batch};
    TFJIT_ASSIGN_OR_RETURN(Instruction * slice,
                           lb.Add(Opcode::kDynamicSlice, {values, j, zero}, attrs));
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, lb.Reshape(slice, {batch}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * next_total, lb.Binary(Opcode::kAdd, total, x));
    TFJIT_ASSIGN_OR_RETURN(Instruction * update, lb.Reshape(next_total, {1, batch}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * next_cdf,
                           lb.Add(Opcode::kDynamicUpdateSlice, {cdf, update, j, zero}));
    TFJIT_ASSIGN_OR_RETURN(
        Instruction * j1, lb.Binary(Opcode::kAdd, j, lb.ScalarConstant<int32_t>(DType::kInt32, 1)));
    TFJIT_ASSIGN_OR_RETURN(Instruction * root, lb.Tuple({j1, next_total, values, next_cdf}));
    body->set_root(root);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zeros_row, ctx.Splat(DType::kFloat64, 0.0, {batch}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zeros, ctx.Splat(DType::kFloat64, 0.0, {classes, batch}));
  TFJIT_ASSIGN_OR_RETURN(
      Instruction * init,
      ctx.b().Tuple({ctx.b().ScalarConstant<int32_t>(DType::kInt32, 0), zeros_row, e, zeros}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * loop, ctx.b().Add(Opcode::kWhile, {init}, {}, {cond, body}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * cdf, ctx.b().GetTupleElement(loop, 3));
  TFJIT_ASSIGN_OR_RETURN(Instruction * total, ctx.b().GetTupleElement(loop, 1));
  return std::make_pair(cdf, total);
}

absl::StatusOr<Stream> StatefulStream(Rng& r, LoweringContext& ctx, const tf::Node& node,
                                      int64_t n);

// TF's MultinomialFunctor<CPUDevice> as the kernel runs it (random_more_kernels.cc): per row
// the sequential CDF of exp(logit - max finite logit) over the finite logits in double; sample
// m = row * S + j is the double of stream words 2m, 2m + 1 times the row's total, and its class
// the upper bound in the CDF = the number of CDF entries <= it.
absl::Status LowerMultinomialImpl(LoweringContext& ctx, const tf::Node& node, bool stateless) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * logits, ctx.Input(node, 0));
  if (logits->shape().rank() != 2) {
    return InvalidArgument("logits should be a matrix, got shape %s", logits->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> ns, ctx.ConstantInputAsInts(node, 1));
  if (ns.size() != 1) return InvalidArgument("num_samples should be a scalar");
  const int64_t samples = ns[0];
  if (samples < 0) return InvalidArgument("num_samples should be non-negative, got %d", samples);
  const int64_t batch = logits->shape().dim(0), classes = logits->shape().dim(1);
  if (classes <= 0) return InvalidArgument("num_classes should be positive, got %d", classes);
  TFJIT_ASSIGN_OR_RETURN(DType out_type, tf::GetTypeAttr(node, "output_dtype"));
  if (out_type != DType::kInt32 && out_type != DType::kInt64) {
    return InvalidArgument("output_dtype must be int32 or int64, got %s", DTypeName(out_type));
  }
  const DType t = logits->shape().element_type();
  if (!random::IsRandomFillDType(t)) {
    return InvalidArgument("%s: logits must be a floating-point type, got %s", node.op(),
                           DTypeName(t));
  }
  const int64_t n = batch * samples;
  Rng r(ctx);
  Stream s;
  if (stateless) {
    TFJIT_ASSIGN_OR_RETURN(s, SeedStream(r, ctx, node, 2));
  } else {
    // ReserveRandomOutputs(batch * ceil4(S) * 2, 256) when there is anything to draw.
    const int64_t outputs = n == 0 ? 0 : batch * ((samples + 3) / 4 * 4) * 2;
    TFJIT_ASSIGN_OR_RETURN(s, StatefulStream(r, ctx, node, outputs));
  }
  if (n == 0) {
    Instruction* out = r.Cvt(r.Const<int32_t>(DType::kInt32, 0, {batch, samples}), out_type);
    TFJIT_RETURN_IF_ERROR(r.status());
    ctx.SetOutput(node, 0, out);
    return absl::OkStatus();
  }
  hlo::Builder& b = ctx.b();
  const Dims bc = {batch, classes};
  Instruction* x = r.Cvt(logits, DType::kFloat64);
  Instruction* finite =
      r.ok({x}) ? r.Take(b.Compare(ComparisonDirection::kEq, r.Bin(Opcode::kSubtract, x, x),
                                   r.F(DType::kFloat64, 0.0, bc)))
                : nullptr;
  Instruction* lowest = r.F(DType::kFloat64, LowestOf(t), bc);
  Instruction* masked = r.ok({finite, lowest}) ? r.Take(b.Select(finite, x, lowest)) : nullptr;
  Instruction* max = nullptr;
  if (r.ok({masked})) {
    hlo::Computation* max_fn =
        hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, DType::kFloat64);
    max = r.Take(
        b.Reduce(masked, b.ScalarConstant<double>(DType::kFloat64, LowestOf(t)), {1}, max_fn));
  }
  Instruction* max_b = r.ok({max}) ? r.Take(b.Broadcast(max, bc, {0})) : nullptr;
  Instruction* e = r.Un(Opcode::kExp, r.Bin(Opcode::kSubtract, x, max_b));
  Instruction* e_masked =
      r.ok({finite, e}) ? r.Take(b.Select(finite, e, r.F(DType::kFloat64, 0.0, bc))) : nullptr;
  Instruction* e_t = r.ok({e_masked}) ? r.Take(b.Transpose(e_masked, {1, 0})) : nullptr;
  TFJIT_RETURN_IF_ERROR(r.status());
  TFJIT_ASSIGN_OR_RETURN(auto cdf_total, SequentialCumsum(ctx, e_t));
  // Uniform doubles, two words each: the float64 layout of UniformValues.
  TFJIT_ASSIGN_OR_RETURN(Words w, BlocksFor(r, s, n, 2));
  const Dims bs = {batch, samples};
  Instruction* u = UniformValues(r, DType::kFloat64, w, n, bs);
  Instruction* total_b = r.Take(b.Broadcast(cdf_total.second, bs, {0}));
  Instruction* to_find = r.Bin(Opcode::kMultiply, u, total_b);
  const Dims bsc = {batch, samples, classes};
  Instruction* cdf_bc = r.Take(b.Transpose(cdf_total.first, {1, 0}));
  Instruction* cdf3 = r.ok({cdf_bc}) ? r.Take(b.Broadcast(cdf_bc, bsc, {0, 2})) : nullptr;
  Instruction* find3 = r.ok({to_find}) ? r.Take(b.Broadcast(to_find, bsc, {0, 1})) : nullptr;
  Instruction* le =
      r.ok({cdf3, find3}) ? r.Take(b.Compare(ComparisonDirection::kLe, cdf3, find3)) : nullptr;
  Instruction* count = nullptr;
  if (r.ok({le})) {
    hlo::Computation* add_fn =
        hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, out_type);
    Instruction* zero = out_type == DType::kInt32 ? b.ScalarConstant<int32_t>(out_type, 0)
                                                  : b.ScalarConstant<int64_t>(out_type, 0);
    count = r.Take(b.Reduce(r.Cvt(le, out_type), zero, {2}, add_fn));
  }
  TFJIT_RETURN_IF_ERROR(r.status());
  ctx.SetOutput(node, 0, count);
  return absl::OkStatus();
}

// key u64[1] = mix0 | mix1 << 32; counter u64[2] = [0, mix2 | mix3 << 32].
absl::Status LowerKeyCounter(LoweringContext& ctx, const tf::Node& node, bool with_alg) {
  Rng r(ctx);
  TFJIT_ASSIGN_OR_RETURN(Stream s, SeedStream(r, ctx, node, 0));
  Instruction* key = r.Reshape(r.Join64(s.key[0], s.key[1]), {1});
  Instruction* counter = r.Concat({r.Reshape(r.Join64(s.counter[0], s.counter[1]), {1}),
                                   r.Reshape(r.Join64(s.counter[2], s.counter[3]), {1})},
                                  0);
  Instruction* alg = with_alg ? r.Const<int32_t>(DType::kInt32, 1, {}) : nullptr;
  TFJIT_RETURN_IF_ERROR(r.status());
  ctx.SetOutput(node, 0, key);
  ctx.SetOutput(node, 1, counter);
  if (with_alg) ctx.SetOutput(node, 2, alg);
  return absl::OkStatus();
}

absl::Status LowerStatelessRandomGetKeyCounter(LoweringContext& c, const tf::Node& n) {
  return LowerKeyCounter(c, n, /*with_alg=*/false);
}
absl::Status LowerStatelessRandomGetKeyCounterAlg(LoweringContext& c, const tf::Node& n) {
  return LowerKeyCounter(c, n, /*with_alg=*/true);
}
absl::Status LowerStatelessRandomGetAlg(LoweringContext& ctx, const tf::Node& node) {
  ctx.SetOutput(node, 0, ctx.b().ScalarConstant<int32_t>(DType::kInt32, 1));
  return absl::OkStatus();
}

// ---- Stateful ops (known issue E) ----

// The node's state (its LowerCluster parameter, or its While/If body's carried state) as a
// stream, and the next state: the counter advanced by 256 blocks per output (TF's
// ReserveRandomOutputs), a 128-bit add on u64 words.
absl::StatusOr<Stream> StatefulStream(Rng& r, LoweringContext& ctx, const tf::Node& node,
                                      int64_t n) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * state, ctx.RandomStateFor(node));
  const bool in_body = ctx.body_random_state() == state;
  if (ctx.autofix() && in_body) {
    Log(LogLevel::kWarning,
        "autofix E: %s draws from its loop's or conditional's stream in "
        "compiled code (XLA's semantics); its seeds (if any) hold only outside compiled "
        "While/If bodies",
        node.DebugName());
  } else if (ctx.autofix()) {
    TFJIT_ASSIGN_OR_RETURN(int64_t seed, tf::GetIntAttrOr(node, "seed", 0));
    TFJIT_ASSIGN_OR_RETURN(int64_t seed2, tf::GetIntAttrOr(node, "seed2", 0));
    Log(LogLevel::kWarning,
        "autofix E: %s honours its seeds (seed=%d, seed2=%d) in compiled "
        "code: it continues the runtime kernel's Philox stream instead of XLA's unseeded one",
        node.DebugName(), seed, seed2);
  } else {
    Log(LogLevel::kWarning, "%s", rules::IgnoredSeedsWarning(node));
  }
  Instruction* key = r.At(state, 0);
  Instruction* c0 = r.At(state, 1);
  Instruction* c1 = r.At(state, 2);
  const uint64_t advance =
      static_cast<uint64_t>(n) * static_cast<uint64_t>(random::kReservedSamplesPerOutput);
  Instruction* lo = r.Bin(Opcode::kAdd, c0, r.U64(advance, {}));
  Instruction* carry = r.Cvt(r.Lt(lo, c0), DType::kUInt64);
  Instruction* hi = r.Bin(Opcode::kAdd, c1, carry);
  Instruction* next = r.Concat({r.Reshape(key, {1}), r.Reshape(lo, {1}), r.Reshape(hi, {1})}, 0);
  TFJIT_RETURN_IF_ERROR(r.status());
  ctx.SetNextRandomState(node, next);
  return Stream{{r.Lo32(key), r.Hi32(key)}, {r.Lo32(c0), r.Hi32(c0), r.Lo32(c1), r.Hi32(c1)}};
}

absl::Status LowerStatefulFloat(LoweringContext& ctx, const tf::Node& node,
                                RandomDistribution dist) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, FloatDType(node));
  TFJIT_ASSIGN_OR_RETURN(Dims dims, OutputDims(ctx, node));
  Rng r(ctx);
  TFJIT_ASSIGN_OR_RETURN(Stream s, StatefulStream(r, ctx, node, NumElements(dims)));
  TFJIT_ASSIGN_OR_RETURN(Instruction * out, FloatValues(r, ctx, dist, dtype, s, dims));
  TFJIT_RETURN_IF_ERROR(r.status());
  ctx.SetOutput(node, 0, out);
  return absl::OkStatus();
}

absl::Status LowerRandomUniform(LoweringContext& c, const tf::Node& n) {
  return LowerStatefulFloat(c, n, RandomDistribution::kUniform);
}
absl::Status LowerRandomStandardNormal(LoweringContext& c, const tf::Node& n) {
  return LowerStatefulFloat(c, n, RandomDistribution::kNormal);
}
absl::Status LowerTruncatedNormal(LoweringContext& c, const tf::Node& n) {
  return LowerStatefulFloat(c, n, RandomDistribution::kTruncatedNormal);
}

absl::Status LowerRandomUniformInt(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, IntDType(node, "Tout"));
  TFJIT_ASSIGN_OR_RETURN(Dims dims, OutputDims(ctx, node));
  const int64_t n = NumElements(dims);
  Instruction *lo, *hi;
  TFJIT_RETURN_IF_ERROR(IntRange(ctx, node, 1, n, &lo, &hi));
  Rng r(ctx);
  TFJIT_ASSIGN_OR_RETURN(Stream s, StatefulStream(r, ctx, node, n));
  TFJIT_ASSIGN_OR_RETURN(Instruction * out, IntValues(r, dtype, s, lo, hi, dims));
  TFJIT_RETURN_IF_ERROR(r.status());
  ctx.SetOutput(node, 0, out);
  return absl::OkStatus();
}

absl::Status LowerStatelessMultinomial(LoweringContext& c, const tf::Node& n) {
  return LowerMultinomialImpl(c, n, /*stateless=*/true);
}
absl::Status LowerMultinomial(LoweringContext& c, const tf::Node& n) {
  return LowerMultinomialImpl(c, n, /*stateless=*/false);
}

}  // namespace

void AppendRandomLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(),
                {
                    {"StatelessRandomUniform", LowerStatelessRandomUniform, true},
                    {"StatelessRandomNormal", LowerStatelessRandomNormal, true},
                    {"StatelessTruncatedNormal", LowerStatelessTruncatedNormal, true},
                    {"StatelessRandomUniformV2", LowerStatelessRandomUniformV2, true},
                    {"StatelessRandomNormalV2", LowerStatelessRandomNormalV2, true},
                    {"StatelessTruncatedNormalV2", LowerStatelessTruncatedNormalV2, true},
                    {"StatelessRandomUniformInt", LowerStatelessRandomUniformInt},
                    {"StatelessRandomUniformIntV2", LowerStatelessRandomUniformIntV2},
                    {"StatelessRandomUniformFullInt", LowerStatelessRandomUniformFullInt},
                    {"StatelessRandomUniformFullIntV2", LowerStatelessRandomUniformFullIntV2},
                    {"XlaRngBitGenerator", LowerXlaRngBitGenerator},
                    {"RngBitGenerator", LowerXlaRngBitGenerator},
                    {"StatelessMultinomial", LowerStatelessMultinomial},
                    {"Multinomial", LowerMultinomial},
                    {"StatelessRandomGetKeyCounter", LowerStatelessRandomGetKeyCounter},
                    {"StatelessRandomGetKeyCounterAlg", LowerStatelessRandomGetKeyCounterAlg},
                    {"StatelessRandomGetAlg", LowerStatelessRandomGetAlg},
                    {"RandomUniform", LowerRandomUniform, true},
                    {"RandomStandardNormal", LowerRandomStandardNormal, true},
                    {"TruncatedNormal", LowerTruncatedNormal, true},
                    {"RandomUniformInt", LowerRandomUniformInt},
                });
}

}  // namespace tfjit::tf2hlo
