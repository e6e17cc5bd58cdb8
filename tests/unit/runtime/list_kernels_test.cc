// Tests for runtime/kernels/state_list_kernels.cc and tensor_list.cc: TensorList construction,
// item access, push/pop, stack/gather/concat, scatter/split, resize, metadata and TF's errors.
#include "frontend/op_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernels/tensor_list.h"
#include "tests/unit/runtime/list_test_util.h"

namespace tfjit::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::tfjit::runtime::testing;  // NOLINT: test builders

const auto kInvalid = absl::StatusCode::kInvalidArgument;
const DType kF32 = DType::kFloat32;

Tensor Must(absl::StatusOr<Tensor> t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}
std::vector<Tensor> MustAll(absl::StatusOr<std::vector<Tensor>> t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : std::vector<Tensor>();
}

Tensor Reserve(const Tensor& shape, int32_t n, DType dtype = kF32) {
  return Must(ListOp("TensorListReserve")
                  .ElementDType(dtype)
                  .Type("shape_type", DType::kInt32)
                  .Input(shape)
                  .Input(Scalar32(n))
                  .Run0());
}
Tensor Empty(const Tensor& shape, int32_t max, DType dtype = kF32) {
  return Must(ListOp("EmptyTensorList")
                  .ElementDType(dtype)
                  .Type("shape_type", DType::kInt32)
                  .Input(shape)
                  .Input(Scalar32(max))
                  .Run0());
}
absl::StatusOr<Tensor> SetItem(const Tensor& l, int32_t i, const Tensor& item,
                               bool resize = false) {
  return ListOp("TensorListSetItem")
      .ElementDType(item.dtype())
      .Bool("resize_if_index_out_of_bounds", resize)
      .Input(l)
      .Input(Scalar32(i))
      .Input(item)
      .Run0();
}
absl::StatusOr<Tensor> GetItem(const Tensor& l, int32_t i, const Tensor& shape, DType dt = kF32) {
  return ListOp("TensorListGetItem")
      .ElementDType(dt)
      .Input(l)
      .Input(Scalar32(i))
      .Input(shape)
      .Run0();
}
absl::StatusOr<Tensor> Push(const Tensor& l, const Tensor& item) {
  return ListOp("TensorListPushBack").ElementDType(item.dtype()).Input(l).Input(item).Run0();
}
absl::StatusOr<Tensor> Stack(const Tensor& l, const Tensor& shape, int64_t num = -1) {
  return ListOp("TensorListStack")
      .ElementDType(kF32)
      .Int("num_elements", num)
      .Input(l)
      .Input(shape)
      .Run0();
}
int Length(const Tensor& l) {
  Tensor n = Must(ListOp("TensorListLength").Input(l).Run0());
  return n.valid() ? n.data<int32_t>()[0] : -1;
}
Tensor FromTensor(const Tensor& t, const Tensor& shape) {
  return Must(ListOp("TensorListFromTensor")
                  .ElementDType(t.dtype())
                  .Type("shape_type", DType::kInt32)
                  .Input(t)
                  .Input(shape)
                  .Run0());
}

TEST(ListKernelsTest, ReserveSetStackFillsUnsetItemsWithZeros) {
  const Tensor l0 = Reserve(ShapeT({2}), 3);
  EXPECT_EQ(Length(l0), 3);
  const Tensor l1 = Must(SetItem(l0, 0, F32({2}, {1, 2})));
  const Tensor l2 = Must(SetItem(l1, 2, F32({2}, {5, 6})));
  Tensor stacked = Must(Stack(l2, UnknownShapeT()));
  EXPECT_EQ(stacked.ShapeString(), "float32[3,2]");
  EXPECT_THAT(Values(stacked), ElementsAre(1, 2, 0, 0, 5, 6));
  // Lists are values: the inputs of SetItem are unchanged.
  EXPECT_THAT(Values(Must(Stack(l1, UnknownShapeT()))), ElementsAre(1, 2, 0, 0, 0, 0));
  EXPECT_FALSE(l0.object_as<TensorList>()->items[0].valid());
  EXPECT_THAT(Values(Must(Stack(l2, ShapeT({2}), 3))), ElementsAre(1, 2, 0, 0, 5, 6));
}

TEST(ListKernelsTest, PushBackAndPopBack) {
  const Tensor l0 = Empty(UnknownShapeT(), -1);
  const Tensor l1 = Must(Push(l0, F32({2}, {1, 2})));
  const Tensor l2 = Must(Push(l1, F32({2}, {3, 4})));
  EXPECT_EQ(Length(l0), 0);
  EXPECT_EQ(Length(l2), 2);
  std::vector<Tensor> popped = MustAll(
      ListOp("TensorListPopBack").ElementDType(kF32).Input(l2).Input(UnknownShapeT()).Run());
  ASSERT_EQ(popped.size(), 2u);
  EXPECT_EQ(Length(popped[0]), 1);
  EXPECT_THAT(Values(popped[1]), ElementsAre(3, 4));
  EXPECT_THAT(Values(Must(Stack(popped[0], UnknownShapeT()))), ElementsAre(1, 2));
  EXPECT_EQ(Length(l2), 2);
}

TEST(ListKernelsTest, PopBackOfUnsetItemNeedsAShape) {
  const Tensor l = Reserve(UnknownShapeT(), 1);
  auto pop = [&](const Tensor& shape) {
    return ListOp("TensorListPopBack").ElementDType(kF32).Input(l).Input(shape).Run();
  };
  std::vector<Tensor> out = MustAll(pop(ShapeT({2, 1})));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].ShapeString(), "float32[2,1]");
  EXPECT_THAT(Values(out[1]), ElementsAre(0, 0));
  TFJIT_EXPECT_ERROR(pop(UnknownShapeT()), kInvalid,
                     "Trying to read an uninitialized tensor but element_shape is not fully "
                     "defined.<unknown>");
  TFJIT_EXPECT_ERROR(ListOp("TensorListPopBack")
                         .ElementDType(kF32)
                         .Input(Empty(UnknownShapeT(), -1))
                         .Input(UnknownShapeT())
                         .Run(),
                     kInvalid, "node 'op' (TensorListPopBack): Trying to pop from an empty list.");
}

TEST(ListKernelsTest, PushIntoFullListFails) {
  const Tensor l = Must(Push(Empty(ShapeT({1}), 1), F32({1}, {1})));
  TFJIT_EXPECT_ERROR(Push(l, F32({1}, {2})), kInvalid,
                     "node 'op' (TensorListPushBack): Tried to push item into a full list list "
                     "size: 1 max_num_elements: 1");
  TFJIT_EXPECT_ERROR(Push(l, F32({2}, {2, 3})), kInvalid,
                     "Tried to append a tensor with incompatible shape to a list. Op element "
                     "shape: [2] list shape: [1]");
  TFJIT_EXPECT_ERROR(Push(l, I32({1}, {2})), kInvalid,
                     "Invalid data types; op elements int32 but list elements float");
}

TEST(ListKernelsTest, GetItemReadsUnsetItemsAsZeros) {
  const Tensor l0 = Reserve(UnknownShapeT(), 2);
  EXPECT_THAT(Values(Must(GetItem(l0, 0, ShapeT({3})))), ElementsAre(0, 0, 0));
  TFJIT_EXPECT_ERROR(GetItem(l0, 0, UnknownShapeT()), kInvalid,
                     "node 'op' (TensorListGetItem): Trying to read an uninitialized tensor but "
                     "element_shape is not fully defined: <unknown> and no list element is set.");
  // The shape of an unset item is inferred from the set ones.
  const Tensor l1 = Must(SetItem(l0, 1, F32({2}, {7, 8})));
  Tensor zero = Must(GetItem(l1, 0, UnknownShapeT()));
  EXPECT_EQ(zero.ShapeString(), "float32[2]");
  EXPECT_THAT(Values(zero), ElementsAre(0, 0));
  EXPECT_THAT(Values(Must(GetItem(l1, 1, UnknownShapeT()))), ElementsAre(7, 8));
  // The list's shape merged with the input's: [-1] and [4] give [4].
  EXPECT_THAT(Values(Must(GetItem(Reserve(ShapeT({-1}), 1), 0, ShapeT({4})))),
              ElementsAre(0, 0, 0, 0));
  TFJIT_EXPECT_ERROR(GetItem(Reserve(ShapeT({2}), 1), 0, ShapeT({3})), kInvalid,
                     "Incompatible shapes during merge: [3] vs. [2]");
}

TEST(ListKernelsTest, IndexAndTypeErrorsUseTfText) {
  const Tensor l = Reserve(ShapeT({2}), 2);
  TFJIT_EXPECT_ERROR(GetItem(l, 5, UnknownShapeT()), kInvalid,
                     "Trying to access element 5 in a list with 2 elements.");
  TFJIT_EXPECT_ERROR(GetItem(l, -1, UnknownShapeT()), kInvalid,
                     "Trying to access element -1 in a list with 2 elements.");
  TFJIT_EXPECT_ERROR(SetItem(l, 2, F32({2}, {1, 1})), kInvalid,
                     "node 'op' (TensorListSetItem): Trying to modify element 2 in a list with 2 "
                     "elements.");
  TFJIT_EXPECT_ERROR(GetItem(l, 0, UnknownShapeT(), DType::kInt32), kInvalid,
                     "Invalid data types; op elements int32 but list elements float");
  TFJIT_EXPECT_ERROR(SetItem(l, 0, F32({3}, {1, 1, 1})), kInvalid,
                     "Tried to set a tensor with incompatible shape at a list index. Item element "
                     "shape: [3] list shape: [2]");
  struct NotAList : TensorObject {
    std::string DebugString() const override { return "something else"; }
  };
  TFJIT_EXPECT_ERROR(
      GetItem(Tensor::FromObject(DType::kVariant, std::make_shared<NotAList>()), 0, ShapeT({2})),
      kInvalid, "Input handle is not a list. Saw: 'something else'");
}

TEST(ListKernelsTest, SetItemResizesWhenAsked) {
  const Tensor l = Must(SetItem(Reserve(ShapeT({1}), 1), 3, F32({1}, {9}), /*resize=*/true));
  EXPECT_EQ(Length(l), 4);
  EXPECT_THAT(Values(Must(Stack(l, UnknownShapeT()))), ElementsAre(0, 0, 0, 9));
}

TEST(ListKernelsTest, ResizeGrowsAndShrinks) {
  const Tensor l =
      Must(Push(Must(Push(Empty(ShapeT({2}), -1), F32({2}, {1, 2}))), F32({2}, {3, 4})));
  auto resize = [&](int32_t n) {
    return ListOp("TensorListResize").Input(l).Input(Scalar32(n)).Run0();
  };
  const Tensor grown = Must(resize(4));
  EXPECT_EQ(Length(grown), 4);
  EXPECT_THAT(Values(Must(Stack(grown, UnknownShapeT()))), ElementsAre(1, 2, 3, 4, 0, 0, 0, 0));
  EXPECT_THAT(Values(Must(Stack(Must(resize(1)), UnknownShapeT()))), ElementsAre(1, 2));
  TFJIT_EXPECT_ERROR(resize(-1), kInvalid,
                     "TensorListSlice expects size to be non-negative. Got: -1");
}

absl::StatusOr<std::vector<Tensor>> ConcatV2(const Tensor& l, const Tensor& shape,
                                             const std::vector<int64_t>& leading) {
  return ListOp("TensorListConcatV2")
      .ElementDType(kF32)
      .Type("shape_type", DType::kInt32)
      .Input(l)
      .Input(shape)
      .Input(I64({static_cast<int64_t>(leading.size())}, leading))
      .Run();
}

TEST(ListKernelsTest, ConcatV2ReturnsValuesAndLengths) {
  const Tensor l =
      Must(Push(Must(Push(Empty(ShapeT({-1}), -1), F32({2}, {1, 2}))), F32({3}, {3, 4, 5})));
  std::vector<Tensor> out = MustAll(ConcatV2(l, ShapeT({-1}), {}));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(Values(out[0]), ElementsAre(1, 2, 3, 4, 5));
  EXPECT_EQ(out[1].dtype(), DType::kInt64);
  EXPECT_THAT(Values(out[1]), ElementsAre(2, 3));
  // The v1 op (element_shape attr) gives the same.
  std::vector<Tensor> v1 = MustAll(
      ListOp("TensorListConcat").ElementDType(kF32).Shape("element_shape", {-1}).Input(l).Run());
  EXPECT_THAT(Values(v1[0]), ElementsAre(1, 2, 3, 4, 5));
}

TEST(ListKernelsTest, ConcatV2SizesUnsetItems) {
  const Tensor l =
      Must(SetItem(Must(SetItem(Reserve(ShapeT({-1}), 3), 0, F32({2}, {1, 2}))), 2, F32({1}, {3})));
  std::vector<Tensor> out = MustAll(ConcatV2(l, ShapeT({-1}), {2, 4, 1}));
  EXPECT_THAT(Values(out[0]), ElementsAre(1, 2, 0, 0, 0, 0, 3));
  EXPECT_THAT(Values(out[1]), ElementsAre(2, 4, 1));
  TFJIT_EXPECT_ERROR(ConcatV2(l, ShapeT({-1}), {}), kInvalid,
                     "List contains uninitialized tensor at index 1 but leading_dims has only 0 "
                     "elements.");
  // When every set item has the same leading dim, unset items take it.
  const Tensor same = Must(
      SetItem(Must(SetItem(Reserve(ShapeT({-1}), 3), 0, F32({2}, {1, 2}))), 2, F32({2}, {3, 4})));
  out = MustAll(ConcatV2(same, ShapeT({-1}), {}));
  EXPECT_THAT(Values(out[0]), ElementsAre(1, 2, 0, 0, 3, 4));
  EXPECT_THAT(Values(out[1]), ElementsAre(2, 2, 2));
  TFJIT_EXPECT_ERROR(ConcatV2(Reserve(ShapeT({}), 1), ShapeT({}), {}), kInvalid,
                     "Concat requires elements to be at least vectors, found scalars instead.");
}

TEST(ListKernelsTest, GatherPicksItems) {
  const Tensor l = FromTensor(F32({3, 2}, {1, 2, 3, 4, 5, 6}), ShapeT({2}));
  auto gather = [&](const Tensor& indices) {
    return ListOp("TensorListGather")
        .ElementDType(kF32)
        .Input(l)
        .Input(indices)
        .Input(UnknownShapeT())
        .Run0();
  };
  Tensor out = Must(gather(I32({2}, {2, 0})));
  EXPECT_EQ(out.ShapeString(), "float32[2,2]");
  EXPECT_THAT(Values(out), ElementsAre(5, 6, 1, 2));
  TFJIT_EXPECT_ERROR(gather(I32({1}, {3})), kInvalid,
                     "Index 3 out o range; list only has 3 elements.");
  EXPECT_EQ(Must(gather(I32({0}, {}))).ShapeString(), "float32[0,2]");
}

TEST(ListKernelsTest, ScatterIntoExistingListGrowsTheList) {
  const Tensor l = Reserve(ShapeT({2}), 2);
  auto scatter = [&](const Tensor& t, const Tensor& indices) {
    return ListOp("TensorListScatterIntoExistingList")
        .ElementDType(kF32)
        .Input(l)
        .Input(t)
        .Input(indices)
        .Run0();
  };
  const Tensor out = Must(scatter(F32({2, 2}, {1, 1, 2, 2}), I32({2}, {3, 0})));
  EXPECT_EQ(Length(out), 4);
  EXPECT_THAT(Values(Must(Stack(out, UnknownShapeT()))), ElementsAre(2, 2, 0, 0, 0, 0, 1, 1));
  EXPECT_EQ(Length(l), 2);
  TFJIT_EXPECT_ERROR(scatter(F32({2, 2}, {}), I32({1}, {0})), kInvalid,
                     "Expected len(indices) == tensor.shape[0], but saw: 1 vs. 2");
  TFJIT_EXPECT_ERROR(scatter(F32({1, 2}, {}), I32({1}, {-1})), kInvalid,
                     "Indices in TensorListScatter must all be non-negative.");
}

TEST(ListKernelsTest, ScatterV2MakesAListOfNumElements) {
  auto scatter = [](const Tensor& indices, int32_t num) {
    return ListOp("TensorListScatterV2")
        .ElementDType(kF32)
        .Type("shape_type", DType::kInt32)
        .Input(F32({1, 2}, {7, 8}))
        .Input(indices)
        .Input(ShapeT({2}))
        .Input(Scalar32(num))
        .Run0();
  };
  const Tensor l = Must(scatter(I32({1}, {1}), 3));
  EXPECT_EQ(Length(l), 3);
  EXPECT_THAT(Values(Must(Stack(l, UnknownShapeT()))), ElementsAre(0, 0, 7, 8, 0, 0));
  TFJIT_EXPECT_ERROR(scatter(I32({1}, {3}), 3), kInvalid,
                     "TensorListScatter: Trying to scatter at index 3 in list with size 3");
}

TEST(ListKernelsTest, FromTensorRoundTripsThroughStack) {
  const Tensor t = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor l = FromTensor(t, ShapeT({-1}));
  EXPECT_EQ(Length(l), 2);
  EXPECT_THAT(Values(Must(GetItem(l, 1, UnknownShapeT()))), ElementsAre(4, 5, 6));
  Tensor back = Must(Stack(l, UnknownShapeT()));
  EXPECT_EQ(back.ShapeString(), "float32[2,3]");
  EXPECT_THAT(Values(back), ElementsAre(1, 2, 3, 4, 5, 6));
  TFJIT_EXPECT_ERROR(ListOp("TensorListFromTensor")
                         .ElementDType(kF32)
                         .Type("shape_type", DType::kInt32)
                         .Input(t)
                         .Input(ShapeT({2}))
                         .Run0(),
                     kInvalid, "Specified a list with shape [2] from a tensor with shape [3]");
}

TEST(ListKernelsTest, ElementShapeOutputForms) {
  auto shape_of = [](const Tensor& l, DType type) {
    return Must(ListOp("TensorListElementShape").Type("shape_type", type).Input(l).Run0());
  };
  Tensor unknown = shape_of(Reserve(UnknownShapeT(), 0), DType::kInt32);
  EXPECT_EQ(unknown.ShapeString(), "int32[]");
  EXPECT_THAT(Values(unknown), ElementsAre(-1));
  Tensor partial = shape_of(Reserve(ShapeT({-1, 3}), 0), DType::kInt64);
  EXPECT_EQ(partial.ShapeString(), "int64[2]");
  EXPECT_THAT(Values(partial), ElementsAre(-1, 3));
  Tensor scalar = shape_of(Reserve(ShapeT({}), 0), DType::kInt32);
  EXPECT_EQ(scalar.ShapeString(), "int32[0]");
}

TEST(ListKernelsTest, SplitAndConcatAreInverse) {
  const Tensor t = F32({5}, {1, 2, 3, 4, 5});
  auto split = [&](const std::vector<int64_t>& lengths) {
    return ListOp("TensorListSplit")
        .ElementDType(kF32)
        .Type("shape_type", DType::kInt32)
        .Input(t)
        .Input(ShapeT({-1}))
        .Input(I64({static_cast<int64_t>(lengths.size())}, lengths))
        .Run0();
  };
  const Tensor l = Must(split({2, 3}));
  EXPECT_EQ(Length(l), 2);
  EXPECT_THAT(Values(Must(GetItem(l, 1, UnknownShapeT()))), ElementsAre(3, 4, 5));
  std::vector<Tensor> back = MustAll(ConcatV2(l, ShapeT({-1}), {}));
  EXPECT_THAT(Values(back[0]), ElementsAre(1, 2, 3, 4, 5));
  EXPECT_THAT(Values(back[1]), ElementsAre(2, 3));
  TFJIT_EXPECT_ERROR(split({2, 2}), kInvalid,
                     "Unused values in tensor. Length of tensor: 5 Values used: 4");
  TFJIT_EXPECT_ERROR(split({4, 2}), kInvalid,
                     "Attempting to slice [4, 6] from tensor with length 5");
}

TEST(ListKernelsTest, ConstructorAndStackErrors) {
  auto reserve = [](const Tensor& shape, int32_t n) {
    return ListOp("TensorListReserve")
        .ElementDType(kF32)
        .Type("shape_type", DType::kInt32)
        .Input(shape)
        .Input(Scalar32(n))
        .Run0();
  };
  TFJIT_EXPECT_ERROR(reserve(ShapeT({2}), -1), kInvalid,
                     "node 'op' (TensorListReserve): The num_elements to reserve must be a non "
                     "negative number, but got -1");
  TFJIT_EXPECT_ERROR(reserve(I32({}, {3}), 1), kInvalid,
                     "The only valid scalar shape tensor is the fully unknown shape specified as "
                     "-1.");
  TFJIT_EXPECT_ERROR(ListOp("EmptyTensorList")
                         .ElementDType(kF32)
                         .Type("shape_type", DType::kInt32)
                         .Input(UnknownShapeT())
                         .Input(I32({1}, {3}))
                         .Run0(),
                     kInvalid, "max_num_elements expected to be a scalar but got shape: ");
  TFJIT_EXPECT_ERROR(Stack(Reserve(UnknownShapeT(), 2), UnknownShapeT(), 3), kInvalid,
                     "Operation expected a list with 3 elements but got a list with 2 elements.");
  TFJIT_EXPECT_ERROR(Stack(Reserve(UnknownShapeT(), 0), UnknownShapeT()), kInvalid,
                     "Tried to stack elements of an empty list with non-fully-defined "
                     "element_shape: <unknown>");
  TFJIT_EXPECT_ERROR(Stack(Reserve(ShapeT({-1}), 2), UnknownShapeT()), kInvalid,
                     "Tried to stack list which only contains uninitialized tensors and has a "
                     "non-fully-defined element_shape: [?]");
  EXPECT_EQ(Must(Stack(Reserve(ShapeT({3}), 0), UnknownShapeT())).ShapeString(), "float32[0,3]");
}

TEST(ListKernelsTest, IntegerListsStackToo) {
  const Tensor l =
      Must(Push(Must(Push(Empty(ShapeT({}), -1, DType::kInt32), I32({}, {4}))), I32({}, {-5})));
  Tensor out = Must(
      ListOp("TensorListStack").ElementDType(DType::kInt32).Input(l).Input(UnknownShapeT()).Run0());
  EXPECT_EQ(out.ShapeString(), "int32[2]");
  EXPECT_THAT(Values(out), ElementsAre(4, -5));
}

// The catalog knows every list/TensorArray op with TF's constant inputs and statefulness.
TEST(ListKernelsTest, CatalogSignatures) {
  const tf::OpDef* empty = tf::LookupOpDef("EmptyTensorList");
  ASSERT_NE(empty, nullptr);
  EXPECT_THAT(empty->compile_time_const_inputs, ElementsAre(0, 1));
  EXPECT_EQ(empty->outputs[0].fixed_type, DType::kVariant);
  EXPECT_EQ(empty->inputs[0].type_attr, "shape_type");
  EXPECT_THAT(tf::LookupOpDef("TensorListReserve")->compile_time_const_inputs, ElementsAre(0, 1));
  EXPECT_FALSE(tf::LookupOpDef("TensorListPushBack")->is_stateful);
  const tf::OpDef* concat = tf::LookupOpDef("TensorListConcatV2");
  ASSERT_EQ(concat->outputs.size(), 2u);
  EXPECT_EQ(concat->outputs[1].fixed_type, DType::kInt64);
  const tf::OpDef* ta = tf::LookupOpDef("TensorArrayV3");
  ASSERT_NE(ta, nullptr);
  EXPECT_TRUE(ta->is_stateful);
  EXPECT_EQ(ta->outputs[0].fixed_type, DType::kResource);
  EXPECT_EQ(ta->outputs[1].fixed_type, DType::kFloat32);
  EXPECT_THAT(ta->compile_time_const_inputs, ElementsAre(0));
  KernelRegistry registry;
  RegisterAllKernels(registry);
  for (const char* op : {"EmptyTensorList",     "TensorListReserve",
                         "TensorListSetItem",   "TensorListGetItem",
                         "TensorListPushBack",  "TensorListPopBack",
                         "TensorListStack",     "TensorListFromTensor",
                         "TensorListLength",    "TensorListElementShape",
                         "TensorListResize",    "TensorListConcatV2",
                         "TensorListGather",    "TensorListScatterIntoExistingList",
                         "TensorListScatterV2", "TensorListSplit",
                         "TensorArrayV3",       "TensorArrayWriteV3",
                         "TensorArrayReadV3",   "TensorArraySizeV3",
                         "TensorArrayGatherV3", "TensorArrayScatterV3",
                         "TensorArrayConcatV3", "TensorArraySplitV3",
                         "TensorArrayCloseV3"}) {
    EXPECT_NE(tf::LookupOpDef(op), nullptr) << op;
    EXPECT_NE(registry.Find(op), nullptr) << op;
  }
}

}  // namespace
}  // namespace tfjit::runtime
