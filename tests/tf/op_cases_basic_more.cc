// Differential cases of basic ops that had none: comparisons, logical and bitwise-not (math),
// Gather and Where (array), EuclideanNorm (reduction), StopGradient and PlaceholderWithDefault
// (graph), the NonMaxSuppression family (image), and the
// stateless random family (random; TF's known answers are in random_ops_test.cc, here the three
// paths and every dtype of the dtype sweep). Kernel vs evaluator vs CPU JIT, each against an
// independent reference where one is given.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "tests/tf/op_cases.h"

namespace tfjit::optest {
namespace {

// Element-wise with broadcasting, the result in `out` (BinaryRef keeps the input's dtype).
RefFn CompareRef(std::function<bool(double, double)> f) {
  return [f](const std::vector<Tensor>& in) {
    Tensor same = BinaryRef([f](double x, double y) { return f(x, y) ? 1.0 : 0.0; })(in);
    Tensor out(DType::kBool, same.dims());
    for (int64_t k = 0; k < out.num_elements(); ++k) {
      out.data<bool>()[k] = ElementAsDouble(same, k) != 0;
    }
    return out;
  };
}

void MathCases(std::vector<OpCase>* cases) {
  struct C {
    const char* op;
    std::function<bool(double, double)> f;
  };
  const std::vector<C> cmps = {{"Greater", [](double x, double y) { return x > y; }},
                               {"GreaterEqual", [](double x, double y) { return x >= y; }},
                               {"Less", [](double x, double y) { return x < y; }},
                               {"LessEqual", [](double x, double y) { return x <= y; }},
                               {"Equal", [](double x, double y) { return x == y; }},
                               {"NotEqual", [](double x, double y) { return x != y; }}};
  const std::vector<std::pair<Dims, Dims>> shapes = {{{}, {}},         {{5}, {}},     {{2, 3}, {3}},
                                                     {{2, 1}, {1, 3}}, {{0, 3}, {3}}, {{33}, {33}}};
  for (const C& c : cmps) {
    // Random integers are in [0, 10), so equal pairs occur; floats in [-1, 1).
    for (DType t : {DType::kFloat32, DType::kInt32}) {
      for (const auto& [a, b] : shapes) {
        OpCase k{absl::StrCat(c.op, "_", DTypeName(t), "_", DimsName(a), "_", DimsName(b)),
                 c.op,
                 t,
                 {a, b}};
        k.reference = CompareRef(c.f);
        cases->push_back(k);
      }
    }
    // NaN compares false, except NotEqual.
    OpCase nan{absl::StrCat(c.op, "_nan"), c.op, DType::kFloat32, {{4}, {4}}};
    nan.feed_values = {Floats(DType::kFloat32, {4}, {NAN, 1, NAN, -0.0}),
                       Floats(DType::kFloat32, {4}, {1, NAN, NAN, 0.0})};
    nan.reference = CompareRef(c.f);
    cases->push_back(nan);
  }
  struct L {
    const char* op;
    std::function<double(double, double)> f;
  };
  const std::vector<L> logic = {
      {"LogicalAnd", [](double x, double y) { return x != 0 && y != 0 ? 1 : 0; }},
      {"LogicalOr", [](double x, double y) { return x != 0 || y != 0 ? 1 : 0; }}};
  for (const L& l : logic) {
    for (const auto& [a, b] : shapes) {
      OpCase k{absl::StrCat(l.op, "_", DimsName(a), "_", DimsName(b)), l.op, DType::kBool, {a, b}};
      k.has_t = false;
      k.reference = BinaryRef(l.f);
      cases->push_back(k);
    }
  }
  for (const Dims& d : std::vector<Dims>{{}, {0}, {7}, {3, 17}}) {
    OpCase k{absl::StrCat("LogicalNot_", DimsName(d)), "LogicalNot", DType::kBool, {d}};
    k.has_t = false;
    k.reference = UnaryRef([](double x) { return x != 0 ? 0.0 : 1.0; });
    cases->push_back(k);
  }
  // Invert: ~x in the type's width (two's complement for the signed ones).
  for (DType t : {DType::kInt8, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt64}) {
    OpCase k{absl::StrCat("Invert_", DTypeName(t)), "Invert", t, {{9}}};
    k.reference = [](const std::vector<Tensor>& in) {
      Tensor out(in[0].dtype(), in[0].dims());
      DispatchNumeric(in[0].dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          for (int64_t i = 0; i < out.num_elements(); ++i) {
            out.data<T>()[i] = static_cast<T>(~in[0].data<T>()[i]);
          }
        }
      });
      return out;
    };
    cases->push_back(k);
  }
}

void ArrayAndGraphCases(std::vector<OpCase>* cases) {
  // Gather (v1): axis 0, any index rank; its validate_indices attr is TF's default.
  for (const auto& [params, idx] : std::vector<std::pair<Dims, std::vector<int32_t>>>{
           {{5, 3}, {4, 0, 4}}, {{6}, {5}}, {{4, 2, 3}, {}}}) {
    OpCase k{absl::StrCat("Gather_", DimsName(params), "_n", idx.size()),
             "Gather",
             DType::kFloat32,
             {params},
             {Ints(idx)}};
    k.has_t = false;
    k.attrs["Tparams"] = TypeAttr(DType::kFloat32);
    k.attrs["Tindices"] = TypeAttr(DType::kInt32);
    k.reference = [idx](const std::vector<Tensor>& in) {
      Dims out_dims = {static_cast<int64_t>(idx.size())};
      out_dims.insert(out_dims.end(), in[0].dims().begin() + 1, in[0].dims().end());
      return Build(in[0].dtype(), out_dims, [&](const Dims& i) {
        Dims src = i;
        src[0] = idx[static_cast<size_t>(i[0])];
        return At(in[0], src);
      });
    };
    cases->push_back(k);
  }
  // Where: the coordinates of the true (nonzero) elements in row-major order, as int64.
  auto where_ref = [](const std::vector<Tensor>& in) {
    const Dims& d = in[0].dims();
    std::vector<Dims> hits;
    for (int64_t k = 0; k < in[0].num_elements(); ++k) {
      if (ElementAsComplex(in[0], k) != complex128(0, 0)) hits.push_back(Unravel(k, d));
    }
    Tensor out(DType::kInt64, {static_cast<int64_t>(hits.size()), static_cast<int64_t>(d.size())});
    for (size_t h = 0; h < hits.size(); ++h) {
      for (size_t a = 0; a < d.size(); ++a) out.data<int64_t>()[h * d.size() + a] = hits[h][a];
    }
    return out;
  };
  // Where compiles as the custom-call tfjit.where, its output padded and cut to the run-time
  // row count by the runtime (XLA: a bounded dynamic dim).
  for (const Dims& d : std::vector<Dims>{{7}, {3, 5}, {2, 0}, {2, 3, 4}, {}}) {
    OpCase k{absl::StrCat("Where_bool_", DimsName(d)), "Where", DType::kBool, {d}};
    k.reference = where_ref;
    cases->push_back(k);
  }
  OpCase wf{"Where_float_zeros", "Where", DType::kFloat32, {{2, 4}}};
  wf.feed_values = {Floats(DType::kFloat32, {2, 4}, {0, 1.5, 0, -2, 0, 0, 3, -0.0})};
  wf.reference = where_ref;
  cases->push_back(wf);
  for (DType t : {DType::kInt32, DType::kFloat64, DType::kUInt8, DType::kBFloat16}) {
    OpCase k{absl::StrCat("Where_", DTypeName(t), "_3x4"), "Where", t, {{3, 4}}};
    k.reference = where_ref;
    cases->push_back(k);
  }
  // A complex element is nonzero when either part is.
  OpCase wc{"Where_complex64_parts", "Where", DType::kComplex64, {{5}}};
  Tensor zc(DType::kComplex64, {5});
  zc.data<complex64>()[1] = complex64(0, 2);
  zc.data<complex64>()[3] = complex64(-1, 0);
  zc.data<complex64>()[4] = complex64(0, -0.0f);
  wc.feed_values = {zc};
  wc.reference = where_ref;
  cases->push_back(wc);
  // EuclideanNorm: sqrt of the sum of squares over the axes (a reduction XLA leaves to TF).
  for (bool keep : {false, true}) {
    OpCase k{absl::StrCat("EuclideanNorm_axis1", keep ? "_keep" : ""),
             "EuclideanNorm",
             DType::kFloat32,
             {{3, 5}},
             {Ints({1})}};
    k.attrs["keep_dims"] = BoolAttr(keep);
    k.attrs["Tidx"] = TypeAttr(DType::kInt32);
    k.kernel_only = true;
    k.reference = [keep](const std::vector<Tensor>& in) {
      return Build(in[0].dtype(), keep ? Dims{3, 1} : Dims{3}, [&](const Dims& i) {
        double s = 0;
        for (int64_t j = 0; j < 5; ++j) s += At(in[0], {i[0], j}) * At(in[0], {i[0], j});
        return std::sqrt(s);
      });
    };
    cases->push_back(k);
  }
  // StopGradient is the identity in a forward run; PlaceholderWithDefault passes its input.
  OpCase stop{"StopGradient_3x4", "StopGradient", DType::kFloat32, {{3, 4}}};
  stop.reference = UnaryRef([](double x) { return x; });
  cases->push_back(stop);
  OpCase pwd{"PlaceholderWithDefault_2x3", "PlaceholderWithDefault", DType::kFloat32, {{2, 3}}};
  pwd.has_t = false;
  pwd.attrs["dtype"] = TypeAttr(DType::kFloat32);
  tensorflow::AttrValue shape;
  shape.mutable_shape()->add_dim()->set_size(2);
  shape.mutable_shape()->add_dim()->set_size(3);
  pwd.attrs["shape"] = shape;
  pwd.reference = UnaryRef([](double x) { return x; });
  cases->push_back(pwd);
}

void ImageCases(std::vector<OpCase>* cases) {
  // Five boxes, two pairs of which overlap heavily; greedy selection by score.
  const Tensor boxes = Floats(DType::kFloat32, {5, 4}, {0, 0,  1, 1,    0, 0.1,  1, 1.1, 0, 10,
                                                        1, 11, 0, 10.2, 1, 11.2, 5, 5,   6, 6});
  const Tensor scores = Floats(DType::kFloat32, {5}, {0.9, 0.8, 0.7, 0.95, 0.3});
  const std::vector<int32_t> expect = {3, 0, 4};  // 1 and 2 suppressed at IoU 0.5
  // The first n selected indices, padded with zeros to `size`.
  auto index_ref = [expect](int64_t n, int64_t size) {
    return [expect, n, size](const std::vector<Tensor>&) {
      std::vector<int32_t> v(expect.begin(), expect.begin() + n);
      v.resize(static_cast<size_t>(size), 0);
      return Ints(v);
    };
  };
  // Every form compiles with max_output_size a constant: padded to it with
  // pad_to_max_output_size, else padded to min(max_output_size, boxes) and cut to the
  // selection's size at the cluster's edge (the selection's size is a row count).
  {
    OpCase k{"NonMaxSuppression_v1",
             "NonMaxSuppression",
             DType::kFloat32,
             {{5, 4}, {5}},
             {Ints({3}, true)}};
    k.has_t = false;
    k.feed_values = {boxes, scores};
    k.attrs["iou_threshold"] = [] {
      tensorflow::AttrValue a;
      a.set_f(0.5f);
      return a;
    }();
    k.reference = index_ref(3, 3);
    cases->push_back(k);
  }
  for (const char* op : {"NonMaxSuppressionV2", "NonMaxSuppressionV3", "NonMaxSuppressionV4",
                         "NonMaxSuppressionV5"}) {
    const std::string name = op;
    for (bool pad : {false, true}) {
      if (pad && name != "NonMaxSuppressionV4" && name != "NonMaxSuppressionV5") continue;
      std::vector<Tensor> consts = {Ints({4}, true), Floats(DType::kFloat32, {}, {0.5})};
      if (name != "NonMaxSuppressionV2") consts.push_back(Floats(DType::kFloat32, {}, {0.0}));
      if (name == "NonMaxSuppressionV5") consts.push_back(Floats(DType::kFloat32, {}, {0.0}));
      OpCase k{absl::StrCat(op, pad ? "_padded" : "_greedy"),
               op,
               DType::kFloat32,
               {{5, 4}, {5}},
               consts};
      k.feed_values = {boxes, scores};
      if (pad) k.attrs["pad_to_max_output_size"] = BoolAttr(true);
      // Padded: max_output_size entries, the unused ones 0.
      k.reference = index_ref(3, pad ? 4 : 3);
      cases->push_back(k);
      if (name == "NonMaxSuppressionV5") {
        // selected_scores: the selected boxes' scores (greedy: unchanged), zeros after them.
        OpCase sc = k;
        sc.name = absl::StrCat(k.name, "_scores");
        sc.output = 1;
        sc.reference = [pad](const std::vector<Tensor>&) {
          std::vector<double> v = {0.95, 0.9, 0.3};
          if (pad) v.push_back(0.0);
          return Floats(DType::kFloat32, {static_cast<int64_t>(v.size())}, v);
        };
        cases->push_back(sc);
      }
    }
  }
  // max_output_size above the number of boxes: the unpadded bound is the box count.
  {
    OpCase k{
        "NonMaxSuppressionV3_max_above_n",
        "NonMaxSuppressionV3",
        DType::kFloat32,
        {{5, 4}, {5}},
        {Ints({10}, true), Floats(DType::kFloat32, {}, {0.5}), Floats(DType::kFloat32, {}, {0.5})}};
    k.feed_values = {boxes, scores};
    k.reference = index_ref(2, 2);  // box 4 (0.3) is not above score_threshold 0.5
    cases->push_back(k);
  }
  // Soft-NMS (V5, sigma 0.5): an overlap below iou_threshold scales a score by
  // exp(-iou^2 / (2 sigma)) and the box re-enters the queue. IoU(0, 1) = 0.9 / 1.1,
  // IoU(2, 3) = 0.8 / 1.2; box 2 is scaled once (by box 3), box 1 once (by box 0).
  const double iou01 = 0.9 / 1.1, iou23 = 0.8 / 1.2;
  const double s2 = 0.7 * std::exp(-iou23 * iou23), s1 = 0.8 * std::exp(-iou01 * iou01);
  struct Soft {
    const char* name;
    double iou, threshold;
    std::vector<int32_t> indices;
    std::vector<double> scores;
  };
  // iou_threshold 1 (tf.image.non_max_suppression_with_scores' default): nothing is dropped,
  // only rescored. iou_threshold 0.7 drops box 1 (IoU 0.82 with box 0); score_threshold 0.35
  // drops box 4.
  for (const Soft& soft : {Soft{"keep", 1.0, 0.0, {3, 0, 2, 1, 4}, {0.95, 0.9, s2, s1, 0.3}},
                           Soft{"drop", 0.7, 0.35, {3, 0, 2}, {0.95, 0.9, s2}}}) {
    for (bool pad : {false, true}) {
      for (int output : {0, 1}) {
        OpCase k{
            absl::StrCat("NonMaxSuppressionV5_soft_", soft.name, pad ? "_padded" : "",
                         output == 1 ? "_scores" : ""),
            "NonMaxSuppressionV5",
            DType::kFloat32,
            {{5, 4}, {5}},
            {Ints({5}, true), Floats(DType::kFloat32, {}, {soft.iou}),
             Floats(DType::kFloat32, {}, {soft.threshold}), Floats(DType::kFloat32, {}, {0.5})}};
        k.feed_values = {boxes, scores};
        if (pad) k.attrs["pad_to_max_output_size"] = BoolAttr(true);
        k.output = output;
        k.atol = 1e-6;
        const size_t size = pad ? 5 : soft.indices.size();
        if (output == 0) {
          std::vector<int32_t> v = soft.indices;
          v.resize(size, 0);
          k.reference = [v](const std::vector<Tensor>&) { return Ints(v); };
        } else {
          std::vector<double> v = soft.scores;
          v.resize(size, 0.0);
          k.reference = [v](const std::vector<Tensor>&) {
            return Floats(DType::kFloat32, {static_cast<int64_t>(v.size())}, v);
          };
        }
        cases->push_back(k);
      }
    }
  }
}

void RandomCases(std::vector<OpCase>* cases) {
  // The stateless family is a pure function of (shape, seed) or (shape, key, counter, alg):
  // kernel, evaluator and JIT must agree bit for bit.
  const Tensor seed = Tensor::FromVector<int64_t>(DType::kInt64, {2}, {7, 11});
  // Constant seeds (random_ops_test covers seeds computed at run time).
  for (const char* op :
       {"StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"}) {
    OpCase k{absl::StrCat(op, "_3x5"), op, DType::kInt64, {}, {Ints({3, 5}), seed}};
    k.has_t = false;
    k.attrs["dtype"] = TypeAttr(DType::kFloat32);
    k.attrs["T"] = TypeAttr(DType::kInt32);
    k.attrs["Tseed"] = TypeAttr(DType::kInt64);
    cases->push_back(k);
  }
  {
    OpCase k{"StatelessRandomUniformInt_4x4",
             "StatelessRandomUniformInt",
             DType::kInt32,
             {},
             {Ints({4, 4}), seed, Ints({-5}, true), Ints({17}, true)}};
    k.has_t = false;
    k.attrs["dtype"] = TypeAttr(DType::kInt32);
    k.attrs["T"] = TypeAttr(DType::kInt32);
    k.attrs["Tseed"] = TypeAttr(DType::kInt64);
    cases->push_back(k);
  }
  const Tensor key = Tensor::FromVector<uint64_t>(DType::kUInt64, {1}, {0x1234});
  const Tensor counter = Tensor::FromVector<uint64_t>(DType::kUInt64, {2}, {5, 0});
  for (const char* op :
       {"StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"}) {
    // Inputs (shape, key, counter, alg), all consts: shape and alg must be compile-time
    // constants, and a graph holds consts on one side of the fed inputs.
    OpCase k{absl::StrCat(op, "_2x7"),
             op,
             DType::kUInt64,
             {},
             {Ints({2, 7}), key, counter, Ints({1}, true)}};
    k.has_t = false;
    k.attrs["dtype"] = TypeAttr(DType::kFloat32);
    k.attrs["Tshape"] = TypeAttr(DType::kInt32);
    cases->push_back(k);
  }
  {
    OpCase k{"StatelessRandomGetKeyCounter_key",
             "StatelessRandomGetKeyCounter",
             DType::kInt64,
             {},
             {seed}};
    k.has_t = false;
    k.attrs["Tseed"] = TypeAttr(DType::kInt64);
    cases->push_back(k);
    k.name = "StatelessRandomGetKeyCounter_counter";
    k.output = 1;
    cases->push_back(k);
  }
}

}  // namespace

std::vector<OpCase> BasicMoreCases() {
  std::vector<OpCase> cases;
  MathCases(&cases);
  ArrayAndGraphCases(&cases);
  ImageCases(&cases);
  RandomCases(&cases);
  return cases;
}

}  // namespace tfjit::optest
