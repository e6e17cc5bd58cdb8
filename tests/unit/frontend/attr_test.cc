// Tests the typed attr getters and their errors (node, op and attr named).
#include "frontend/attr.h"

#include "core/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace tfjit::tf {
namespace {

using ::testing::HasSubstr;
using testing::ParseTextProto;

class AttrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // NoOp takes no declared attrs, so any attr can ride on it for testing the getters.
    auto def = ParseTextProto<tensorflow::GraphDef>(R"pb(
      node {
        name: "n" op: "NoOp"
        attr { key: "t" value { type: DT_HALF } }
        attr { key: "c" value { type: DT_QINT8 } }
        attr { key: "i" value { i: -4 } }
        attr { key: "f" value { f: 0.25 } }
        attr { key: "b" value { b: true } }
        attr { key: "s" value { s: "NCHW" } }
        attr { key: "li" value { list { i: [1, 2, 3] } } }
        attr { key: "lf" value { list { f: [0.5] } } }
        attr { key: "lt" value { list { type: [DT_FLOAT, DT_INT32_REF] } } }
        attr { key: "empty" value { list {} } }
        attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } }
        attr { key: "ls" value { list { shape { unknown_rank: true } shape {} } } }
        attr { key: "tensor" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }
                                              int_val: 5 } } }
        attr { key: "bad_tensor" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                                  tensor_content: "abc" } } }
        attr { key: "fn" value { func { name: "body_fn" } } }
        attr { key: "none" value {} }
      })pb");
    absl::StatusOr<std::unique_ptr<Graph>> graph = Graph::Build(def, "attrs.pbtxt");
    ASSERT_TRUE(graph.ok()) << graph.status();
    graph_ = *std::move(graph);
    node_ = graph_->FindNode("n");
  }

  std::unique_ptr<Graph> graph_;
  const Node* node_ = nullptr;
};

TEST_F(AttrTest, ScalarGetters) {
  EXPECT_EQ(*GetTypeAttr(*node_, "t"), DType::kFloat16);
  EXPECT_EQ(*GetIntAttr(*node_, "i"), -4);
  EXPECT_EQ(*GetFloatAttr(*node_, "f"), 0.25f);
  EXPECT_TRUE(*GetBoolAttr(*node_, "b"));
  EXPECT_EQ(*GetStringAttr(*node_, "s"), "NCHW");
}

TEST_F(AttrTest, ListGetters) {
  EXPECT_EQ(*GetIntListAttr(*node_, "li"), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(*GetFloatListAttr(*node_, "lf"), (std::vector<float>{0.5f}));
  // _REF types map to their base type.
  EXPECT_EQ(*GetTypeListAttr(*node_, "lt"), (std::vector<DType>{DType::kFloat32, DType::kInt32}));
  // An empty list is a valid list of any kind.
  EXPECT_TRUE(GetIntListAttr(*node_, "empty")->empty());
  EXPECT_TRUE(GetTypeListAttr(*node_, "empty")->empty());
}

TEST_F(AttrTest, ShapeTensorAndFuncGetters) {
  PartialShape shape = *GetShapeAttr(*node_, "shape");
  EXPECT_EQ(shape.dims, (std::vector<int64_t>{-1, 3}));
  EXPECT_FALSE(shape.unknown_rank);
  std::vector<PartialShape> shapes = *GetShapeListAttr(*node_, "ls");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_TRUE(shapes[0].unknown_rank);
  EXPECT_TRUE(shapes[1].dims.empty());
  Tensor t = *GetTensorAttr(*node_, "tensor");
  EXPECT_EQ(t.dtype(), DType::kInt32);
  EXPECT_EQ(t.data<int32_t>()[1], 5);
  absl::StatusOr<const tensorflow::NameAttrList*> fn = GetFuncAttr(*node_, "fn");
  ASSERT_TRUE(fn.ok());
  EXPECT_EQ((*fn)->name(), "body_fn");
}

TEST_F(AttrTest, MissingAttrNamesNodeOpAndAttr) {
  absl::Status s = GetTypeAttr(*node_, "T").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "node 'n' (NoOp): attr 'T' is missing");
  EXPECT_EQ(NodeOfError(s).first, "n");
  EXPECT_EQ(NodeOfError(s).second, "NoOp");
}

TEST_F(AttrTest, WrongKindNamesBothKinds) {
  absl::Status s = GetTypeAttr(*node_, "i").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "node 'n' (NoOp): attr 'i' has type int, expected type");
  s = GetIntListAttr(*node_, "lt").status();
  EXPECT_THAT(s.message(), HasSubstr("attr 'lt' has type list(type), expected list(int)"));
  s = GetBoolAttr(*node_, "none").status();
  EXPECT_THAT(s.message(), HasSubstr("attr 'none' has type none, expected bool"));
  s = GetFuncAttr(*node_, "s").status();
  EXPECT_THAT(s.message(), HasSubstr("has type string, expected func"));
}

TEST_F(AttrTest, UnsupportedTypeIsUnimplemented) {
  absl::Status s = GetTypeAttr(*node_, "c").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("node 'n' (NoOp): attr 'c' is qint8"));
}

TEST_F(AttrTest, BadTensorAttrNamesAttr) {
  absl::Status s = GetTensorAttr(*node_, "bad_tensor").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'n' (NoOp): attr 'bad_tensor': tensor_content has 3 "
                                     "bytes, expected 8 for float32[2]"));
}

TEST_F(AttrTest, DefaultedGetters) {
  EXPECT_TRUE(*GetBoolAttrOr(*node_, "b", false));
  EXPECT_FALSE(*GetBoolAttrOr(*node_, "absent", false));
  EXPECT_EQ(*GetIntAttrOr(*node_, "absent", 7), 7);
  EXPECT_EQ(*GetIntAttrOr(*node_, "i", 7), -4);
  EXPECT_EQ(*GetFloatAttrOr(*node_, "absent", 1.5f), 1.5f);
  EXPECT_EQ(*GetStringAttrOr(*node_, "absent", "NHWC"), "NHWC");
  EXPECT_EQ(*GetStringAttrOr(*node_, "s", "NHWC"), "NCHW");
  // Present with the wrong kind is still an error.
  EXPECT_EQ(GetBoolAttrOr(*node_, "i", false).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tfjit::tf
