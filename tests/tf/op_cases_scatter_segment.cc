// Differential cases of the scatter_segment ops (docs/DESIGN.md, "Op families"): kernel vs
// evaluator vs CPU JIT, each against an independent reference where one is given. The references
// are plain loops over doubles written here: a scatter walks the index rows in order, a segment
// reduction walks the ids. Indices are fed (not constants), so the compiled paths run their
// run-time index checks; negative segment ids check that they are dropped. The variable
// scatters (Resource*, TF1 refs) need graphs with variables and are not cases here.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "tests/tf/op_cases.h"

namespace tfjit::optest {
namespace {

enum class Op { kAssign, kAdd, kSub, kMin, kMax, kMul };

double Apply(Op op, double a, double b) {
  switch (op) {
    case Op::kAssign:
      return b;
    case Op::kAdd:
      return a + b;
    case Op::kSub:
      return a - b;
    case Op::kMin:
      return std::min(a, b);
    case Op::kMax:
      return std::max(a, b);
    case Op::kMul:
      return a * b;
  }
  return a;
}

// Small values of every dtype: multiples of 0.5 in [-3, 3] for signed types, [0, 6] unsigned.
Tensor Values(DType t, const Dims& dims, int seed) {
  return Build(t, dims, [&](const Dims& i) {
    int64_t k = seed;
    for (int64_t d : i) k = k * 7 + d;
    const double v = static_cast<double>((k * 5 + 3) % 13) - 6;
    if (IsUnsignedIntegerDType(t) || t == DType::kBool)
      return t == DType::kBool ? double(k % 2) : v + 6;
    return IsFloatingDType(t) ? v * 0.5 : v;
  });
}

Tensor IndexTensor(DType t, const Dims& dims, const std::vector<int64_t>& v) {
  Tensor x(t, dims);
  for (size_t k = 0; k < v.size(); ++k) SetFromDouble(x, static_cast<int64_t>(k), double(v[k]));
  return x;
}

// out = base (or zeros of `shape`); for each index row r: out[row] op= updates[r].
Tensor ScatterNdRef(const Tensor* base, const Dims& shape, DType t, const Tensor& indices,
                    const Tensor& updates, Op op) {
  Tensor out = base != nullptr ? base->Clone() : Tensor(t, shape);
  const int64_t k = indices.dims().back();
  int64_t slice = 1;
  for (size_t d = static_cast<size_t>(k); d < shape.size(); ++d) slice *= shape[d];
  const int64_t rows = k == 0 ? 0 : indices.num_elements() / k;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      offset = offset * shape[static_cast<size_t>(j)] + ElementAsInt64(indices, r * k + j);
    }
    for (int64_t s = 0; s < slice; ++s) {
      const int64_t o = offset * slice + s;
      SetFromDouble(out, o,
                    Apply(op, ElementAsDouble(out, o), ElementAsDouble(updates, r * slice + s)));
    }
  }
  return out;
}

OpCase FedCase(const std::string& name, const std::string& op, DType t, std::vector<Tensor> feeds,
               DType index_type) {
  OpCase c;
  c.name = name;
  c.op = op;
  c.dtype = t;
  for (const Tensor& f : feeds) {
    c.inputs.push_back(f.dims());
    c.input_dtypes.push_back(f.dtype());
  }
  c.feed_values = std::move(feeds);
  if (index_type != DType::kInvalid) c.attrs["Tindices"] = TypeAttr(index_type);
  return c;
}

void AddScatterNdCases(std::vector<OpCase>& cases) {
  struct Geometry {
    std::string name;
    Dims shape, indices;
    std::vector<int64_t> index_values;
  };
  const std::vector<Geometry> geometries = {
      {"rows", {5, 3}, {4, 1}, {1, 3, 1, 0}},  // duplicate row 1
      {"elements", {3, 4}, {5, 2}, {0, 0, 2, 3, 1, 1, 2, 3, 0, 3}},
      {"batch2", {4, 2, 3}, {2, 2, 2}, {3, 1, 0, 0, 2, 1, 3, 1}},
      {"odd", {7, 5}, {3, 1}, {6, 0, 4}},
      {"empty", {4, 3}, {0, 1}, {}},
  };
  for (const Geometry& g : geometries) {
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                    DType::kInt32, DType::kInt64, DType::kUInt8}) {
      if (g.name != "rows" && t != DType::kFloat32 && t != DType::kInt32) continue;
      for (DType it : {DType::kInt32, DType::kInt64}) {
        if (it == DType::kInt64 && t != DType::kFloat32) continue;
        const Tensor indices = IndexTensor(it, g.indices, g.index_values);
        const int64_t k = g.indices.back();
        Dims ud(g.indices.begin(), g.indices.end() - 1);
        ud.insert(ud.end(), g.shape.begin() + k, g.shape.end());
        const Tensor updates = Values(t, ud, 1);
        OpCase c =
            FedCase(absl::StrCat("ScatterNd_", g.name, "_", DTypeName(t), "_", DTypeName(it)),
                    "ScatterNd", t, {indices, updates}, it);
        std::vector<int64_t> shape = g.shape;
        c.consts = {it == DType::kInt32 ? Ints(std::vector<int32_t>(shape.begin(), shape.end()))
                                        : Ints64(shape)};
        c.reference = [shape, t](const std::vector<Tensor>& in) {
          return ScatterNdRef(nullptr, shape, t, in[0], in[1], Op::kAdd);
        };
        cases.push_back(std::move(c));
      }
    }
  }
}

// int16 indices and shape (TF's Tindices allows them for ScatterNd).
void AddScatterNdInt16Case(std::vector<OpCase>& cases) {
  const Tensor indices = IndexTensor(DType::kInt16, {3, 2}, {2, 1, 0, 3, 2, 1});
  const Tensor updates = Values(DType::kFloat32, {3}, 9);
  OpCase c = FedCase("ScatterNd_elements_float32_int16", "ScatterNd", DType::kFloat32,
                     {indices, updates}, DType::kInt16);
  c.consts = {IndexTensor(DType::kInt16, {2}, {3, 4})};
  c.reference = [](const std::vector<Tensor>& in) {
    return ScatterNdRef(nullptr, {3, 4}, DType::kFloat32, in[0], in[1], Op::kAdd);
  };
  cases.push_back(std::move(c));
}

void AddTensorScatterCases(std::vector<OpCase>& cases) {
  struct Variant {
    const char* op;
    Op fn;
  };
  const std::vector<Variant> ops = {{"TensorScatterUpdate", Op::kAssign},
                                    {"TensorScatterAdd", Op::kAdd},
                                    {"TensorScatterSub", Op::kSub},
                                    {"TensorScatterMin", Op::kMin},
                                    {"TensorScatterMax", Op::kMax}};
  struct Geometry {
    std::string name;
    Dims shape, indices;
    std::vector<int64_t> index_values;
    bool duplicates;
  };
  const std::vector<Geometry> geometries = {
      {"rows", {5, 3}, {3, 1}, {4, 0, 2}, false},
      {"dup", {6, 2}, {4, 1}, {1, 5, 1, 3}, true},
      {"elements", {3, 4}, {2, 2}, {2, 1, 0, 3}, false},
      {"batch2", {4, 2, 3}, {2, 2, 2}, {3, 1, 0, 0, 2, 1, 1, 1}, false},
      {"empty", {4, 3}, {0, 1}, {}, false},
      {"vector", {9}, {4, 1}, {8, 0, 3, 5}, false},
  };
  for (const Variant& v : ops) {
    for (const Geometry& g : geometries) {
      // Duplicate indices leave TensorScatterUpdate's result to the order of the writes.
      if (g.duplicates && v.fn == Op::kAssign) continue;
      const bool sub = v.fn == Op::kSub;
      std::vector<DType> types = {DType::kFloat32, DType::kInt32};
      if (g.name == "rows") {
        types.insert(types.end(), {DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                   DType::kInt64, DType::kInt8});
        if (!sub) types.push_back(DType::kUInt16);  // no wrap-around below 0
        if (v.fn == Op::kAssign) types.push_back(DType::kBool);
      }
      for (DType t : types) {
        const DType it = t == DType::kInt64 ? DType::kInt64 : DType::kInt32;
        const Tensor tensor = Values(t, g.shape, 2);
        const Tensor indices = IndexTensor(it, g.indices, g.index_values);
        const int64_t k = g.indices.back();
        Dims ud(g.indices.begin(), g.indices.end() - 1);
        ud.insert(ud.end(), g.shape.begin() + k, g.shape.end());
        const Tensor updates = Values(t, ud, 5);
        OpCase c = FedCase(absl::StrCat(v.op, "_", g.name, "_", DTypeName(t)), v.op, t,
                           {tensor, indices, updates}, it);
        const Op fn = v.fn;
        c.reference = [fn](const std::vector<Tensor>& in) {
          return ScatterNdRef(&in[0], in[0].dims(), in[0].dtype(), in[1], in[2], fn);
        };
        cases.push_back(std::move(c));
      }
    }
  }
}

// out[ids[i]] op= data row i (ids < 0 dropped), rows no id reaches hold `empty`
// (unset: the identity); mean divides by the count (integer division for integers).
Tensor SegmentRef(const Tensor& data, const Tensor& ids, int64_t segments, Op op, bool mean,
                  double empty, bool empty_is_identity) {
  Dims dims = {segments};
  dims.insert(dims.end(), data.dims().begin() + ids.rank(), data.dims().end());
  Tensor out(data.dtype(), dims);
  const int64_t slice = segments == 0 ? 0 : out.num_elements() / segments;
  double identity = 0;
  if (op == Op::kMul) identity = 1;
  if (op == Op::kMax) identity = -std::numeric_limits<double>::infinity();
  if (op == Op::kMin) identity = std::numeric_limits<double>::infinity();
  std::vector<double> acc(static_cast<size_t>(out.num_elements()), identity);
  std::vector<int64_t> count(static_cast<size_t>(segments), 0);
  for (int64_t i = 0; i < ids.num_elements(); ++i) {
    const int64_t s = ElementAsInt64(ids, i);
    if (s < 0) continue;
    ++count[static_cast<size_t>(s)];
    for (int64_t e = 0; e < slice; ++e) {
      double& a = acc[static_cast<size_t>(s * slice + e)];
      a = Apply(op, a, ElementAsDouble(data, i * slice + e));
    }
  }
  for (int64_t s = 0; s < segments; ++s) {
    for (int64_t e = 0; e < slice; ++e) {
      double v = acc[static_cast<size_t>(s * slice + e)];
      const int64_t n = count[static_cast<size_t>(s)];
      if (n == 0 && !empty_is_identity) v = empty;
      if (mean && n > 0)
        v = IsFloatingDType(data.dtype()) ? v / double(n) : std::trunc(v / double(n));
      if (n == 0 && empty_is_identity && std::isinf(v)) {
        // TF's lowest/highest finite value of the dtype (written directly: int64's extremes
        // do not survive a trip through double).
        DispatchNumeric(data.dtype(), [&](auto tag) {
          using T = decltype(tag);
          out.data<T>()[s * slice + e] =
              v < 0 ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        });
        continue;
      }
      SetFromDouble(out, s * slice + e, v);
    }
  }
  return out;
}

void AddUnsortedSegmentCases(std::vector<OpCase>& cases) {
  struct Variant {
    const char* op;
    Op fn;
  };
  const std::vector<Variant> ops = {{"UnsortedSegmentSum", Op::kAdd},
                                    {"UnsortedSegmentProd", Op::kMul},
                                    {"UnsortedSegmentMax", Op::kMax},
                                    {"UnsortedSegmentMin", Op::kMin}};
  struct Geometry {
    std::string name;
    Dims data, ids;
    std::vector<int64_t> id_values;
    int64_t segments;
  };
  const std::vector<Geometry> geometries = {
      {"rows", {6, 3}, {6}, {0, 2, -1, 2, 0, 3}, 5},  // segments 1 and 4 empty, one dropped
      {"vector", {7}, {7}, {3, 3, 0, 1, -2, 0, 3}, 4},
      {"ids2d", {2, 3, 2}, {2, 3}, {1, 0, 1, 2, -1, 1}, 3},
      {"full", {2, 3}, {2, 3}, {0, 1, 2, 3, 4, 5}, 6},
      {"empty_data", {0, 4}, {0}, {}, 3},
  };
  for (const Variant& v : ops) {
    for (const Geometry& g : geometries) {
      std::vector<DType> types = {DType::kFloat32, DType::kInt32};
      if (g.name == "rows") {
        types.insert(types.end(), {DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                   DType::kInt64, DType::kInt16, DType::kUInt8});
      }
      for (DType t : types) {
        const DType it = t == DType::kInt64 ? DType::kInt64 : DType::kInt32;
        const Tensor data = Values(t, g.data, 3);
        const Tensor ids = IndexTensor(it, g.ids, g.id_values);
        OpCase c =
            FedCase(absl::StrCat(v.op, "_", g.name, "_", DTypeName(t)), v.op, t, {data, ids}, it);
        c.consts = {Ints({static_cast<int32_t>(g.segments)}, /*scalar=*/true)};
        const Op fn = v.fn;
        const int64_t segments = g.segments;
        c.reference = [fn, segments](const std::vector<Tensor>& in) {
          return SegmentRef(in[0], in[1], segments, fn, false, 0, /*empty_is_identity=*/true);
        };
        cases.push_back(std::move(c));
      }
    }
  }
  // int16 segment ids.
  OpCase ids16 = FedCase(
      "UnsortedSegmentMax_ids16_float32", "UnsortedSegmentMax", DType::kFloat32,
      {Values(DType::kFloat32, {5, 2}, 4), IndexTensor(DType::kInt16, {5}, {1, -1, 1, 0, 3})},
      DType::kInt16);
  ids16.consts = {Ints({4}, /*scalar=*/true)};
  ids16.reference = [](const std::vector<Tensor>& in) {
    return SegmentRef(in[0], in[1], 4, Op::kMax, false, 0, true);
  };
  cases.push_back(std::move(ids16));
  // num_segments as int64.
  OpCase c =
      FedCase("UnsortedSegmentSum_num64", "UnsortedSegmentSum", DType::kFloat32,
              {Values(DType::kFloat32, {4, 2}, 4), IndexTensor(DType::kInt64, {4}, {2, 0, 2, 1})},
              DType::kInt64);
  c.consts = {Ints64({3}, /*scalar=*/true)};
  c.attrs["Tnumsegments"] = TypeAttr(DType::kInt64);
  c.reference = [](const std::vector<Tensor>& in) {
    return SegmentRef(in[0], in[1], 3, Op::kAdd, false, 0, true);
  };
  cases.push_back(std::move(c));
}

// Sorted Segment*: kernel only (tf2xla has none). Empty segments hold 0 (Prod: 1).
void AddSegmentCases(std::vector<OpCase>& cases) {
  struct Variant {
    const char* op;
    Op fn;
    bool mean;
  };
  const std::vector<Variant> ops = {{"SegmentSum", Op::kAdd, false},
                                    {"SegmentMean", Op::kAdd, true},
                                    {"SegmentProd", Op::kMul, false},
                                    {"SegmentMax", Op::kMax, false},
                                    {"SegmentMin", Op::kMin, false}};
  struct Geometry {
    std::string name;
    Dims data;
    std::vector<int64_t> ids;
  };
  const std::vector<Geometry> geometries = {
      {"rows", {5, 3}, {0, 0, 2, 2, 3}},    // segment 1 empty
      {"vector", {6}, {1, 1, 1, 2, 4, 4}},  // segments 0 and 3 empty
      {"rank3", {3, 2, 2}, {0, 1, 1}},
      {"empty", {0, 2}, {}},
  };
  for (const Variant& v : ops) {
    for (const Geometry& g : geometries) {
      std::vector<DType> types = {DType::kFloat32, DType::kInt32};
      if (g.name == "rows") {
        types.insert(types.end(), {DType::kFloat64, DType::kFloat16, DType::kInt64, DType::kUInt8});
      }
      for (DType t : types) {
        const DType it = t == DType::kInt64 ? DType::kInt64 : DType::kInt32;
        const Tensor data = Values(t, g.data, 6);
        const Tensor ids = IndexTensor(it, {static_cast<int64_t>(g.ids.size())}, g.ids);
        OpCase c =
            FedCase(absl::StrCat(v.op, "_", g.name, "_", DTypeName(t)), v.op, t, {data, ids}, it);
        c.kernel_only = true;
        const int64_t segments = g.ids.empty() ? 0 : g.ids.back() + 1;
        const Op fn = v.fn;
        const bool mean = v.mean;
        c.reference = [fn, mean, segments](const std::vector<Tensor>& in) {
          return SegmentRef(in[0], in[1], segments, fn, mean, fn == Op::kMul ? 1.0 : 0.0,
                            /*empty_is_identity=*/false);
        };
        cases.push_back(std::move(c));
      }
    }
  }
}

void AddDynamicPartitionCases(std::vector<OpCase>& cases) {
  struct Geometry {
    std::string name;
    Dims data, parts;
    std::vector<int64_t> values;
    int64_t num;
  };
  const std::vector<Geometry> geometries = {
      {"rows", {5, 2}, {5}, {1, 0, 1, 2, 1}, 3},
      {"elements", {2, 3}, {2, 3}, {0, 1, 1, 0, 3, 0}, 4},  // partition 2 empty
      {"scalar_rows", {4}, {4}, {0, 0, 0, 0}, 2},
  };
  for (const Geometry& g : geometries) {
    for (DType t : {DType::kFloat32, DType::kInt64, DType::kFloat16, DType::kBool}) {
      if (g.name != "rows" && t != DType::kFloat32) continue;
      for (int64_t out = 0; out < g.num; ++out) {
        const Tensor data = Values(t, g.data, 7);
        const Tensor parts = IndexTensor(DType::kInt32, g.parts, g.values);
        OpCase c = FedCase(absl::StrCat("DynamicPartition_", g.name, "_", DTypeName(t), "_", out),
                           "DynamicPartition", t, {data, parts}, DType::kInvalid);
        c.attrs["num_partitions"] = IntAttr(g.num);
        c.output = static_cast<int>(out);
        c.kernel_only = true;
        c.reference = [out](const std::vector<Tensor>& in) {
          const Tensor& x = in[0];
          const Tensor& p = in[1];
          const int64_t slice = p.num_elements() == 0 ? 0 : x.num_elements() / p.num_elements();
          std::vector<double> picked;
          int64_t rows = 0;
          for (int64_t i = 0; i < p.num_elements(); ++i) {
            if (ElementAsInt64(p, i) != out) continue;
            ++rows;
            for (int64_t e = 0; e < slice; ++e) picked.push_back(ElementAsDouble(x, i * slice + e));
          }
          Dims dims = {rows};
          dims.insert(dims.end(), x.dims().begin() + p.rank(), x.dims().end());
          return Floats(x.dtype(), dims, picked);
        };
        cases.push_back(std::move(c));
      }
    }
  }
}

void AddBincountCases(std::vector<OpCase>& cases) {
  const std::vector<int64_t> arr = {1, 1, 3, 0, 7, 2, 3, 3};
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    for (bool weighted : {false, true}) {
      const Tensor a = IndexTensor(DType::kInt32, {8}, arr);
      const Tensor size = Ints({5}, /*scalar=*/true);
      const Tensor w = weighted ? Values(t, {8}, 8) : Tensor(t, {0});
      OpCase c =
          FedCase(absl::StrCat("Bincount_", weighted ? "weighted_" : "counts_", DTypeName(t)),
                  "Bincount", t, {a, size, w}, DType::kInvalid);
      c.kernel_only = true;
      c.reference = [](const std::vector<Tensor>& in) {
        const int64_t n = ElementAsInt64(in[1], 0);
        std::vector<double> bins(static_cast<size_t>(n), 0.0);
        for (int64_t i = 0; i < in[0].num_elements(); ++i) {
          const int64_t b = ElementAsInt64(in[0], i);
          if (b >= n) continue;  // values past size are ignored
          bins[static_cast<size_t>(b)] += in[2].num_elements() > 0 ? ElementAsDouble(in[2], i) : 1;
        }
        return Floats(in[2].dtype(), {n}, bins);
      };
      cases.push_back(std::move(c));
    }
  }
  // size 0: every value is past the end.
  OpCase c = FedCase(
      "Bincount_size0_float32", "Bincount", DType::kFloat32,
      {IndexTensor(DType::kInt32, {3}, {0, 2, 1}), Ints({0}, true), Tensor(DType::kFloat32, {0})},
      DType::kInvalid);
  c.kernel_only = true;
  c.reference = [](const std::vector<Tensor>&) { return Tensor(DType::kFloat32, {0}); };
  cases.push_back(std::move(c));
}

// SparseTensorDenseAdd: b plus three sparse entries (one index twice), computed here.
void AddSparseTensorDenseAddCases(std::vector<OpCase>& cases) {
  for (DType t : {DType::kFloat32, DType::kInt32, DType::kFloat64}) {
    OpCase c{absl::StrCat("SparseTensorDenseAdd_", DTypeName(t)),
             "SparseTensorDenseAdd",
             t,
             {{3, 2}, {3}, {2}, {2, 3}}};
    c.input_dtypes = {DType::kInt64, t, DType::kInt64, t};
    c.attrs["Tindices"] = TypeAttr(DType::kInt64);
    Tensor idx(DType::kInt64, {3, 2});
    const int64_t rows[6] = {0, 1, 1, 2, 0, 1};
    for (int k = 0; k < 6; ++k) idx.data<int64_t>()[k] = rows[k];
    Tensor vals(t, {3}), shape(DType::kInt64, {2}), b(t, {2, 3});
    for (int k = 0; k < 3; ++k) SetFromDouble(vals, k, 10 * (k + 1));
    shape.data<int64_t>()[0] = 2;
    shape.data<int64_t>()[1] = 3;
    for (int k = 0; k < 6; ++k) SetFromDouble(b, k, k);
    c.feed_values = {idx, vals, shape, b};
    c.kernel_only = true;
    c.reference = [t](const std::vector<Tensor>&) {
      // b = [[0,1,2],[3,4,5]]; +10 at (0,1), +20 at (1,2), +30 at (0,1).
      return Floats(t, {2, 3}, {0, 41, 2, 3, 4, 25});
    };
    cases.push_back(c);
  }
}

// RaggedRange: rows [0, 5) by 2, [3, 3) (empty) and [5, 0) by -2, computed here.
void AddRaggedRangeCases(std::vector<OpCase>& cases) {
  for (DType t : {DType::kInt32, DType::kInt64, DType::kFloat32}) {
    for (int out : {0, 1}) {
      OpCase c{absl::StrCat("RaggedRange_", DTypeName(t), out == 0 ? "_splits" : "_values"),
               "RaggedRange",
               t,
               {{3}, {3}, {3}}};
      c.feed_values = {Floats(t, {3}, {0, 3, 5}), Floats(t, {3}, {5, 3, 0}),
                       Floats(t, {3}, {2, 1, -2})};
      c.output = out;
      c.kernel_only = true;
      c.reference = [t, out](const std::vector<Tensor>&) {
        if (out == 0) {
          Tensor s(DType::kInt64, {4});
          const int64_t v[4] = {0, 3, 3, 6};
          for (int k = 0; k < 4; ++k) s.data<int64_t>()[k] = v[k];
          return s;
        }
        return Floats(t, {6}, {0, 2, 4, 5, 3, 1});
      };
      cases.push_back(c);
    }
  }
}

}  // namespace

// SparseToDense: sparse_values at the rows of sparse_indices, default_value elsewhere; the
// output shape a constant (input 1). Indices constant (checked when compiled) and fed (checked
// at run time), as a matrix, a vector and a scalar; one value for all or one per row.
void AddSparseToDenseCases(std::vector<OpCase>& cases) {
  // Reference: the default everywhere, then each row's value at its index.
  auto ref = [](Dims shape) {
    return [shape](const std::vector<Tensor>& in) {
      // Inputs in the op's order: indices, shape, values, default.
      const Tensor& idx = in[0];
      const Tensor& values = in[2];
      const int64_t r = static_cast<int64_t>(shape.size());
      const int64_t n = idx.rank() == 0 ? 1 : idx.dim(0);
      Tensor out = Build(values.dtype(), shape, [&](const Dims&) { return At(in[3], {}); });
      for (int64_t i = 0; i < n; ++i) {
        Dims at(static_cast<size_t>(r));
        for (int64_t d = 0; d < r; ++d) at[static_cast<size_t>(d)] = ElementAsInt64(idx, i * r + d);
        SetFromDouble(out, Ravel(at, shape), values.rank() == 0 ? At(values, {}) : At(values, {i}));
      }
      return out;
    };
  };
  const Tensor idx = Ints({0, 1, 2, 0, 3, 2}).Reshaped({3, 2});
  {
    // Constant indices and shape; values and default fed.
    OpCase k{"SparseToDense_const_indices",
             "SparseToDense",
             DType::kFloat32,
             {{3}, {}},
             {idx, Ints({4, 3})}};
    k.consts_first = true;
    k.attrs["Tindices"] = TypeAttr(DType::kInt32);
    k.feed_values = {Floats(DType::kFloat32, {3}, {1, 2, 3}), Floats(DType::kFloat32, {}, {-1.5})};
    const RefFn r = ref({4, 3});
    k.reference = [r](const std::vector<Tensor>& in) {  // in: values, default, idx, shape
      return r({in[2], in[3], in[0], in[1]});
    };
    cases.push_back(k);
  }
  struct Fed {
    const char* name;
    Tensor indices;
    Dims shape;
    Tensor values;
  };
  const std::vector<Fed> fed = {
      {"matrix",
       Tensor::FromVector<int64_t>(DType::kInt64, {3, 2}, {3, 2, 0, 1, 2, 0}),
       {4, 3},
       Floats(DType::kFloat32, {3}, {5, 6, 7})},
      {"vector_scalar_value",
       Tensor::FromVector<int64_t>(DType::kInt64, {3}, {6, 1, 4}),
       {7},
       Floats(DType::kFloat32, {}, {2.5})},
      {"scalar_index",
       Tensor::FromVector<int64_t>(DType::kInt64, {}, {2}),
       {5},
       Floats(DType::kFloat32, {}, {9})},
      {"no_rows", Tensor(DType::kInt64, {0, 2}), {2, 2}, Floats(DType::kFloat32, {0}, {})},
      // A scalar output every empty index addresses: the last value wins.
      {"scalar_output", Tensor(DType::kInt64, {2, 0}), {}, Floats(DType::kFloat32, {2}, {4, 5})}};
  for (const Fed& f : fed) {
    std::vector<int64_t> shape64(f.shape.begin(), f.shape.end());
    OpCase k{absl::StrCat("SparseToDense_fed_", f.name),
             "SparseToDense",
             DType::kFloat32,
             {f.indices.dims(), f.values.dims(), {}},
             {Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(shape64.size())},
                                          shape64)}};
    k.const_positions = {1};
    k.input_dtypes = {DType::kInt64, DType::kFloat32, DType::kFloat32};
    k.attrs["Tindices"] = TypeAttr(DType::kInt64);
    k.attrs["validate_indices"] = BoolAttr(false);
    k.feed_values = {f.indices, f.values, Floats(DType::kFloat32, {}, {-1})};
    const RefFn r = ref(f.shape);
    k.reference = [r](const std::vector<Tensor>& in) {  // in: idx, values, default, shape
      return r({in[0], in[3], in[1], in[2]});
    };
    cases.push_back(k);
  }
}

std::vector<OpCase> ScatterSegmentCases() {
  std::vector<OpCase> cases;
  AddScatterNdCases(cases);
  AddScatterNdInt16Case(cases);
  AddTensorScatterCases(cases);
  AddUnsortedSegmentCases(cases);
  AddSegmentCases(cases);
  AddDynamicPartitionCases(cases);
  AddBincountCases(cases);
  AddSparseTensorDenseAddCases(cases);
  AddRaggedRangeCases(cases);
  AddSparseToDenseCases(cases);
  return cases;
}

}  // namespace tfjit::optest
