// Stateful random ops in compiled code (known issue E), through the Session on both backends:
// by default they ignore their seeds as XLA does (a new stream per run, the same first run in
// every new session, TF's warning); with autofix they continue the runtime kernel's stream
// exactly; auto-clustering keeps them out of clusters as TF does.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/proto/graph.pb.h"
#include "frontend/tensor_proto.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

tensorflow::AttrValue TypeAttr(DType t) {
  tensorflow::AttrValue a;
  a.set_type(static_cast<tensorflow::DataType>(DTypeToTfEnum(t)));
  return a;
}

struct RandomCase {
  const char* op;
  DType dtype;
  const char* api;  // the tf.random name in the warning
};
const RandomCase kCases[] = {{"RandomUniform", DType::kFloat32, "uniform"},
                             {"RandomStandardNormal", DType::kFloat64, "normal"},
                             {"TruncatedNormal", DType::kFloat32, "truncated_normal"},
                             {"RandomUniformInt", DType::kInt32, "uniform"},
                             {"RandomStandardNormal", DType::kFloat16, "normal"}};

void AddConst(tensorflow::GraphDef& g, const std::string& name, const Tensor& value) {
  auto* n = g.add_node();
  n->set_name(name);
  n->set_op("Const");
  (*n->mutable_attr())["dtype"] = TypeAttr(value.dtype());
  *(*n->mutable_attr())["value"].mutable_tensor() = tf::TensorToProto(value);
}

void AddRandom(tensorflow::GraphDef& g, const std::string& name, const RandomCase& c,
               int64_t seed, int64_t seed2) {
  auto* n = g.add_node();
  n->set_name(name);
  n->set_op(c.op);
  n->add_input("shape");
  const bool is_int = IsIntegerDType(c.dtype);
  if (is_int) {
    n->add_input("lo");
    n->add_input("hi");
  }
  (*n->mutable_attr())[is_int ? "Tout" : "dtype"] = TypeAttr(c.dtype);
  (*n->mutable_attr())["T"] = TypeAttr(DType::kInt32);
  (*n->mutable_attr())["seed"].set_i(seed);
  (*n->mutable_attr())["seed2"].set_i(seed2);
}

// shape [3, 7] (21 outputs: not a multiple of the 4-wide Philox block), one or two random
// nodes ("r", "r2") and, for floats, y = r * r2-like arithmetic so the cluster computes more.
std::string WriteGraph(const RandomCase& c, bool two_nodes, const std::string& tag) {
  tensorflow::GraphDef g;
  AddConst(g, "shape", Tensor::FromVector<int32_t>(DType::kInt32, {2}, {3, 7}));
  AddConst(g, "lo", Tensor::FromVector<int32_t>(DType::kInt32, {}, {-5}));
  AddConst(g, "hi", Tensor::FromVector<int32_t>(DType::kInt32, {}, {1000}));
  AddRandom(g, "r", c, 87654321, 17);
  if (two_nodes) {
    AddRandom(g, "r2", c, 3, 4);
    auto* add = g.add_node();
    add->set_name("sum");
    add->set_op("AddV2");
    add->add_input("r");
    add->add_input("r2");
    (*add->mutable_attr())["T"] = TypeAttr(c.dtype);
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(g, &text);
  return WriteTempFile(absl::StrCat("compiled_rng_", tag, ".pbtxt"), text);
}

std::unique_ptr<Session> Open(const std::string& path, JitMode jit, const std::string& backend,
                              bool autofix) {
  SessionOptions options;
  options.jit = jit;
  options.backend = backend;
  options.autofix = autofix;
  auto s = Session::Load(path, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// `runs` consecutive runs of one session; stderr of the first run in `first_log`.
std::vector<std::vector<Tensor>> RunTimes(Session& s, const std::vector<std::string>& fetches,
                                          int runs, std::string* first_log = nullptr,
                                          RunStats* first_stats = nullptr) {
  std::vector<std::vector<Tensor>> out;
  for (int i = 0; i < runs; ++i) {
    if (i == 0 && first_log != nullptr) ::testing::internal::CaptureStderr();
    auto r = s.Run({}, fetches, i == 0 ? first_stats : nullptr);
    if (i == 0 && first_log != nullptr) *first_log = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return out;
    out.push_back(*std::move(r));
  }
  return out;
}

bool Same(const Tensor& a, const Tensor& b) {
  return a.ShapeString() == b.ShapeString() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
}

std::string Name(const RandomCase& c, const char* backend) {
  return absl::StrCat(c.op, "_", DTypeName(c.dtype), "_", backend);
}

TEST(CompiledRandomTest, WithoutAutofixSeedsAreIgnoredAsInXla) {
  for (const RandomCase& c : kCases) {
    const std::string path = WriteGraph(c, false, absl::StrCat("xla_", c.op));
    for (const char* backend : {"cpu", "interpreter"}) {
      SCOPED_TRACE(Name(c, backend));
      std::string log;
      RunStats stats;
      auto first = Open(path, JitMode::kAll, backend, false);
      ASSERT_NE(first, nullptr);
      auto runs = RunTimes(*first, {"r"}, 2, &log, &stats);
      ASSERT_EQ(runs.size(), 2u);
      EXPECT_EQ(stats.clusters, 1);
      EXPECT_FALSE(Same(runs[0][0], runs[1][0])) << "each run draws a new stream";
      EXPECT_TRUE(absl::StrContains(
          log, absl::StrCat("Warning: Using tf.random.", c.api, " with XLA compilation will "
                            "ignore seeds; consider using tf.random.stateless_", c.api,
                            " instead if reproducible behavior is desired. r")))
          << log;
      auto second = Open(path, JitMode::kAll, backend, false);
      auto again = RunTimes(*second, {"r"}, 1);
      ASSERT_EQ(again.size(), 1u);
      EXPECT_TRUE(Same(runs[0][0], again[0][0])) << "a new session starts the same way";
      // The seeds are ignored, so the kernels' seeded stream is not what comes out.
      auto kernels = Open(path, JitMode::kNone, backend, false);
      auto k = RunTimes(*kernels, {"r"}, 1);
      ASSERT_EQ(k.size(), 1u);
      EXPECT_FALSE(Same(k[0][0], runs[0][0]));
    }
    std::filesystem::remove(path);
  }
}

TEST(CompiledRandomTest, AutofixContinuesTheKernelStream) {
  for (const RandomCase& c : kCases) {
    const std::string path = WriteGraph(c, true, absl::StrCat("fix_", c.op));
    auto reference = Open(path, JitMode::kNone, "cpu", false);
    ASSERT_NE(reference, nullptr);
    const auto want = RunTimes(*reference, {"r", "r2", "sum"}, 3);
    ASSERT_EQ(want.size(), 3u);
    for (const char* backend : {"cpu", "interpreter"}) {
      SCOPED_TRACE(Name(c, backend));
      auto s = Open(path, JitMode::kAll, backend, true);
      ASSERT_NE(s, nullptr);
      std::string log;
      RunStats stats;
      const auto got = RunTimes(*s, {"r", "r2", "sum"}, 3, &log, &stats);
      ASSERT_EQ(got.size(), 3u);
      EXPECT_EQ(stats.clusters, 1);
      EXPECT_TRUE(absl::StrContains(log, "autofix E: ")) << log;
      EXPECT_FALSE(absl::StrContains(log, "will ignore seeds")) << log;
      for (int run = 0; run < 3; ++run) {
        for (int k = 0; k < 3; ++k) {
          EXPECT_TRUE(Same(want[run][k], got[run][k]))
              << "run " << run << " fetch " << k << "\nkernels: " << want[run][k].DebugString(8)
              << "\ncompiled: " << got[run][k].DebugString(8);
        }
      }
    }
    std::filesystem::remove(path);
  }
}

// Auto-clustering leaves stateful random ops in the runtime (TF's rule): the kernel's stream,
// no warning, whatever the autofix setting.
TEST(CompiledRandomTest, AutoClusteringKeepsStatefulOpsOut) {
  const RandomCase& c = kCases[0];
  const std::string path = WriteGraph(c, true, "auto");
  auto reference = Open(path, JitMode::kNone, "cpu", false);
  const auto want = RunTimes(*reference, {"sum"}, 2);
  for (bool autofix : {false, true}) {
    auto s = Open(path, JitMode::kAuto, "cpu", autofix);
    std::string log;
    const auto got = RunTimes(*s, {"sum"}, 2, &log);
    ASSERT_EQ(got.size(), 2u);
    for (int run = 0; run < 2; ++run) EXPECT_TRUE(Same(want[run][0], got[run][0])) << run;
    EXPECT_FALSE(absl::StrContains(log, "will ignore seeds")) << log;
    auto explain = s->Explain({"sum"});
    ASSERT_TRUE(explain.ok()) << explain.status();
    EXPECT_TRUE(absl::StrContains(*explain, "stateful op RandomUniform stays in the runtime"))
        << *explain;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tfjit
