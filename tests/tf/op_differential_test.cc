// Per-op differential tests: every op of the walking skeleton, as a one-op TF graph, runs on
// three paths — the fallback kernel (--jit none), the HLO evaluator (interpreter backend) and
// the CPU JIT — over seeded random inputs including scalars, size-0 and size-1 dims,
// broadcasting and widths that are not multiples of the vector width. Integers must match
// exactly; floats within a per-dtype bound.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/dtype.h"
#include "core/status.h"
#include "examples/cli_output.h"
#include "frontend/proto/graph.pb.h"
#include "frontend/proto/xla_data.pb.h"
#include "frontend/tensor_proto.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tfjit/session.h"

#include "tests/testlib/temp_file.h"
#include "tests/tf/op_case_runner.h"
#include "tests/tf/op_cases.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

using namespace optest;  // NOLINT(build/namespaces): the cases' vocabulary

class OpDifferentialTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpDifferentialTest, KernelEvaluatorAndCpuAgree) {
  const OpCase& c = GetParam();
  const std::string path = WriteTempFile(absl::StrCat("op_", c.name, ".pbtxt"), GraphText(c));
  PathResult kernel = RunPath(path, c, JitMode::kNone, "cpu");
  if (c.kernel_only) {
    // XLA leaves the op to TF: the kernel against the reference, and must-compile mode refuses.
    ASSERT_TRUE(kernel.status.ok()) << "fallback kernel: " << StatusToString(kernel.status);
    ASSERT_TRUE(c.reference) << "a kernel-only case needs a reference";
    std::vector<Tensor> inputs = Feeds(c);
    inputs.insert(inputs.end(), c.consts.begin(), c.consts.end());
    EXPECT_TRUE(SameTensor(c.reference(inputs), kernel.output, c.atol)) << "reference vs kernel\n"
                                                                        << GraphText(c);
    PathResult all = RunPath(path, c, JitMode::kAll, "interpreter");
    EXPECT_FALSE(all.status.ok()) << "jit all compiled an op XLA does not compile";
    std::filesystem::remove(path);
    return;
  }
  // Ops without a fallback kernel are checked against the case's reference instead.
  const bool no_kernel = !kernel.status.ok() &&
                         kernel.status.code() == absl::StatusCode::kUnimplemented &&
                         absl::StrContains(kernel.status.message(), "no CPU kernel");
  if (!(no_kernel && c.reference)) {
    ASSERT_TRUE(kernel.status.ok()) << "fallback kernel: " << StatusToString(kernel.status);
  }
  PathResult evaluator = RunPath(path, c, JitMode::kAll, "interpreter");
  ASSERT_TRUE(evaluator.status.ok()) << "evaluator: " << StatusToString(evaluator.status);
  PathResult jit = RunPath(path, c, JitMode::kAll, "cpu");
  ASSERT_TRUE(jit.status.ok()) << "cpu jit: " << StatusToString(jit.status);
  if (c.reference) {
    std::vector<Tensor> inputs = Feeds(c);
    inputs.insert(inputs.end(), c.consts.begin(), c.consts.end());
    EXPECT_TRUE(SameTensor(c.reference(inputs), evaluator.output, c.atol))
        << "reference vs evaluator\n"
        << GraphText(c);
  }
  if (no_kernel) kernel.output = evaluator.output;
  EXPECT_TRUE(SameTensor(kernel.output, evaluator.output, c.atol)) << "kernel vs evaluator\n"
                                                                   << GraphText(c);
  EXPECT_TRUE(SameTensor(evaluator.output, jit.output, c.atol)) << "evaluator vs cpu jit\n"
                                                                << GraphText(c);
  std::filesystem::remove(path);
}

// Runs a graph in must-compile mode on the interpreter; returns the status of the run.
absl::Status RunAll(const OpCase& c) {
  const std::string path = WriteTempFile(absl::StrCat("op_err_", c.name, ".pbtxt"), GraphText(c));
  PathResult r = RunPath(path, c, JitMode::kAll, "interpreter");
  std::filesystem::remove(path);
  return r.status;
}

TEST(OpLoweringErrors, ConstantZeroDivisorFailsAsTheKernelDoes) {
  for (const char* op : {"FloorDiv", "FloorMod", "Div", "TruncateMod"}) {
    OpCase c{absl::StrCat(op, "_zero"), op, DType::kInt32, {{3}}, {Ints({1, 0, 2})}};
    absl::Status s = RunAll(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << op << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "Integer division by zero")) << s;
  }
  OpCase pow{"Pow_negative", "Pow", DType::kInt32, {{3}}, {Ints({1, -1, 2})}};
  EXPECT_TRUE(absl::StrContains(RunAll(pow).message(),
                                "Integers to negative integer powers are not allowed"));
}

// A fed divisor (exponent) is checked at run time in compiled code, with the kernel's message,
// on the evaluator and the CPU JIT alike; a good one runs.
TEST(OpLoweringErrors, FedZeroDivisorFailsAsTheKernelDoes) {
  auto run = [](const OpCase& c, const char* backend) {
    const std::string path =
        WriteTempFile(absl::StrCat("op_err_", c.name, "_", backend, ".pbtxt"), GraphText(c));
    PathResult r = RunPath(path, c, JitMode::kAll, backend);
    std::filesystem::remove(path);
    return r.status;
  };
  for (const char* backend : {"interpreter", "cpu"}) {
    for (const char* op : {"FloorDiv", "FloorMod", "Div", "TruncateDiv", "TruncateMod", "Pow"}) {
      const bool pow = std::string(op) == "Pow";
      OpCase c{absl::StrCat(op, "_fed_zero"), op, DType::kInt64, {{4}, {4}}};
      c.feed_values = {Ints64({7, -3, 2, 9}), Ints64({2, 3, pow ? -1 : 0, 1})};
      absl::Status s = run(c, backend);
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << op << " " << backend << ": " << s;
      EXPECT_TRUE(absl::StrContains(s.message(), pow ? "Integers to negative integer powers are "
                                                       "not allowed"
                                                     : "Integer division by zero"))
          << s;
      c.feed_values = {Ints64({7, -3, 2, 9}), Ints64({2, 3, 5, 1})};
      EXPECT_TRUE(run(c, backend).ok()) << op << " " << backend << ": " << run(c, backend);
    }
  }
}

TEST(OpLoweringErrors, GatherChecksConstantIndicesAndNeverClampsFedOnes) {
  OpCase oob{
      "GatherV2_oob", "GatherV2", DType::kFloat32, {{5, 3}}, {Ints({1, 5}), Ints({0}, true)}};
  oob.has_t = false;
  oob.attrs["Tparams"] = TypeAttr(DType::kFloat32);
  oob.attrs["Tindices"] = TypeAttr(DType::kInt32);
  oob.attrs["Taxis"] = TypeAttr(DType::kInt32);
  absl::Status s = RunAll(oob);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "indices[1] = 5 is not in [0, 5)")) << s;
  // Fed indices could be out of range at run time, where HLO's gather would clamp: the
  // compiled cluster checks them and fails as the kernel does (in range, they compile).
  OpCase fed{"GatherV2_fed", "GatherV2", DType::kFloat32, {{5, 3}, {2}}, {Ints({0}, true)}};
  fed.has_t = false;
  fed.input_dtypes = {DType::kFloat32, DType::kInt32};
  fed.attrs = oob.attrs;
  const Tensor params = Floats(DType::kFloat32, {5, 3}, std::vector<double>(15, 1.5));
  fed.feed_values = {params, Ints({1, 9})};
  s = RunAll(fed);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "indices[1] = 9 is not in [0, 5)")) << s;
  fed.feed_values = {params, Ints({4, 0})};
  EXPECT_TRUE(RunAll(fed).ok()) << RunAll(fed);
}

TEST(OpLoweringErrors, StridedSliceShrinkOutOfRange) {
  OpCase c{"StridedSlice_oob",
           "StridedSlice",
           DType::kFloat32,
           {{4}},
           {Ints({4}), Ints({5}), Ints({1})}};
  c.attrs["Index"] = TypeAttr(DType::kInt32);
  c.attrs["shrink_axis_mask"] = IntAttr(1);
  absl::Status s = RunAll(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "out of bounds")) << s;
}

// Complex values compile only in the lowerings written for them (compiler/tf2hlo/
// complex_values.h); must-compile mode names the op and the dtype of any other, and the
// compiled ones run (their cases are in op_cases_fft.cc).
TEST(OpLoweringErrors, ComplexValuesCompileOnlyInTheirOwnLowerings) {
  OpCase add{"Add_complex_all", "Add", DType::kComplex64, {{3}, {3}}};
  EXPECT_TRUE(RunAll(add).ok()) << RunAll(add);
  OpCase prod{"UnsortedSegmentProd_complex_all",
              "UnsortedSegmentProd",
              DType::kComplex128,
              {{4}},
              {Ints({0, 1, 0, 1}), Ints({2}, true)}};
  prod.attrs["Tindices"] = TypeAttr(DType::kInt32);
  prod.attrs["Tnumsegments"] = TypeAttr(DType::kInt32);
  absl::Status s = RunAll(prod);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(
      absl::StrContains(s.message(), "complex128 values of op UnsortedSegmentProd run on kernels"))
      << s;
  // A transform length with a prime factor above 1024 stays on the kernel, with the reason.
  OpCase fft{"FFT_prime_all", "FFT", DType::kComplex64, {{1031}}};
  fft.has_t = false;
  fft.attrs["Tcomplex"] = TypeAttr(DType::kComplex64);
  s = RunAll(fft);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "transform length 1031 has the prime factor 1031"))
      << s;
}

// The kernel path (--jit none) of a case; the status of the run.
absl::Status RunKernel(const OpCase& c) {
  const std::string path = WriteTempFile(absl::StrCat("op_kerr_", c.name, ".pbtxt"), GraphText(c));
  PathResult r = RunPath(path, c, JitMode::kNone, "cpu");
  std::filesystem::remove(path);
  return r.status;
}

// SparseToDense compiles with a constant output_shape: constant indices are checked when it
// compiles (order and repeats too, validate_indices), fed ones at run time, each with the
// kernel's message.
TEST(OpLoweringErrors, SparseToDenseChecksItsIndicesAsTheKernelDoes) {
  OpCase order{"SparseToDense_order",
               "SparseToDense",
               DType::kFloat32,
               {{}, {}},
               {Ints({2, 1}).Reshaped({2, 1}), Ints({4})}};
  order.consts_first = true;
  order.attrs["Tindices"] = TypeAttr(DType::kInt32);
  order.feed_values = {Floats(DType::kFloat32, {}, {1}), Floats(DType::kFloat32, {}, {0})};
  absl::Status s = RunAll(order);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "indices[1] = [1] is out of order")) << s;
  EXPECT_TRUE(absl::StrContains(RunKernel(order).message(), "indices[1] = [1] is out of order"));
  OpCase fed{
      "SparseToDense_fed_oob", "SparseToDense", DType::kFloat32, {{2, 2}, {}, {}}, {Ints({3, 3})}};
  fed.const_positions = {1};
  fed.input_dtypes = {DType::kInt32, DType::kFloat32, DType::kFloat32};
  fed.attrs["Tindices"] = TypeAttr(DType::kInt32);
  fed.feed_values = {Ints({0, 1, 2, 3}).Reshaped({2, 2}), Floats(DType::kFloat32, {}, {1}),
                     Floats(DType::kFloat32, {}, {0})};
  s = RunAll(fed);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(),
                                "indices[1] = [2,3] is out of bounds: need 0 <= index < [3,3]"))
      << s;
  EXPECT_TRUE(absl::StrContains(RunKernel(fed).message(),
                                "indices[1] = [2,3] is out of bounds: need 0 <= index < [3,3]"));
}

// NonMaxSuppressionV4 compiles padded (XLA's form) and unpadded (with a row count); a fed
// iou_threshold outside [0, 1], or a fed soft_nms_sigma below 0 (V5), fails at run time as the
// kernel does.
TEST(OpLoweringErrors, PaddedNonMaxSuppressionChecksItsThreshold) {
  OpCase nms{"NMSV4_bad_iou",
             "NonMaxSuppressionV4",
             DType::kFloat32,
             {{2, 4}, {2}, {}},
             {Ints({2}, true)}};
  nms.const_positions = {2};
  nms.inputs.push_back({});
  nms.input_dtypes = {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat32};
  nms.attrs["pad_to_max_output_size"] = BoolAttr(true);
  nms.feed_values = {Floats(DType::kFloat32, {2, 4}, {0, 0, 1, 1, 0, 0, 1, 1}),
                     Floats(DType::kFloat32, {2}, {0.5, 0.7}), Floats(DType::kFloat32, {}, {1.5}),
                     Floats(DType::kFloat32, {}, {0})};
  absl::Status s = RunAll(nms);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "iou_threshold must be in [0, 1]")) << s;
  EXPECT_TRUE(absl::StrContains(RunKernel(nms).message(), "iou_threshold must be in [0, 1]"));
  nms.feed_values[2] = Floats(DType::kFloat32, {}, {0.5});
  EXPECT_TRUE(RunAll(nms).ok()) << RunAll(nms);
  nms.attrs["pad_to_max_output_size"] = BoolAttr(false);
  EXPECT_TRUE(RunAll(nms).ok()) << RunAll(nms);
  nms.feed_values[2] = Floats(DType::kFloat32, {}, {std::nanf("")});
  EXPECT_TRUE(absl::StrContains(RunAll(nms).message(), "iou_threshold must be in [0, 1]"))
      << RunAll(nms);
  OpCase v5{"NMSV5_bad_sigma",
            "NonMaxSuppressionV5",
            DType::kFloat32,
            {{2, 4}, {2}, {}, {}, {}},
            {Ints({2}, true)}};
  v5.const_positions = {2};
  v5.input_dtypes = std::vector<DType>(5, DType::kFloat32);
  v5.feed_values = {nms.feed_values[0], nms.feed_values[1], Floats(DType::kFloat32, {}, {0.5}),
                    Floats(DType::kFloat32, {}, {0}), Floats(DType::kFloat32, {}, {-1})};
  for (bool pad : {false, true}) {
    v5.attrs["pad_to_max_output_size"] = BoolAttr(pad);
    s = RunAll(v5);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "soft_nms_sigma must be non-negative")) << s;
    EXPECT_TRUE(absl::StrContains(RunKernel(v5).message(), "soft_nms_sigma must be non-negative"));
  }
  v5.feed_values[4] = Floats(DType::kFloat32, {}, {0.5});
  EXPECT_TRUE(RunAll(v5).ok()) << RunAll(v5);
}

// TF's FFT kernels' checks: an input shorter than fft_length is an error (tf.signal pads
// first), fft_length must be non-negative with one entry per transformed dim, and lengths
// whose output cannot exist fail cleanly.
TEST(OpLoweringErrors, FftKernelsCheckTheirInputs) {
  auto rfft = [](const char* name, const char* op, Dims shape, std::vector<int32_t> len) {
    OpCase c{name, op, DType::kFloat32, {std::move(shape)}, {Ints(len)}};
    c.has_t = false;
    return c;
  };
  struct Bad {
    OpCase c;
    const char* message;
  };
  const Bad bad[] = {
      {rfft("RFFT_short", "RFFT", {2, 5}, {8}),
       "Input dimension 1 must have length of at least 8 but got: 5"},
      {rfft("RFFT_negative", "RFFT", {2, 5}, {-1}), "fft_length[0] must >= 0, but got: -1"},
      {rfft("RFFT2D_len1", "RFFT2D", {2, 5}, {5}), "fft_length must have shape [2]"},
      {rfft("RFFT3D_rank2", "RFFT3D", {2, 5}, {1, 2, 5}), "Input must have rank of at least 3"},
  };
  for (const Bad& b : bad) {
    absl::Status s = RunKernel(b.c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << b.c.name << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), b.message)) << b.c.name << ": " << s;
  }
  // An empty input with huge fft lengths: the output shape overflows; refused, no crash.
  OpCase huge{"IRFFT3D_huge",
              "IRFFT3D",
              DType::kComplex64,
              {{0, 0, 0}},
              {Ints({1 << 30, 1 << 30, 1 << 30})}};
  huge.has_t = false;
  absl::Status s = RunKernel(huge);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), absl::StatusCode::kInternal) << s;
  OpCase scalar{"FFT_scalar", "FFT", DType::kComplex64, {{}}};
  scalar.has_t = false;
  s = RunKernel(scalar);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "Input must have rank of at least 1")) << s;
}

// XLA's ops: dimension numbers that are not a serialized proto or disagree with the operands,
// and a batch_group_count tfjit does not run, fail with messages naming the problem, on the
// kernel (--jit none) and in must-compile mode alike.
TEST(OpLoweringErrors, XlaOpsCheckTheirDimensionNumbers) {
  auto dot = [](const std::string& bytes) {
    OpCase c{"XlaDotV2_bad", "XlaDotV2", DType::kFloat32, {{3, 4}, {5, 6}}};
    c.has_t = false;
    c.attrs["LhsT"] = TypeAttr(DType::kFloat32);
    c.attrs["RhsT"] = TypeAttr(DType::kFloat32);
    c.attrs["preferred_element_type"] = TypeAttr(DType::kFloat32);
    c.attrs["dimension_numbers"] = StringAttr(bytes);
    c.attrs["precision_config"] = StringAttr("");
    return c;
  };
  tfjit::xla::DotDimensionNumbers dn;
  dn.add_lhs_contracting_dimensions(1);
  dn.add_rhs_contracting_dimensions(0);
  tfjit::xla::ConvolutionDimensionNumbers cn;
  cn.set_input_feature_dimension(3);
  cn.set_kernel_input_feature_dimension(2);
  cn.set_kernel_output_feature_dimension(3);
  cn.set_output_feature_dimension(3);
  for (int d : {1, 2}) {
    cn.add_input_spatial_dimensions(d);
    cn.add_output_spatial_dimensions(d);
    cn.add_kernel_spatial_dimensions(d - 1);
  }
  OpCase conv{"XlaConvV2_batch_groups",
              "XlaConvV2",
              DType::kFloat32,
              {{2, 4, 4, 2}, {2, 2, 2, 2}},
              {Ints({1, 1}), Ints({0, 0, 0, 0}), Ints({1, 1}), Ints({1, 1}), Ints({1}, true)}};
  conv.has_t = false;
  conv.attrs["LhsT"] = TypeAttr(DType::kFloat32);
  conv.attrs["RhsT"] = TypeAttr(DType::kFloat32);
  conv.attrs["preferred_element_type"] = TypeAttr(DType::kFloat32);
  conv.attrs["Tindices"] = TypeAttr(DType::kInt32);
  conv.attrs["dimension_numbers"] = StringAttr(cn.SerializeAsString());
  conv.attrs["precision_config"] = StringAttr("");
  conv.attrs["batch_group_count"] = IntAttr(2);
  const struct {
    OpCase c;
    absl::StatusCode code;
    std::string message;
  } bad[] = {
      {dot("\xff\xff not a proto"), absl::StatusCode::kInvalidArgument,
       "attr 'dimension_numbers' (14 bytes) is not a serialized xla.DotDimensionNumbers"},
      {dot(dn.SerializeAsString()), absl::StatusCode::kInvalidArgument,
       "For contracting dimension 0 which is lhs dimension 1 and rhs dimension 0: Dimensions "
       "must be equal, but are 4 and 5"},
      {conv, absl::StatusCode::kUnimplemented, "batch_group_count 2 is not supported"},
  };
  for (const auto& b : bad) {
    for (const absl::Status& s : {RunKernel(b.c), RunAll(b.c)}) {
      EXPECT_EQ(s.code(), b.code) << b.c.name << ": " << s;
      EXPECT_TRUE(absl::StrContains(s.message(), b.message)) << b.c.name << ": " << s;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpDifferentialTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace tfjit
