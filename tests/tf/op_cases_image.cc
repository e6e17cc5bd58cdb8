// Op cases of the image and index ops (image_lowerings.cc): pooling, ResizeBilinear,
// DepthToSpace/SpaceToDepth, SpaceToBatchND/BatchToSpaceND and GatherNd. The fallback kernel
// (checked against naive references in tests/unit/runtime/image_kernels_test.cc) is the
// reference here; the evaluator and the CPU JIT must agree with it.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tests/tf/op_cases.h"
#include "tfjit/session.h"

namespace tfjit::optest {
namespace {

tensorflow::AttrValue IntListAttr(const std::vector<int64_t>& v) {
  tensorflow::AttrValue a;
  a.mutable_list();
  for (int64_t x : v) a.mutable_list()->add_i(x);
  return a;
}

Tensor Ints2D(int64_t rows, const std::vector<int32_t>& v) {
  return Tensor::FromVector<int32_t>(DType::kInt32, {rows, static_cast<int64_t>(v.size()) / rows},
                                     v);
}

void AddPoolCases(std::vector<OpCase>& cases) {
  struct P {
    Dims in;
    int64_t kh, kw, s;
    const char* padding;
  };
  const std::vector<P> pools = {
      {{2, 7, 8, 3}, 3, 3, 1, "SAME"},  {{2, 7, 8, 3}, 3, 3, 2, "SAME"},
      {{2, 7, 8, 3}, 3, 3, 1, "VALID"}, {{2, 7, 8, 3}, 3, 3, 2, "VALID"},
      {{1, 6, 5, 2}, 2, 2, 2, "SAME"},  {{1, 5, 6, 4}, 5, 6, 1, "VALID"},  // global
      {{1, 9, 9, 1}, 4, 4, 3, "SAME"},  {{1, 2, 3, 2}, 3, 3, 1, "VALID"},  // empty output
  };
  for (const P& p : pools) {
    for (const char* op : {"MaxPool", "AvgPool"}) {
      for (DType t : {DType::kFloat32, DType::kFloat64}) {
        OpCase c{absl::StrCat(op, "_", p.padding, "_", p.kh, "x", p.kw, "_s", p.s, "_",
                              DimsName(p.in), "_", DTypeName(t)),
                 op,
                 t,
                 {p.in}};
        c.attrs["ksize"] = IntListAttr({1, p.kh, p.kw, 1});
        c.attrs["strides"] = IntListAttr({1, p.s, p.s, 1});
        c.attrs["padding"] = StringAttr(p.padding);
        cases.push_back(c);
      }
    }
  }
  // Global 128x128 windows (MediaPipe's global pooling); integer and half MaxPool; f16 AvgPool.
  auto pool = [&](const std::string& name, const char* op, DType t, Dims in, int64_t kh, int64_t kw,
                  int64_t s, const char* padding) {
    OpCase c{name, op, t, {in}};
    c.attrs["ksize"] = IntListAttr({1, kh, kw, 1});
    c.attrs["strides"] = IntListAttr({1, s, s, 1});
    c.attrs["padding"] = StringAttr(padding);
    cases.push_back(c);
  };
  pool("MaxPool_global_128", "MaxPool", DType::kFloat32, {1, 128, 128, 2}, 128, 128, 1, "VALID");
  pool("AvgPool_global_128_f64", "AvgPool", DType::kFloat64, {1, 128, 128, 2}, 128, 128, 1,
       "VALID");
  pool("AvgPool_global_32", "AvgPool", DType::kFloat32, {2, 32, 32, 3}, 32, 32, 1, "VALID");
  pool("MaxPool_int32_SAME", "MaxPool", DType::kInt32, {2, 7, 8, 3}, 3, 3, 2, "SAME");
  pool("MaxPool_f16_SAME", "MaxPool", DType::kFloat16, {1, 7, 8, 3}, 3, 3, 2, "SAME");
  pool("AvgPool_f16_SAME", "AvgPool", DType::kFloat16, {1, 7, 8, 3}, 3, 3, 2, "SAME");
}

void AddResizeCases(std::vector<OpCase>& cases) {
  struct R {
    const char* name;
    Dims in;
    int32_t oh, ow;
  };
  const std::vector<R> sizes = {{"up", {2, 4, 5, 3}, 8, 9},
                                {"down", {1, 9, 7, 2}, 4, 3},
                                {"mixed", {1, 3, 8, 1}, 7, 5},
                                {"to_1x1", {1, 4, 4, 2}, 1, 1}};
  struct M {
    const char* name;
    bool align, half;
  };
  const std::vector<M> modes = {
      {"legacy", false, false}, {"align_corners", true, false}, {"half_pixel", false, true}};
  for (const R& r : sizes) {
    for (const M& m : modes) {
      OpCase c{absl::StrCat("ResizeBilinear_", r.name, "_", m.name),
               "ResizeBilinear",
               DType::kFloat32,
               {r.in},
               {Ints({r.oh, r.ow})}};
      c.attrs["align_corners"] = BoolAttr(m.align);
      c.attrs["half_pixel_centers"] = BoolAttr(m.half);
      cases.push_back(c);
    }
  }
  // Integer images give float results.
  for (DType t : {DType::kUInt8, DType::kInt32}) {
    OpCase c{absl::StrCat("ResizeBilinear_", DTypeName(t), "_half_pixel"),
             "ResizeBilinear",
             t,
             {{1, 5, 4, 3}},
             {Ints({9, 7})}};
    c.attrs["half_pixel_centers"] = BoolAttr(true);
    cases.push_back(c);
  }
}

void AddSpaceCases(std::vector<OpCase>& cases) {
  for (DType t : {DType::kFloat32, DType::kInt32}) {
    OpCase d2s{absl::StrCat("DepthToSpace_b2_", DTypeName(t)), "DepthToSpace", t, {{2, 3, 4, 8}}};
    d2s.attrs["block_size"] = IntAttr(2);
    cases.push_back(d2s);
    OpCase s2d{absl::StrCat("SpaceToDepth_b2_", DTypeName(t)), "SpaceToDepth", t, {{2, 4, 6, 3}}};
    s2d.attrs["block_size"] = IntAttr(2);
    cases.push_back(s2d);
  }
  OpCase d2s3{"DepthToSpace_b3", "DepthToSpace", DType::kFloat32, {{1, 2, 3, 18}}};
  d2s3.attrs["block_size"] = IntAttr(3);
  cases.push_back(d2s3);
  struct SB {
    const char* name;
    Dims in;
    std::vector<int32_t> block, pads;
  };
  const std::vector<SB> s2b = {{"2d_pad", {2, 5, 6, 3}, {2, 2}, {1, 0, 0, 2}},
                               {"2d_nopad", {1, 4, 4, 1}, {2, 2}, {0, 0, 0, 0}},
                               {"1d_rest", {3, 5, 2}, {3}, {1, 0}},
                               {"asym_block", {2, 4, 3, 2}, {2, 3}, {0, 2, 1, 2}}};
  for (const SB& s : s2b) {
    const int64_t m = static_cast<int64_t>(s.block.size());
    cases.push_back({absl::StrCat("SpaceToBatchND_", s.name),
                     "SpaceToBatchND",
                     DType::kFloat32,
                     {s.in},
                     {Ints(s.block), Ints2D(m, s.pads)}});
  }
  const std::vector<SB> b2s = {{"2d_crop", {8, 3, 4, 2}, {2, 2}, {1, 0, 0, 2}},
                               {"2d_nocrop", {4, 2, 2, 1}, {2, 2}, {0, 0, 0, 0}},
                               {"1d_rest", {6, 2, 3}, {3}, {1, 2}},
                               {"asym_block", {12, 2, 3, 2}, {2, 3}, {1, 0, 2, 1}}};
  for (const SB& s : b2s) {
    const int64_t m = static_cast<int64_t>(s.block.size());
    cases.push_back({absl::StrCat("BatchToSpaceND_", s.name),
                     "BatchToSpaceND",
                     DType::kFloat32,
                     {s.in},
                     {Ints(s.block), Ints2D(m, s.pads)}});
  }
}

void AddGatherNdCases(std::vector<OpCase>& cases) {
  auto gather = [&](const std::string& name, DType t, Dims params, Tensor indices) {
    OpCase c{name, "GatherNd", t, {params}, {indices}};
    c.has_t = false;
    c.attrs["Tparams"] = TypeAttr(t);
    c.attrs["Tindices"] = TypeAttr(indices.dtype());
    cases.push_back(c);
  };
  gather("GatherNd_partial", DType::kFloat32, {4, 5, 3}, Ints2D(3, {1, 2, 3, 0, 0, 4}));
  gather(
      "GatherNd_full", DType::kFloat32, {4, 5, 3},
      Tensor::FromVector<int32_t>(DType::kInt32, {2, 2, 3}, {0, 0, 0, 3, 4, 2, 1, 1, 1, 2, 3, 0}));
  gather("GatherNd_depth1_int64", DType::kInt32, {4, 5},
         Tensor::FromVector<int64_t>(DType::kInt64, {3, 1}, {3, 0, 2}));
  gather("GatherNd_vector_index", DType::kFloat32, {4, 5, 3}, Ints({2, 1}));
}

}  // namespace

std::vector<OpCase> ImageCases() {
  std::vector<OpCase> cases;
  AddPoolCases(cases);
  AddResizeCases(cases);
  AddSpaceCases(cases);
  AddGatherNdCases(cases);
  return cases;
}

}  // namespace tfjit::optest

// NMS has a data-dependent output shape: must-compile and auto mode compile it padded, its size
// a row count, and cut it at the cluster's edge (here after a Relu: one cluster, the NMS its
// output).
namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

constexpr char kNmsGraph[] = R"pb(
node { name: "boxes" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "scores" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "relu" op: "Relu" input: "scores" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "max" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 3 } } } }
node { name: "iou" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0.5 } } } }
node { name: "thr" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0 } } } }
node { name: "nms" op: "NonMaxSuppressionV3" input: "boxes" input: "relu" input: "max"
       input: "iou" input: "thr" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

TEST(ImageOpsRuntimeOnly, NmsCompilesPaddedAsItsClustersOutput) {
  const std::string path = WriteTempFile("image_nms.pbtxt", kNmsGraph);
  const Tensor boxes = Tensor::FromVector<float>(
      DType::kFloat32, {4, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11, 0, 20, 1, 21});
  const Tensor scores = Tensor::FromVector<float>(DType::kFloat32, {4}, {0.9f, 0.8f, -1, 0.7f});
  auto run = [&](JitMode jit, std::string* explain) -> StatusOr<std::vector<Tensor>> {
    SessionOptions options;
    options.jit = jit;
    auto session = Session::Load(path, options);
    if (!session.ok()) return session.status();
    if (explain != nullptr) {
      auto text = (*session)->Explain({"nms"});
      if (!text.ok()) return text.status();
      *explain = *text;
    }
    return (*session)->Run({{"boxes", boxes}, {"scores", scores}}, {"nms"});
  };
  // Box 1 overlaps box 0 (IoU 0.82); box 2's relu'd score 0 is not above the threshold.
  for (JitMode jit : {JitMode::kAll, JitMode::kAuto}) {
    std::string explain;
    auto out = run(jit, &explain);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].ShapeString(), "int32[2]");
    EXPECT_EQ((*out)[0].data<int32_t>()[0], 0);
    EXPECT_EQ((*out)[0].data<int32_t>()[1], 3);
    EXPECT_TRUE(absl::StrContains(explain, "cluster_0: 5 nodes")) << explain;
    EXPECT_TRUE(absl::StrContains(explain, "'nms' (NonMaxSuppressionV3)")) << explain;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tfjit
