// Differential cases of the array_more ops (docs/DESIGN.md, "Op families"): kernel vs evaluator
// vs CPU JIT, each against an independent reference written here (index arithmetic, double
// formulas, hand-computed values). Ops XLA leaves to TF run kernel_only. Assert's message,
// the kernels' refusals and ControlTrigger are tested through a session in
// op_cases_array_more_session.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "frontend/proto/graph.pb.h"
#include "gtest/gtest.h"
#include "tests/tf/op_cases.h"

namespace tfjit::optest {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Output element i copies input element from(i) (same dtype; shape `dims`).
RefFn CopyRef(std::function<Dims(const Dims&, const std::vector<Tensor>&)> from,
              std::function<Dims(const std::vector<Tensor>&)> dims = nullptr) {
  return [from, dims](const std::vector<Tensor>& in) {
    const Dims out = dims ? dims(in) : in[0].dims();
    return Build(in[0].dtype(), out, [&](const Dims& i) { return At(in[0], from(i, in)); });
  };
}

// A spread of values, exactly representable in every float type, by position.
Tensor Spread(DType t, const Dims& dims, double scale = 1.0) {
  return Build(t, dims, [&](const Dims& i) {
    int64_t k = 0;
    for (int64_t d : i) k = k * 7 + d;
    return scale * static_cast<double>((k * 37) % 23 - 11) / 8.0;
  });
}

// ---- Reverse, Roll, ReverseSequence ----

void AddReverseCases(std::vector<OpCase>& cases) {
  struct R {
    const char* name;
    DType t;
    Dims dims;
    std::vector<bool> flip;
  };
  const R rs[] = {{"f32_rank3", DType::kFloat32, {2, 3, 4}, {true, false, true}},
                  {"int32_vector", DType::kInt32, {5}, {true}},
                  {"bool_rank2", DType::kBool, {3, 2}, {false, true}},
                  {"f16_none", DType::kFloat16, {2, 1, 3}, {false, false, false}},
                  {"bf16_all", DType::kBFloat16, {3, 5}, {true, true}},
                  {"f64_empty", DType::kFloat64, {0, 3}, {true, true}},
                  {"uint8_odd", DType::kUInt8, {7, 3}, {true, false}},
                  {"scalar", DType::kFloat32, {}, {}}};
  for (const R& r : rs) {
    OpCase c{absl::StrCat("Reverse_", r.name), "Reverse", r.t, {r.dims}, {Bools(r.flip)}};
    const std::vector<bool> flip = r.flip;
    c.reference = CopyRef([flip](const Dims& i, const std::vector<Tensor>& in) {
      Dims s = i;
      for (size_t d = 0; d < s.size(); ++d) {
        if (flip[d]) s[d] = in[0].dim(static_cast<int>(d)) - 1 - s[d];
      }
      return s;
    });
    cases.push_back(c);
  }
}

void AddRollCases(std::vector<OpCase>& cases) {
  struct R {
    const char* name;
    DType t;
    Dims dims;
    std::vector<int64_t> shift, axis;
    bool scalar, wide;
  };
  const R rs[] = {{"f32_two_axes", DType::kFloat32, {3, 5}, {2, -1}, {0, 1}, false, false},
                  {"int64_scalar", DType::kInt64, {7}, {3}, {0}, true, false},
                  {"f16_repeated_axis", DType::kFloat16, {2, 3, 4}, {1, 2}, {2, -1}, false, false},
                  {"bf16_big_shift", DType::kBFloat16, {4, 3}, {13}, {0}, false, true},
                  {"bool_negative", DType::kBool, {6}, {-5}, {0}, true, true},
                  {"uint8_empty", DType::kUInt8, {0, 3}, {1}, {1}, false, false},
                  {"f64_odd", DType::kFloat64, {5, 9}, {4, 7}, {1, 0}, false, true}};
  for (const R& r : rs) {
    std::vector<int32_t> s32(r.shift.begin(), r.shift.end()), a32(r.axis.begin(), r.axis.end());
    OpCase c{absl::StrCat("Roll_", r.name),
             "Roll",
             r.t,
             {r.dims},
             {r.wide ? Ints64(r.shift, r.scalar) : Ints(s32, r.scalar),
              r.wide ? Ints64(r.axis, r.scalar) : Ints(a32, r.scalar)}};
    c.attrs["Tshift"] = TypeAttr(r.wide ? DType::kInt64 : DType::kInt32);
    c.attrs["Taxis"] = TypeAttr(r.wide ? DType::kInt64 : DType::kInt32);
    const std::vector<int64_t> shift = r.shift, axis = r.axis;
    c.reference = CopyRef([shift, axis](const Dims& i, const std::vector<Tensor>& in) {
      Dims s = i;
      const int64_t rank = static_cast<int64_t>(s.size());
      for (size_t k = 0; k < shift.size(); ++k) {
        const size_t d = static_cast<size_t>((axis[k] + rank) % rank);
        const int64_t n = in[0].dim(static_cast<int>(d));
        s[d] = FloorMod(static_cast<double>(s[d] - shift[k]), static_cast<double>(n));
      }
      return s;
    });
    cases.push_back(c);
  }
}

void AddReverseSequenceCases(std::vector<OpCase>& cases) {
  struct R {
    const char* name;
    DType t;
    Dims dims;
    std::vector<int64_t> lens;
    int64_t seq, batch;
    DType tlen;
  };
  const R rs[] = {{"f32_seq1_batch0", DType::kFloat32, {3, 5, 2}, {2, 5, 0}, 1, 0, DType::kInt64},
                  {"int32_seq0_batch1", DType::kInt32, {4, 3}, {4, 1, 3}, 0, 1, DType::kInt32},
                  {"f16_negative_dims", DType::kFloat16, {2, 3, 6}, {6, 1}, -1, 0, DType::kInt32},
                  {"bool_rank4", DType::kBool, {2, 2, 3, 2}, {3, 2}, 2, 1, DType::kInt64}};
  for (const R& r : rs) {
    OpCase c{absl::StrCat("ReverseSequence_", r.name),
             "ReverseSequence",
             r.t,
             {r.dims, {static_cast<int64_t>(r.lens.size())}}};
    c.input_dtypes = {r.t, r.tlen};
    c.feed_values = {Spread(r.t, r.dims),
                     Build(r.tlen, {static_cast<int64_t>(r.lens.size())},
                           [&](const Dims& i) { return r.lens[static_cast<size_t>(i[0])]; })};
    c.attrs["seq_dim"] = IntAttr(r.seq);
    c.attrs["batch_dim"] = IntAttr(r.batch);
    c.attrs["Tlen"] = TypeAttr(r.tlen);
    const int64_t rank = static_cast<int64_t>(r.dims.size());
    const size_t seq = static_cast<size_t>((r.seq + rank) % rank);
    const size_t batch = static_cast<size_t>((r.batch + rank) % rank);
    c.reference = CopyRef([seq, batch](const Dims& i, const std::vector<Tensor>& in) {
      Dims s = i;
      const int64_t len = ElementAsInt64(in[1], i[batch]);
      if (s[seq] < len) s[seq] = len - 1 - s[seq];
      return s;
    });
    cases.push_back(c);
  }
}

// ---- Permutations, sequences, shapes ----

void AddPermutationCases(std::vector<OpCase>& cases) {
  const std::vector<std::vector<int64_t>> perms = {{3, 0, 4, 1, 2}, {0}, {}, {1, 0, 6, 5, 2, 3, 4}};
  for (DType t : {DType::kInt32, DType::kInt64}) {
    for (const std::vector<int64_t>& p : perms) {
      OpCase c{absl::StrCat("InvertPermutation_", DTypeName(t), "_n", p.size()),
               "InvertPermutation",
               t,
               {{static_cast<int64_t>(p.size())}}};
      c.feed_values = {Build(t, {static_cast<int64_t>(p.size())},
                             [&](const Dims& i) { return p[static_cast<size_t>(i[0])]; })};
      c.reference = [](const std::vector<Tensor>& in) {
        Tensor r(in[0].dtype(), in[0].dims());
        for (int64_t i = 0; i < in[0].num_elements(); ++i) {
          SetFromDouble(r, ElementAsInt64(in[0], i), static_cast<double>(i));
        }
        return r;
      };
      cases.push_back(c);
    }
  }
  struct L {
    const char* name;
    DType t;
    double start, stop;
    int64_t num;
    DType tidx;
  };
  const L ls[] = {{"f32_5", DType::kFloat32, -1.5, 2.25, 5, DType::kInt32},
                  {"f64_7", DType::kFloat64, 0.1, 1.7, 7, DType::kInt64},
                  {"f32_one", DType::kFloat32, 3.0, 9.0, 1, DType::kInt32},
                  {"f32_descending", DType::kFloat32, 10.0, -3.0, 33, DType::kInt32},
                  {"f16_4", DType::kFloat16, 0.5, 2.5, 4, DType::kInt32},
                  {"bf16_3", DType::kBFloat16, -2.0, 2.0, 3, DType::kInt64}};
  for (const L& l : ls) {
    OpCase c{absl::StrCat("LinSpace_", l.name),
             "LinSpace",
             l.t,
             {{}, {}},
             {l.tidx == DType::kInt32 ? Ints({static_cast<int32_t>(l.num)}, true)
                                      : Ints64({l.num}, true)}};
    c.attrs["Tidx"] = TypeAttr(l.tidx);
    c.feed_values = {Floats(l.t, {}, {l.start}), Floats(l.t, {}, {l.stop})};
    const int64_t num = l.num;
    c.reference = [num](const std::vector<Tensor>& in) {
      const double a = ElementAsDouble(in[0], 0), b = ElementAsDouble(in[1], 0);
      return Build(in[0].dtype(), {num}, [&](const Dims& i) {
        if (i[0] == num - 1 && num > 1) return b;
        return a +
               (num > 1 ? (b - a) / static_cast<double>(num - 1) : 0.0) * static_cast<double>(i[0]);
      });
    };
    cases.push_back(c);
  }
  struct B {
    const char* name;
    std::vector<int32_t> s0, s1, want;
  };
  const B bs[] = {{"rank3_rank2", {2, 1, 3}, {4, 1}, {2, 4, 3}},
                  {"scalar_shape", {}, {5, 6}, {5, 6}},
                  {"zero_dim", {0, 1}, {1, 7}, {0, 7}},
                  {"equal", {3, 3}, {3, 3}, {3, 3}}};
  for (DType t : {DType::kInt32, DType::kInt64}) {
    for (const B& b : bs) {
      auto as = [t](const std::vector<int32_t>& v) {
        return t == DType::kInt32 ? Ints(v) : Ints64(std::vector<int64_t>(v.begin(), v.end()));
      };
      OpCase c{absl::StrCat("BroadcastArgs_", b.name, "_", DTypeName(t)),
               "BroadcastArgs",
               t,
               {},
               {as(b.s0), as(b.s1)}};
      const Tensor want = as(b.want);
      c.reference = [want](const std::vector<Tensor>&) { return want; };
      cases.push_back(c);
    }
  }
}

// ---- Searches ----

void AddSearchCases(std::vector<OpCase>& cases) {
  struct B {
    const char* name;
    DType t;
    Dims dims;
    std::vector<float> bounds;
  };
  const B bs[] = {{"f32", DType::kFloat32, {3, 4}, {-0.5f, 0.f, 0.25f, 0.7f}},
                  {"int32", DType::kInt32, {6}, {1.f, 3.5f, 8.f}},
                  {"f64_ties", DType::kFloat64, {2, 5}, {-0.375f, 0.125f, 0.125f, 0.5f}},
                  {"int64_scalar", DType::kInt64, {}, {2.f, 5.f}},
                  {"f32_no_boundaries", DType::kFloat32, {4}, {}},
                  {"f32_empty", DType::kFloat32, {0, 2}, {1.f}}};
  for (const B& b : bs) {
    OpCase c{absl::StrCat("Bucketize_", b.name), "Bucketize", b.t, {b.dims}};
    c.attrs["boundaries"] = FloatListAttr(b.bounds);
    if (IsFloatingDType(b.t)) c.feed_values = {Spread(b.t, b.dims, 0.5)};
    const std::vector<float> bounds = b.bounds;
    c.reference = UnaryRef(
        [bounds](double x) {
          double n = 0;
          for (float v : bounds) n += x >= v ? 1 : 0;
          return n;
        },
        DType::kInt32);
    cases.push_back(c);
  }
  for (bool upper : {false, true}) {
    const char* op = upper ? "UpperBound" : "LowerBound";
    for (DType t : {DType::kFloat32, DType::kInt32, DType::kFloat16}) {
      for (DType out : {DType::kInt32, DType::kInt64}) {
        OpCase c{absl::StrCat(op, "_", DTypeName(t), "_", DTypeName(out)), op, t, {{3, 6}, {3, 4}}};
        c.attrs["out_type"] = TypeAttr(out);
        c.feed_values = {
            Floats(t, {3, 6}, {0, 1, 1, 2, 5, 9, -3, -3, 0, 0, 0, 4, 1, 2, 3, 4, 5, 6}),
            Floats(t, {3, 4}, {1, -1, 9, 3, 0, -3, 5, -4, 7, 0, 3.5, 1})};
        c.reference = [upper, out](const std::vector<Tensor>& in) {
          return Build(out, in[1].dims(), [&](const Dims& i) {
            double n = 0;
            for (int64_t j = 0; j < in[0].dim(1); ++j) {
              const double s = At(in[0], {i[0], j}), v = At(in[1], i);
              n += (upper ? s <= v : s < v) ? 1 : 0;
            }
            return n;
          });
        };
        cases.push_back(c);
      }
    }
  }
  struct K {
    const char* name;
    DType t;
    std::vector<double> pred;
    std::vector<int64_t> targets;
    int64_t k;
  };
  // Rows of 5 with ties, an out-of-range and a negative target, an infinite and a NaN target
  // prediction.
  const std::vector<double> pred = {0.1, 0.5,  0.5, 0.2, 0.9, 3,    2, 1, 0, -1, 1,  1,  1, 1, 1,
                                    0,   kInf, 0,   0,   0,   kNaN, 0, 1, 2, 3,  -2, -1, 4, 4, 4};
  const K ks[] = {{"k2_int32", DType::kInt32, pred, {1, 4, 2, 1, 0, 2}, 2},
                  {"k1_int64_out_of_range", DType::kInt64, pred, {4, 5, -1, 0, 3, 3}, 1},
                  {"k0", DType::kInt32, pred, {4, 0, 0, 0, 4, 2}, 0},
                  {"k5", DType::kInt64, pred, {0, 1, 2, 3, 4, 0}, 5}};
  for (const K& kc : ks) {
    const int64_t rows = static_cast<int64_t>(kc.targets.size());
    OpCase c{
        absl::StrCat("InTopKV2_", kc.name),
        "InTopKV2",
        kc.t,
        {{rows, 5}, {rows}},
        {kc.t == DType::kInt32 ? Ints({static_cast<int32_t>(kc.k)}, true) : Ints64({kc.k}, true)}};
    c.input_dtypes = {DType::kFloat32, kc.t};
    c.feed_values = {Floats(DType::kFloat32, {rows, 5}, kc.pred),
                     Build(kc.t, {rows}, [&](const Dims& i) {
                       return static_cast<double>(kc.targets[static_cast<size_t>(i[0])]);
                     })};
    const int64_t k = kc.k;
    c.reference = [k](const std::vector<Tensor>& in) {
      return Build(DType::kBool, {in[1].dim(0)}, [&](const Dims& i) {
        const int64_t t = ElementAsInt64(in[1], i[0]);
        if (t < 0 || t >= 5) return 0.0;
        const double v = At(in[0], {i[0], t});
        if (!std::isfinite(v)) return 0.0;
        int64_t larger = 0;
        for (int64_t j = 0; j < 5; ++j) larger += At(in[0], {i[0], j}) > v ? 1 : 0;
        return larger < k ? 1.0 : 0.0;
      });
    };
    cases.push_back(c);
  }
}

// ---- Bits ----

void AddBitCases(std::vector<OpCase>& cases) {
  struct B {
    const char* name;
    DType from, to;
    Dims dims;
  };
  const B bs[] = {{"f32_to_int32", DType::kFloat32, DType::kInt32, {2, 3}},
                  {"f32_to_uint8", DType::kFloat32, DType::kUInt8, {2, 3}},
                  {"uint8_to_f32", DType::kUInt8, DType::kFloat32, {3, 4}},
                  {"f64_to_uint16", DType::kFloat64, DType::kUInt16, {2}},
                  {"f16_to_f32", DType::kFloat16, DType::kFloat32, {5, 2}},
                  {"int64_to_f64", DType::kInt64, DType::kFloat64, {4}},
                  {"int16_to_int8", DType::kInt16, DType::kInt8, {}},
                  {"int8_to_int64", DType::kInt8, DType::kInt64, {2, 8}},
                  {"bf16_to_int16", DType::kBFloat16, DType::kInt16, {0, 3}},
                  // Complex values, held as (real, imaginary) parts, on either side.
                  {"c64_to_f32", DType::kComplex64, DType::kFloat32, {3}},
                  {"c64_to_int64", DType::kComplex64, DType::kInt64, {2, 3}},
                  {"c64_to_c128", DType::kComplex64, DType::kComplex128, {3, 2}},
                  {"c128_to_uint8", DType::kComplex128, DType::kUInt8, {2}},
                  {"c128_to_c64", DType::kComplex128, DType::kComplex64, {2}},
                  {"f32_to_c64", DType::kFloat32, DType::kComplex64, {4, 2}},
                  {"int8_to_c64", DType::kInt8, DType::kComplex64, {3, 8}},
                  {"uint16_to_c128", DType::kUInt16, DType::kComplex128, {8}}};
  for (const B& b : bs) {
    OpCase c{absl::StrCat("Bitcast_", b.name), "Bitcast", b.from, {b.dims}};
    c.attrs["type"] = TypeAttr(b.to);
    const DType to = b.to;
    c.reference = [to](const std::vector<Tensor>& in) {
      Dims dims = in[0].dims();
      const size_t a = DTypeSize(in[0].dtype()), z = DTypeSize(to);
      if (a > z) dims.push_back(static_cast<int64_t>(a / z));
      if (a < z) dims.pop_back();
      Tensor r(to, dims);
      if (in[0].byte_size() > 0) std::memcpy(r.raw_data(), in[0].raw_data(), in[0].byte_size());
      return r;
    };
    cases.push_back(c);
  }
  const std::vector<double> wide = {
      0,        1,  -1,   255,       256, 4294967295.0, -2147483648.0, 4611686018427387904.0,
      12345678, -7, 1023, 0x5a5a5a5a};
  for (DType t : {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8,
                  DType::kUInt16, DType::kUInt32, DType::kUInt64}) {
    OpCase c{absl::StrCat("PopulationCount_", DTypeName(t)), "PopulationCount", t, {{3, 4}}};
    // Values that fit the type (wrapped into it by bit pattern where they do not).
    Tensor v(t, {3, 4});
    for (size_t k = 0; k < wide.size(); ++k) {
      const uint64_t bits = wide[k] < 0 ? static_cast<uint64_t>(static_cast<int64_t>(wide[k]))
                                        : static_cast<uint64_t>(wide[k]);
      std::memcpy(static_cast<char*>(v.raw_data()) + k * DTypeSize(t), &bits, DTypeSize(t));
    }
    c.feed_values = {v};
    c.reference = [](const std::vector<Tensor>& in) {
      Tensor r(DType::kUInt8, in[0].dims());
      const size_t w = DTypeSize(in[0].dtype());
      for (int64_t k = 0; k < in[0].num_elements(); ++k) {
        uint64_t bits = 0;
        std::memcpy(&bits, static_cast<const char*>(in[0].raw_data()) + k * w, w);
        int n = 0;
        for (; bits != 0; bits >>= 1) n += static_cast<int>(bits & 1);
        r.data<uint8_t>()[k] = static_cast<uint8_t>(n);
      }
      return r;
    };
    cases.push_back(c);
  }
  struct A {
    const char* name;
    DType t;
    float tol;
  };
  const A as[] = {{"f32", DType::kFloat32, 0.3f},         {"f64_default", DType::kFloat64, 1e-5f},
                  {"f16", DType::kFloat16, 0.25f},        {"bf16", DType::kBFloat16, 0.5f},
                  {"int32_tol_2_5", DType::kInt32, 2.5f}, {"uint8", DType::kUInt8, 3.f},
                  {"int64_tol_0_5", DType::kInt64, 0.5f}};
  for (const A& a : as) {
    OpCase c{absl::StrCat("ApproximateEqual_", a.name), "ApproximateEqual", a.t, {{4, 5}, {4, 5}}};
    c.attrs["tolerance"] = FloatAttr(a.tol);
    if (IsFloatingDType(a.t)) {
      c.feed_values = {Spread(a.t, {4, 5}), Spread(a.t, {4, 5}, 0.875)};
    }
    const float tol = a.tol;
    const DType t = a.t;
    c.reference = [tol, t](const std::vector<Tensor>& in) {
      return Build(DType::kBool, in[0].dims(), [&](const Dims& i) {
        double d = At(in[0], i) - At(in[1], i);
        if (t == DType::kUInt8) d = FloorMod(d, 256);
        const double limit = IsFloatingDType(t) ? tol : std::trunc(tol);
        return std::abs(d) < limit ? 1.0 : 0.0;
      });
    };
    cases.push_back(c);
  }
}

// ---- Data formats ----

void AddDataFormatCases(std::vector<OpCase>& cases) {
  struct M {
    const char* name;
    DType t;
    std::string src, dst;
    Dims dims;
    std::vector<double> x;
  };
  const M ms[] = {
      {"nhwc_nchw", DType::kInt32, "NHWC", "NCHW", {8}, {-4, -3, -2, -1, 0, 1, 2, 3}},
      {"nchw_nhwc_2d", DType::kInt64, "NCHW", "NHWC", {2, 3}, {0, 1, 2, 3, -1, -4}},
      {"ndhwc_ncdhw", DType::kInt32, "NDHWC", "NCDHW", {10}, {-5, -4, -3, -2, -1, 0, 1, 2, 3, 4}},
      {"scalar", DType::kInt32, "NHWC", "HWNC", {}, {-1}}};
  for (const M& m : ms) {
    OpCase c{absl::StrCat("DataFormatDimMap_", m.name), "DataFormatDimMap", m.t, {m.dims}};
    c.attrs["src_format"] = StringAttr(m.src);
    c.attrs["dst_format"] = StringAttr(m.dst);
    c.feed_values = {Floats(m.t, m.dims, m.x)};
    const std::string src = m.src, dst = m.dst;
    c.reference = UnaryRef([src, dst](double x) {
      const int64_t n = static_cast<int64_t>(src.size());
      const int64_t i = (static_cast<int64_t>(x) + n) % n;
      return static_cast<double>(dst.find(src[static_cast<size_t>(i)]));
    });
    cases.push_back(c);
  }
  struct P {
    const char* name;
    DType t;
    std::string src, dst;
    Dims dims;
  };
  const P ps[] = {{"vector", DType::kInt32, "NHWC", "NCHW", {4}},
                  {"pairs", DType::kInt64, "NHWC", "NCHW", {4, 2}},
                  {"spatial", DType::kInt32, "NHWC", "WHCN", {2}},
                  {"spatial_pairs", DType::kInt32, "NCHW", "NWHC", {2, 2}},
                  {"5d", DType::kInt64, "NDHWC", "NCDHW", {5}},
                  {"5d_spatial_pairs", DType::kInt32, "NDHWC", "NCWHD", {3, 2}}};
  for (const P& p : ps) {
    OpCase c{absl::StrCat("DataFormatVecPermute_", p.name), "DataFormatVecPermute", p.t, {p.dims}};
    c.attrs["src_format"] = StringAttr(p.src);
    c.attrs["dst_format"] = StringAttr(p.dst);
    c.feed_values = {Build(p.t, p.dims, [](const Dims& i) {
      return static_cast<double>(10 * (i[0] + 1) + (i.size() > 1 ? i[1] : 0));
    })};
    std::string src = p.src, dst = p.dst;
    if (p.dims[0] == static_cast<int64_t>(src.size()) - 2) {
      auto strip = [](std::string f) {
        std::string s;
        for (char ch : f) {
          if (ch != 'N' && ch != 'C') s.push_back(ch);
        }
        return s;
      };
      src = strip(src);
      dst = strip(dst);
    }
    c.reference = CopyRef([src, dst](const Dims& i, const std::vector<Tensor>&) {
      Dims s = i;
      s[0] = static_cast<int64_t>(src.find(dst[static_cast<size_t>(i[0])]));
      return s;
    });
    cases.push_back(c);
  }
}

// ---- SpaceToBatch / BatchToSpace (v1) ----

void AddSpaceBatchCases(std::vector<OpCase>& cases) {
  struct S {
    const char* name;
    DType t;
    Dims dims;
    int64_t block;
    std::vector<int32_t> pads;
  };
  const S to_batch[] = {{"f32_plain", DType::kFloat32, {1, 4, 4, 1}, 2, {0, 0, 0, 0}},
                        {"int32_padded", DType::kInt32, {2, 3, 5, 2}, 2, {1, 0, 0, 1}},
                        {"f16_block3", DType::kFloat16, {1, 4, 2, 3}, 3, {2, 0, 1, 0}}};
  for (const S& s : to_batch) {
    OpCase c{absl::StrCat("SpaceToBatch_", s.name),
             "SpaceToBatch",
             s.t,
             {s.dims},
             {Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, s.pads)}};
    c.attrs["block_size"] = IntAttr(s.block);
    c.attrs["Tpaddings"] = TypeAttr(DType::kInt32);
    const int64_t b = s.block;
    const std::vector<int32_t> p = s.pads;
    c.reference = [b, p](const std::vector<Tensor>& in) {
      const Dims& d = in[0].dims();
      const Dims out = {d[0] * b * b, (d[1] + p[0] + p[1]) / b, (d[2] + p[2] + p[3]) / b, d[3]};
      return Build(in[0].dtype(), out, [&](const Dims& i) {
        const int64_t batch = i[0] % d[0], off = i[0] / d[0];
        const int64_t h = i[1] * b + off / b - p[0], w = i[2] * b + off % b - p[2];
        if (h < 0 || h >= d[1] || w < 0 || w >= d[2]) return 0.0;
        return At(in[0], {batch, h, w, i[3]});
      });
    };
    cases.push_back(c);
  }
  const S to_space[] = {{"f32_plain", DType::kFloat32, {4, 2, 2, 1}, 2, {0, 0, 0, 0}},
                        {"int64_cropped", DType::kInt64, {8, 2, 3, 3}, 2, {1, 0, 0, 2}},
                        {"bf16_block3", DType::kBFloat16, {9, 1, 2, 2}, 3, {1, 1, 0, 3}}};
  for (const S& s : to_space) {
    OpCase c{absl::StrCat("BatchToSpace_", s.name),
             "BatchToSpace",
             s.t,
             {s.dims},
             {Tensor::FromVector<int64_t>(DType::kInt64, {2, 2},
                                          std::vector<int64_t>(s.pads.begin(), s.pads.end()))}};
    c.attrs["block_size"] = IntAttr(s.block);
    c.attrs["Tidx"] = TypeAttr(DType::kInt64);
    const int64_t b = s.block;
    const std::vector<int32_t> p = s.pads;
    c.reference = [b, p](const std::vector<Tensor>& in) {
      const Dims& d = in[0].dims();
      const int64_t n = d[0] / (b * b);
      const Dims out = {n, d[1] * b - p[0] - p[1], d[2] * b - p[2] - p[3], d[3]};
      return Build(in[0].dtype(), out, [&](const Dims& i) {
        const int64_t h = i[1] + p[0], w = i[2] + p[2];
        const int64_t off = (h % b) * b + (w % b);
        return At(in[0], {off * n + i[0], h / b, w / b, i[3]});
      });
    };
    cases.push_back(c);
  }
}

// ---- Cumsum and Cumprod (compiled as prefix reduce-windows) ----

void AddCumsumCumprodCases(std::vector<OpCase>& cases) {
  struct C {
    const char* name;
    DType t;
    Dims dims;
    int32_t axis;
    bool exclusive, reverse;
  };
  const C cs[] = {{"f32_axis1", DType::kFloat32, {3, 6}, 1, false, false},
                  {"f32_exclusive", DType::kFloat32, {3, 6}, 1, true, false},
                  {"f32_reverse", DType::kFloat32, {2, 5, 3}, -2, false, true},
                  {"f32_exclusive_reverse", DType::kFloat32, {4, 7}, 0, true, true},
                  {"f64_axis0", DType::kFloat64, {5, 2}, 0, false, false},
                  {"f16_vector", DType::kFloat16, {7}, 0, false, false},
                  {"i32_axis1", DType::kInt32, {2, 9}, 1, false, false},
                  {"i64_exclusive", DType::kInt64, {9}, 0, true, false},
                  {"f32_empty", DType::kFloat32, {0, 3}, 0, false, false},
                  {"f32_scalar_len1", DType::kFloat32, {4, 1}, 1, true, true}};
  for (const char* op : {"Cumsum", "Cumprod"}) {
    const bool prod = std::string(op) == "Cumprod";
    for (const C& c0 : cs) {
      OpCase c{absl::StrCat(op, "_", c0.name), op, c0.t, {c0.dims}, {Ints({c0.axis}, true)}};
      c.attrs["exclusive"] = BoolAttr(c0.exclusive);
      c.attrs["reverse"] = BoolAttr(c0.reverse);
      c.attrs["Tidx"] = TypeAttr(DType::kInt32);
      // Small integers (exact in every dtype), so any summation order gives the same value;
      // products stay in range.
      c.feed_values = {Build(c0.t, c0.dims, [&](const Dims& i) {
        int64_t k = 0;
        for (int64_t d : i) k = k * 5 + d;
        return prod ? static_cast<double>((k % 3) - 1 + (k % 2 ? 2 : 0)) : (k % 7) - 3.0;
      })};
      const bool ex = c0.exclusive, rev = c0.reverse;
      const int32_t axis_in = c0.axis;
      c.reference = [ex, rev, axis_in, prod](const std::vector<Tensor>& in) {
        const size_t axis = static_cast<size_t>((axis_in + in[0].rank()) % in[0].rank());
        return Build(in[0].dtype(), in[0].dims(), [&](const Dims& i) {
          double acc = prod ? 1 : 0;
          for (int64_t j = 0; j < in[0].dim(static_cast<int>(axis)); ++j) {
            const bool take =
                rev ? (ex ? j > i[axis] : j >= i[axis]) : (ex ? j < i[axis] : j <= i[axis]);
            if (!take) continue;
            Dims at = i;
            at[axis] = j;
            acc = prod ? acc * At(in[0], at) : acc + At(in[0], at);
          }
          return acc;
        });
      };
      cases.push_back(c);
    }
  }
}

// ---- CumulativeLogsumexp ----

void AddLogsumexpCases(std::vector<OpCase>& cases) {
  struct L {
    const char* name;
    DType t;
    Dims dims;
    int32_t axis;
    bool exclusive, reverse;
  };
  const L ls[] = {{"f32_axis1", DType::kFloat32, {3, 6}, 1, false, false},
                  {"f32_exclusive", DType::kFloat32, {3, 6}, 1, true, false},
                  {"f32_reverse", DType::kFloat32, {2, 5, 3}, -2, false, true},
                  {"f32_exclusive_reverse", DType::kFloat32, {4, 7}, 0, true, true},
                  {"f64_axis0", DType::kFloat64, {5, 2}, 0, false, false},
                  {"f16_vector", DType::kFloat16, {7}, 0, false, false},
                  {"f32_empty", DType::kFloat32, {0, 3}, 0, false, false}};
  for (const L& l : ls) {
    OpCase c{absl::StrCat("CumulativeLogsumexp_", l.name),
             "CumulativeLogsumexp",
             l.t,
             {l.dims},
             {Ints({l.axis}, true)}};
    c.attrs["exclusive"] = BoolAttr(l.exclusive);
    c.attrs["reverse"] = BoolAttr(l.reverse);
    c.attrs["Tidx"] = TypeAttr(DType::kInt32);
    // Large magnitudes check the shift by the maximum; -inf entries the identity.
    c.feed_values = {Build(l.t, l.dims, [&](const Dims& i) {
      int64_t k = 0;
      for (int64_t d : i) k = k * 5 + d;
      if (k % 11 == 3) return -kInf;
      return l.t == DType::kFloat16 ? (k % 7) * 0.75 - 2 : (k % 9) * 13.5 - 50;
    })};
    const bool ex = l.exclusive, rev = l.reverse;
    const int32_t axis_in = l.axis;
    c.reference = [ex, rev, axis_in](const std::vector<Tensor>& in) {
      const size_t axis = static_cast<size_t>((axis_in + in[0].rank()) % in[0].rank());
      return Build(in[0].dtype(), in[0].dims(), [&](const Dims& i) {
        const int64_t n = in[0].dim(static_cast<int>(axis));
        double hi = -kInf;
        std::vector<double> terms;
        for (int64_t j = 0; j < n; ++j) {
          const bool take =
              rev ? (ex ? j > i[axis] : j >= i[axis]) : (ex ? j < i[axis] : j <= i[axis]);
          if (!take) continue;
          Dims at = i;
          at[axis] = j;
          terms.push_back(At(in[0], at));
          hi = std::max(hi, terms.back());
        }
        if (std::isinf(hi)) return hi;
        double sum = 0;
        for (double v : terms) sum += std::exp(v - hi);
        return hi + std::log(sum);
      });
    };
    cases.push_back(c);
  }
}

// ---- Fake quantization: references in double from TF's formulas (nudged range, rounding to the
// grid); feeds avoid exact midpoints between grid values. ----

struct NudgedRange {
  double min, max, scale;
};
// The nudge itself is TF's float arithmetic (a zero point of 127.5 rounds either way
// depending on it).
NudgedRange NudgeRef(double min, double max, int bits, bool narrow) {
  const float qmin = narrow ? 1.f : 0.f, qmax = static_cast<float>(std::pow(2.0, bits) - 1);
  const float scale = (static_cast<float>(max) - static_cast<float>(min)) / (qmax - qmin);
  const float zf = qmin - static_cast<float>(min) / scale;
  const float zero = zf < qmin ? qmin : (zf > qmax ? qmax : std::round(zf));
  return {(qmin - zero) * static_cast<double>(scale), (qmax - zero) * static_cast<double>(scale),
          scale};
}
double QuantRef(double x, const NudgedRange& n) {
  const double c = std::min(std::max(x, n.min), n.max);
  return std::floor((c - n.min) / n.scale + 0.5) * n.scale + n.min;
}

// Values across [-8, 8] that are not near grid midpoints of the ranges used below.
Tensor QuantFeed(const Dims& dims) {
  return Build(DType::kFloat32, dims, [](const Dims& i) {
    int64_t k = 0;
    for (int64_t d : i) k = k * 13 + d;
    return -8.0 + static_cast<double>((k * 53) % 97) * (16.0 / 97) + 0.0013;
  });
}

void AddFakeQuantCases(std::vector<OpCase>& cases) {
  struct F {
    const char* name;
    float min, max;
    int bits;
    bool narrow;
  };
  const F fs[] = {{"default", -6.f, 6.f, 8, false},
                  {"narrow_4bit", -1.f, 2.5f, 4, true},
                  {"positive_min", 0.5f, 3.f, 8, false},
                  {"12bit", -3.f, 7.f, 12, false}};
  for (const F& f : fs) {
    const NudgedRange n = NudgeRef(f.min, f.max, f.bits, f.narrow);
    OpCase c{absl::StrCat("FakeQuantWithMinMaxArgs_", f.name),
             "FakeQuantWithMinMaxArgs",
             DType::kFloat32,
             {{6, 7}}};
    c.has_t = false;
    c.attrs["min"] = FloatAttr(f.min);
    c.attrs["max"] = FloatAttr(f.max);
    c.attrs["num_bits"] = IntAttr(f.bits);
    c.attrs["narrow_range"] = BoolAttr(f.narrow);
    c.feed_values = {QuantFeed({6, 7})};
    c.reference = UnaryRef([n](double x) { return QuantRef(x, n); });
    cases.push_back(c);

    OpCase g{absl::StrCat("FakeQuantWithMinMaxArgsGradient_", f.name),
             "FakeQuantWithMinMaxArgsGradient",
             DType::kFloat32,
             {{6, 7}, {6, 7}}};
    g.has_t = false;
    g.attrs = c.attrs;
    g.feed_values = {Spread(DType::kFloat32, {6, 7}), QuantFeed({6, 7})};
    g.reference = [n](const std::vector<Tensor>& in) {
      return Build(DType::kFloat32, in[0].dims(), [&](const Dims& i) {
        const double x = At(in[1], i);
        return x >= n.min && x <= n.max ? At(in[0], i) : 0.0;
      });
    };
    cases.push_back(g);

    OpCase v{absl::StrCat("FakeQuantWithMinMaxVars_", f.name),
             "FakeQuantWithMinMaxVars",
             DType::kFloat32,
             {{5, 3}, {}, {}}};
    v.has_t = false;
    v.attrs["num_bits"] = IntAttr(f.bits);
    v.attrs["narrow_range"] = BoolAttr(f.narrow);
    v.feed_values = {QuantFeed({5, 3}), Floats(DType::kFloat32, {}, {f.min}),
                     Floats(DType::kFloat32, {}, {f.max})};
    v.reference = UnaryRef([n](double x) { return QuantRef(x, n); });
    cases.push_back(v);

    for (int out = 0; out < 3; ++out) {
      OpCase vg{absl::StrCat("FakeQuantWithMinMaxVarsGradient_", f.name, "_", out),
                "FakeQuantWithMinMaxVarsGradient",
                DType::kFloat32,
                {{4, 6}, {4, 6}, {}, {}}};
      vg.has_t = false;
      vg.attrs = v.attrs;
      vg.output = out;
      vg.feed_values = {Spread(DType::kFloat32, {4, 6}), QuantFeed({4, 6}),
                        Floats(DType::kFloat32, {}, {f.min}), Floats(DType::kFloat32, {}, {f.max})};
      vg.reference = [n, out](const std::vector<Tensor>& in) {
        if (out == 0) {
          return Build(DType::kFloat32, in[0].dims(), [&](const Dims& i) {
            const double x = At(in[1], i);
            return x >= n.min && x <= n.max ? At(in[0], i) : 0.0;
          });
        }
        double sum = 0;
        for (int64_t k = 0; k < in[0].num_elements(); ++k) {
          const double x = ElementAsDouble(in[1], k);
          if (out == 1 ? x < n.min : x > n.max) sum += ElementAsDouble(in[0], k);
        }
        return Floats(DType::kFloat32, {}, {sum});
      };
      cases.push_back(vg);
    }
  }
  // Per channel: kernel only (XLA leaves it to TF).
  OpCase pc{"FakeQuantWithMinMaxVarsPerChannel_rank2",
            "FakeQuantWithMinMaxVarsPerChannel",
            DType::kFloat32,
            {{5, 3}, {3}, {3}}};
  pc.has_t = false;
  pc.kernel_only = true;
  pc.feed_values = {QuantFeed({5, 3}), Floats(DType::kFloat32, {3}, {-6, -1, 0.5}),
                    Floats(DType::kFloat32, {3}, {6, 2.5, 3})};
  pc.reference = [](const std::vector<Tensor>& in) {
    return Build(DType::kFloat32, in[0].dims(), [&](const Dims& i) {
      const NudgedRange n = NudgeRef(At(in[1], {i[1]}), At(in[2], {i[1]}), 8, false);
      return QuantRef(At(in[0], i), n);
    });
  };
  cases.push_back(pc);
}

// ---- Kernel-only ops (XLA leaves them to TF) ----

OpCase KernelOnly(OpCase c) {
  c.kernel_only = true;
  return c;
}

void AddRuntimeOnlyCases(std::vector<OpCase>& cases) {
  for (DType t : {DType::kFloat32, DType::kInt64, DType::kFloat16}) {
    OpCase c{absl::StrCat("AccumulateNV2_3_", DTypeName(t)),
             "AccumulateNV2",
             t,
             {{2, 5}, {2, 5}, {2, 5}}};
    c.attrs["N"] = IntAttr(3);
    c.reference = [](const std::vector<Tensor>& in) {
      return Build(in[0].dtype(), in[0].dims(),
                   [&](const Dims& i) { return At(in[0], i) + At(in[1], i) + At(in[2], i); });
    };
    cases.push_back(KernelOnly(c));
  }
  // Unique / UniqueWithCounts over a vector with repeats (first-appearance order).
  const std::vector<double> values = {3, 1, 3, 0, -2, 1, 1, 7, -2, 0.5, 3};
  for (const char* op : {"Unique", "UniqueWithCounts"}) {
    const int outputs = std::string(op) == "Unique" ? 2 : 3;
    for (DType t : {DType::kFloat32, DType::kInt32}) {
      for (int out = 0; out < outputs; ++out) {
        OpCase c{absl::StrCat(op, "_", DTypeName(t), "_", out), op, t, {{11}}};
        c.attrs["out_idx"] =
            TypeAttr(out == 0 || t == DType::kInt32 ? DType::kInt32 : DType::kInt64);
        c.output = out;
        c.feed_values = {Floats(t, {11}, values)};
        const DType idx_t = out == 0 || t == DType::kInt32 ? DType::kInt32 : DType::kInt64;
        c.reference = [out, idx_t](const std::vector<Tensor>& in) {
          std::vector<double> uniq, counts, idx;
          for (int64_t k = 0; k < in[0].num_elements(); ++k) {
            const double v = ElementAsDouble(in[0], k);
            const size_t at =
                static_cast<size_t>(std::find(uniq.begin(), uniq.end(), v) - uniq.begin());
            if (at == uniq.size()) uniq.push_back(v), counts.push_back(0);
            counts[at] += 1;
            idx.push_back(static_cast<double>(at));
          }
          const std::vector<double>& r = out == 0 ? uniq : (out == 1 ? idx : counts);
          return Floats(out == 0 ? in[0].dtype() : idx_t, {static_cast<int64_t>(r.size())}, r);
        };
        cases.push_back(KernelOnly(c));
      }
    }
  }
  for (int out = 0; out < 2; ++out) {
    OpCase c{absl::StrCat("ListDiff_int32_", out), "ListDiff", DType::kInt32, {{9}, {4}}};
    c.attrs["out_idx"] = TypeAttr(out == 0 ? DType::kInt32 : DType::kInt64);
    c.output = out;
    c.feed_values = {Ints({1, 2, 3, 4, 5, 2, 6, 9, 1}), Ints({2, 9, 7, 1})};
    c.reference = [out](const std::vector<Tensor>&) {
      return out == 0 ? Ints({3, 4, 5, 6}) : Ints64({2, 3, 4, 6});
    };
    cases.push_back(KernelOnly(c));
  }
  for (DType t : {DType::kFloat32, DType::kInt64, DType::kBool}) {
    OpCase c{absl::StrCat("Empty_init_", DTypeName(t)), "Empty", t, {}, {Ints({2, 0, 3})}};
    c.has_t = false;
    c.attrs["dtype"] = TypeAttr(t);
    c.attrs["init"] = BoolAttr(true);
    c.reference = [t](const std::vector<Tensor>&) { return Tensor(t, {2, 0, 3}); };
    cases.push_back(KernelOnly(c));
    OpCase z{absl::StrCat("Empty_", DTypeName(t)), "Empty", t, {}, {Ints({3, 2})}};
    z.has_t = false;
    z.attrs["dtype"] = TypeAttr(t);
    z.reference = [t](const std::vector<Tensor>&) { return Tensor(t, {3, 2}); };
    cases.push_back(KernelOnly(z));
  }
  for (DType t : {DType::kFloat32, DType::kUInt8, DType::kBool}) {
    OpCase c{absl::StrCat("DeepCopy_", DTypeName(t)), "DeepCopy", t, {{3, 4}}};
    c.reference = [](const std::vector<Tensor>& in) { return in[0]; };
    cases.push_back(KernelOnly(c));
  }
  for (DType t : {DType::kFloat32, DType::kInt32}) {
    OpCase c{absl::StrCat("ParallelConcat_", DTypeName(t)),
             "ParallelConcat",
             t,
             {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}}};
    c.attrs["N"] = IntAttr(4);
    c.reference = [](const std::vector<Tensor>& in) {
      return Build(in[0].dtype(), {4, 2, 3}, [&](const Dims& i) {
        return At(in[static_cast<size_t>(i[0])], {0, i[1], i[2]});
      });
    };
    cases.push_back(KernelOnly(c));
  }
  struct H {
    const char* name;
    DType t;
    std::vector<double> range;
    int32_t nbins;
    DType out;
  };
  const H hs[] = {{"f32_5", DType::kFloat32, {-0.5, 0.5}, 5, DType::kInt32},
                  {"f64_3_int64", DType::kFloat64, {0, 1}, 3, DType::kInt64},
                  {"int32_4", DType::kInt32, {2, 7}, 4, DType::kInt32}};
  for (const H& h : hs) {
    OpCase c{absl::StrCat("HistogramFixedWidth_", h.name),
             "HistogramFixedWidth",
             h.t,
             {{4, 6}},
             {Floats(h.t, {2}, h.range), Ints({h.nbins}, true)}};
    c.attrs["dtype"] = TypeAttr(h.out);
    const int32_t nbins = h.nbins;
    const DType out = h.out;
    c.reference = [nbins, out](const std::vector<Tensor>& in) {
      const double lo = ElementAsDouble(in[1], 0), hi = ElementAsDouble(in[1], 1);
      std::vector<double> counts(static_cast<size_t>(nbins), 0);
      for (int64_t k = 0; k < in[0].num_elements(); ++k) {
        const double v = ElementAsDouble(in[0], k);
        const double bin = std::floor((v - lo) / ((hi - lo) / nbins));
        counts[static_cast<size_t>(std::clamp(bin, 0.0, nbins - 1.0))] += 1;
      }
      return Floats(out, {nbins}, counts);
    };
    cases.push_back(KernelOnly(c));
  }
  for (DType t : {DType::kFloat32, DType::kInt32, DType::kBool, DType::kFloat64, DType::kInt8}) {
    OpCase c{
        absl::StrCat("CompareAndBitpack_", DTypeName(t)), "CompareAndBitpack", t, {{3, 16}, {}}};
    c.feed_values = {Spread(t, {3, 16}), Floats(t, {}, {t == DType::kBool ? 1 : 0.125})};
    if (t == DType::kInt8 || t == DType::kInt32) {
      c.feed_values[0] =
          Build(t, {3, 16}, [](const Dims& i) { return (i[0] * 16 + i[1]) % 7 - 3.0; });
      c.feed_values[1] = Floats(t, {}, {0});
    }
    if (t == DType::kBool) {
      c.feed_values[0] =
          Build(t, {3, 16}, [](const Dims& i) { return (i[0] * 5 + i[1]) % 3 == 0; });
    }
    const bool is_bool = t == DType::kBool;
    c.reference = [is_bool](const std::vector<Tensor>& in) {
      return Build(DType::kUInt8, {in[0].dim(0), in[0].dim(1) / 8}, [&](const Dims& i) {
        int byte = 0;
        for (int64_t j = 0; j < 8; ++j) {
          const double v = At(in[0], {i[0], i[1] * 8 + j});
          const bool bit = is_bool ? v != 0 : v > ElementAsDouble(in[1], 0);
          byte |= bit ? 1 << (7 - j) : 0;
        }
        return static_cast<double>(byte);
      });
    };
    cases.push_back(KernelOnly(c));
  }
  for (bool reverse : {false, true}) {
    for (int32_t n : {0, 3, 6}) {
      for (DType t : {DType::kFloat32, DType::kInt64}) {
        OpCase c{absl::StrCat("NthElement_", DTypeName(t), "_n", n, reverse ? "_reverse" : ""),
                 "NthElement",
                 t,
                 {{2, 3, 7}},
                 {Ints({n}, true)}};
        c.attrs["reverse"] = BoolAttr(reverse);
        c.reference = [n, reverse](const std::vector<Tensor>& in) {
          return Build(in[0].dtype(), {2, 3}, [&](const Dims& i) {
            std::vector<double> row;
            for (int64_t j = 0; j < 7; ++j) row.push_back(At(in[0], {i[0], i[1], j}));
            std::sort(row.begin(), row.end());
            if (reverse) std::reverse(row.begin(), row.end());
            return row[static_cast<size_t>(n)];
          });
        };
        cases.push_back(KernelOnly(c));
      }
    }
  }
}

// ---- QuantizeAndDequantizeV2: the reference in double from TF's description ----

void AddQdqCases(std::vector<OpCase>& cases) {
  struct Q {
    const char* name;
    DType t;
    bool is_signed, given, narrow, half_up;
    int bits;
    double lo, hi;
  };
  const Q qs[] = {{"f32_default", DType::kFloat32, true, false, false, false, 8, 0, 0},
                  {"f32_given_unsigned", DType::kFloat32, false, true, false, false, 4, 0, 6},
                  {"f64_given_narrow", DType::kFloat64, true, true, true, false, 6, -3, 2},
                  {"f32_half_up", DType::kFloat32, true, true, false, true, 3, -1, 1.5},
                  {"f16_default", DType::kFloat16, true, false, false, false, 8, 0, 0}};
  for (const Q& q : qs) {
    OpCase c{absl::StrCat("QuantizeAndDequantizeV2_", q.name),
             "QuantizeAndDequantizeV2",
             q.t,
             {{4, 9}, {}, {}}};
    c.attrs["signed_input"] = BoolAttr(q.is_signed);
    c.attrs["num_bits"] = IntAttr(q.bits);
    c.attrs["range_given"] = BoolAttr(q.given);
    c.attrs["narrow_range"] = BoolAttr(q.narrow);
    c.attrs["round_mode"] = StringAttr(q.half_up ? "HALF_UP" : "HALF_TO_EVEN");
    c.feed_values = {Build(q.t, {4, 9},
                           [](const Dims& i) {
                             return -4.0 +
                                    static_cast<double>((i[0] * 9 + i[1]) * 29 % 36) * 0.2203125;
                           }),
                     Floats(q.t, {}, {q.lo}), Floats(q.t, {}, {q.hi})};
    c.reference = [q](const std::vector<Tensor>& in) {
      double lo = q.lo, hi = q.hi;
      if (!q.given) {
        lo = kInf, hi = -kInf;
        for (int64_t k = 0; k < in[0].num_elements(); ++k) {
          lo = std::min(lo, ElementAsDouble(in[0], k));
          hi = std::max(hi, ElementAsDouble(in[0], k));
        }
      }
      const double half = std::pow(2.0, q.bits - 1);
      const double qmin = q.is_signed ? (q.narrow ? 1 - half : -half) : 0;
      const double qmax = q.is_signed ? half - 1 : 2 * half - 1;
      const double big = std::numeric_limits<double>::max();
      const double s_min = qmin * lo > 0 ? qmin / lo : big, s_max = qmax * hi > 0 ? qmax / hi : big;
      const double scale = std::min(s_min, s_max);
      const double inv = s_min < s_max ? lo / qmin : hi / qmax;
      if (s_min < s_max)
        hi = qmax * inv;
      else
        lo = qmin * inv;
      return UnaryRef([&](double x) {
        const double v = std::min(std::max(x, lo), hi) * scale;
        return (q.half_up ? std::floor(v + 0.5) : std::nearbyint(v)) * inv;
      })(in);
    };
    cases.push_back(c);
  }
}

}  // namespace

std::vector<OpCase> ArrayMoreCases() {
  std::vector<OpCase> cases;
  AddReverseCases(cases);
  AddRollCases(cases);
  AddReverseSequenceCases(cases);
  AddPermutationCases(cases);
  AddSearchCases(cases);
  AddBitCases(cases);
  AddDataFormatCases(cases);
  AddSpaceBatchCases(cases);
  AddLogsumexpCases(cases);
  AddCumsumCumprodCases(cases);
  AddFakeQuantCases(cases);
  AddRuntimeOnlyCases(cases);
  AddQdqCases(cases);
  return cases;
}

}  // namespace tfjit::optest
