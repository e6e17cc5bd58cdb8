// Tests the conv/pool attr validation, window geometry and fused_ops parsing shared by the
// fallback kernels and the lowerings, against sizes and paddings computed by hand from TF's
// formulas: SAME: out = ceil(in / s), total = max((out - 1) * s + eff - in, 0), before =
// total / 2; VALID/EXPLICIT: out = (in + pads - eff + s) / s truncated; eff = (k - 1) * d + 1.
#include "frontend/conv_attrs.h"

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace tfjit::tf {
namespace {

using ::testing::HasSubstr;
using testing::ParseTextProto;

// A graph of float placeholders p0..p5 and one node "c" of `op` over the first `inputs` of
// them, with `attrs` (text-format attr entries).
class ConvAttrsTest : public ::testing::Test {
 protected:
  const Node& Make(const std::string& op, int inputs, const std::string& attrs) {
    std::string text;
    for (int i = 0; i < 6; ++i) {
      text += "node { name: \"p" + std::to_string(i) +
              "\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
    }
    text += "node { name: \"c\" op: \"" + op + "\" ";
    for (int i = 0; i < inputs; ++i) text += "input: \"p" + std::to_string(i) + "\" ";
    text += "attr { key: \"T\" value { type: DT_FLOAT } } " + attrs + " }";
    absl::StatusOr<std::unique_ptr<Graph>> graph =
        Graph::Build(ParseTextProto<tensorflow::GraphDef>(text), "conv_attrs.pbtxt");
    EXPECT_TRUE(graph.ok()) << graph.status();
    graphs_.push_back(*std::move(graph));
    return *graphs_.back()->FindNode("c");
  }

  // A Conv2D node with the given strides, dilations and padding (+ explicit_paddings).
  const Node& Conv(const std::string& strides, const std::string& padding,
                   const std::string& dilations = "1, 1, 1, 1", const std::string& extra = "") {
    return Make("Conv2D", 2,
                "attr { key: \"strides\" value { list { i: [" + strides +
                    "] } } } "
                    "attr { key: \"dilations\" value { list { i: [" +
                    dilations +
                    "] } } } "
                    "attr { key: \"padding\" value { s: \"" +
                    padding + "\" } } " + extra);
  }

  const Node& Pool(const std::string& ksize, const std::string& strides, const std::string& padding,
                   const std::string& extra = "") {
    return Make("MaxPool", 1,
                "attr { key: \"ksize\" value { list { i: [" + ksize +
                    "] } } } "
                    "attr { key: \"strides\" value { list { i: [" +
                    strides +
                    "] } } } "
                    "attr { key: \"padding\" value { s: \"" +
                    padding + "\" } } " + extra);
  }

  std::vector<std::unique_ptr<Graph>> graphs_;
};

// "out before after" of a spatial dim, for compact expectations.
std::string Geometry(const SpatialDim& s) {
  return std::to_string(s.out) + " " + std::to_string(s.pad_before) + " " +
         std::to_string(s.pad_after);
}

absl::StatusOr<SpatialDim> Dim(const Node& node, int d, int64_t in, int64_t k) {
  TFJIT_ASSIGN_OR_RETURN(WindowAttrs a, ReadConvAttrs(node));
  return ComputeSpatialDim(node, a, d, in, k);
}

TEST_F(ConvAttrsTest, SamePadsTheOddCellAfter) {
  // in 5, k 3, s 2: out 3, total (3-1)*2 + 3 - 5 = 2 -> 1 + 1.
  EXPECT_EQ(Geometry(*Dim(Conv("1, 2, 2, 1", "SAME"), 1, 5, 3)), "3 1 1");
  // in 6, k 3, s 2: out 3, total 4 + 3 - 6 = 1 -> 0 before, 1 after.
  EXPECT_EQ(Geometry(*Dim(Conv("1, 2, 2, 1", "SAME"), 2, 6, 3)), "3 0 1");
  // Dilation 2 makes k 3 span 5: in 7, s 1: out 7, total 6 + 5 - 7 = 4 -> 2 + 2.
  EXPECT_EQ(Geometry(*Dim(Conv("1, 1, 1, 1", "SAME", "1, 2, 2, 1"), 1, 7, 3)), "7 2 2");
  // A window larger than the input still gives ceil(in / s): in 2, k 5, s 1: total 4.
  EXPECT_EQ(Geometry(*Dim(Conv("1, 1, 1, 1", "SAME"), 1, 2, 5)), "2 2 2");
}

TEST_F(ConvAttrsTest, ValidAndExplicitSizes) {
  // VALID in 7, k 3, d 2 (span 5), s 2: (7 - 5 + 2) / 2 = 2.
  EXPECT_EQ(Geometry(*Dim(Conv("1, 2, 2, 1", "VALID", "1, 2, 2, 1"), 1, 7, 3)), "2 0 0");
  // VALID in 10, k 3, s 3: (10 - 3 + 3) / 3 = 3 (TF's ceil((10 - 3 + 1) / 3)).
  EXPECT_EQ(Geometry(*Dim(Conv("1, 3, 3, 1", "VALID"), 2, 10, 3)), "3 0 0");
  // EXPLICIT [0,0, 1,2, 3,0, 0,0]: H in 5, k 3, s 2: (5 + 3 - 3 + 2) / 2 = 3; W in 4, k 2, s 1:
  // (4 + 3 - 2 + 1) / 1 = 6.
  const Node& e = Conv("1, 2, 1, 1", "EXPLICIT", "1, 1, 1, 1",
                       "attr { key: \"explicit_paddings\" value { list { i: [0, 0, 1, 2, 3, 0, "
                       "0, 0] } } }");
  absl::StatusOr<WindowAttrs> a = ReadConvAttrs(e);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<Window2D> w = ComputeWindow(e, *a, 5, 4, 3, 2);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(Geometry(w->h), "3 1 2");
  EXPECT_EQ(Geometry(w->w), "6 3 0");
  EXPECT_EQ(w->w.effective_k(), 2);
}

TEST_F(ConvAttrsTest, OutputSizeTruncatesLikeTf) {
  // in 1, k 4, s 2: (1 - 4 + 2) / 2 = -1 / 2 = 0 in C++ and in TF: an empty output, no error.
  EXPECT_EQ(Geometry(*Dim(Conv("1, 2, 2, 1", "VALID"), 1, 1, 4)), "0 0 0");
  // in 1, k 4, s 1: -2 is negative.
  absl::StatusOr<SpatialDim> negative = Dim(Conv("1, 1, 1, 1", "VALID"), 1, 1, 4);
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(negative.status().message()),
              HasSubstr("node 'c' (Conv2D): Computed output size would be negative: -2 "
                        "[input_size: 1, effective_filter_size: 4, stride: 1]"));
  EXPECT_EQ(NodeOfError(negative.status()).first, "c");
}

TEST_F(ConvAttrsTest, BadConvAttrs) {
  struct Case {
    std::string strides, padding, dilations, extra;
    absl::StatusCode code;
    std::string message;
  };
  const std::string nchw = "attr { key: \"data_format\" value { s: \"NCHW\" } }";
  const std::string pads = "attr { key: \"explicit_paddings\" value { list { i: [";
  const std::vector<Case> cases = {
      // NCHW strides ([1, 1, s, s]) must not be reported as bad strides: the layout comes first.
      {"1, 1, 2, 2", "SAME", "1, 1, 1, 1", nchw, absl::StatusCode::kUnimplemented,
       "data_format 'NCHW' is not supported"},
      {"1, 2, 2", "SAME", "1, 1, 1, 1", "", absl::StatusCode::kInvalidArgument,
       "strides must have 4 entries (NHWC), got [1,2,2]"},
      {"2, 1, 1, 1", "SAME", "1, 1, 1, 1", "", absl::StatusCode::kInvalidArgument,
       "strides in the batch and depth dimensions must be 1"},
      {"1, 1, 1, 1", "SAME", "1, 0, 1, 1", "", absl::StatusCode::kInvalidArgument,
       "dilations must be >= 1, got [1,0,1,1]"},
      {"1, 1, 1, 1", "FULL", "1, 1, 1, 1", "", absl::StatusCode::kInvalidArgument,
       "padding must be SAME, VALID or EXPLICIT, got 'FULL'"},
      {"1, 1, 1, 1", "EXPLICIT", "1, 1, 1, 1", pads + "1, 0, 0, 0, 0, 0, 0, 0] } } }",
       absl::StatusCode::kInvalidArgument, "zero batch and depth padding"},
      {"1, 1, 1, 1", "EXPLICIT", "1, 1, 1, 1", pads + "0, 0, -1, 0, 0, 0, 0, 0] } } }",
       absl::StatusCode::kInvalidArgument, "8 non-negative entries"},
      {"1, 1, 1, 1", "EXPLICIT", "1, 1, 1, 1", pads + "0, 0, 1, 1] } } }",
       absl::StatusCode::kInvalidArgument, "8 non-negative entries"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    absl::StatusOr<WindowAttrs> a = ReadConvAttrs(Conv(c.strides, c.padding, c.dilations, c.extra));
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().code(), c.code) << a.status();
    EXPECT_THAT(std::string(a.status().message()), HasSubstr("node 'c' (Conv2D): "));
    EXPECT_THAT(std::string(a.status().message()), HasSubstr(c.message));
  }
  // The layer picks the code of TF's kernel for another layout.
  absl::Status layout =
      CheckNhwc(Conv("1, 1, 2, 2", "SAME", "1, 1, 1, 1", nchw), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(layout.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CheckNhwc(Conv("1, 1, 1, 1", "SAME")).ok());
}

TEST_F(ConvAttrsTest, PoolWindowAndBadPoolAttrs) {
  // ksize 3 stride 2 SAME on 4x5: H out 2, total (2-1)*2 + 3 - 4 = 1 -> 0 + 1; W out 3,
  // total 4 + 3 - 5 = 2 -> 1 + 1.
  absl::StatusOr<Window2D> w = PoolWindow(Pool("1, 3, 3, 1", "1, 2, 2, 1", "SAME"), {1, 4, 5, 2});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(Geometry(w->h), "2 0 1");
  EXPECT_EQ(Geometry(w->w), "3 1 1");
  EXPECT_EQ(w->h.k, 3);
  EXPECT_EQ(w->h.dilation, 1);
  // EXPLICIT H pads 2, 0 with ksize 2 stride 1 on in 3: (3 + 2 - 2 + 1) / 1 = 4.
  absl::StatusOr<Window2D> e = PoolWindow(
      Pool("1, 2, 1, 1", "1, 1, 1, 1", "EXPLICIT",
           "attr { key: \"explicit_paddings\" value { list { i: [0, 0, 2, 0, 0, 0, 0, 0] } } }"),
      {1, 3, 3, 1});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(Geometry(e->h), "4 2 0");

  struct Case {
    std::string ksize, strides, padding;
    std::vector<int64_t> dims;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"1, 2, 2, 1", "1, 1, 1, 1", "SAME", {4, 4, 1}, "input must be 4-dimensional, got [4,4,1]"},
      {"1, 2, 2", "1, 1, 1, 1", "SAME", {1, 4, 4, 1}, "ksize field must specify 4 dimensions"},
      {"1, 2, 2, 1", "1, 1, 1", "SAME", {1, 4, 4, 1}, "stride field must specify 4 dimensions"},
      {"2, 2, 2, 1", "1, 1, 1, 1", "SAME", {1, 4, 4, 1}, "not yet supported on the batch"},
      {"1, 2, 2, 2", "1, 1, 1, 1", "SAME", {1, 4, 4, 1}, "across the depth dimension"},
      {"1, 0, 2, 1", "1, 1, 1, 1", "SAME", {1, 4, 4, 1}, "ksize and strides must be positive"},
      {"1, 9, 1, 1",
       "1, 1, 1, 1",
       "VALID",
       {1, 4, 4, 1},
       "would be negative: -4 [input_size: 4, effective_filter_size: 9, stride: 1]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    absl::StatusOr<Window2D> bad = PoolWindow(Pool(c.ksize, c.strides, c.padding), c.dims);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr("node 'c' (MaxPool): "));
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr(c.message));
  }
}

TEST_F(ConvAttrsTest, ConvAndBackpropGeometry) {
  const Node& c = Conv("1, 2, 2, 1", "SAME");
  const WindowAttrs a = *ReadConvAttrs(c);
  // Grouped: input depth 4, filter in_channels 2 -> 2 groups; out depth 6 (3 per group).
  absl::StatusOr<ConvGeometry> g = Conv2DGeometry(c, a, {1, 5, 6, 4}, {3, 3, 2, 6}, false);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->groups, 2);
  EXPECT_EQ(g->out_channels, 6);
  EXPECT_EQ(Geometry(g->window.h), "3 1 1");
  EXPECT_EQ(Geometry(g->window.w), "3 0 1");
  // Depthwise: multiplier 2 on 3 channels -> 3 groups, 6 outputs.
  absl::StatusOr<ConvGeometry> dw = Conv2DGeometry(c, a, {1, 5, 6, 3}, {3, 3, 3, 2}, true);
  ASSERT_TRUE(dw.ok()) << dw.status();
  EXPECT_EQ(dw->groups, 3);
  EXPECT_EQ(dw->out_channels, 6);
  auto message = [](const auto& r) { return std::string(r.status().message()); };
  EXPECT_THAT(message(Conv2DGeometry(c, a, {1, 5, 6, 4}, {3, 3, 3, 6}, false)),
              HasSubstr("evenly divisible"));
  EXPECT_THAT(message(Conv2DGeometry(c, a, {1, 5, 6, 4}, {3, 3, 2, 5}, false)),
              HasSubstr("evenly divisible"));
  EXPECT_THAT(message(Conv2DGeometry(c, a, {1, 5, 6, 4}, {3, 3, 3, 2}, true)),
              HasSubstr("must be [h, w, 4, multiplier]"));
  EXPECT_THAT(message(Conv2DGeometry(c, a, {5, 6, 4}, {3, 3, 4, 2}, false)),
              HasSubstr("input must be 4-D"));
  // Backprop: the forward conv of [1, 5, 6, 4] gives 3x3, so out_backprop must be [1, 3, 3, o].
  absl::StatusOr<Window2D> bp =
      BackpropInputGeometry(c, a, {1, 5, 6, 4}, {3, 3, 4, 2}, {1, 3, 3, 2});
  ASSERT_TRUE(bp.ok()) << bp.status();
  EXPECT_EQ(Geometry(bp->h), "3 1 1");
  EXPECT_THAT(message(BackpropInputGeometry(c, a, {1, 5, 6, 4}, {3, 3, 4, 2}, {1, 3, 4, 2})),
              HasSubstr("does not match the forward output size [3, 3]"));
  EXPECT_THAT(message(BackpropInputGeometry(c, a, {1, 5, 6, 3}, {3, 3, 4, 2}, {1, 3, 3, 2})),
              HasSubstr("disagree"));
  EXPECT_THAT(message(BackpropInputGeometry(c, a, {1, 5, 6}, {3, 3, 4, 2}, {1, 3, 3, 2})),
              HasSubstr("input_sizes must have 4 entries"));
}

std::string FusedAttrs(const std::string& ops, int num_args) {
  return "attr { key: \"fused_ops\" value { list { s: [" + ops +
         "] } } } "
         "attr { key: \"num_args\" value { i: " +
         std::to_string(num_args) +
         " } } "
         "attr { key: \"strides\" value { list { i: [1, 1, 1, 1] } } } "
         "attr { key: \"padding\" value { s: \"SAME\" } }";
}

TEST_F(ConvAttrsTest, ParsesFusedOps) {
  absl::StatusOr<FusedEpilogue> bias_relu =
      ParseFusedOps(Make("_FusedConv2D", 3, FusedAttrs("\"BiasAdd\", \"Relu6\"", 1)));
  ASSERT_TRUE(bias_relu.ok()) << bias_relu.status();
  EXPECT_TRUE(bias_relu->bias);
  EXPECT_FALSE(bias_relu->batch_norm);
  EXPECT_EQ(bias_relu->activation, FusedActivation::kRelu6);
  EXPECT_EQ(bias_relu->num_args, 1);
  EXPECT_FALSE(bias_relu->empty());
  // Case-insensitive (tfjs writes lower case); Prelu's alpha is one more arg.
  absl::StatusOr<FusedEpilogue> prelu =
      ParseFusedOps(Make("_FusedConv2D", 4, FusedAttrs("\"biasadd\", \"prelu\"", 2)));
  ASSERT_TRUE(prelu.ok()) << prelu.status();
  EXPECT_EQ(prelu->activation, FusedActivation::kPrelu);
  EXPECT_EQ(prelu->num_args, 2);
  // Batch norm takes four args and reads epsilon; LeakyRelu reads its alpha.
  absl::StatusOr<FusedEpilogue> bn =
      ParseFusedOps(Make("_FusedConv2D", 6,
                         FusedAttrs("\"FusedBatchNorm\", \"LeakyRelu\"", 4) +
                             " attr { key: \"epsilon\" value { f: 0.5 } }"
                             " attr { key: \"leakyrelu_alpha\" value { f: 0.25 } }"));
  ASSERT_TRUE(bn.ok()) << bn.status();
  EXPECT_TRUE(bn->batch_norm);
  EXPECT_EQ(bn->num_args, 4);
  EXPECT_EQ(bn->epsilon, 0.5f);
  EXPECT_EQ(bn->leakyrelu_alpha, 0.25f);
  EXPECT_EQ(bn->activation, FusedActivation::kLeakyRelu);
  absl::StatusOr<FusedEpilogue> none = ParseFusedOps(Make("_FusedMatMul", 2, FusedAttrs("", 0)));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());

  absl::StatusOr<FusedEpilogue> add =
      ParseFusedOps(Make("_FusedConv2D", 4, FusedAttrs("\"BiasAdd\", \"Add\"", 2)));
  ASSERT_FALSE(add.ok());
  EXPECT_EQ(add.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(add.status().message()),
              HasSubstr("node 'c' (_FusedConv2D): fused_ops [BiasAdd,Add] is not supported"));
  absl::StatusOr<FusedEpilogue> three =
      ParseFusedOps(Make("_FusedConv2D", 3, FusedAttrs("\"BiasAdd\", \"Relu\", \"Relu\"", 1)));
  EXPECT_EQ(three.status().code(), absl::StatusCode::kUnimplemented);
  // BiasAdd needs one arg; the node says two.
  absl::StatusOr<FusedEpilogue> count =
      ParseFusedOps(Make("_FusedConv2D", 4, FusedAttrs("\"BiasAdd\"", 2)));
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(count.status().message()),
              HasSubstr("fused_ops [BiasAdd] needs 1 extra input(s) (num_args), but num_args "
                        "is 2 and the node has 4 input(s)"));
}

TEST_F(ConvAttrsTest, PreluAlphaShapes) {
  const Node& c = Conv("1, 1, 1, 1", "SAME");
  EXPECT_TRUE(*PreluAlphaIsScalar(c, {}, 3));
  EXPECT_TRUE(*PreluAlphaIsScalar(c, {1, 1}, 3));
  EXPECT_FALSE(*PreluAlphaIsScalar(c, {3}, 3));
  EXPECT_FALSE(*PreluAlphaIsScalar(c, {1, 1, 3}, 3));
  absl::StatusOr<bool> bad = PreluAlphaIsScalar(c, {2, 3}, 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("prelu alpha [2,3]"));
  EXPECT_EQ(PreluAlphaIsScalar(c, {4}, 3).status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tfjit::tf
