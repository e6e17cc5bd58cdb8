// Tests for runtime/kernels/state_tensor_array_kernels.cc: TF1 TensorArrayV3 and its Write/Read/
// Gather/Scatter/Concat/Split/Size/Close/Grad ops, with hand-computed values and TF's errors.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernels/state_tensor_array_kernels.h"
#include "tests/unit/runtime/list_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

const auto kInvalid = absl::StatusCode::kInvalidArgument;
const DType kF32 = DType::kFloat32;

Tensor Flow() { return F32({}, {0}); }

struct ArrayOptions {
  int32_t size = 3;
  bool dynamic_size = false;
  bool clear_after_read = true;
  std::vector<int64_t> element_shape;
  bool unknown_shape = true;
  std::string name;
};

// Runs TensorArrayV3; returns {handle, flow}.
std::vector<Tensor> NewArray(const ArrayOptions& o) {
  ListOp op("TensorArrayV3");
  op.Type("dtype", kF32)
      .Bool("dynamic_size", o.dynamic_size)
      .Bool("clear_after_read", o.clear_after_read)
      .Shape("element_shape", o.element_shape, o.unknown_shape)
      .Input(Scalar32(o.size));
  if (!o.name.empty()) op.Str("tensor_array_name", o.name);
  absl::StatusOr<std::vector<Tensor>> out = op.Run();
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{Tensor(), Tensor()};
}

absl::StatusOr<Tensor> Write(const Tensor& h, int32_t i, const Tensor& v) {
  return ListOp("TensorArrayWriteV3")
      .Type("T", v.dtype())
      .Input(h)
      .Input(Scalar32(i))
      .Input(v)
      .Input(Flow())
      .Run0();
}
absl::StatusOr<Tensor> Read(const Tensor& h, int32_t i, DType dtype = kF32) {
  return ListOp("TensorArrayReadV3")
      .Type("dtype", dtype)
      .Input(h)
      .Input(Scalar32(i))
      .Input(Flow())
      .Run0();
}
absl::StatusOr<Tensor> Gather(const Tensor& h, const Tensor& indices) {
  return ListOp("TensorArrayGatherV3")
      .Type("dtype", kF32)
      .Shape("element_shape", {}, true)
      .Input(h)
      .Input(indices)
      .Input(Flow())
      .Run0();
}
int Size(const Tensor& h) {
  absl::StatusOr<Tensor> n = ListOp("TensorArraySizeV3").Input(h).Input(Flow()).Run0();
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? n->data<int32_t>()[0] : -1;
}

TEST(TensorArrayKernelsTest, CreateOutputsHandleAndFlow) {
  std::vector<Tensor> ta = NewArray({.size = 2, .name = "acc"});
  ASSERT_EQ(ta.size(), 2u);
  EXPECT_EQ(ta[0].dtype(), DType::kResource);
  ASSERT_NE(ta[0].object_as<TensorArrayHandle>(), nullptr);
  EXPECT_THAT(ta[0].object_as<TensorArrayHandle>()->array()->name(), HasSubstr("acc_"));
  EXPECT_EQ(ta[1].ShapeString(), "float32[]");
  EXPECT_EQ(Size(ta[0]), 2);
  // Each run makes a fresh array.
  std::vector<Tensor> other = NewArray({.size = 2, .name = "acc"});
  EXPECT_NE(other[0].object_as<TensorArrayHandle>()->array(),
            ta[0].object_as<TensorArrayHandle>()->array());
  TFJIT_EXPECT_ERROR(ListOp("TensorArrayV3").Type("dtype", kF32).Input(Scalar32(-1)).Run(),
                     kInvalid, "node 'op' (TensorArrayV3): Size should be >= 0.");
}

TEST(TensorArrayKernelsTest, WriteReadGather) {
  const Tensor h = NewArray({.clear_after_read = false})[0];
  ASSERT_TRUE(Write(h, 0, F32({2}, {1, 2})).ok());
  ASSERT_TRUE(Write(h, 2, F32({2}, {5, 6})).ok());
  EXPECT_THAT(Values(*Read(h, 2)), ElementsAre(5, 6));
  Tensor g = *Gather(h, I32({2}, {2, 0}));
  EXPECT_EQ(g.ShapeString(), "float32[2,2]");
  EXPECT_THAT(Values(g), ElementsAre(5, 6, 1, 2));
  // Index 1 was never written and the element shape is unknown.
  TFJIT_EXPECT_ERROR(Read(h, 1), kInvalid,
                     "Could not read from TensorArray index 1.  Furthermore, the element shape is "
                     "not fully defined: <unknown>.");
}

TEST(TensorArrayKernelsTest, UnwrittenSlotsReadAsZerosWithAKnownShape) {
  const Tensor h = NewArray({.size = 2, .element_shape = {3}, .unknown_shape = false})[0];
  EXPECT_THAT(Values(*Read(h, 1)), ElementsAre(0, 0, 0));
  EXPECT_THAT(Values(*Gather(h, I32({1}, {0}))), ElementsAre(0, 0, 0));
  TFJIT_EXPECT_ERROR(Write(h, 0, F32({2}, {1, 2})), kInvalid,
                     "because the value shape is [2] which is incompatible with the "
                     "TensorArray's inferred element shape: [3]");
}

TEST(TensorArrayKernelsTest, WriteErrorsUseTfText) {
  const Tensor h = NewArray({.size = 2, .name = "ta"})[0];
  const absl::Status past = Write(h, 2, F32({}, {1})).status();
  EXPECT_EQ(past.code(), kInvalid);
  EXPECT_THAT(std::string(past.message()),
              HasSubstr("node 'op' (TensorArrayWriteV3): TensorArray ta_"));
  EXPECT_THAT(std::string(past.message()),
              HasSubstr(": Tried to write to index 2 but array is not resizeable and size is: 2"));
  ASSERT_TRUE(Write(h, 0, F32({}, {1})).ok());
  EXPECT_THAT(std::string(Write(h, 0, F32({}, {2})).status().message()),
              HasSubstr("Could not write to TensorArray index 0 because it has already been "
                        "written to."));
  EXPECT_THAT(std::string(Write(h, 1, I32({}, {2})).status().message()),
              HasSubstr("TensorArray dtype is float but Op is trying to write dtype int32."));
  TFJIT_EXPECT_ERROR(Read(h, 0, DType::kInt32), kInvalid,
                     "TensorArray dtype is float but Op requested dtype int32.");
  TFJIT_EXPECT_ERROR(Read(h, 5), kInvalid, "Tried to read from index 5 but array size is: 2");
}

TEST(TensorArrayKernelsTest, ClearAfterReadForbidsSecondRead) {
  const Tensor h = NewArray({.size = 1})[0];
  ASSERT_TRUE(Write(h, 0, F32({1}, {4})).ok());
  EXPECT_THAT(Values(*Read(h, 0)), ElementsAre(4));
  TFJIT_EXPECT_ERROR(Read(h, 0), kInvalid,
                     "Could not read index 0 twice because it was cleared after a previous read "
                     "(perhaps try setting clear_after_read = false?).");
}

TEST(TensorArrayKernelsTest, DynamicSizeGrowsOnWrite) {
  const Tensor h = NewArray({.size = 0, .dynamic_size = true, .clear_after_read = false})[0];
  EXPECT_EQ(Size(h), 0);
  ASSERT_TRUE(Write(h, 3, F32({1}, {7})).ok());
  EXPECT_EQ(Size(h), 4);
  EXPECT_THAT(Values(*Read(h, 3)), ElementsAre(7));
}

TEST(TensorArrayKernelsTest, ScatterThenConcatWithLengths) {
  const Tensor h = NewArray({.size = 3, .clear_after_read = false})[0];
  auto scatter = [&](const Tensor& indices, const Tensor& value) {
    return ListOp("TensorArrayScatterV3")
        .Type("T", kF32)
        .Input(h)
        .Input(indices)
        .Input(value)
        .Input(Flow())
        .Run0();
  };
  ASSERT_TRUE(scatter(I32({2}, {2, 0}), F32({2, 1, 2}, {5, 6, 1, 2})).ok());
  ASSERT_TRUE(Write(h, 1, F32({1, 2}, {3, 4})).ok());
  std::vector<Tensor> out =
      *ListOp("TensorArrayConcatV3").Type("dtype", kF32).Input(h).Input(Flow()).Run();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].ShapeString(), "float32[3,2]");
  EXPECT_THAT(Values(out[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(Values(out[1]), ElementsAre(1, 1, 1));
  TFJIT_EXPECT_ERROR(scatter(I32({1}, {5}), F32({1, 2}, {0, 0})), kInvalid,
                     "Max scatter index must be < array size (5 vs. 3)");
  TFJIT_EXPECT_ERROR(scatter(I32({1}, {1}), F32({2, 2}, {})), kInvalid,
                     "Expected len(indices) == values.shape[0], but saw: 1 vs. 2");
}

TEST(TensorArrayKernelsTest, GatherNeedsEqualShapes) {
  const Tensor h = NewArray({.size = 2})[0];
  ASSERT_TRUE(Write(h, 0, F32({2}, {1, 2})).ok());
  ASSERT_TRUE(Write(h, 1, F32({3}, {3, 4, 5})).ok());
  TFJIT_EXPECT_ERROR(Gather(h, I32({2}, {0, 1})), kInvalid,
                     "TensorArray has inconsistent shapes.  Index 0 has shape: [2] but index 1 "
                     "has shape: [3]");
}

TEST(TensorArrayKernelsTest, SplitThenConcatRoundTrips) {
  const Tensor h = NewArray({.size = 2, .clear_after_read = false})[0];
  auto split = [&](const Tensor& value, const std::vector<int64_t>& lengths) {
    return ListOp("TensorArraySplitV3")
        .Type("T", kF32)
        .Input(h)
        .Input(value)
        .Input(I64({static_cast<int64_t>(lengths.size())}, lengths))
        .Input(Flow())
        .Run0();
  };
  ASSERT_TRUE(split(F32({3, 2}, {1, 2, 3, 4, 5, 6}), {1, 2}).ok());
  EXPECT_THAT(Values(*Read(h, 1)), ElementsAre(3, 4, 5, 6));
  std::vector<Tensor> out =
      *ListOp("TensorArrayConcatV3").Type("dtype", kF32).Input(h).Input(Flow()).Run();
  EXPECT_EQ(out[0].ShapeString(), "float32[3,2]");
  EXPECT_THAT(Values(out[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(Values(out[1]), ElementsAre(1, 2));
  TFJIT_EXPECT_ERROR(split(F32({3}, {}), {1, 1}), kInvalid,
                     "Expected sum of lengths to be equal to values.shape[0], but sum of lengths "
                     "is: 2 and value's shape is: [3]");
  TFJIT_EXPECT_ERROR(split(F32({3}, {}), {3}), kInvalid,
                     "TensorArray's size is not equal to the size of lengths (1 vs. 2), and the "
                     "TensorArray is not marked as dynamically resizeable");
}

TEST(TensorArrayKernelsTest, ConcatErrorsAndEmptyArrays) {
  const Tensor scalars = NewArray({.size = 1})[0];
  ASSERT_TRUE(Write(scalars, 0, F32({}, {1})).ok());
  TFJIT_EXPECT_ERROR(
      ListOp("TensorArrayConcatV3").Type("dtype", kF32).Input(scalars).Input(Flow()).Run(),
      kInvalid, "Concat saw a scalar shape at index 0 but requires at least vectors.");
  const Tensor empty = NewArray({.size = 0})[0];
  TFJIT_EXPECT_ERROR(Gather(empty, I32({0}, {})), kInvalid,
                     "TensorArray has size zero, but element shape <unknown> is not fully "
                     "defined.");
  std::vector<Tensor> out = *ListOp("TensorArrayConcatV3")
                                 .Type("dtype", kF32)
                                 .Shape("element_shape_except0", {4})
                                 .Input(empty)
                                 .Input(Flow())
                                 .Run();
  EXPECT_EQ(out[0].ShapeString(), "float32[0,4]");
  EXPECT_EQ(out[1].ShapeString(), "int64[0]");
}

TEST(TensorArrayKernelsTest, ClosedArraysRejectEverything) {
  const Tensor h = NewArray({.size = 1, .name = "gone"})[0];
  ASSERT_TRUE(ListOp("TensorArrayCloseV3").Input(h).Run().ok());
  const absl::Status s = Write(h, 0, F32({}, {1})).status();
  EXPECT_THAT(std::string(s.message()), HasSubstr("TensorArray gone_"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(" has already been closed."));
  TFJIT_EXPECT_ERROR(ListOp("TensorArraySizeV3").Input(h).Input(Flow()).Run0(), kInvalid,
                     "has already been closed.");
}

// TensorArrayGradV3: one gradient array per (array, source), sized like the forward array at
// that time, with its element shape; a second write to a slot adds to it (TF's gradient
// arrays aggregate), a write of another shape fails; unwritten slots read as zeros.
TEST(TensorArrayKernelsTest, GradientArraysAggregateWrites) {
  const Tensor h = NewArray({.size = 3, .element_shape = {2}, .unknown_shape = false})[0];
  ASSERT_TRUE(Write(h, 0, F32({2}, {1, 2})).ok());
  auto grad = [&](const std::string& source) {
    return ListOp("TensorArrayGradV3").Str("source", source).Input(h).Input(Flow()).Run();
  };
  absl::StatusOr<std::vector<Tensor>> g = grad("gradients");
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->size(), 2u);
  const Tensor gh = (*g)[0];
  EXPECT_EQ((*g)[1].ShapeString(), "float32[]");  // the flow passes through
  EXPECT_EQ(Size(gh), 3);
  ASSERT_TRUE(Write(gh, 1, F32({2}, {0.5, 1})).ok());
  ASSERT_TRUE(Write(gh, 1, F32({2}, {2, -4})).ok());
  TFJIT_EXPECT_ERROR(Write(gh, 1, F32({3}, {1, 1, 1})), kInvalid,
                     "incompatible with the TensorArray's inferred element shape: [2]");
  // The same source gives the same array (its sum so far); another source a fresh one.
  absl::StatusOr<std::vector<Tensor>> again = grad("gradients");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)[0].object_as<TensorArrayHandle>()->array(),
            gh.object_as<TensorArrayHandle>()->array());
  EXPECT_THAT(Values(*Read(gh, 1)), ElementsAre(2.5, -3));
  EXPECT_THAT(Values(*Read(gh, 0)), ElementsAre(0, 0));
  absl::StatusOr<std::vector<Tensor>> other = grad("gradients_1");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE((*other)[0].object_as<TensorArrayHandle>()->array(),
            gh.object_as<TensorArrayHandle>()->array());
  // The forward array still refuses a second write.
  TFJIT_EXPECT_ERROR(Write(h, 0, F32({2}, {1, 2})), kInvalid, "has already been written to");
  TFJIT_EXPECT_ERROR(ListOp("TensorArrayGradV3").Input(h).Input(Flow()).Run(), kInvalid,
                     "the source attr must be set");
}

}  // namespace
}  // namespace tfjit::runtime
