// TF's random ops on the Philox-4x32-10 stream (core/philox.h), bit-exact with TF's CPU
// kernels: stateless v1 (seed pair) and V2 (key/counter/alg) ops, StatelessRandomGetKeyCounter
// and the stateful RandomUniform/RandomStandardNormal/TruncatedNormal/RandomUniformInt, whose
// per-session generators also seed compiled clusters (random_kernels.h, known issue E).
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <type_traits>

#include "core/dtype.h"
#include "core/philox.h"
#include "core/random_fill.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/random_kernels.h"

namespace tfjit::runtime {
namespace {

using random::PhiloxCounter;
using random::PhiloxState;

using random::RandomDistribution;

// TF's UniformDistribution<int>: lo + (bits % range) with range = hi - lo as unsigned.
template <typename T>
void FillUniformInt(const PhiloxState& s, T* out, int64_t begin, int64_t end, T lo, T hi) {
  using U = std::make_unsigned_t<T>;
  const U range = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
  constexpr int64_t kPerBlock = sizeof(T) == 8 ? 2 : 4;
  int64_t cached = -1;
  PhiloxCounter w{};
  for (int64_t i = begin; i < end; ++i) {
    if (i / kPerBlock != cached) {
      cached = i / kPerBlock;
      w = s.Block(static_cast<uint64_t>(cached));
    }
    U bits;
    if constexpr (sizeof(T) == 8) {
      const size_t j = static_cast<size_t>(i % 2) * 2;
      bits = w[j] | (static_cast<uint64_t>(w[j + 1]) << 32);
    } else {
      bits = w[static_cast<size_t>(i % 4)];
    }
    out[i] = static_cast<T>(static_cast<U>(static_cast<U>(lo) + bits % range));
  }
}

absl::Status FillFloat(KernelContext& ctx, RandomDistribution dist, DType dtype,
                       const PhiloxState& s, Tensor& out) {
  if (!random::IsRandomFillDType(dtype)) {
    return UnsupportedDType(ctx, dtype, "float16, bfloat16, float32, float64");
  }
  void* data = out.raw_data();
  ParallelFor(ctx, out.num_elements(), random::RandomFillCostPerElement(dist),
              [&](int64_t b, int64_t e) { random::FillRandom(dist, dtype, s, data, b, e); });
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
    return KernelError(ctx,
                       "key must have shape [1], not %s. (Note that batched keys are "
                       "not supported yet.)",
                       key.ShapeString());
  }
  if (counter.dtype() != DType::kUInt64 || counter.rank() != 1 || counter.dim(0) < 2) {
    return KernelError(ctx,
                       "counter must be a vector with length at least 2; got shape: %s. "
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
  if (mn.rank() != 0)
    return KernelError(ctx, "minval must be 0-D, got shape %s", DimsString(mn.dims()));
  if (mx.rank() != 0)
    return KernelError(ctx, "maxval must be 0-D, got shape %s", DimsString(mx.dims()));
  if (mn.dtype() != DTypeOf<T>::value || mx.dtype() != DTypeOf<T>::value) {
    return KernelError(ctx, "minval and maxval must be %s, got %s and %s",
                       DTypeName(DTypeOf<T>::value), DTypeName(mn.dtype()), DTypeName(mx.dtype()));
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

absl::Status StatelessFloat(KernelContext& ctx, RandomDistribution dist, bool v2) {
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
  return StatelessFloat(c, RandomDistribution::kUniform, false);
}
absl::Status StatelessRandomNormal(KernelContext& c) {
  return StatelessFloat(c, RandomDistribution::kNormal, false);
}
absl::Status StatelessTruncatedNormal(KernelContext& c) {
  return StatelessFloat(c, RandomDistribution::kTruncatedNormal, false);
}
absl::Status StatelessRandomUniformV2(KernelContext& c) {
  return StatelessFloat(c, RandomDistribution::kUniform, true);
}
absl::Status StatelessRandomNormalV2(KernelContext& c) {
  return StatelessFloat(c, RandomDistribution::kNormal, true);
}
absl::Status StatelessTruncatedNormalV2(KernelContext& c) {
  return StatelessFloat(c, RandomDistribution::kTruncatedNormal, true);
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

}  // namespace

// The node's generator (TF's GuardedPhiloxRandom): keyed by (seed, seed2), advancing by
// 256 blocks per output on every run (ReserveRandomOutputs(n, 256)).
struct StatefulGenerator : KernelState {
  std::mutex mu;
  PhiloxState state;
  uint64_t compiled_runs = 0;  // compiled runs that ignored the seeds (known issue E)
};

namespace {

// Used when the runner gives the kernel no per-session store. Node addresses are stable for
// the life of a Session's graph; a node allocated at the address of a destroyed Session's
// node would continue that node's stream (the executor should pass a per-session store).
KernelStateStore& ProcessStateStore() {
  static KernelStateStore* store = new KernelStateStore();
  return *store;
}

absl::StatusOr<StatefulGenerator*> Generator(KernelStateStore* store, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(int64_t seed, tf::GetIntAttrOr(node, "seed", 0));
  TFJIT_ASSIGN_OR_RETURN(int64_t seed2, tf::GetIntAttrOr(node, "seed2", 0));
  KernelStateStore& s = store != nullptr ? *store : ProcessStateStore();
  return s.GetOrCreate<StatefulGenerator>(&node, [&] {
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
}

absl::StatusOr<PhiloxState> ReserveSamples(KernelContext& ctx, int64_t num_outputs) {
  TFJIT_ASSIGN_OR_RETURN(StatefulGenerator * gen, Generator(ctx.state_store(), ctx.node()));
  std::lock_guard<std::mutex> lock(gen->mu);
  const PhiloxState local = gen->state;
  gen->state.Skip(static_cast<uint64_t>(num_outputs) *
                  static_cast<uint64_t>(random::kReservedSamplesPerOutput));
  return local;
}

absl::Status StatefulFloat(KernelContext& ctx, RandomDistribution dist) {
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

absl::Status RandomUniform(KernelContext& c) {
  return StatefulFloat(c, RandomDistribution::kUniform);
}
absl::Status RandomStandardNormal(KernelContext& c) {
  return StatefulFloat(c, RandomDistribution::kNormal);
}
absl::Status TruncatedNormal(KernelContext& c) {
  return StatefulFloat(c, RandomDistribution::kTruncatedNormal);
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

// ---- Compiled stateful ops (known issue E) ----

namespace {

// FNV-1a: a stable 64-bit name hash (absl::Hash is seeded per process).
uint64_t Fnv1a(absl::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

Tensor StateTensor(const PhiloxState& s) {
  Tensor t(DType::kUInt64, {3});
  random::StateToU64x3(s, t.data<uint64_t>());
  return t;
}

}  // namespace

CompiledRandomState::CompiledRandomState(CompiledRandomState&&) noexcept = default;
CompiledRandomState& CompiledRandomState::operator=(CompiledRandomState&&) noexcept = default;
CompiledRandomState::~CompiledRandomState() = default;

void CompiledRandomState::Commit(const Tensor& next) {
  if (lock_ != nullptr && generator_ != nullptr && next.dtype() == DType::kUInt64 &&
      next.num_elements() == 3) {
    generator_->state = random::StateFromU64x3(next.data<uint64_t>());
  }
  lock_.reset();
}

absl::StatusOr<CompiledRandomState> AcquireCompiledRandomState(KernelStateStore* store,
                                                               const tf::Node& node,
                                                               bool honour_seeds) {
  CompiledRandomState result;
  TFJIT_ASSIGN_OR_RETURN(result.generator_, Generator(store, node));
  StatefulGenerator* gen = result.generator_;
  if (honour_seeds) {
    result.lock_ = std::make_unique<std::lock_guard<std::mutex>>(gen->mu);
    result.state_ = StateTensor(gen->state);
    return result;
  }
  uint64_t run;
  {
    std::lock_guard<std::mutex> lock(gen->mu);
    run = gen->compiled_runs++;
  }
  result.state_ = StateTensor(random::StatelessSeedToState(run, Fnv1a(node.name())));
  return result;
}

absl::Status ReadRandomShape(const KernelContext& ctx, int i, std::vector<int64_t>* dims) {
  return ReadShape(ctx, i, dims);
}
absl::Status ReadStatelessSeed(const KernelContext& ctx, int i, PhiloxState* state) {
  return ReadSeedState(ctx, i, state);
}
absl::Status ReadStatelessKeyCounterAlg(const KernelContext& ctx, int key_i, PhiloxState* state) {
  return ReadKeyCounterAlg(ctx, key_i, state);
}
absl::StatusOr<PhiloxState> ReserveRandomBlocks(KernelContext& ctx, uint64_t blocks) {
  TFJIT_ASSIGN_OR_RETURN(StatefulGenerator * gen, Generator(ctx.state_store(), ctx.node()));
  std::lock_guard<std::mutex> lock(gen->mu);
  const PhiloxState local = gen->state;
  gen->state.Skip(blocks);
  return local;
}

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
