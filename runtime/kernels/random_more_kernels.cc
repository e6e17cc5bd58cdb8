// Fallback kernels of the random_more ops (docs/DESIGN.md, "Op families"), with TF's CPU
// semantics, dtypes and error messages, bit-exact with TF's CPU kernels on the Philox stream of
// core/philox.h: StatelessRandomUniformFullInt(V2), (Stateless)Multinomial, RandomShuffle,
// RandomGamma, RandomPoissonV2, StatelessParameterizedTruncatedNormal and XlaRngBitGenerator.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/philox.h"
#include "core/random_fill.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/random_kernels.h"

// TF's CPU kernels are built without FMA (its wheels target AVX): a * b + c must round twice
// here too, or samples (gamma's 1 + c * x, Poisson's rejection bounds) differ in the last bit.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace tfjit::runtime {
namespace {

using random::PhiloxCounter;
using random::PhiloxState;

// TF's GuardedPhiloxRandom::ReserveRandomOutputs(n, 256): 256 blocks per output.
constexpr uint64_t kBlocksPerOutput = random::kReservedSamplesPerOutput;

// A PhiloxRandom generator: each call returns the next 4-word block.
class BlockStream {
 public:
  BlockStream(const PhiloxState& s, uint64_t first_block) : s_(s), next_(first_block) {}
  PhiloxCounter Next() { return s_.Block(next_++); }

 private:
  const PhiloxState& s_;
  uint64_t next_;
};

// TF's SingleSampleAdapter<PhiloxRandom>: the stream's words one at a time.
class WordStream {
 public:
  WordStream(const PhiloxState& s, uint64_t first_block) : blocks_(s, first_block) {}
  uint32_t Next() {
    if (used_ == 4) {
      words_ = blocks_.Next();
      used_ = 0;
    }
    return words_[static_cast<size_t>(used_++)];
  }

 private:
  BlockStream blocks_;
  PhiloxCounter words_{};
  int used_ = 4;
};

// ---- StatelessRandomUniformFullInt(V2) ----

// TF's UniformFullIntDistribution: 32-bit types take word i % 4 of block i / 4, 64-bit types
// words (2j, 2j + 1), j = i % 2, of block i / 2 (low word first).
template <typename T>
void FillFullInt(const PhiloxState& s, T* out, int64_t begin, int64_t end) {
  constexpr int64_t kPerBlock = sizeof(T) == 8 ? 2 : 4;
  int64_t cached = -1;
  PhiloxCounter w{};
  for (int64_t i = begin; i < end; ++i) {
    if (i / kPerBlock != cached) {
      cached = i / kPerBlock;
      w = s.Block(static_cast<uint64_t>(cached));
    }
    if constexpr (sizeof(T) == 8) {
      const size_t j = static_cast<size_t>(i % 2) * 2;
      out[i] = static_cast<T>(w[j] | (static_cast<uint64_t>(w[j + 1]) << 32));
    } else {
      out[i] = static_cast<T>(w[static_cast<size_t>(i % 4)]);
    }
  }
}

absl::Status StatelessFullInt(KernelContext& ctx, bool v2) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, v2 ? 4 : 2));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadRandomShape(ctx, 0, &dims));
  PhiloxState s;
  TFJIT_RETURN_IF_ERROR(v2 ? ReadStatelessKeyCounterAlg(ctx, 1, &s)
                           : ReadStatelessSeed(ctx, 1, &s));
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, dtype, dims));
  Tensor out(dtype, dims);
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    T* data = out.data<T>();
    ParallelFor(ctx, out.num_elements(), 20,
                [&](int64_t b, int64_t e) { FillFullInt<T>(s, data, b, e); });
  };
  switch (dtype) {
    case DType::kInt32:
      fill(int32_t{});
      break;
    case DType::kInt64:
      fill(int64_t{});
      break;
    case DType::kUInt32:
      fill(uint32_t{});
      break;
    case DType::kUInt64:
      fill(uint64_t{});
      break;
    default:
      return UnsupportedDType(ctx, dtype, "int32, int64, uint32, uint64");
  }
  ctx.set_output(0, out);
  return absl::OkStatus();
}

absl::Status StatelessRandomUniformFullInt(KernelContext& c) { return StatelessFullInt(c, false); }
absl::Status StatelessRandomUniformFullIntV2(KernelContext& c) { return StatelessFullInt(c, true); }

// ---- XlaRngBitGenerator ----

// XLA's RngBitGenerator (TF runs it only through XLA): algorithm 0 (default: Philox on CPU) or
// 2 (Philox) on state u64[3] = [key, counter_lo, counter_hi]. The bits are laid out as
// UniformFullInt's; the new state is the counter advanced by the blocks used.
absl::Status XlaRngBitGenerator(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor& alg = ctx.input(0);
  if (alg.rank() != 0 || alg.dtype() != DType::kInt32) {
    return KernelError(ctx, "algorithm must be an int32 scalar, got %s %s", DTypeName(alg.dtype()),
                       DimsString(alg.dims()));
  }
  const int32_t id = *alg.data<int32_t>();
  if (id == 1) {
    return AttachNode(Unimplemented("node '%s' (%s): RNG algorithm 1 (ThreeFry) is not "
                                    "implemented by tfjit; use 2 (Philox)",
                                    ctx.node().name(), ctx.node().op()),
                      ctx.node().name(), ctx.node().op());
  }
  if (id != 0 && id != 2) return KernelError(ctx, "Unsupported algorithm id: %d", id);
  const Tensor& state = ctx.input(1);
  if (state.dtype() != DType::kUInt64 || state.rank() != 1 || state.dim(0) != 3) {
    return KernelError(ctx, "initial_state must be u64[3] for the Philox algorithm, got %s %s",
                       DTypeName(state.dtype()), DimsString(state.dims()));
  }
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadRandomShape(ctx, 2, &dims));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  const uint64_t* w = state.data<uint64_t>();
  const PhiloxState s = random::StateFromKeyCounter(w[0], w[1], w[2]);
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, dtype, dims));
  Tensor out(dtype, dims);
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    T* data = out.data<T>();
    ParallelFor(ctx, out.num_elements(), 20,
                [&](int64_t b, int64_t e) { FillFullInt<T>(s, data, b, e); });
  };
  int64_t per_block = 4;
  switch (dtype) {
    case DType::kInt32:
      fill(int32_t{});
      break;
    case DType::kUInt32:
      fill(uint32_t{});
      break;
    case DType::kInt64:
      fill(int64_t{});
      per_block = 2;
      break;
    case DType::kUInt64:
      fill(uint64_t{});
      per_block = 2;
      break;
    default:
      return UnsupportedDType(ctx, dtype, "int32, int64, uint32, uint64");
  }
  const uint64_t blocks = static_cast<uint64_t>((out.num_elements() + per_block - 1) / per_block);
  Tensor next(DType::kUInt64, {3});
  uint64_t* nw = next.data<uint64_t>();
  nw[0] = w[0];
  nw[1] = w[1] + blocks;
  nw[2] = w[2] + (nw[1] < w[1] ? 1 : 0);
  ctx.set_output(0, next);
  ctx.set_output(1, out);
  return absl::OkStatus();
}

// ---- Multinomial, StatelessMultinomial ----

// Rows [b0, b1) of TF's MultinomialFunctor<CPUDevice>: per row, the unnormalised CDF of
// exp(logit - max finite logit) over the finite logits (in double, a sequential running sum),
// then per sample the upper bound of RandDouble() * total. TF's CPU kernel draws the doubles of
// one shard of rows as one continuous SimplePhilox stream; tfjit uses the stream of a single
// shard (what TF does for small inputs or one worker thread): sample m of the whole output
// (m = row * num_samples + j) takes words 2m, 2m + 1. exp is libm's (std::exp), as in the
// lowering (random_lowerings.cc); TF evaluates it with Eigen's vectorised exp, which can differ
// in the last bit, moving a sample only when it falls within that bit of a CDF boundary.
template <typename T, typename Out>
void MultinomialRows(const T* logits, int64_t num_classes, int64_t num_samples,
                     const PhiloxState& s, int64_t b0, int64_t b1, Out* out) {
  std::vector<double> cdf(static_cast<size_t>(num_classes));
  for (int64_t b = b0; b < b1; ++b) {
    const T* row = logits + b * num_classes;
    T max = std::numeric_limits<T>::lowest();
    for (int64_t j = 0; j < num_classes; ++j) {
      if (Eigen::numext::isfinite(row[j])) max = std::max(max, row[j]);
    }
    const double max_logit = static_cast<double>(max);
    double total = 0;
    for (int64_t j = 0; j < num_classes; ++j) {
      if (Eigen::numext::isfinite(row[j])) {
        total += std::exp(static_cast<double>(row[j]) - max_logit);
      }
      cdf[static_cast<size_t>(j)] = total;
    }
    const uint64_t first = static_cast<uint64_t>(b) * static_cast<uint64_t>(num_samples);
    WordStream words(s, first / 2);
    if (first % 2 == 1) {
      words.Next();
      words.Next();
    }
    for (int64_t j = 0; j < num_samples; ++j) {
      const uint32_t x0 = words.Next();
      const uint32_t x1 = words.Next();
      const double to_find = random::Uint64ToDouble(x0, x1) * total;
      out[b * num_samples + j] =
          static_cast<Out>(std::upper_bound(cdf.begin(), cdf.end(), to_find) - cdf.begin());
    }
  }
}

// Inputs logits, num_samples (and seed when stateless at input 2).
absl::Status MultinomialImpl(KernelContext& ctx, bool stateless) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, stateless ? 3 : 2));
  PhiloxState s;
  if (stateless) {
    const Tensor& seed = ctx.input(2);
    if (seed.rank() != 1 || seed.dim(0) != 2) {
      return KernelError(ctx, "seed must have shape [2], not %s", DimsString(seed.dims()));
    }
    TFJIT_RETURN_IF_ERROR(ReadStatelessSeed(ctx, 2, &s));
  }
  const Tensor& logits = ctx.input(0);
  const Tensor& num_samples_t = ctx.input(1);
  if (logits.rank() != 2) {
    return KernelError(ctx, "logits should be a matrix, got shape %s", DimsString(logits.dims()));
  }
  if (num_samples_t.rank() != 0) {
    return KernelError(ctx, "num_samples should be a scalar, got shape %s",
                       DimsString(num_samples_t.dims()));
  }
  if (num_samples_t.dtype() != DType::kInt32) {
    return KernelError(ctx, "num_samples must be int32, got %s", DTypeName(num_samples_t.dtype()));
  }
  const int64_t num_samples = *num_samples_t.data<int32_t>();
  if (num_samples < 0) {
    return KernelError(ctx, "num_samples should be non-negative, got %d", num_samples);
  }
  const int64_t batch = logits.dim(0);
  const int64_t num_classes = logits.dim(1);
  if (batch > std::numeric_limits<int32_t>::max()) {
    return KernelError(ctx, "batch_size cannot exceed max int");
  }
  if (num_classes > std::numeric_limits<int32_t>::max()) {
    return KernelError(ctx, "num_classes cannot exceed max int");
  }
  if (num_classes <= 0) {
    return KernelError(ctx, "num_classes should be positive, got %d", num_classes);
  }
  TFJIT_ASSIGN_OR_RETURN(DType out_type, tf::GetTypeAttr(ctx.node(), "output_dtype"));
  if (out_type != DType::kInt32 && out_type != DType::kInt64) {
    return UnsupportedDType(ctx, out_type, "int32, int64");
  }
  if (!random::IsRandomFillDType(logits.dtype())) {
    return UnsupportedDType(ctx, logits.dtype(), "float16, bfloat16, float32, float64");
  }
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, out_type, {batch, num_samples}));
  Tensor out(out_type, {batch, num_samples});
  if (out.num_elements() > 0) {
    if (!stateless) {
      // ReserveRandomOutputs(batch * ceil4(num_samples) * 2, 256): doubles take two words.
      const uint64_t outputs =
          static_cast<uint64_t>(batch) * static_cast<uint64_t>((num_samples + 3) / 4 * 4) * 2;
      TFJIT_ASSIGN_OR_RETURN(s, ReserveRandomBlocks(ctx, outputs * kBlocksPerOutput));
    }
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* lp = logits.data<T>();
      const int64_t cost = 50 * (num_samples * 6 + num_classes);
      auto rows = [&](auto out_tag) {
        using Out = decltype(out_tag);
        Out* op = out.data<Out>();
        ParallelFor(ctx, batch, cost, [&](int64_t b0, int64_t b1) {
          MultinomialRows<T, Out>(lp, num_classes, num_samples, s, b0, b1, op);
        });
      };
      if (out_type == DType::kInt32) {
        rows(int32_t{});
      } else {
        rows(int64_t{});
      }
    };
    DispatchFloat(logits.dtype(), run);
  }
  ctx.set_output(0, out);
  return absl::OkStatus();
}

absl::Status Multinomial(KernelContext& c) { return MultinomialImpl(c, false); }
absl::Status StatelessMultinomial(KernelContext& c) { return MultinomialImpl(c, true); }

// ---- RandomShuffle ----

// TF's RandomShuffle: exactly size - 1 words, position i swapped with i + word % (size - i).
absl::Status RandomShuffle(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Tensor& in = ctx.input(0);
  if (DTypeSize(in.dtype()) == 0) {
    return UnsupportedDType(ctx, in.dtype(), "numeric and bool types");
  }
  if (in.num_elements() <= 1 || in.rank() == 0 || in.dim(0) <= 1) {
    ctx.set_output(0, in);
    return absl::OkStatus();
  }
  const int64_t size = in.dim(0);
  const uint64_t samples = static_cast<uint64_t>(size - 1);
  TFJIT_ASSIGN_OR_RETURN(PhiloxState s, ReserveRandomBlocks(ctx, (samples + 3) / 4));
  WordStream words(s, 0);
  std::vector<int64_t> perm(static_cast<size_t>(size));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  for (int64_t i = 0; i + 1 < size; ++i) {
    const uint32_t n = static_cast<uint32_t>(size - i);
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(i + words.Next() % n)]);
  }
  Tensor out = Tensor::Uninitialized(in.dtype(), in.dims());
  const size_t row = in.byte_size() / static_cast<size_t>(size);
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  if (row > 0) {
    for (int64_t i = 0; i < size; ++i) {
      std::memcpy(dst + static_cast<size_t>(i) * row,
                  src + static_cast<size_t>(perm[static_cast<size_t>(i)]) * row, row);
    }
  }
  ctx.set_output(0, out);
  return absl::OkStatus();
}

// ---- RandomGamma, RandomPoissonV2 ----

// TF's NormalDistribution<PhiloxRandom, double> and UniformDistribution<PhiloxRandom, double>:
// two values per block, handed out last first (TF's `remaining` counters).
class DoubleDraws {
 public:
  DoubleDraws(const PhiloxState& s, uint64_t first_block) : blocks_(s, first_block) {}
  double Normal() {
    if (norm_left_ == 0) {
      const PhiloxCounter w = blocks_.Next();
      random::BoxMullerDouble(w[0], w[1], w[2], w[3], &norm_[0], &norm_[1]);
      norm_left_ = 2;
    }
    return norm_[--norm_left_];
  }
  double Uniform() {
    if (uni_left_ == 0) {
      const PhiloxCounter w = blocks_.Next();
      uni_[0] = random::Uint64ToDouble(w[0], w[1]);
      uni_[1] = random::Uint64ToDouble(w[2], w[3]);
      uni_left_ = 2;
    }
    return uni_[--uni_left_];
  }

 private:
  BlockStream blocks_;
  double norm_[2] = {0, 0};
  double uni_[2] = {0, 0};
  int norm_left_ = 0;
  int uni_left_ = 0;
};

// Output shape = shape input ++ parameter shape; num_params > 0 checked by the caller.
absl::Status SampleShape(KernelContext& ctx, const Tensor& params, std::vector<int64_t>* dims,
                         int64_t* per_param) {
  const Tensor& shape = ctx.input(0);
  if (shape.rank() != 1 || (shape.dtype() != DType::kInt32 && shape.dtype() != DType::kInt64)) {
    return KernelError(ctx, "shape must be a vector of {int32,int64}, got shape: %s",
                       DimsString(shape.dims()));
  }
  TFJIT_RETURN_IF_ERROR(ReadRandomShape(ctx, 0, dims));
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, params.dtype(), *dims));
  *per_param = 1;
  for (int64_t d : *dims) *per_param *= d;
  for (int64_t d : params.dims()) dims->push_back(d);
  return absl::OkStatus();
}

// One gamma(alpha) sample from its 256-block region (TF's RandomGammaOp, in double).
double GammaSample(double alpha, DoubleDraws& draws) {
  if (alpha == 1.0) return -std::log1p(-draws.Uniform());
  const bool below_one = alpha < 1;
  const double d = alpha + (below_one ? 2.0 / 3 : -1.0 / 3);
  const double c = 1.0 / 3 / std::sqrt(d);
  while (true) {
    const double x = draws.Normal();
    double v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = draws.Uniform();
    if ((u < 1 - 0.0331 * (x * x) * (x * x)) ||
        (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v)))) {
      double res = d * v;
      if (below_one) res *= std::pow(draws.Uniform(), 1 / alpha);
      return res;
    }
  }
}

absl::Status RandomGamma(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& alpha = ctx.input(1);
  std::vector<int64_t> dims;
  int64_t per_alpha;
  TFJIT_RETURN_IF_ERROR(SampleShape(ctx, alpha, &dims, &per_alpha));
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, alpha.dtype(), dims));
  Tensor out(alpha.dtype(), dims);
  const int64_t n = out.num_elements();
  if (n == 0) {
    if (alpha.dtype() != DType::kFloat16 && alpha.dtype() != DType::kFloat32 &&
        alpha.dtype() != DType::kFloat64) {
      return UnsupportedDType(ctx, alpha.dtype(), "float16, float32, float64");
    }
    ctx.set_output(0, out);
    return absl::OkStatus();
  }
  const int64_t num_alphas = alpha.num_elements();
  auto run = [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    TFJIT_ASSIGN_OR_RETURN(PhiloxState s,
                           ReserveRandomBlocks(ctx, static_cast<uint64_t>(n) * kBlocksPerOutput));
    const T* a = alpha.data<T>();
    T* o = out.data<T>();
    ParallelFor(ctx, n, 200, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t ai = i / per_alpha;
        DoubleDraws draws(s, static_cast<uint64_t>(i) * kBlocksPerOutput);
        o[ai + (i % per_alpha) * num_alphas] =
            static_cast<T>(GammaSample(static_cast<double>(a[ai]), draws));
      }
    });
    return absl::OkStatus();
  };
  switch (alpha.dtype()) {
    case DType::kFloat16:
      TFJIT_RETURN_IF_ERROR(run(half{}));
      break;
    case DType::kFloat32:
      TFJIT_RETURN_IF_ERROR(run(float{}));
      break;
    case DType::kFloat64:
      TFJIT_RETURN_IF_ERROR(run(double{}));
      break;
    default:
      return UnsupportedDType(ctx, alpha.dtype(), "float16, float32, float64");
  }
  ctx.set_output(0, out);
  return absl::OkStatus();
}

template <typename U>
double HighestAsDouble() {
  if constexpr (std::is_same_v<U, half>) {
    return 65504.0;
  } else {
    return static_cast<double>(std::numeric_limits<U>::max());
  }
}

// One Poisson(rate) sample of type U (TF's PoissonFunctor<CPUDevice>, computing in double):
// Knuth's product of uniforms below 10, Hormann's transformed rejection from 10 up.
template <typename U>
U PoissonSample(double rate, DoubleDraws& draws) {
  const double highest = HighestAsDouble<U>();
  if (rate < 10) {
    const double exp_neg_rate = std::exp(-rate);
    double prod = 1;
    double x = 0;
    while (true) {
      prod = prod * draws.Uniform();
      if (prod <= exp_neg_rate && x <= highest) return static_cast<U>(x);
      x += 1;
    }
  }
  const double log_rate = std::log(rate);
  const double b = 0.931 + 2.53 * std::sqrt(rate);
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  while (true) {
    double u = draws.Uniform();
    u -= 0.5;
    const double v = draws.Uniform();
    const double u_shifted = 0.5 - std::abs(u);
    const double k = std::floor((2 * a / u_shifted + b) * u + rate + 0.43);
    if (k > highest) continue;
    if (u_shifted >= 0.07 && v <= 0.9277 - 3.6224 / (b - 2)) return static_cast<U>(k);
    if (k < 0 || (u_shifted < 0.013 && v > u_shifted)) continue;
    const double s = std::log(v * inv_alpha / (a / (u_shifted * u_shifted) + b));
    const double t = -rate + k * log_rate - std::lgamma(k + 1);
    if (s <= t) return static_cast<U>(k);
  }
}

template <typename R>
double ValueAsDouble(R r) {
  return static_cast<double>(r);
}

bool IsPoissonType(DType t) {
  return t == DType::kFloat16 || t == DType::kFloat32 || t == DType::kFloat64 ||
         t == DType::kInt32 || t == DType::kInt64;
}

template <typename F>
void DispatchPoisson(DType t, F&& f) {
  switch (t) {
    case DType::kFloat16:
      f(half{});
      break;
    case DType::kFloat32:
      f(float{});
      break;
    case DType::kFloat64:
      f(double{});
      break;
    case DType::kInt32:
      f(int32_t{});
      break;
    default:
      f(int64_t{});
      break;
  }
}

absl::Status RandomPoissonV2(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& rate = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(DType out_type, tf::GetTypeAttr(ctx.node(), "dtype"));
  if (!IsPoissonType(rate.dtype())) {
    return UnsupportedDType(ctx, rate.dtype(), "float16, float32, float64, int32, int64");
  }
  if (!IsPoissonType(out_type)) {
    return UnsupportedDType(ctx, out_type, "float16, float32, float64, int32, int64");
  }
  std::vector<int64_t> dims;
  int64_t per_rate;
  TFJIT_RETURN_IF_ERROR(SampleShape(ctx, rate, &dims, &per_rate));
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, out_type, dims));
  Tensor out(out_type, dims);
  const int64_t n = out.num_elements();
  if (per_rate == 0 || n == 0) {
    ctx.set_output(0, out);
    return absl::OkStatus();
  }
  const int64_t num_rates = rate.num_elements();
  TFJIT_ASSIGN_OR_RETURN(PhiloxState s,
                         ReserveRandomBlocks(ctx, static_cast<uint64_t>(n) * kBlocksPerOutput));
  DispatchPoisson(rate.dtype(), [&](auto rtag) {
    using R = decltype(rtag);
    DispatchPoisson(out_type, [&](auto utag) {
      using U = decltype(utag);
      const R* r = rate.data<R>();
      U* o = out.data<U>();
      ParallelFor(ctx, n, 200, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t ri = i / per_rate;
          DoubleDraws draws(s, static_cast<uint64_t>(i) * kBlocksPerOutput);
          o[ri + (i % per_rate) * num_rates] = PoissonSample<U>(ValueAsDouble(r[ri]), draws);
        }
      });
    });
  });
  ctx.set_output(0, out);
  return absl::OkStatus();
}

// ---- StatelessParameterizedTruncatedNormal ----

// TF's NormalDistribution<PhiloxRandom, T> and UniformDistribution<PhiloxRandom, T> for one
// block: 4 values for float and half (Box-Muller in float), 2 for double.
template <typename T>
int NormalBlock(const PhiloxCounter& w, T out[4]) {
  if constexpr (std::is_same_v<T, double>) {
    random::BoxMullerDouble(w[0], w[1], w[2], w[3], &out[0], &out[1]);
    return 2;
  } else {
    float f[4];
    random::BoxMullerFloat(w[0], w[1], &f[0], &f[1]);
    random::BoxMullerFloat(w[2], w[3], &f[2], &f[3]);
    for (int i = 0; i < 4; ++i) out[i] = static_cast<T>(f[i]);
    return 4;
  }
}
template <typename T>
int UniformBlock(const PhiloxCounter& w, T out[4]) {
  if constexpr (std::is_same_v<T, double>) {
    out[0] = random::Uint64ToDouble(w[0], w[1]);
    out[1] = random::Uint64ToDouble(w[2], w[3]);
    return 2;
  } else if constexpr (std::is_same_v<T, half>) {
    for (int i = 0; i < 4; ++i) out[i] = static_cast<half>(random::Uint32ToHalfValue(w[i]));
    return 4;
  } else {
    for (int i = 0; i < 4; ++i) out[i] = random::Uint32ToFloat(w[i]);
    return 4;
  }
}

constexpr int kTruncMaxIterations = 1000;

// One batch of TruncatedNormalV2: its parameters (swapped and negated as TF does when sampling
// from the upper end), the bounds normalised to [norm_min, norm_max], and where its samples
// go (sample k at dst[k * num_batches]).
template <typename T>
struct TruncBatch {
  T mean, stddev, norm_min, norm_max;
  T* dst;
  int64_t num_batches;
};

// TruncatedNormalV2's position in the output: the flat output index over all batches and the
// sample within the current batch.
struct TruncCursor {
  int64_t output_idx, sample, per_batch, total;
  bool Full() const { return sample >= per_batch || output_idx >= total; }
};

// A uniform or exponential proposal `z` (normalised): when `accept`, or after
// kTruncMaxIterations rejections in a row (then INTERNAL `failure`, as TF), it is stored
// scaled and the cursor moves on. Returns whether the batch is full.
template <typename T>
absl::StatusOr<bool> TruncTake(const KernelContext& ctx, bool accept, T z, const TruncBatch<T>& p,
                               TruncCursor& c, int& iterations, const char* failure) {
  if (!accept && iterations + 1 < kTruncMaxIterations) {
    ++iterations;
    return false;
  }
  if (!accept) {
    return AttachNode(absl::InternalError(failure), ctx.node().name(), ctx.node().op());
  }
  p.dst[c.sample * p.num_batches] = z * p.stddev + p.mean;
  ++c.sample;
  ++c.output_idx;
  iterations = 0;
  return c.Full();
}

// Normal samples, rejecting those outside [norm_min, norm_max].
template <typename T>
absl::Status TruncSampleRandn(const KernelContext& ctx, BlockStream& gen, const TruncBatch<T>& p,
                              TruncCursor& c) {
  T rand[4];
  int iterations = 0;
  while (!c.Full()) {
    const int size = NormalBlock<T>(gen.Next(), rand);
    for (int i = 0; i < size; ++i) {
      if (rand[i] >= p.norm_min && rand[i] <= p.norm_max) {
        p.dst[c.sample * p.num_batches] = rand[i] * p.stddev + p.mean;
        ++c.sample;
        ++c.output_idx;
        if (c.Full()) break;
        iterations = 0;
      } else if (++iterations > kTruncMaxIterations) {
        return AttachNode(absl::InternalError("TruncatedNormal randn rejection sampler "
                                              "failed to accept a sample."),
                          ctx.node().name(), ctx.node().op());
      }
    }
  }
  return absl::OkStatus();
}

// Uniform proposals on [norm_min, norm_max].
template <typename T>
absl::Status TruncSampleUniform(const KernelContext& ctx, BlockStream& gen, const TruncBatch<T>& p,
                                TruncCursor& c) {
  using Eigen::numext::exp;
  const T diff = p.norm_max - p.norm_min;
  const T plus_factor = (p.norm_min < T(0)) ? T(0) : p.norm_min * p.norm_min;
  T rand[4], u[4], z[4], g[4];
  int iterations = 0;
  while (!c.Full()) {
    const int size = UniformBlock<T>(gen.Next(), rand);
    for (int i = 0; i < size; ++i) {
      z[i] = rand[i] * diff + p.norm_min;
      g[i] = (plus_factor - z[i] * z[i]) / T(2.0);
    }
    UniformBlock<T>(gen.Next(), u);
    for (int i = 0; i < size; ++i) {
      TFJIT_ASSIGN_OR_RETURN(
          const bool full,
          TruncTake(ctx, u[i] <= exp(g[i]), z[i], p, c, iterations,
                    "TruncatedNormal uniform rejection sampler failed to  accept a sample."));
      if (full) break;
    }
  }
  return absl::OkStatus();
}

// Exponential proposals offset by norm_min, accepted below norm_max.
template <typename T>
absl::Status TruncSampleExponential(const KernelContext& ctx, BlockStream& gen,
                                    const TruncBatch<T>& p, TruncCursor& c) {
  using Eigen::numext::exp;
  using Eigen::numext::log;
  using Eigen::numext::sqrt;
  const T norm_min = p.norm_min;
  const T alpha = (norm_min + sqrt((norm_min * norm_min) + T(4))) / T(2);
  T rand[4];
  int iterations = 0;
  while (!c.Full()) {
    const int size = UniformBlock<T>(gen.Next(), rand);
    for (int i = 0; i < size;) {
      const T zz = -log(rand[i]) / alpha + norm_min;
      ++i;
      const T x = norm_min < alpha ? alpha - zz : norm_min - alpha;
      const T gg = exp(-x * x / T(2.0));
      const T uu = rand[i];
      ++i;
      TFJIT_ASSIGN_OR_RETURN(const bool full,
                             TruncTake(ctx, uu <= gg && zz < p.norm_max, zz, p, c, iterations,
                                       "TruncatedNormal exponential distribution rejection "
                                       "sampler failed to accept a sample."));
      if (full) break;
    }
  }
  return absl::OkStatus();
}

// TF's TruncatedNormalFunctorV2<CPUDevice, T> run as one shard (what TF does for small outputs
// or one worker thread): one Philox stream from block 0 for all outputs in order; output i
// (batch i / per_batch, sample i % per_batch) lands at batch + sample * num_batches. Batch b's
// parameters are params[k][index[k][b]]. Returns the first error as TF reports it.
template <typename T>
absl::Status TruncatedNormalV2(const KernelContext& ctx, const PhiloxState& s, int64_t num_batches,
                               int64_t per_batch, const std::array<const T*, 4>& params,
                               const std::array<std::vector<int64_t>, 4>& index, T* out) {
  using Eigen::numext::exp;
  using Eigen::numext::isfinite;
  using Eigen::numext::isinf;
  using Eigen::numext::sqrt;
  const T kRandnBound = T(1.3);
  BlockStream gen(s, 0);
  TruncCursor c{0, 0, per_batch, num_batches * per_batch};
  while (c.output_idx < c.total) {
    const int64_t b = c.output_idx / per_batch;
    T mean = params[0][index[0][static_cast<size_t>(b)]];
    T stddev = params[1][index[1][static_cast<size_t>(b)]];
    T minval = params[2][index[2][static_cast<size_t>(b)]];
    T maxval = params[3][index[3][static_cast<size_t>(b)]];
    if (!(stddev > T(0) && minval < maxval && (isfinite(minval) || isfinite(maxval)))) {
      return KernelError(ctx, "Invalid parameters");
    }
    if ((isinf(minval) && minval < T(0)) || maxval < mean) {
      std::swap(minval, maxval);
      stddev = -stddev;
    }
    const T norm_min = (minval - mean) / stddev;
    const T norm_max = (maxval - mean) / stddev;
    const TruncBatch<T> p{mean, stddev, norm_min, norm_max, out + b, num_batches};
    const T sqrt_factor = sqrt((norm_min * norm_min) + T(4));
    const T cutoff = T(2) * exp(T(0.5) + (norm_min * (norm_min - sqrt_factor)) / T(4)) /
                     (norm_min + sqrt_factor);
    const T diff = norm_max - norm_min;
    c.sample = c.output_idx % per_batch;
    if (((norm_min < -kRandnBound) && (norm_max >= T(0.))) ||
        ((norm_max > kRandnBound) && (norm_min <= T(0.)))) {
      TFJIT_RETURN_IF_ERROR(TruncSampleRandn<T>(ctx, gen, p, c));
    } else if (diff < cutoff) {
      TFJIT_RETURN_IF_ERROR(TruncSampleUniform<T>(ctx, gen, p, c));
    } else {
      TFJIT_RETURN_IF_ERROR(TruncSampleExponential<T>(ctx, gen, p, c));
    }
  }
  return absl::OkStatus();
}

// For each flat index of the broadcast shape `out` (the shapes right-aligned), the flat index
// into a parameter of shape `dims`.
std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& out) {
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  std::vector<int64_t> index(static_cast<size_t>(n));
  const size_t lead = out.size() - dims.size();
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rem = flat, src = 0, stride = 1;
    for (size_t k = out.size(); k-- > 0;) {
      const int64_t coord = rem % out[k];
      rem /= out[k];
      if (k >= lead) {
        const int64_t d = dims[k - lead];
        if (d != 1) src += coord * stride;
        stride *= d;
      }
    }
    index[static_cast<size_t>(flat)] = src;
  }
  return index;
}

// The shape means, stddevs, minvals and maxvals (inputs 2-5) broadcast to (numpy rules).
absl::StatusOr<std::vector<int64_t>> TruncParamShape(const KernelContext& ctx) {
  std::vector<int64_t> bshape;
  for (int k = 2; k < 6; ++k) {
    const std::vector<int64_t>& d = ctx.input(k).dims();
    if (d.size() > bshape.size()) bshape.insert(bshape.begin(), d.size() - bshape.size(), 1);
  }
  bool valid = true;
  for (int k = 2; k < 6; ++k) {
    const std::vector<int64_t>& d = ctx.input(k).dims();
    const size_t lead = bshape.size() - d.size();
    for (size_t i = 0; i < d.size(); ++i) {
      int64_t& o = bshape[lead + i];
      if (o == 1) {
        o = d[i];
      } else if (d[i] != 1 && d[i] != o) {
        valid = false;
      }
    }
  }
  if (!valid) {
    return KernelError(ctx,
                       "means, stddevs, minvals, maxvals must have compatible batch "
                       "dimensions: %s vs. %s vs. %s vs. %s",
                       DimsString(ctx.input(2).dims()), DimsString(ctx.input(3).dims()),
                       DimsString(ctx.input(4).dims()), DimsString(ctx.input(5).dims()));
  }
  return bshape;
}

// Splits the output dims into samples per batch (the leading dims) and batches (the trailing
// dims, which must be the parameters' broadcast shape).
absl::Status TruncBatchCounts(const KernelContext& ctx, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& bshape, int64_t& per_batch,
                              int64_t& num_batches) {
  bool ends_with = dims.size() >= bshape.size();
  for (size_t i = 0; ends_with && i < bshape.size(); ++i) {
    ends_with = dims[dims.size() - bshape.size() + i] == bshape[i];
  }
  if (!ends_with) return KernelError(ctx, "Shape passed in must end with broadcasted shape.");
  per_batch = 1;
  num_batches = 1;
  const size_t sample_dims = dims.size() - bshape.size();
  for (size_t i = 0; i < dims.size(); ++i) (i < sample_dims ? per_batch : num_batches) *= dims[i];
  return absl::OkStatus();
}

absl::Status StatelessParameterizedTruncatedNormal(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 6));
  const Tensor& seed = ctx.input(1);
  if (seed.rank() != 1 || seed.dim(0) != 2) {
    return KernelError(ctx, "seed must have shape [2], not %s", DimsString(seed.dims()));
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> bshape, TruncParamShape(ctx));
  if (ctx.input(0).rank() != 1) {
    return KernelError(ctx, "Input shape should be a vector, got shape: %s",
                       DimsString(ctx.input(0).dims()));
  }
  std::vector<int64_t> dims;
  TFJIT_RETURN_IF_ERROR(ReadRandomShape(ctx, 0, &dims));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, dtype, dims));
  int64_t per_batch = 1, num_batches = 1;
  TFJIT_RETURN_IF_ERROR(TruncBatchCounts(ctx, dims, bshape, per_batch, num_batches));
  for (int k = 2; k < 6; ++k) {
    if (ctx.input(k).dtype() != dtype) {
      return KernelError(ctx, "input %d must be %s, got %s", k, DTypeName(dtype),
                         DTypeName(ctx.input(k).dtype()));
    }
  }
  Tensor out(dtype, dims);
  PhiloxState s;
  TFJIT_RETURN_IF_ERROR(ReadStatelessSeed(ctx, 1, &s));
  std::array<std::vector<int64_t>, 4> index;
  if (out.num_elements() > 0) {
    for (int k = 0; k < 4; ++k) index[k] = BroadcastIndex(ctx.input(k + 2).dims(), bshape);
  }
  auto run = [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const std::array<const T*, 4> params = {ctx.input(2).data<T>(), ctx.input(3).data<T>(),
                                            ctx.input(4).data<T>(), ctx.input(5).data<T>()};
    if (out.num_elements() == 0) return absl::OkStatus();
    return TruncatedNormalV2<T>(ctx, s, num_batches, per_batch, params, index, out.data<T>());
  };
  switch (dtype) {
    case DType::kFloat16:
      TFJIT_RETURN_IF_ERROR(run(half{}));
      break;
    case DType::kFloat32:
      TFJIT_RETURN_IF_ERROR(run(float{}));
      break;
    case DType::kFloat64:
      TFJIT_RETURN_IF_ERROR(run(double{}));
      break;
    default:
      return UnsupportedDType(ctx, dtype, "float16, float32, float64");
  }
  ctx.set_output(0, out);
  return absl::OkStatus();
}

}  // namespace

void RegisterRandomMoreKernels(KernelRegistry& registry) {
  registry.Register("StatelessRandomUniformFullInt", StatelessRandomUniformFullInt);
  registry.Register("StatelessRandomUniformFullIntV2", StatelessRandomUniformFullIntV2);
  registry.Register("Multinomial", Multinomial);
  registry.Register("StatelessMultinomial", StatelessMultinomial);
  registry.Register("RandomShuffle", RandomShuffle);
  registry.Register("RandomGamma", RandomGamma);
  registry.Register("RandomPoissonV2", RandomPoissonV2);
  registry.Register("XlaRngBitGenerator", XlaRngBitGenerator);
  registry.Register("RngBitGenerator", XlaRngBitGenerator);
  registry.Register("StatelessParameterizedTruncatedNormal", StatelessParameterizedTruncatedNormal);
}

}  // namespace tfjit::runtime
