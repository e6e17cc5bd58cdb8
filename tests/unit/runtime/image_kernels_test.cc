// Image/index kernels (image_kernels.cc; the 2-D pools in nn_kernels.cc, GatherNd in
// array_gather_kernels.cc) against naive references written here, and the data-dependent
// kernels (image_nms_kernels.cc) on hand-computed cases.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;
using testing::F32;
using testing::I32;
using testing::I64;
using testing::OpRunner;
using testing::Values;

// Deterministic pseudo-random floats in [-2, 2).
Tensor Pattern(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t(DType::kFloat32, std::move(dims));
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) * 4.0f - 2.0f;
  }
  return t;
}

float At4(const Tensor& t, int64_t n, int64_t h, int64_t w, int64_t c) {
  return t.data<float>()[((n * t.dim(1) + h) * t.dim(2) + w) * t.dim(3) + c];
}

// Pooling by definition: the window at out * stride - pad_before, cells inside the input only.
Tensor NaivePool(const Tensor& in, int64_t k, int64_t s, bool same, bool max) {
  auto out_size = [&](int64_t n) { return same ? (n + s - 1) / s : (n - k + s) / s; };
  auto pad = [&](int64_t n) {
    return same ? std::max<int64_t>(0, (out_size(n) - 1) * s + k - n) / 2 : 0;
  };
  const int64_t oh = out_size(in.dim(1)), ow = out_size(in.dim(2));
  Tensor out(DType::kFloat32, {in.dim(0), oh, ow, in.dim(3)});
  int64_t o = 0;
  for (int64_t n = 0; n < in.dim(0); ++n) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        for (int64_t c = 0; c < in.dim(3); ++c) {
          double acc = max ? -INFINITY : 0.0;
          int count = 0;
          for (int64_t i = 0; i < k; ++i) {
            for (int64_t j = 0; j < k; ++j) {
              const int64_t h = y * s - pad(in.dim(1)) + i, w = x * s - pad(in.dim(2)) + j;
              if (h < 0 || h >= in.dim(1) || w < 0 || w >= in.dim(2)) continue;
              const double v = At4(in, n, h, w, c);
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          }
          out.data<float>()[o++] = static_cast<float>(max ? acc : acc / count);
        }
      }
    }
  }
  return out;
}

void ExpectNear(const Tensor& expected, const Tensor& actual, double tol) {
  ASSERT_EQ(expected.ShapeString(), actual.ShapeString());
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    ASSERT_NEAR(ElementAsDouble(expected, i), ElementAsDouble(actual, i), tol) << "element " << i;
  }
}

TEST(ImageKernelsTest, PoolingMatchesTheDefinition) {
  const Tensor in = Pattern({2, 7, 8, 3}, 1);
  for (const char* op : {"MaxPool", "AvgPool"}) {
    for (const char* padding : {"SAME", "VALID"}) {
      for (int64_t s : {1, 2}) {
        for (int64_t k : {1, 3, 7}) {
          SCOPED_TRACE(::testing::Message() << op << " " << padding << " k" << k << " s" << s);
          auto out = OpRunner(op)
                         .T(DType::kFloat32)
                         .Input(in)
                         .Ints("ksize", {1, k, k, 1})
                         .Ints("strides", {1, s, s, 1})
                         .Str("padding", padding)
                         .Run0();
          ASSERT_TRUE(out.ok()) << out.status();
          ExpectNear(
              NaivePool(in, k, s, std::string(padding) == "SAME", std::string(op) == "MaxPool"),
              *out, 1e-5);
        }
      }
    }
  }
}

TEST(ImageKernelsTest, AvgPoolDividesByTheCountOfRealCells) {
  // 3x3 input of ones except the centre; 3x3 SAME window at the corner covers 4 real cells.
  Tensor in = F32({1, 3, 3, 1}, {1, 1, 1, 1, 5, 1, 1, 1, 1});
  auto out = OpRunner("AvgPool")
                 .T(DType::kFloat32)
                 .Input(in)
                 .Ints("ksize", {1, 3, 3, 1})
                 .Ints("strides", {1, 1, 1, 1})
                 .Str("padding", "SAME")
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  // Corners average 4 real cells (8 / 4), edges 6 (10 / 6), the centre 9 (13 / 9).
  const std::vector<double> expected = {2,        10.0 / 6, 2,        10.0 / 6, 13.0 / 9,
                                        10.0 / 6, 2,        10.0 / 6, 2};
  const std::vector<double> actual = Values(*out);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-6) << i;
}

TEST(ImageKernelsTest, PoolingErrors) {
  const Tensor in = Pattern({1, 4, 4, 1}, 2);
  TFJIT_EXPECT_ERROR(OpRunner("MaxPool")
                         .T(DType::kFloat32)
                         .Input(in)
                         .Ints("ksize", {2, 2, 2, 1})
                         .Ints("strides", {1, 1, 1, 1})
                         .Str("padding", "SAME")
                         .Run0(),
                     absl::StatusCode::kInvalidArgument, "batch dimension");
  TFJIT_EXPECT_ERROR(OpRunner("AvgPool")
                         .T(DType::kFloat32)
                         .Input(in)
                         .Ints("ksize", {1, 9, 1, 1})
                         .Ints("strides", {1, 1, 1, 1})
                         .Str("padding", "VALID")
                         .Run0(),
                     absl::StatusCode::kInvalidArgument, "would be negative");
}

// TF's bilinear resize by its documented formulas, in double.
Tensor NaiveResize(const Tensor& in, int64_t oh, int64_t ow, bool align, bool half) {
  auto src = [&](int64_t o, int64_t in_size, int64_t out_size) {
    const double scale = (align && out_size > 1) ? double(in_size - 1) / double(out_size - 1)
                                                 : double(in_size) / double(out_size);
    return half ? (o + 0.5) * scale - 0.5 : o * scale;
  };
  Tensor out(DType::kFloat32, {in.dim(0), oh, ow, in.dim(3)});
  int64_t o = 0;
  for (int64_t n = 0; n < in.dim(0); ++n) {
    for (int64_t y = 0; y < oh; ++y) {
      const double sy = src(y, in.dim(1), oh);
      const int64_t y0 = std::max<int64_t>(0, int64_t(std::floor(sy)));
      const int64_t y1 = std::min<int64_t>(in.dim(1) - 1, int64_t(std::ceil(sy)));
      const double ly = sy - std::floor(sy);
      for (int64_t x = 0; x < ow; ++x) {
        const double sx = src(x, in.dim(2), ow);
        const int64_t x0 = std::max<int64_t>(0, int64_t(std::floor(sx)));
        const int64_t x1 = std::min<int64_t>(in.dim(2) - 1, int64_t(std::ceil(sx)));
        const double lx = sx - std::floor(sx);
        for (int64_t c = 0; c < in.dim(3); ++c) {
          const double top = At4(in, n, y0, x0, c) * (1 - lx) + At4(in, n, y0, x1, c) * lx;
          const double bottom = At4(in, n, y1, x0, c) * (1 - lx) + At4(in, n, y1, x1, c) * lx;
          out.data<float>()[o++] = static_cast<float>(top * (1 - ly) + bottom * ly);
        }
      }
    }
  }
  return out;
}

TEST(ImageKernelsTest, ResizeBilinearMatchesTheFormulaInEveryMode) {
  const Tensor in = Pattern({2, 5, 4, 3}, 3);
  struct Mode {
    bool align, half;
  };
  for (Mode m : {Mode{false, false}, Mode{true, false}, Mode{false, true}}) {
    for (auto [oh, ow] :
         std::vector<std::pair<int32_t, int32_t>>{{9, 11}, {3, 2}, {1, 1}, {5, 4}}) {
      SCOPED_TRACE(::testing::Message()
                   << "align " << m.align << " half " << m.half << " " << oh << "x" << ow);
      auto out = OpRunner("ResizeBilinear")
                     .T(DType::kFloat32)
                     .Input(in)
                     .Input(I32({2}, {oh, ow}))
                     .Bool("align_corners", m.align)
                     .Bool("half_pixel_centers", m.half)
                     .Run0();
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectNear(NaiveResize(in, oh, ow, m.align, m.half), *out, 2e-5);
    }
  }
}

TEST(ImageKernelsTest, ResizeBilinearHandValuesAndErrors) {
  // 1x2 row [0, 10] to width 4: legacy x = 0, .5, 1, 1.5 -> 0, 5, 10, 10; align_corners
  // x = 0, 1/3, 2/3, 1 -> 0, 10/3, 20/3, 10; half-pixel x = -.25, .25, .75, 1.25 ->
  // 0, 2.5, 7.5, 10.
  const Tensor row = F32({1, 1, 2, 1}, {0, 10});
  auto run = [&](bool align, bool half) {
    return OpRunner("ResizeBilinear")
        .T(DType::kFloat32)
        .Input(row)
        .Input(I32({2}, {1, 4}))
        .Bool("align_corners", align)
        .Bool("half_pixel_centers", half)
        .Run0();
  };
  EXPECT_THAT(Values(*run(false, false)), ElementsAre(0, 5, 10, 10));
  auto aligned = run(true, false);
  ASSERT_TRUE(aligned.ok());
  EXPECT_NEAR(Values(*aligned)[1], 10.0 / 3, 1e-5);
  EXPECT_NEAR(Values(*aligned)[2], 20.0 / 3, 1e-5);
  EXPECT_THAT(Values(*run(false, true)), ElementsAre(0, 2.5, 7.5, 10));
  TFJIT_EXPECT_ERROR(run(true, true), absl::StatusCode::kInvalidArgument,
                     "If half_pixel_centers is True, align_corners must be False.");
  // Integer images give float32.
  auto ints = OpRunner("ResizeBilinear")
                  .T(DType::kInt32)
                  .Input(I32({1, 1, 2, 1}, {0, 10}))
                  .Input(I32({2}, {1, 4}))
                  .Bool("half_pixel_centers", true)
                  .Run0();
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(ints->ShapeString(), "float32[1,1,4,1]");
}

TEST(ImageKernelsTest, DepthToSpaceAndBack) {
  // [1,1,1,8] with block 2: DCR order puts channels (i*2+j)*2+c at (i, j, c).
  const Tensor in = F32({1, 1, 1, 8}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto d2s = OpRunner("DepthToSpace").T(DType::kFloat32).Input(in).Int("block_size", 2).Run0();
  ASSERT_TRUE(d2s.ok()) << d2s.status();
  EXPECT_EQ(d2s->ShapeString(), "float32[1,2,2,2]");
  EXPECT_THAT(Values(*d2s), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  const Tensor big = Pattern({2, 3, 4, 8}, 4);
  auto up = OpRunner("DepthToSpace").T(DType::kFloat32).Input(big).Int("block_size", 2).Run0();
  ASSERT_TRUE(up.ok());
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t y = 0; y < 6; ++y) {
      for (int64_t x = 0; x < 8; ++x) {
        for (int64_t c = 0; c < 2; ++c) {
          ASSERT_EQ(At4(*up, n, y, x, c), At4(big, n, y / 2, x / 2, ((y % 2) * 2 + x % 2) * 2 + c));
        }
      }
    }
  }
  auto back = OpRunner("SpaceToDepth").T(DType::kFloat32).Input(*up).Int("block_size", 2).Run0();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Values(*back), Values(big));
  TFJIT_EXPECT_ERROR(OpRunner("DepthToSpace")
                         .T(DType::kFloat32)
                         .Input(Pattern({1, 1, 1, 6}, 5))
                         .Int("block_size", 2)
                         .Run0(),
                     absl::StatusCode::kInvalidArgument, "should be divisible by: 4");
}

TEST(ImageKernelsTest, SpaceToBatchNDPadsAndInterleaves) {
  // TF's documented example: [1, 4, 4, 1] -> [4, 2, 2, 1] with block [2, 2].
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  auto out = OpRunner("SpaceToBatchND")
                 .T(DType::kFloat32)
                 .Input(F32({1, 4, 4, 1}, v))
                 .Input(I32({2}, {2, 2}))
                 .Input(I32({2, 2}, {0, 0, 0, 0}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ShapeString(), "float32[4,2,2,1]");
  EXPECT_THAT(Values(*out), ElementsAre(1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16));
  // 1-D with padding: [1, 2, 1] padded [1, 1] -> [0, a, b, 0] -> batches [0, b] and [a, 0].
  auto padded = OpRunner("SpaceToBatchND")
                    .T(DType::kFloat32)
                    .Input(F32({1, 2, 1}, {7, 8}))
                    .Input(I32({1}, {2}))
                    .Input(I32({1, 2}, {1, 1}))
                    .Run0();
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_THAT(Values(*padded), ElementsAre(0, 8, 7, 0));
  // BatchToSpaceND inverts it, and crops.
  auto back = OpRunner("BatchToSpaceND")
                  .T(DType::kFloat32)
                  .Input(*out)
                  .Input(I32({2}, {2, 2}))
                  .Input(I32({2, 2}, {0, 0, 0, 0}))
                  .Run0();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Values(*back), Values(F32({1, 4, 4, 1}, v)));
  auto cropped = OpRunner("BatchToSpaceND")
                     .T(DType::kFloat32)
                     .Input(*padded)
                     .Input(I32({1}, {2}))
                     .Input(I32({1, 2}, {1, 1}))
                     .Run0();
  ASSERT_TRUE(cropped.ok()) << cropped.status();
  EXPECT_THAT(Values(*cropped), ElementsAre(7, 8));
  TFJIT_EXPECT_ERROR(OpRunner("SpaceToBatchND")
                         .T(DType::kFloat32)
                         .Input(F32({1, 3, 1}, {1, 2, 3}))
                         .Input(I32({1}, {2}))
                         .Input(I32({1, 2}, {0, 0}))
                         .Run0(),
                     absl::StatusCode::kInvalidArgument, "is not divisible by block_shape");
}

TEST(ImageKernelsTest, GatherNdPartialAndFullDepth) {
  const Tensor params = Pattern({4, 5, 3}, 6);
  auto partial = OpRunner("GatherNd")
                     .Type("Tparams", DType::kFloat32)
                     .Type("Tindices", DType::kInt32)
                     .Input(params)
                     .Input(I32({2, 2}, {1, 2, 3, 4}))
                     .Run0();
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_EQ(partial->ShapeString(), "float32[2,3]");
  for (int64_t c = 0; c < 3; ++c) {
    EXPECT_EQ(partial->data<float>()[c], params.data<float>()[(1 * 5 + 2) * 3 + c]);
    EXPECT_EQ(partial->data<float>()[3 + c], params.data<float>()[(3 * 5 + 4) * 3 + c]);
  }
  auto full = OpRunner("GatherNd")
                  .Type("Tparams", DType::kFloat32)
                  .Type("Tindices", DType::kInt64)
                  .Input(params)
                  .Input(I64({2, 3}, {0, 0, 0, 3, 4, 2}))
                  .Run0();
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_THAT(Values(*full), ElementsAre(params.data<float>()[0], params.data<float>()[59]));
  TFJIT_EXPECT_ERROR(OpRunner("GatherNd")
                         .Type("Tparams", DType::kFloat32)
                         .Type("Tindices", DType::kInt32)
                         .Input(params)
                         .Input(I32({1, 2}, {4, 0}))
                         .Run0(),
                     absl::StatusCode::kInvalidArgument,
                     "indices[0] = [4, 0] does not index into param shape [4,5,3]");
}

// ---- NonMaxSuppression (hand-computed) ----

// Boxes of TF's documentation example: three overlapping boxes around y=0, one at y=10,
// two further away.
Tensor DocBoxes() {
  return F32({6, 4}, {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                      0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101});
}
Tensor DocScores() { return F32({6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}); }

absl::StatusOr<std::vector<Tensor>> Nms(const char* op, Tensor boxes, Tensor scores, int max,
                                        float iou, float score_threshold, float sigma = 0,
                                        bool pad = false) {
  OpRunner r(op);
  r.T(DType::kFloat32).Input(boxes).Input(scores).Input(I32({}, {max})).Input(F32({}, {iou}));
  if (std::string(op) != "NonMaxSuppressionV2") r.Input(F32({}, {score_threshold}));
  if (std::string(op) == "NonMaxSuppressionV5") {
    r.Input(F32({}, {sigma}));
    r.Bool("pad_to_max_output_size", pad);
  } else if (std::string(op) == "NonMaxSuppressionV4") {
    r.Bool("pad_to_max_output_size", pad);
  }
  return r.Run();
}

TEST(NmsKernelsTest, GreedySelectionOfTheDocumentationExample) {
  // IoU(0, 1) = 0.9 / 1.1 = 0.818 > 0.5: box 1 goes; box 2 overlaps box 0 likewise; box 4
  // overlaps box 3. Selected by descending score: 3, 0, 5.
  auto v3 = Nms("NonMaxSuppressionV3", DocBoxes(), DocScores(), 3, 0.5f, 0.0f);
  ASSERT_TRUE(v3.ok()) << v3.status();
  EXPECT_THAT(Values((*v3)[0]), ElementsAre(3, 0, 5));
  // max_output_size limits; score_threshold is strict (0.3 drops box 5).
  auto limited = Nms("NonMaxSuppressionV3", DocBoxes(), DocScores(), 2, 0.5f, 0.0f);
  EXPECT_THAT(Values((*limited)[0]), ElementsAre(3, 0));
  auto thresholded = Nms("NonMaxSuppressionV3", DocBoxes(), DocScores(), 10, 0.5f, 0.3f);
  EXPECT_THAT(Values((*thresholded)[0]), ElementsAre(3, 0));
  auto v2 = Nms("NonMaxSuppressionV2", DocBoxes(), DocScores(), 10, 0.5f, 0.0f);
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_THAT(Values((*v2)[0]), ElementsAre(3, 0, 5));
  // The first form takes iou_threshold as an attr (default 0.5) and no score threshold.
  OpRunner v1("NonMaxSuppression");
  v1.Input(DocBoxes()).Input(DocScores()).Input(I32({}, {10}));
  auto v1_default = v1.Run();
  ASSERT_TRUE(v1_default.ok()) << v1_default.status();
  EXPECT_THAT(Values((*v1_default)[0]), ElementsAre(3, 0, 5));
  OpRunner v1_loose("NonMaxSuppression");
  v1_loose.Input(DocBoxes())
      .Input(DocScores())
      .Input(I32({}, {10}))
      .RawAttr("iou_threshold", "f: 0.9");
  auto v1_all = v1_loose.Run();
  ASSERT_TRUE(v1_all.ok()) << v1_all.status();
  EXPECT_THAT(Values((*v1_all)[0]), ElementsAre(3, 0, 1, 2, 4, 5));
  // A threshold above every IoU keeps all boxes, in score order.
  auto all = Nms("NonMaxSuppressionV3", DocBoxes(), DocScores(), 10, 0.9f, -1.0f);
  EXPECT_THAT(Values((*all)[0]), ElementsAre(3, 0, 1, 2, 4, 5));
}

TEST(NmsKernelsTest, TiesCornerOrderAndIouAtTheThreshold) {
  // Equal scores: lower index first. Box 1 is box 0 with its corners swapped (IoU 1).
  // Box 2 overlaps box 0 by exactly half its union: [0,0,1,2] vs [0,1,1,3] -> IoU 1/3.
  const Tensor boxes = F32({3, 4}, {0, 0, 1, 2, 1, 2, 0, 0, 0, 1, 1, 3});
  const Tensor scores = F32({3}, {0.5f, 0.5f, 0.5f});
  auto r = Nms("NonMaxSuppressionV3", boxes, scores, 10, 0.5f, 0.0f);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values((*r)[0]), ElementsAre(0, 2));
  // IoU equal to the threshold suppresses (TF's kernel compares IoU >= threshold).
  auto at = Nms("NonMaxSuppressionV3", boxes, scores, 10, 1.0f / 3.0f, 0.0f);
  EXPECT_THAT(Values((*at)[0]), ElementsAre(0));
  // Zero-area boxes overlap nothing.
  auto flat = Nms("NonMaxSuppressionV3", F32({2, 4}, {0, 0, 0, 1, 0, 0, 0, 1}),
                  F32({2}, {0.9f, 0.8f}), 10, 0.5f, 0.0f);
  EXPECT_THAT(Values((*flat)[0]), ElementsAre(0, 1));
}

TEST(NmsKernelsTest, V4AndV5PadAndCountValidOutputs) {
  auto v4 = Nms("NonMaxSuppressionV4", DocBoxes(), DocScores(), 5, 0.5f, 0.0f, 0, true);
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_THAT(Values((*v4)[0]), ElementsAre(3, 0, 5, 0, 0));
  EXPECT_THAT(Values((*v4)[1]), ElementsAre(3));
  auto v5 = Nms("NonMaxSuppressionV5", DocBoxes(), DocScores(), 4, 0.5f, 0.0f, 0, true);
  ASSERT_TRUE(v5.ok()) << v5.status();
  EXPECT_THAT(Values((*v5)[0]), ElementsAre(3, 0, 5, 0));
  EXPECT_THAT(Values((*v5)[1]), ElementsAre(0.95f, 0.9f, 0.3f, 0));
  EXPECT_THAT(Values((*v5)[2]), ElementsAre(3));
  auto unpadded = Nms("NonMaxSuppressionV5", DocBoxes(), DocScores(), 4, 0.5f, 0.0f);
  EXPECT_EQ((*unpadded)[0].ShapeString(), "int32[3]");
}

TEST(NmsKernelsTest, SoftNmsDecaysOverlappingScores) {
  // Two boxes with IoU 1/3 (below the 0.9 threshold). sigma = 0.5: box 1's score becomes
  // 0.8 * exp(-(1/3)^2 / (2 * 0.5)) = 0.8 * exp(-1/9).
  const Tensor boxes = F32({2, 4}, {0, 0, 1, 2, 0, 1, 1, 3});
  auto r = Nms("NonMaxSuppressionV5", boxes, F32({2}, {0.9f, 0.8f}), 10, 0.9f, 0.0f, 0.5f);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values((*r)[0]), ElementsAre(0, 1));
  EXPECT_NEAR(Values((*r)[1])[1], 0.8 * std::exp(-1.0 / 9.0), 1e-6);
  // A decayed score at or below score_threshold drops the box.
  auto dropped = Nms("NonMaxSuppressionV5", boxes, F32({2}, {0.9f, 0.8f}), 10, 0.9f, 0.75f, 0.5f);
  EXPECT_THAT(Values((*dropped)[0]), ElementsAre(0));
}

TEST(NmsKernelsTest, Errors) {
  TFJIT_EXPECT_ERROR(Nms("NonMaxSuppressionV3", DocBoxes(), DocScores(), 3, 1.5f, 0.0f),
                     absl::StatusCode::kInvalidArgument, "iou_threshold must be in [0, 1]");
  TFJIT_EXPECT_ERROR(
      Nms("NonMaxSuppressionV3", F32({2, 3}, {0, 0, 0, 0, 0, 0}), F32({2}, {1, 1}), 3, 0.5f, 0.0f),
      absl::StatusCode::kInvalidArgument, "boxes must have 4 columns");
  TFJIT_EXPECT_ERROR(Nms("NonMaxSuppressionV3", DocBoxes(), F32({2}, {1, 1}), 3, 0.5f, 0.0f),
                     absl::StatusCode::kInvalidArgument, "scores has incompatible shape");
  TFJIT_EXPECT_ERROR(Nms("NonMaxSuppressionV5", DocBoxes(), DocScores(), 3, 0.5f, 0.0f, -1.0f),
                     absl::StatusCode::kInvalidArgument, "soft_nms_sigma must be non-negative");
}

// ---- SparseToDense ----

TEST(SparseToDenseTest, ScattersValuesOverTheDefault) {
  auto out = OpRunner("SparseToDense")
                 .T(DType::kFloat32)
                 .Type("Tindices", DType::kInt32)
                 .Input(I32({2, 2}, {0, 1, 2, 0}))
                 .Input(I32({2}, {3, 2}))
                 .Input(F32({2}, {5, 6}))
                 .Input(F32({}, {-1}))
                 .Run0();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values(*out), ElementsAre(-1, 5, -1, -1, 6, -1));
  // Scalar values broadcast; a vector of indices addresses a 1-D output.
  auto vec = OpRunner("SparseToDense")
                 .T(DType::kInt32)
                 .Type("Tindices", DType::kInt64)
                 .Input(I64({2}, {1, 3}))
                 .Input(I64({1}, {5}))
                 .Input(I32({}, {7}))
                 .Input(I32({}, {0}))
                 .Run0();
  ASSERT_TRUE(vec.ok()) << vec.status();
  EXPECT_THAT(Values(*vec), ElementsAre(0, 7, 0, 7, 0));
}

TEST(SparseToDenseTest, ValidatesIndices) {
  auto run = [](Tensor idx, bool validate) {
    return OpRunner("SparseToDense")
        .T(DType::kFloat32)
        .Type("Tindices", DType::kInt32)
        .Bool("validate_indices", validate)
        .Input(idx)
        .Input(I32({1}, {4}))
        .Input(F32({}, {1}))
        .Input(F32({}, {0}))
        .Run0();
  };
  TFJIT_EXPECT_ERROR(run(I32({2}, {2, 1}), true), absl::StatusCode::kInvalidArgument,
                     "is out of order");
  TFJIT_EXPECT_ERROR(run(I32({2}, {1, 1}), true), absl::StatusCode::kInvalidArgument,
                     "is repeated");
  TFJIT_EXPECT_ERROR(run(I32({1}, {4}), false), absl::StatusCode::kInvalidArgument,
                     "out of bounds");
  auto unordered = run(I32({2}, {2, 1}), false);
  ASSERT_TRUE(unordered.ok()) << unordered.status();
  EXPECT_THAT(Values(*unordered), ElementsAre(0, 1, 1, 0));
}

}  // namespace
}  // namespace tfjit::runtime
