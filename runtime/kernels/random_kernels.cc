// TF's random ops on the Philox-4x32-10 stream (core/philox.h), bit-exact with TF's CPU
// kernels: stateless v1 (seed pair) and V2 (key/counter/alg) ops, StatelessRandomGetKeyCounter
// and the stateful RandomUniform/RandomStandardNormal/TruncatedNormal/RandomUniformInt.
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <type_traits>

#include "absl/synchronization/mutex.h"
#include "core/dtype.h"
#include "core/philox.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

using random::PhiloxCounter;
using random::PhiloxState;

enum class Dist { kUniform, kNormal, kTruncatedNormal };

// Element i of TF's FillPhiloxRandom for fixed-sample distributions: group i / per_block uses
// block i / per_block (TF skips the generator one block per group), whatever the sharding.
class BlockCursor {
 public:
  explicit BlockCursor(const PhiloxState& s) : state_(s) {}
  const PhiloxCounter& At(int64_t block) {
    if (block != current_) {
      words_ = state_.Block(static_cast<uint64_t>(block));
      current_ = block;
    }
    return words_;
  }

 private:
  const PhiloxState& state_;
  int64_t current_ = -1;
  PhiloxCounter words_{};
};

template <typename T>
void FillUniform(const PhiloxState& s, T* out, int64_t begin, int64_t end) {
  BlockCursor cursor(s);
  for (int64_t i = begin; i < end; ++i) {
    if constexpr (std::is_same_v<T, double>) {
      const PhiloxCounter& w = cursor.At(i / 2);
      const size_t j = static_cast<size_t>(i % 2) * 2;
      out[i] = random::Uint64ToDouble(w[j], w[j + 1]);
    } else {
      const uint32_t x = cursor.At(i / 4)[static_cast<size_t>(i % 4)];
      if constexpr (std::is_same_v<T, float>) {
        out[i] = random::Uint32ToFloat(x);
      } else if constexpr (std::is_same_v<T, half>) {
        out[i] = half(random::Uint32ToHalfValue(x));
      } else {
        out[i] = bfloat16(random::Uint32ToBfloat16Value(x));
      }
    }
  }
}

// Box-Muller pairs: words (0,1) and (2,3) of a block give outputs (0,1) and (2,3) for 32-bit
// types; a double block gives two outputs.
template <typename T>
void FillNormal(const PhiloxState& s, T* out, int64_t begin, int64_t end) {
  BlockCursor cursor(s);
  if constexpr (std::is_same_v<T, double>) {
    int64_t cached = -1;
    double d[2] = {0, 0};
    for (int64_t i = begin; i < end; ++i) {
      if (i / 2 != cached) {
        const PhiloxCounter& w = cursor.At(i / 2);
        random::BoxMullerDouble(w[0], w[1], w[2], w[3], &d[0], &d[1]);
        cached = i / 2;
      }
      out[i] = d[i % 2];
    }
  } else {
    int64_t cached = -1;
    float f[2] = {0, 0};
    for (int64_t i = begin; i < end; ++i) {
      if (i / 2 != cached) {
        const PhiloxCounter& w = cursor.At(i / 4);
        const size_t p = static_cast<size_t>(i % 4) & ~size_t{1};
        random::BoxMullerFloat(w[p], w[p + 1], &f[0], &f[1]);
        cached = i / 2;
      }
      out[i] = static_cast<T>(f[i % 2]);
    }
  }
}

template <typename T>
void FillTruncatedNormal(const PhiloxState& s, T* out, int64_t begin, int64_t end) {
  constexpr int kGroup = std::is_same_v<T, double> ? random::kTruncatedDoubleGroup
                                                   : random::kTruncatedFloatGroup;
  int64_t cached = -1;
  std::conditional_t<std::is_same_v<T, double>, double, float> g[kGroup] = {};
  for (int64_t i = begin; i < end; ++i) {
    if (i / kGroup != cached) {
      cached = i / kGroup;
      if constexpr (std::is_same_v<T, double>) {
        random::TruncatedNormalDoubleGroup(s, static_cast<uint64_t>(cached), g);
      } else {
        random::TruncatedNormalFloatGroup(s, static_cast<uint64_t>(cached), g);
      }
    }
    out[i] = static_cast<T>(g[i % kGroup]);
  }
}

// TF's UniformDistribution<int>: lo + (bits % range) with range = hi - lo as unsigned.
template <typename T>
void FillUniformInt(const PhiloxState& s, T* out, int64_t begin, int64_t end, T lo, T hi) {
  using U = std::make_unsigned_t<T>;
  const U range = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
  BlockCursor cursor(s);
  for (int64_t i = begin; i < end; ++i) {
    U bits;
    if constexpr (sizeof(T) == 8) {
      const PhiloxCounter& w = cursor.At(i / 2);
      const size_t j = static_cast<size_t>(i % 2) * 2;
      bits = w[j] | (static_cast<uint64_t>(w[j + 1]) << 32);
    } else {
      bits = cursor.At(i / 4)[static_cast<size_t>(i % 4)];
    }
    out[i] = static_cast<T>(static_cast<U>(static_cast<U>(lo) + bits % range));
  }
}

absl::Status FillFloat(KernelContext& ctx, Dist dist, DType dtype, const PhiloxState& s,
                       Tensor& out) {
  const int64_t n = out.num_elements();
  const int64_t cost = dist == Dist::kUniform ? 20 : (dist == Dist::kNormal ? 80 : 120);
  const bool ok = DispatchFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* data = out.data<T>();
    ParallelFor(ctx, n, cost, [&](int64_t b, int64_t e) {
      switch (dist) {
        case Dist::kUniform: FillUniform<T>(s, data, b, e); break;
        case Dist::kNormal: FillNormal<T>(s, data, b, e); break;
        case Dist::kTruncatedNormal: FillTruncatedNormal<T>(s, data, b, e); break;
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, dtype, "float16, bfloat16, float32, float64");
  return absl::OkStatus();
}

// ---- Inputs ----

absl::Status ReadShape(const KernelContext& ctx, int i, std::vector<int64_t>* dims) {
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(i), "shape", dims));
  for (int64_t d : *dims) {
    if (d < 0) return KernelError(ctx, "shape %s has a negative dimension", DimsString(*dims));
  }
  return absl::OkStatus();
}

// The v1 seed input: int32/int64 of shape [2], sign-extended to 64 bits as TF does.
absl::Status ReadSeedState(const KernelContext& ctx, int i, PhiloxState* state) {
  const Tensor& seed = ctx.input(i);
  if (seed.rank() != 1 || seed.dim(0) != 2) {
    return KernelError(ctx, "seed must have shape [2], not %s", DimsString(seed.dims()));
  }
  int64_t s[2];
  if (seed.dtype() == DType::kInt32) {
    for (int k = 0; k < 2; ++k) s[k] = seed.data<int32_t>()[k];
  } else if (seed.dtype() == DType::kInt64) {
    for (int k = 0; k < 2; ++k) s[k] = seed.data<int64_t>()[k];
  } else {
    return KernelError(ctx, "Invalid seed type: %s", DTypeName(seed.dtype()));
  }
  *state = random::StatelessSeedToState(static_cast<uint64_t>(s[0]), static_cast<uint64_t>(s[1]));
  return absl::OkStatus();
}

// V2 inputs key u64[1], counter u64[>=2], alg int32 scalar (1 = Philox, 3 = auto = Philox).
absl::Status ReadKeyCounterAlg(const KernelContext& ctx, int key_i, PhiloxState* state) {
  const Tensor& key = ctx.input(key_i);
  const Tensor& counter = ctx.input(key_i + 1);
  const Tensor& alg = ctx.input(key_i + 2);
  if (alg.rank() != 0) {
    return KernelError(ctx, "input %d (0-based) must have shape [], not %s", key_i + 2,
                       DimsString(alg.dims()));
  }
  if (alg.dtype() != DType::kInt32) {
    return KernelError(ctx, "dtype of input %d (0-based) must be int32, not %s", key_i + 2,
                       DTypeName(alg.dtype()));
  }
  int32_t id = *alg.data<int32_t>();
  if (id == 3) id = 1;  // RNG_ALG_AUTO_SELECT picks Philox on CPU
  if (id == 2) {
    return AttachNode(Unimplemented("node '%s' (%s): RNG algorithm 2 (ThreeFry) is not "
                                    "implemented by tfjit; use alg 1 (Philox)",
                                    ctx.node().name(), ctx.node().op()),
                      ctx.node().name(), ctx.node().op());
  }
  if (id != 1) return KernelError(ctx, "Unsupported algorithm id: %d", id);
  if (key.dtype() != DType::kUInt64 || key.rank() != 1 || key.dim(0) != 1) {
    return KernelError(ctx, "key must have shape [1], not %s. (Note that batched keys are "
                       "not supported yet.)", key.ShapeString());
  }
  if (counter.dtype() != DType::kUInt64 || counter.rank() != 1 || counter.dim(0) < 2) {
    return KernelError(ctx, "counter must be a vector with length at least 2; got shape: %s. "
                       "(Note that batched counters are not supported yet.)",
                       counter.ShapeString());
  }
  const uint64_t* c = counter.data<uint64_t>();
  *state = random::StateFromKeyCounter(*key.data<uint64_t>(), c[0], c[1]);
  return absl::OkStatus();
}

// minval/maxval scalars of T; an empty output (n == 0) skips the lo < hi check.
template <typename T>
absl::Status ReadIntRange(const KernelContext& ctx, int i, int64_t n, T* lo, T* hi) {
  const Tensor& mn = ctx.input(i);
  const Tensor& mx = ctx.input(i + 1);
  if (mn.rank() != 0) return KernelError(ctx, "minval must be 0-D, got shape %s",
                                         DimsString(mn.dims()));
  if (mx.rank() != 0) return KernelError(ctx, "maxval must be 0-D, got shape %s",
                                         DimsString(mx.dims()));
  if (mn.dtype() != DTypeOf<T>::value || mx.dtype() != DTypeOf<T>::value) {
    return KernelError(ctx, "minval and maxval must be %s, got %s and %s",
                       DTypeName(DTypeOf<T>::value), DTypeName(mn.dtype()),
                       DTypeName(mx.dtype()));
  }
  *lo = *mn.data<T>();
  *hi = *mx.data<T>();
  // TF checks after its early exit for empty outputs: zero impossible things are fine.
  if (n > 0 && !(*lo < *hi)) {
    return KernelError(ctx, "Need minval < maxval, got %d >= %d", static_cast<int64_t>(*lo),
                       static_cast<int64_t>(*hi));
  }
  return absl::OkStatus();
}

absl::Status FillInt(KernelContext& ctx, DType dtype, int range_input, const PhiloxState& s,
                     Tensor& out) {
  const int64_t n = out.num_elements();
  auto run = [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    T lo, hi;
    TFJIT_RETURN_IF_ERROR(ReadIntRange<T>(ctx, range_input, n, &lo, &hi));
    T* data = out.data<T>();
    ParallelFor(ctx, n, 20,
                [&](int64_t b, int64_t e) { FillUniformInt<T>(s, data, b, e, lo, hi); });
    return absl::OkStatus();
  };
  if (dtype == DType::kInt32) return run(int32_t{});
  if (dtype == DType::kInt64) return run(int64_t{});
  return UnsupportedDType(ctx, dtype, "int32, int64");
}

// ---- Stateless ops ----

absl::Status StatelessFloat(KernelContext& ctx, Dist dist, bool v2) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, v2 ? 4 : 2));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadShape(ctx, 0, &dims));
  PhiloxState s;
  TFJIT_RETURN_IF_ERROR(v2 ? ReadKeyCounterAlg(ctx, 1, &s) : ReadSeedState(ctx, 1, &s));
  Tensor out(dtype, dims);
  TFJIT_RETURN_IF_ERROR(FillFloat(ctx, dist, dtype, s, out));
  ctx.set_output(0, out);
  return absl::OkStatus();
}

absl::Status StatelessInt(KernelContext& ctx, bool v2) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, v2 ? 6 : 4));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadShape(ctx, 0, &dims));
  PhiloxState s;
  TFJIT_RETURN_IF_ERROR(v2 ? ReadKeyCounterAlg(ctx, 1, &s) : ReadSeedState(ctx, 1, &s));
  Tensor out(dtype, dims);
  TFJIT_RETURN_IF_ERROR(FillInt(ctx, dtype, v2 ? 4 : 2, s, out));
  ctx.set_output(0, out);
  return absl::OkStatus();
}

absl::Status StatelessRandomUniform(KernelContext& c) {
  return StatelessFloat(c, Dist::kUniform, false);
}
absl::Status StatelessRandomNormal(KernelContext& c) {
  return StatelessFloat(c, Dist::kNormal, false);
}
absl::Status StatelessTruncatedNormal(KernelContext& c) {
  return StatelessFloat(c, Dist::kTruncatedNormal, false);
}
absl::Status StatelessRandomUniformV2(KernelContext& c) {
  return StatelessFloat(c, Dist::kUniform, true);
}
absl::Status StatelessRandomNormalV2(KernelContext& c) {
  return StatelessFloat(c, Dist::kNormal, true);
}
absl::Status StatelessTruncatedNormalV2(KernelContext& c) {
  return StatelessFloat(c, Dist::kTruncatedNormal, true);
}
absl::Status StatelessRandomUniformInt(KernelContext& c) { return StatelessInt(c, false); }
absl::Status StatelessRandomUniformIntV2(KernelContext& c) { return StatelessInt(c, true); }

// key u64[1] and counter u64[2] as TF lays them out (low word first in each u64).
absl::Status WriteKeyCounter(KernelContext& ctx) {
  PhiloxState s;
  TFJIT_RETURN_IF_ERROR(ReadSeedState(ctx, 0, &s));
  Tensor key(DType::kUInt64, {1});
  Tensor counter(DType::kUInt64, {2});
  *key.data<uint64_t>() = random::KeyAsU64(s.key);
  random::CounterAsU64(s.counter, counter.data<uint64_t>());
  ctx.set_output(0, key);
  ctx.set_output(1, counter);
  return absl::OkStatus();
}

absl::Status StatelessRandomGetKeyCounter(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  return WriteKeyCounter(ctx);
}

absl::Status StatelessRandomGetKeyCounterAlg(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_RETURN_IF_ERROR(WriteKeyCounter(ctx));
  ctx.set_output(2, Tensor::FromVector<int32_t>(DType::kInt32, {}, {1}));
  return absl::OkStatus();
}

absl::Status StatelessRandomGetAlg(KernelContext& ctx) {
  ctx.set_output(0, Tensor::FromVector<int32_t>(DType::kInt32, {}, {1}));
  return absl::OkStatus();
}

// ---- Stateful ops ----

// The node's generator (TF's GuardedPhiloxRandom): keyed by (seed, seed2), advancing by
// 256 blocks per output on every run (ReserveRandomOutputs(n, 256)).
struct StatefulGenerator : KernelState {
  absl::Mutex mu;
  PhiloxState state;
};

// Used when the runner gives the kernel no per-session store. Node addresses are stable for
// the life of a Session's graph; a node allocated at the address of a destroyed Session's
// node would continue that node's stream (the executor should pass a per-session store).
KernelStateStore& ProcessStateStore() {
  static KernelStateStore* store = new KernelStateStore();
  return *store;
}

absl::StatusOr<PhiloxState> ReserveSamples(KernelContext& ctx, int64_t num_outputs) {
  TFJIT_ASSIGN_OR_RETURN(int64_t seed, tf::GetIntAttrOr(ctx.node(), "seed", 0));
  TFJIT_ASSIGN_OR_RETURN(int64_t seed2, tf::GetIntAttrOr(ctx.node(), "seed2", 0));
  KernelStateStore& store =
      ctx.state_store() != nullptr ? *ctx.state_store() : ProcessStateStore();
  StatefulGenerator* gen = store.GetOrCreate<StatefulGenerator>(&ctx.node(), [&] {
    auto g = std::make_unique<StatefulGenerator>();
    if (seed == 0 && seed2 == 0) {
      // TF seeds unseeded ops from a nondeterministic source (random::New64()).
      std::random_device rd;
      seed = static_cast<int64_t>((static_cast<uint64_t>(rd()) << 32) | rd());
      seed2 = static_cast<int64_t>((static_cast<uint64_t>(rd()) << 32) | rd());
    }
    g->state = random::SeedPairToState(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
    return g;
  });
  absl::MutexLock lock(&gen->mu);
  const PhiloxState local = gen->state;
  gen->state.Skip(static_cast<uint64_t>(num_outputs) *
                  static_cast<uint64_t>(random::kReservedSamplesPerOutput));
  return local;
}

absl::Status StatefulFloat(KernelContext& ctx, Dist dist) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadShape(ctx, 0, &dims));
  Tensor out(dtype, dims);
  if (!IsFloatingDType(dtype)) {
    return UnsupportedDType(ctx, dtype, "float16, bfloat16, float32, float64");
  }
  TFJIT_ASSIGN_OR_RETURN(PhiloxState s, ReserveSamples(ctx, out.num_elements()));
  TFJIT_RETURN_IF_ERROR(FillFloat(ctx, dist, dtype, s, out));
  ctx.set_output(0, out);
  return absl::OkStatus();
}

absl::Status RandomUniform(KernelContext& c) { return StatefulFloat(c, Dist::kUniform); }
absl::Status RandomStandardNormal(KernelContext& c) { return StatefulFloat(c, Dist::kNormal); }
absl::Status TruncatedNormal(KernelContext& c) {
  return StatefulFloat(c, Dist::kTruncatedNormal);
}

absl::Status RandomUniformInt(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "Tout"));
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadShape(ctx, 0, &dims));
  Tensor out(dtype, dims);
  if (dtype != DType::kInt32 && dtype != DType::kInt64) {
    return UnsupportedDType(ctx, dtype, "int32, int64");
  }
  // TF validates minval/maxval before reserving samples; FillInt re-reads them (cheap).
  auto check = [&](auto tag) {
    using T = decltype(tag);
    T lo, hi;
    return ReadIntRange<T>(ctx, 1, out.num_elements(), &lo, &hi);
  };
  TFJIT_RETURN_IF_ERROR(dtype == DType::kInt32 ? check(int32_t{}) : check(int64_t{}));
  TFJIT_ASSIGN_OR_RETURN(PhiloxState s, ReserveSamples(ctx, out.num_elements()));
  TFJIT_RETURN_IF_ERROR(FillInt(ctx, dtype, 1, s, out));
  ctx.set_output(0, out);
  return absl::OkStatus();
}

}  // namespace

void RegisterRandomKernels(KernelRegistry& registry) {
  registry.Register("StatelessRandomUniform", StatelessRandomUniform);
  registry.Register("StatelessRandomNormal", StatelessRandomNormal);
  registry.Register("StatelessTruncatedNormal", StatelessTruncatedNormal);
  registry.Register("StatelessRandomUniformInt", StatelessRandomUniformInt);
  registry.Register("StatelessRandomUniformV2", StatelessRandomUniformV2);
  registry.Register("StatelessRandomNormalV2", StatelessRandomNormalV2);
  registry.Register("StatelessTruncatedNormalV2", StatelessTruncatedNormalV2);
  registry.Register("StatelessRandomUniformIntV2", StatelessRandomUniformIntV2);
  registry.Register("StatelessRandomGetKeyCounter", StatelessRandomGetKeyCounter);
  registry.Register("StatelessRandomGetKeyCounterAlg", StatelessRandomGetKeyCounterAlg);
  registry.Register("StatelessRandomGetAlg", StatelessRandomGetAlg);
  registry.Register("RandomUniform", RandomUniform);
  registry.Register("RandomStandardNormal", RandomStandardNormal);
  registry.Register("TruncatedNormal", TruncatedNormal);
  registry.Register("RandomUniformInt", RandomUniformInt);
}

}  // namespace tfjit::runtime
