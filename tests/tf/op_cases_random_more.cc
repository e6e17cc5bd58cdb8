// Differential cases of the random_more ops (docs/DESIGN.md, "Op families"): kernel vs evaluator
// vs CPU JIT, each against an independent reference where one is given.
//
// The references below restate TF's CPU algorithms element by element on the Philox blocks of
// core/philox.h (the stream itself is checked against Random123's known-answer vectors by the
// FullIntV2 golden case, and against TF's seed scramble by the GetKeyCounter identity case).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/philox.h"
#include "tests/tf/op_cases.h"

// TF's CPU kernels are built without FMA (its wheels target AVX): a * b + c must round twice
// here too, or samples (gamma's 1 + c * x, Poisson's rejection bounds) differ in the last bit.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace tfjit::optest {
namespace {

using random::PhiloxCounter;
using random::PhiloxState;

Tensor U64s(const std::vector<uint64_t>& v) {
  return Tensor::FromVector<uint64_t>(DType::kUInt64, {static_cast<int64_t>(v.size())}, v);
}

int64_t Count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Word w of the Philox stream (block w / 4, word w % 4).
uint32_t Word(const PhiloxState& s, uint64_t w) { return s.Block(w / 4)[w % 4]; }

// TF's UniformFullIntDistribution: element i is word i (32-bit) or words 2i, 2i+1 (64-bit).
RefFn FullIntRef(DType dtype, Dims dims, PhiloxState s) {
  return [=](const std::vector<Tensor>&) {
    Tensor out(dtype, dims);
    const int64_t n = Count(dims);
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t k = static_cast<uint64_t>(i);
      switch (dtype) {
        case DType::kUInt32:
          out.data<uint32_t>()[i] = Word(s, k);
          break;
        case DType::kInt32:
          out.data<int32_t>()[i] = static_cast<int32_t>(Word(s, k));
          break;
        default: {
          const uint64_t v = Word(s, 2 * k) | (static_cast<uint64_t>(Word(s, 2 * k + 1)) << 32);
          if (dtype == DType::kUInt64) {
            out.data<uint64_t>()[i] = v;
          } else {
            out.data<int64_t>()[i] = static_cast<int64_t>(v);
          }
        }
      }
    }
    return out;
  };
}

void AddFullIntCases(std::vector<OpCase>& cases) {
  // v1: seed pair (const, as XLA requires) scrambled by TF's GenerateKey.
  struct V1 {
    Dims dims;
    DType dtype;
    DType seed_type;
  };
  for (const V1& v :
       {V1{{2, 5}, DType::kUInt64, DType::kInt64}, V1{{7}, DType::kInt32, DType::kInt32},
        V1{{3, 3}, DType::kUInt32, DType::kInt64}, V1{{5}, DType::kInt64, DType::kInt32},
        V1{{}, DType::kUInt32, DType::kInt64}, V1{{0, 4}, DType::kInt64, DType::kInt64}}) {
    OpCase c;
    c.name =
        "StatelessRandomUniformFullInt_" + std::string(DTypeName(v.dtype)) + "_" + DimsName(v.dims);
    c.op = "StatelessRandomUniformFullInt";
    c.has_t = false;
    std::vector<int32_t> shape(v.dims.begin(), v.dims.end());
    c.consts = {Ints(shape), v.seed_type == DType::kInt32 ? Ints({-3, 99}) : Ints64({-3, 99})};
    c.attrs["dtype"] = TypeAttr(v.dtype);
    c.attrs["T"] = TypeAttr(DType::kInt32);
    c.attrs["Tseed"] = TypeAttr(v.seed_type);
    // TF sign-extends the seeds to 64 bits.
    c.reference = FullIntRef(v.dtype, v.dims,
                             random::StatelessSeedToState(static_cast<uint64_t>(int64_t{-3}), 99));
    cases.push_back(std::move(c));
  }
  // V2: key/counter/alg (what tf.random.split and stateless_split use).
  auto v2 = [&](const std::string& name, Dims dims, DType dtype, uint64_t key,
                std::vector<uint64_t> counter, int32_t alg, RefFn ref) {
    OpCase c;
    c.name = "StatelessRandomUniformFullIntV2_" + name;
    c.op = "StatelessRandomUniformFullIntV2";
    c.has_t = false;
    std::vector<int32_t> shape(dims.begin(), dims.end());
    c.consts = {Ints(shape), U64s({key}), U64s(counter), Ints({alg}, true)};
    c.attrs["dtype"] = TypeAttr(dtype);
    c.attrs["Tshape"] = TypeAttr(DType::kInt32);
    c.reference =
        ref ? ref
            : FullIntRef(dtype, dims, random::StateFromKeyCounter(key, counter[0], counter[1]));
    cases.push_back(std::move(c));
  };
  // Golden: Random123's known-answer vectors for Philox-4x32-10 (counter 0, key 0; counter
  // and key all ones; counter and key from the digits of pi).
  auto golden = [](std::vector<uint32_t> words) -> RefFn {
    return [words](const std::vector<Tensor>&) {
      return Tensor::FromVector<uint32_t>(DType::kUInt32, {4}, words);
    };
  };
  v2("golden_zero", {4}, DType::kUInt32, 0, {0, 0}, 1,
     golden({0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  v2("golden_ones", {4}, DType::kUInt32, ~uint64_t{0}, {~uint64_t{0}, ~uint64_t{0}}, 1,
     golden({0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  v2("golden_pi", {4}, DType::kUInt32, 0x299f31d0a4093822ull,
     {0x85a308d3243f6a88ull, 0x0370734413198a2eull}, 1,
     golden({0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
  // TF's own identity (python/ops/stateless_random_ops.py, _get_key_counter): FullIntV2 of
  // shape [4], uint32, key 0x02461e293ec8f720 and counter = seed is the seed scramble of
  // StatelessRandomGetKeyCounter: key = words 0, 1 and counter[1] = words 2, 3.
  v2("seed_scramble", {4}, DType::kUInt32, 0x02461e293ec8f720ull, {7, 17}, 1,
     [](const std::vector<Tensor>&) {
       const PhiloxState s = random::StatelessSeedToState(7, 17);
       return Tensor::FromVector<uint32_t>(DType::kUInt32, {4},
                                           {s.key[0], s.key[1], s.counter[2], s.counter[3]});
     });
  v2("uint64_2x3", {2, 3}, DType::kUInt64, 0x1234567890abcdefull, {5, 0xffffffffffffffffull}, 1,
     nullptr);
  v2("int32_9", {9}, DType::kInt32, 42, {0xfffffffffffffffeull, 3}, 3, nullptr);
  v2("int64_3x1x3", {3, 1, 3}, DType::kInt64, 7, {1, 2}, 1, nullptr);
  v2("uint32_scalar", {}, DType::kUInt32, 9, {8, 7}, 1, nullptr);
  v2("uint64_0", {0}, DType::kUInt64, 9, {8, 7}, 1, nullptr);
}

// ---- XlaRngBitGenerator ----

void AddRngBitGeneratorCases(std::vector<OpCase>& cases) {
  struct R {
    std::string name;
    int32_t alg;
    std::vector<uint64_t> state;
    Dims dims;
    DType dtype;
    RefFn golden;
  };
  const std::vector<R> rs = {
      // Golden: Random123's known-answer vector for Philox-4x32-10 at key 0, counter 0.
      {"golden_zero",
       2,
       {0, 0, 0},
       {4},
       DType::kUInt32,
       [](const std::vector<Tensor>&) {
         return Tensor::FromVector<uint32_t>(DType::kUInt32, {4},
                                             {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
       }},
      {"default_u64_3x3", 0, {0x0123456789abcdefull, 77, 5}, {3, 3}, DType::kUInt64, nullptr},
      {"philox_s32_7", 2, {9, ~uint64_t{0} - 1, 0}, {7}, DType::kInt32, nullptr},
      {"philox_s64_2x1", 2, {1, 2, 3}, {2, 1}, DType::kInt64, nullptr},
      {"philox_u32_empty", 2, {1, 2, 3}, {0, 5}, DType::kUInt32, nullptr},
  };
  for (const R& r : rs) {
    for (int output : {0, 1}) {
      for (const char* op : {"XlaRngBitGenerator", "RngBitGenerator"}) {
        if (std::string(op) == "RngBitGenerator" && r.name != "philox_s32_7") continue;
        OpCase c;
        c.op = op;
        c.name = c.op + "_" + r.name + (output == 0 ? "_state" : "_bits");
        c.has_t = false;
        std::vector<int32_t> shape(r.dims.begin(), r.dims.end());
        c.consts = {Ints({r.alg}, true), U64s(r.state), Ints(shape)};
        c.attrs["dtype"] = TypeAttr(r.dtype);
        c.attrs["Tshape"] = TypeAttr(DType::kInt32);
        c.output = output;
        const PhiloxState s = random::StateFromKeyCounter(r.state[0], r.state[1], r.state[2]);
        if (output == 1) {
          c.reference = r.golden ? r.golden : FullIntRef(r.dtype, r.dims, s);
        } else {
          const int64_t per = r.dtype == DType::kInt64 || r.dtype == DType::kUInt64 ? 2 : 4;
          const uint64_t blocks = static_cast<uint64_t>((Count(r.dims) + per - 1) / per);
          const uint64_t lo = r.state[1] + blocks;
          const std::vector<uint64_t> next = {r.state[0], lo, r.state[2] + (lo < r.state[1])};
          c.reference = [next](const std::vector<Tensor>&) { return U64s(next); };
        }
        cases.push_back(std::move(c));
      }
    }
  }
}

// ---- Multinomial ----

// TF's MultinomialFunctor<CPUDevice> as one shard: sample m of the output takes stream words
// 2m, 2m + 1 as a double in [0, 1), scaled by the row's total and binary-searched in its CDF.
RefFn MultinomialRef(int64_t num_samples, PhiloxState s, DType out_type) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor& logits = in[0];
    const int64_t rows = logits.dim(0), classes = logits.dim(1);
    Tensor out(out_type, {rows, num_samples});
    double lowest = -std::numeric_limits<double>::max();
    if (logits.dtype() == DType::kFloat32) lowest = -std::numeric_limits<float>::max();
    if (logits.dtype() == DType::kFloat16) lowest = -65504.0;
    if (logits.dtype() == DType::kBFloat16) lowest = -3.3895313892515355e38;
    for (int64_t b = 0; b < rows; ++b) {
      double max = lowest;
      for (int64_t j = 0; j < classes; ++j) {
        const double x = At(logits, {b, j});
        if (std::isfinite(x)) max = std::max(max, x);
      }
      std::vector<double> cdf(static_cast<size_t>(classes));
      double total = 0;
      for (int64_t j = 0; j < classes; ++j) {
        const double x = At(logits, {b, j});
        if (std::isfinite(x)) total += std::exp(x - max);
        cdf[static_cast<size_t>(j)] = total;
      }
      for (int64_t j = 0; j < num_samples; ++j) {
        const uint64_t m = static_cast<uint64_t>(b * num_samples + j);
        const double u = random::Uint64ToDouble(Word(s, 2 * m), Word(s, 2 * m + 1));
        const int64_t k = std::upper_bound(cdf.begin(), cdf.end(), u * total) - cdf.begin();
        SetFromDouble(out, b * num_samples + j, static_cast<double>(k));
      }
    }
    return out;
  };
}

void AddMultinomialCases(std::vector<OpCase>& cases) {
  const double inf = std::numeric_limits<double>::infinity();
  struct M {
    std::string name;
    DType t;
    Dims dims;
    std::vector<double> logits;
    int32_t n;
    DType out;
  };
  const std::vector<M> ms = {
      // TF's own test logits (stateless_random_ops_test.py, _multinomial_cases).
      {"tf_1x4", DType::kFloat32, {1, 4}, {0.1, 0.25, 0.5, 0.15}, 10, DType::kInt64},
      {"tf_3x2_half", DType::kFloat16, {3, 2}, {0.5, 0.5, 0.8, 0.2, 0.25, 0.75}, 10, DType::kInt32},
      {"f64_2x5_odd",
       DType::kFloat64,
       {2, 5},
       {1, -2, 3, 0.5, -inf, 0, 0, 0, 0, 7},
       7,
       DType::kInt64},
      {"bf16_2x3", DType::kBFloat16, {2, 3}, {-1, 2, 0.5, 4, 4, -3}, 5, DType::kInt32},
      {"zero_samples", DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6}, 0, DType::kInt64},
      {"zero_rows", DType::kFloat32, {0, 3}, {}, 4, DType::kInt64},
  };
  // Multinomial (stateful) compiles with XLA's unseeded stream unless autofix E honours its
  // seeds, so only the stateless op has differential cases; the stateful kernel shares the
  // sampling with it and the reservation with RandomShuffle/RandomGamma/RandomPoissonV2.
  for (const M& m : ms) {
    OpCase c;
    c.op = "StatelessMultinomial";
    c.name = c.op + "_" + m.name;
    c.dtype = m.t;
    c.inputs = {m.dims};
    c.feed_values = {Floats(m.t, m.dims, m.logits)};
    c.consts = {Ints({m.n}, true), Ints64({12, -34})};
    c.attrs["output_dtype"] = TypeAttr(m.out);
    c.attrs["Tseed"] = TypeAttr(DType::kInt64);
    c.reference = MultinomialRef(
        m.n, random::StatelessSeedToState(12, static_cast<uint64_t>(int64_t{-34})), m.out);
    cases.push_back(std::move(c));
  }
}

// ---- RandomShuffle ----

RefFn ShuffleRef(PhiloxState s) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    if (x.rank() == 0 || x.num_elements() <= 1 || x.dim(0) <= 1) return x.Clone();
    const int64_t size = x.dim(0);
    std::vector<int64_t> perm(static_cast<size_t>(size));
    std::iota(perm.begin(), perm.end(), int64_t{0});
    for (int64_t i = 0; i + 1 < size; ++i) {
      const int64_t j = i + Word(s, static_cast<uint64_t>(i)) % static_cast<uint32_t>(size - i);
      std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
    }
    Tensor out(x.dtype(), x.dims());
    const int64_t row = x.num_elements() / size;
    for (int64_t i = 0; i < size; ++i) {
      for (int64_t k = 0; k < row; ++k) {
        SetFromDouble(out, i * row + k, ElementAsDouble(x, perm[static_cast<size_t>(i)] * row + k));
      }
    }
    return out;
  };
}

void AddShuffleCases(std::vector<OpCase>& cases) {
  struct S {
    Dims dims;
    DType t;
  };
  for (const S& v :
       {S{{9}, DType::kFloat32}, S{{6, 3}, DType::kInt32}, S{{5, 2, 2}, DType::kFloat64},
        S{{2}, DType::kInt64}, S{{1, 4}, DType::kFloat32}, S{{}, DType::kFloat32},
        S{{0, 3}, DType::kFloat32}, S{{11}, DType::kFloat16}}) {
    OpCase c;
    c.name = "RandomShuffle_" + std::string(DTypeName(v.t)) + "_" + DimsName(v.dims);
    c.op = "RandomShuffle";
    c.dtype = v.t;
    c.inputs = {v.dims};
    c.attrs["seed"] = IntAttr(5);
    c.attrs["seed2"] = IntAttr(-8);
    c.kernel_only = true;
    c.reference = ShuffleRef(random::SeedPairToState(5, static_cast<uint64_t>(int64_t{-8})));
    cases.push_back(std::move(c));
  }
}

// ---- RandomGamma, RandomPoissonV2 ----

// TF's double NormalDistribution / UniformDistribution on the blocks of one output's region:
// two values per block, the second first.
struct Draws {
  PhiloxState s;
  uint64_t block;
  std::vector<double> normals, uniforms;
  double Normal() {
    if (normals.empty()) {
      const PhiloxCounter w = s.Block(block++);
      double a, b;
      random::BoxMullerDouble(w[0], w[1], w[2], w[3], &a, &b);
      normals = {a, b};
    }
    const double v = normals.back();
    normals.pop_back();
    return v;
  }
  double Uniform() {
    if (uniforms.empty()) {
      const PhiloxCounter w = s.Block(block++);
      uniforms = {random::Uint64ToDouble(w[0], w[1]), random::Uint64ToDouble(w[2], w[3])};
    }
    const double v = uniforms.back();
    uniforms.pop_back();
    return v;
  }
};

// Marsaglia-Tsang as TF's RandomGammaOp runs it (double; alpha == 1 is -log1p(-u)).
double Gamma(double alpha, Draws& d) {
  if (alpha == 1.0) return -std::log1p(-d.Uniform());
  const double dd = alpha + (alpha < 1 ? 2.0 / 3 : -1.0 / 3);
  const double c = 1.0 / 3 / std::sqrt(dd);
  for (;;) {
    const double x = d.Normal();
    double v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = d.Uniform();
    if (u < 1 - 0.0331 * x * x * x * x || std::log(u) < 0.5 * x * x + dd * (1 - v + std::log(v))) {
      double r = dd * v;
      if (alpha < 1) r *= std::pow(d.Uniform(), 1 / alpha);
      return r;
    }
  }
}

// TF's PoissonFunctor: Knuth below rate 10, Hormann's transformed rejection above.
double Poisson(double rate, double highest, Draws& d) {
  if (rate < 10) {
    const double limit = std::exp(-rate);
    double prod = 1, x = 0;
    for (;;) {
      prod *= d.Uniform();
      if (prod <= limit && x <= highest) return x;
      x += 1;
    }
  }
  const double b = 0.931 + 2.53 * std::sqrt(rate);
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  for (;;) {
    const double u = d.Uniform() - 0.5;
    const double v = d.Uniform();
    const double us = 0.5 - std::abs(u);
    const double k = std::floor((2 * a / us + b) * u + rate + 0.43);
    if (k > highest) continue;
    if (us >= 0.07 && v <= 0.9277 - 3.6224 / (b - 2)) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v * inv_alpha / (a / (us * us) + b)) <=
        -rate + k * std::log(rate) - std::lgamma(k + 1)) {
      return k;
    }
  }
}

// Output [shape..., param dims...]: output i (sample i % per, parameter i / per) draws from
// blocks 256 i on and lands at parameter + sample * num_params.
RefFn PerParamRef(Dims shape, DType out_type, PhiloxState s,
                  std::function<double(double, Draws&)> f) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor& p = in[0];
    Dims dims = shape;
    for (int64_t d : p.dims()) dims.push_back(d);
    Tensor out(out_type, dims);
    const int64_t per = Count(shape), np = p.num_elements();
    for (int64_t i = 0; i < per * np; ++i) {
      Draws d{s, static_cast<uint64_t>(i) * 256, {}, {}};
      SetFromDouble(out, i / per + (i % per) * np, f(ElementAsDouble(p, i / per), d));
    }
    return out;
  };
}

void AddGammaPoissonCases(std::vector<OpCase>& cases) {
  struct G {
    Dims shape;
    DType t;
    Dims adims;
    std::vector<double> alpha;
  };
  const std::vector<G> gs = {
      // TF's own test alphas (stateless_random_ops_test.py, _gamma_cases).
      {{10}, DType::kFloat32, {1, 3}, {0.5, 1.0, 2.0}},
      {{10}, DType::kFloat64, {3, 2}, {0.5, 0.5, 0.8, 0.2, 0.25, 0.75}},
      {{3, 2}, DType::kFloat16, {2}, {7.5, 1.0}},
      {{4}, DType::kFloat32, {}, {30.0}},
      {{0}, DType::kFloat32, {2}, {1.0, 2.0}},
  };
  for (const G& g : gs) {
    OpCase c;
    c.name = "RandomGamma_" + std::string(DTypeName(g.t)) + "_" + DimsName(g.shape) + "_" +
             DimsName(g.adims);
    c.op = "RandomGamma";
    c.dtype = g.t;
    c.inputs = {g.adims};
    c.feed_values = {Floats(g.t, g.adims, g.alpha)};
    std::vector<int32_t> shape(g.shape.begin(), g.shape.end());
    c.consts = {Ints(shape)};
    c.consts_first = true;
    c.attrs["S"] = TypeAttr(DType::kInt32);
    c.attrs["seed"] = IntAttr(3);
    c.attrs["seed2"] = IntAttr(1234);
    c.kernel_only = true;
    RefFn ref = PerParamRef(g.shape, g.t, random::SeedPairToState(3, 1234), Gamma);
    // RefFn's inputs are the feeds then the consts; PerParamRef reads the parameters first.
    c.reference = ref;
    cases.push_back(std::move(c));
  }
  struct P {
    Dims shape;
    DType r;
    DType out;
    Dims rdims;
    std::vector<double> rate;
  };
  const std::vector<P> ps = {
      // TF's own test rates (stateless_random_ops_test.py, _poisson_cases).
      {{10}, DType::kFloat32, DType::kInt64, {1, 3}, {5.5, 1.0, 2.0}},
      {{10}, DType::kFloat64, DType::kFloat32, {3, 2}, {7.5, 10.5, 3.8, 8.2, 1.25, 9.75}},
      {{4, 2}, DType::kInt32, DType::kInt32, {3}, {0, 40, 1000}},
      {{5}, DType::kFloat16, DType::kFloat16, {2}, {12.5, 0.5}},
      {{3}, DType::kInt64, DType::kFloat64, {}, {25}},
      {{0, 2}, DType::kFloat64, DType::kInt64, {2}, {1, 2}},
  };
  for (const P& p : ps) {
    OpCase c;
    c.name = "RandomPoissonV2_" + std::string(DTypeName(p.r)) + "_" + DTypeName(p.out) + "_" +
             DimsName(p.shape) + "_" + DimsName(p.rdims);
    c.op = "RandomPoissonV2";
    c.has_t = false;
    c.dtype = p.r;
    c.inputs = {p.rdims};
    c.feed_values = {Floats(p.r, p.rdims, p.rate)};
    std::vector<int32_t> shape(p.shape.begin(), p.shape.end());
    c.consts = {Ints(shape)};
    c.consts_first = true;
    c.attrs["S"] = TypeAttr(DType::kInt32);
    c.attrs["R"] = TypeAttr(p.r);
    c.attrs["dtype"] = TypeAttr(p.out);
    c.attrs["seed"] = IntAttr(-77);
    c.attrs["seed2"] = IntAttr(9);
    c.kernel_only = true;
    double highest = 0;
    switch (p.out) {
      case DType::kFloat16:
        highest = 65504.0;
        break;
      case DType::kFloat32:
        highest = std::numeric_limits<float>::max();
        break;
      case DType::kFloat64:
        highest = std::numeric_limits<double>::max();
        break;
      case DType::kInt32:
        highest = std::numeric_limits<int32_t>::max();
        break;
      default:
        highest = static_cast<double>(std::numeric_limits<int64_t>::max());
        break;
    }
    c.reference =
        PerParamRef(p.shape, p.out, random::SeedPairToState(static_cast<uint64_t>(int64_t{-77}), 9),
                    [highest](double r, Draws& d) { return Poisson(r, highest, d); });
    cases.push_back(std::move(c));
  }
}

// ---- StatelessParameterizedTruncatedNormal ----

// One block of TF's NormalDistribution<T> (Box-Muller; float math for half) or
// UniformDistribution<T>, as a list.
template <typename T>
std::vector<T> TypedBlock(const PhiloxCounter& w, bool normal) {
  std::vector<T> v;
  if constexpr (std::is_same_v<T, double>) {
    double a, b;
    if (normal) {
      random::BoxMullerDouble(w[0], w[1], w[2], w[3], &a, &b);
    } else {
      a = random::Uint64ToDouble(w[0], w[1]);
      b = random::Uint64ToDouble(w[2], w[3]);
    }
    v = {a, b};
  } else {
    float f[4];
    for (int i = 0; i < 4; i += 2) {
      if (normal) {
        random::BoxMullerFloat(w[i], w[i + 1], &f[i], &f[i + 1]);
      } else {
        for (int k = i; k < i + 2; ++k) {
          f[k] = std::is_same_v<T, half> ? random::Uint32ToHalfValue(w[k])
                                         : random::Uint32ToFloat(w[k]);
        }
      }
    }
    for (float x : f) v.push_back(static_cast<T>(x));
  }
  return v;
}

// TF's TruncatedNormalFunctorV2 in one shard: batches in order on one stream, each of the three
// samplers (normal rejection, uniform rejection, exponential rejection) chosen per batch.
template <typename T>
Tensor TruncRef(const std::vector<Tensor>& in, DType dtype) {
  using Eigen::numext::exp;
  using Eigen::numext::log;
  using Eigen::numext::sqrt;
  const Tensor& shape_t = in[4];
  Dims dims(shape_t.data<int32_t>(), shape_t.data<int32_t>() + shape_t.num_elements());
  size_t brank = 0;
  for (int k = 0; k < 4; ++k) brank = std::max(brank, in[k].dims().size());
  Dims bshape(brank, 1);
  for (int k = 0; k < 4; ++k) {
    for (size_t i = 0; i < in[k].dims().size(); ++i) {
      int64_t& o = bshape[brank - in[k].dims().size() + i];
      o = std::max(o, in[k].dim(static_cast<int>(i)));
    }
  }
  const int64_t batches = Count(bshape), per = Count(dims) / std::max<int64_t>(batches, 1);
  auto param = [&](int k, int64_t b) {
    Dims idx = Unravel(b, bshape);
    Dims pidx(idx.end() - static_cast<int64_t>(in[k].dims().size()), idx.end());
    for (size_t i = 0; i < pidx.size(); ++i) {
      if (in[k].dim(static_cast<int>(i)) == 1) pidx[i] = 0;
    }
    return static_cast<T>(At(in[k], pidx));
  };
  const Tensor& seed = in[5];
  const PhiloxState s =
      random::StatelessSeedToState(static_cast<uint64_t>(seed.data<int64_t>()[0]),
                                   static_cast<uint64_t>(seed.data<int64_t>()[1]));
  uint64_t block = 0;
  Tensor out(dtype, dims);
  T* o = out.data<T>();
  for (int64_t b = 0; b < batches && per > 0; ++b) {
    T mean = param(0, b), sd = param(1, b), lo = param(2, b), hi = param(3, b);
    if ((Eigen::numext::isinf(lo) && lo < T(0)) || hi < mean) {
      std::swap(lo, hi);
      sd = -sd;
    }
    const T nmin = (lo - mean) / sd, nmax = (hi - mean) / sd;
    const T root = sqrt(nmin * nmin + T(4));
    const T cutoff = T(2) * exp(T(0.5) + (nmin * (nmin - root)) / T(4)) / (nmin + root);
    int64_t j = 0;
    auto put = [&](T x) {
      o[b + j * batches] = x * sd + mean;
      return ++j == per;
    };
    if ((nmin < -T(1.3) && nmax >= T(0)) || (nmax > T(1.3) && nmin <= T(0))) {
      for (bool done = false; !done;) {
        for (T x : TypedBlock<T>(s.Block(block++), true)) {
          if (x >= nmin && x <= nmax && put(x)) {
            done = true;
            break;
          }
        }
      }
    } else if (nmax - nmin < cutoff) {
      const T plus = nmin < T(0) ? T(0) : nmin * nmin;
      for (bool done = false; !done;) {
        std::vector<T> r = TypedBlock<T>(s.Block(block++), false);
        std::vector<T> u = TypedBlock<T>(s.Block(block++), false);
        for (size_t i = 0; i < r.size(); ++i) {
          const T z = r[i] * (nmax - nmin) + nmin;
          const T g = (plus - z * z) / T(2.0);
          if (u[i] <= exp(g) && put(z)) {
            done = true;
            break;
          }
        }
      }
    } else {
      const T alpha = (nmin + sqrt(nmin * nmin + T(4))) / T(2);
      for (bool done = false; !done;) {
        std::vector<T> r = TypedBlock<T>(s.Block(block++), false);
        for (size_t i = 0; i + 1 < r.size(); i += 2) {
          const T z = -log(r[i]) / alpha + nmin;
          const T x = nmin < alpha ? alpha - z : nmin - alpha;
          if (r[i + 1] <= exp(-x * x / T(2.0)) && z < nmax && put(z)) {
            done = true;
            break;
          }
        }
      }
    }
  }
  return out;
}

void AddTruncatedNormalCases(std::vector<OpCase>& cases) {
  const double inf = std::numeric_limits<double>::infinity();
  struct C {
    std::string name;
    DType t;
    Dims shape;
    std::vector<std::pair<Dims, std::vector<double>>> params;  // means, stddevs, mins, maxs
  };
  const std::vector<C> cs = {
      {"f32_uniform_sampler",
       DType::kFloat32,
       {3, 5},
       {{{}, {0}}, {{}, {1}}, {{}, {-1}}, {{}, {1}}}},
      {"f64_randn_and_exp",
       DType::kFloat64,
       {5, 2},
       {{{2}, {0, 1}}, {{2}, {1, 2}}, {{2}, {-3, 2}}, {{2}, {3, 10}}}},
      {"f16_three_samplers",
       DType::kFloat16,
       {4, 3},
       {{{3}, {0, 0, 0}}, {{}, {1}}, {{3}, {-inf, 1, -0.5}}, {{3}, {2, inf, 0.5}}}},
      {"f32_broadcast",
       DType::kFloat32,
       {4, 2, 3},
       {{{2, 1}, {-1, 4}}, {{}, {0.5}}, {{}, {-2}}, {{3}, {0.25, 3, 9}}}},
      {"f32_empty", DType::kFloat32, {0, 3}, {{{3}, {0, 1, 2}}, {{}, {1}}, {{}, {-1}}, {{}, {5}}}},
  };
  for (const C& c : cs) {
    OpCase k;
    k.op = "StatelessParameterizedTruncatedNormal";
    k.name = k.op + "_" + c.name;
    k.has_t = false;
    k.dtype = c.t;
    for (const auto& [d, v] : c.params) {
      k.inputs.push_back(d);
      k.feed_values.push_back(Floats(c.t, d, v));
    }
    std::vector<int32_t> shape(c.shape.begin(), c.shape.end());
    k.consts = {Ints(shape), Ints64({-5, 123})};
    k.consts_first = true;
    k.attrs["S"] = TypeAttr(DType::kInt32);
    k.attrs["Tseed"] = TypeAttr(DType::kInt64);
    k.attrs["dtype"] = TypeAttr(c.t);
    // tf2xla samples with an inverse CDF of its own uniforms, not TF's CPU stream: kernel only.
    k.kernel_only = true;
    const DType t = c.t;
    k.reference = [t](const std::vector<Tensor>& in) {
      if (t == DType::kFloat16) return TruncRef<half>(in, t);
      if (t == DType::kFloat64) return TruncRef<double>(in, t);
      return TruncRef<float>(in, t);
    };
    cases.push_back(std::move(k));
  }
}

}  // namespace

std::vector<OpCase> RandomMoreCases() {
  std::vector<OpCase> cases;
  AddFullIntCases(cases);
  AddRngBitGeneratorCases(cases);
  AddMultinomialCases(cases);
  AddShuffleCases(cases);
  AddGammaPoissonCases(cases);
  AddTruncatedNormalCases(cases);
  return cases;
}

}  // namespace tfjit::optest
