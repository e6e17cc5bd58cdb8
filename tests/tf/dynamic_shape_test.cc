// Dynamic dims: a -1 batch is resolved from each feed; every new shape compiles once and is
// cached, and the Shape -> StridedSlice -> Pack -> Reshape chain compiles inside the cluster.
// Where's row count, known only at run time, ends its cluster in ENTRY, and inside a loop body
// is carried padded to its bound until a Pad gives the value a static size again.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/shape_policy.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using runtime::PaddingFill;
using runtime::SetPaddingForTesting;

std::string GraphPath(const std::string& name) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "graphs" / name).string();
}

// y[b, i] = relu(x[b, 2i] * 1) + relu(x[b, 2i+1] * -2), computed by hand.
std::vector<float> Expected(const std::vector<float>& x) {
  std::vector<float> y;
  for (size_t k = 0; k + 1 < x.size(); k += 2) {
    y.push_back(std::max(x[k], 0.0f) + std::max(-2.0f * x[k + 1], 0.0f));
  }
  return y;
}

class DynamicBatchTest : public ::testing::TestWithParam<JitMode> {};

TEST_P(DynamicBatchTest, EachBatchSizeCompilesOnceAndMatches) {
  SessionOptions options;
  options.jit = GetParam();
  options.shapes = ShapeMode::kStatic;  // XLA's policy: one executable per shape
  auto session = Session::Load(GraphPath("dynamic_batch.pbtxt"), options);
  ASSERT_TRUE(session.ok()) << session.status();
  int compiles = 0;
  for (int64_t batch : {1, 3, 1, 2, 3, 2}) {
    std::vector<float> x;
    for (int64_t i = 0; i < batch * 4; ++i) x.push_back(static_cast<float>((i * 7) % 11) - 5.0f);
    RunStats stats;
    auto out = (*session)->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {batch, 4}, x)}},
                               {"y"}, &stats);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{batch, 2}));
    const std::vector<float> want = Expected(x);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], want[i]) << "batch " << batch << " i " << i;
    }
    if (GetParam() == JitMode::kAuto || GetParam() == JitMode::kAll) {
      // Every node the run needs (the fed placeholder is not counted) compiles in one cluster:
      // Shape and the folded chain included.
      EXPECT_EQ(stats.clusters, 1);
      EXPECT_EQ(stats.nodes_compiled, stats.nodes_total) << "batch " << batch;
      EXPECT_EQ(stats.nodes_total, 13);
      compiles += stats.compile_ms > 0 && stats.cache_hits == 0 ? 1 : 0;
    }
  }
  if (GetParam() == JitMode::kAuto || GetParam() == JitMode::kAll) {
    EXPECT_EQ(compiles, 3);  // batch 1, 3 and 2, once each
  }
}

INSTANTIATE_TEST_SUITE_P(Jit, DynamicBatchTest,
                         ::testing::Values(JitMode::kNone, JitMode::kOff, JitMode::kAuto,
                                           JitMode::kAll));

// One symbolic executable serves every batch size >= 2 (shape_policy.h): under auto, batch 1
// compiles statically and the second size compiles the symbolic one; under symbolic, the
// first launch of size >= 2 does. Outputs are the hand-computed ones at every size, and the
// run that compiled the symbolic executable says so.
struct SymbolicCase {
  const char* backend;
  ShapeMode mode;
};

class SymbolicBatchTest : public ::testing::TestWithParam<SymbolicCase> {};

TEST_P(SymbolicBatchTest, OneExecutableServesEveryBatchSize) {
  SessionOptions options;
  options.backend = GetParam().backend;
  options.shapes = GetParam().mode;
  auto session = Session::Load(GraphPath("dynamic_batch.pbtxt"), options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::string> classes;
  for (int64_t batch : {1, 3, 1, 2, 3, 5, 2, 7, 4, 33, 0}) {
    std::vector<float> x;
    for (int64_t i = 0; i < batch * 4; ++i) x.push_back(static_cast<float>((i * 7) % 11) - 5.0f);
    RunStats stats;
    auto out = (*session)->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {batch, 4}, x)}},
                               {"y"}, &stats);
    ASSERT_TRUE(out.ok()) << "batch " << batch << ": " << out.status();
    ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{batch, 2}));
    const std::vector<float> want = Expected(x);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], want[i]) << "batch " << batch << " i " << i;
    }
    EXPECT_EQ(stats.clusters, 1);
    for (const ClusterCompile& c : stats.compiles) {
      classes.push_back(absl::StrCat(batch, ":", c.shape_class));
    }
  }
  // Batch 1 and batch 0 compile statically; one symbolic compile serves 2, 3, 4, 5, 7 and 33.
  const std::string symbolic = "symbolic (batch >= 2)";
  // (Under auto, batch 3 is the second size; under symbolic, the first of size >= 2.)
  const std::vector<std::string> want = {"1:static", "3:" + symbolic, "0:static"};
  EXPECT_EQ(classes, want);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SymbolicBatchTest,
                         ::testing::Values(SymbolicCase{"interpreter", ShapeMode::kAuto},
                                           SymbolicCase{"interpreter", ShapeMode::kSymbolic},
                                           SymbolicCase{"cpu", ShapeMode::kAuto},
                                           SymbolicCase{"cpu", ShapeMode::kSymbolic}),
                         [](const ::testing::TestParamInfo<SymbolicCase>& info) {
                           return absl::StrCat(info.param.backend, "_",
                                               ShapeModeName(info.param.mode));
                         });

// A new session warm-started from the disk cache compiles nothing: the symbolic executable is
// stored like a static one (keyed by the module with its batch spelled ?b) and loaded for the
// first batch size >= 2 it meets.
TEST(SymbolicBatchCacheTest, ANewSessionLoadsTheSymbolicExecutable) {
  const std::string dir = testing::TestTempDir() + "/symbolic_disk_cache";
  std::filesystem::remove_all(dir);
  auto run = [&](Session& session, int64_t batch) {
    std::vector<float> x;
    for (int64_t i = 0; i < batch * 4; ++i) x.push_back(static_cast<float>((i * 5) % 9) - 4.0f);
    RunStats stats;
    auto out = session.Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {batch, 4}, x)}},
                           {"y"}, &stats);
    EXPECT_TRUE(out.ok()) << out.status();
    if (out.ok()) {
      const std::vector<float> want = Expected(x);
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], want[i]) << "batch " << batch;
      }
    }
    return stats;
  };
  SessionOptions options;
  options.compile_cache_dir = dir;
  {
    auto first = Session::Load(GraphPath("dynamic_batch.pbtxt"), options);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(run(**first, 1).disk_cache_hits, 0);
    const RunStats symbolic = run(**first, 3);
    ASSERT_EQ(symbolic.compiles.size(), 1u);
    EXPECT_EQ(symbolic.compiles[0].shape_class, "symbolic (batch >= 2)");
    EXPECT_FALSE(symbolic.compiles[0].from_disk_cache);
  }
  auto second = Session::Load(GraphPath("dynamic_batch.pbtxt"), options);
  ASSERT_TRUE(second.ok()) << second.status();
  for (int64_t batch : {1, 7, 3, 12}) {
    const RunStats stats = run(**second, batch);
    for (const ClusterCompile& c : stats.compiles) {
      EXPECT_TRUE(c.from_disk_cache) << "batch " << batch << " compiled " << c.shape_class;
    }
  }
  std::filesystem::remove_all(dir);
}

// Buckets with padding (SessionOptions::batch_buckets): a batch size a bucket holds runs on
// that bucket's static executable, its input padded and the padding rows' results dropped;
// larger sizes run on the symbolic executable. Outputs are the hand-computed ones, and padding
// rows of NaN (the test hook) never reach them.
class BucketTest : public ::testing::TestWithParam<std::string> {};

// `session` run on x = [batch, 4] of the test's values; the compile's shape class, "" if none.
std::string RunBatch(Session& session, int64_t batch, std::vector<float>* y) {
  std::vector<float> x;
  for (int64_t i = 0; i < batch * 4; ++i) x.push_back(static_cast<float>((i * 7) % 11) - 5.0f);
  RunStats stats;
  auto out = session.Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {batch, 4}, x)}}, {"y"},
                         &stats);
  EXPECT_TRUE(out.ok()) << "batch " << batch << ": " << out.status();
  if (!out.ok()) return "failed";
  EXPECT_EQ((*out)[0].dims()[0], batch);
  y->assign((*out)[0].data<float>(), (*out)[0].data<float>() + (*out)[0].num_elements());
  return stats.compiles.empty() ? "" : stats.compiles[0].shape_class;
}

// The executables by shape class (UnitProfile::shapes) after a profiled run at batch 3.
std::string ProfiledShapes(Session& session) {
  RunOptions profiled;
  profiled.profile = true;
  RunStats stats;
  std::vector<float> x(12, 1.0f);
  auto out = session.Run(profiled, {{"x", Tensor::FromVector<float>(DType::kFloat32, {3, 4}, x)}},
                         {"y"}, {}, &stats);
  EXPECT_TRUE(out.ok()) << out.status();
  std::string shapes;
  for (const UnitProfile& p : stats.profile) shapes += p.shapes;
  return shapes;
}

TEST_P(BucketTest, BatchSizesRunPaddedToTheirBucket) {
  SessionOptions options;
  options.backend = GetParam();
  options.batch_buckets = {8, 4};  // sorted by the session
  auto session = Session::Load(GraphPath("dynamic_batch.pbtxt"), options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::string> classes;
  for (int64_t batch : {1, 3, 2, 5, 8, 7, 4, 33, 3}) {
    for (PaddingFill fill : {PaddingFill::kRepeatLastRow, PaddingFill::kNaN}) {
      SetPaddingForTesting(fill);
      std::vector<float> x, y;
      for (int64_t i = 0; i < batch * 4; ++i) x.push_back(static_cast<float>((i * 7) % 11) - 5.0f);
      const std::string compiled = RunBatch(**session, batch, &y);
      SetPaddingForTesting(PaddingFill::kRepeatLastRow);
      if (!compiled.empty()) classes.push_back(absl::StrCat(batch, ":", compiled));
      const std::vector<float> want = Expected(x);
      ASSERT_EQ(y.size(), want.size()) << "batch " << batch;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_FLOAT_EQ(y[i], want[i]) << "batch " << batch << " i " << i;
      }
    }
  }
  // Batch 1 is static; 3 and 2 share bucket 4, 5, 8 and 7 bucket 8; 33 is past the buckets.
  const std::vector<std::string> want = {"1:static", "3:bucket 4", "5:bucket 8",
                                         "33:symbolic (batch >= 2)"};
  EXPECT_EQ(classes, want);
  const std::string shapes = ProfiledShapes(**session);
  EXPECT_EQ(shapes, "static x1, symbolic (batch >= 2) x1, buckets 4, 8 (padded)");
}

INSTANTIATE_TEST_SUITE_P(Backends, BucketTest, ::testing::Values("interpreter", "cpu"));

// y = x - sum(x, axis 0): every row depends on every other, so no bucket may pad it (the sum
// would take the padding rows in). The symbolic executable serves the batch sizes instead, the
// answers are the hand-computed ones, and the profile says why there are no buckets.
TEST(BucketTest, ClustersThatMixRowsAreNeverPadded) {
  constexpr char kGraph[] = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } } } } }
    node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
    node { name: "sum" op: "Sum" input: "x" input: "axis" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "Tidx" value { type: DT_INT32 } } attr { key: "keep_dims" value { b: true } } }
    node { name: "y" op: "Sub" input: "x" input: "sum" attr { key: "T" value { type: DT_FLOAT } } }
  )pb";
  SessionOptions options;
  options.batch_buckets = {4, 8};
  auto session = Session::Load(testing::WriteTempFile("mix_rows.pbtxt", kGraph), options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::string> classes;
  for (int64_t batch : {1, 3, 5, 2}) {
    std::vector<float> x, y;
    for (int64_t i = 0; i < batch * 4; ++i) x.push_back(static_cast<float>((i * 7) % 11) - 5.0f);
    const std::string compiled = RunBatch(**session, batch, &y);
    if (!compiled.empty()) classes.push_back(absl::StrCat(batch, ":", compiled));
    ASSERT_EQ(y.size(), x.size());
    for (int64_t r = 0; r < batch; ++r) {
      for (int64_t c = 0; c < 4; ++c) {
        float column = 0;
        for (int64_t k = 0; k < batch; ++k) column += x[static_cast<size_t>(k * 4 + c)];
        EXPECT_FLOAT_EQ(y[static_cast<size_t>(r * 4 + c)],
                        x[static_cast<size_t>(r * 4 + c)] - column)
            << "batch " << batch;
      }
    }
  }
  EXPECT_EQ(classes, (std::vector<std::string>{"1:static", "3:symbolic (batch >= 2)"}));
  const std::string shapes = ProfiledShapes(**session);
  EXPECT_TRUE(absl::StrContains(shapes, "no buckets|?b,4: %")) << shapes;
  EXPECT_TRUE(absl::StrContains(shapes, "reduces over the batch")) << shapes;
}

// A gather along the batch keeps TF's run-time index check on the symbolic executable: its
// limit is read from the params' shape (get-dimension-size), and its message names the
// run's own batch size, as the static executable's does.
TEST(SymbolicChecksTest, IndexChecksNameTheRunsBatchSize) {
  constexpr char kGraph[] = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } } } } }
    node { name: "i" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
    node { name: "y" op: "GatherV2" input: "x" input: "i" input: "axis"
           attr { key: "Tparams" value { type: DT_FLOAT } } attr { key: "Tindices" value { type: DT_INT32 } }
           attr { key: "Taxis" value { type: DT_INT32 } } attr { key: "batch_dims" value { i: 0 } } }
  )pb";
  const std::string path = testing::WriteTempFile("gather_rows.pbtxt", kGraph);
  SessionOptions symbolic_options, static_options;
  symbolic_options.shapes = ShapeMode::kSymbolic;
  static_options.shapes = ShapeMode::kStatic;
  auto symbolic = Session::Load(path, symbolic_options);
  auto fixed = Session::Load(path, static_options);
  ASSERT_TRUE(symbolic.ok() && fixed.ok());
  struct Case {
    int64_t batch;
    std::vector<int32_t> indices;
    std::string error;  // "" for a good run
  };
  const Case cases[] = {{3, {2, 0}, ""},
                        {3, {0, 5}, "indices[1] = 5 is not in [0, 3)"},
                        {7, {6, 1}, ""},
                        {4, {4, 1}, "indices[0] = 4 is not in [0, 4)"},
                        {9, {9, 9}, "indices[0] = 9 is not in [0, 9)"}};
  int symbolic_compiles = 0;
  for (const Case& c : cases) {
    std::vector<float> x;
    for (int64_t k = 0; k < c.batch * 4; ++k) x.push_back(static_cast<float>(k));
    const std::vector<std::pair<std::string, Tensor>> feeds = {
        {"x", Tensor::FromVector<float>(DType::kFloat32, {c.batch, 4}, x)},
        {"i", Tensor::FromVector<int32_t>(DType::kInt32, {2}, c.indices)}};
    RunStats stats;
    auto got = (*symbolic)->Run(feeds, {"y"}, &stats);
    auto want = (*fixed)->Run(feeds, {"y"});
    for (const ClusterCompile& cc : stats.compiles) {
      symbolic_compiles += cc.shape_class == "symbolic (batch >= 2)" ? 1 : 0;
    }
    if (c.error.empty()) {
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_TRUE(want.ok()) << want.status();
      for (int64_t r = 0; r < 2; ++r) {
        for (int64_t k = 0; k < 4; ++k) {
          EXPECT_EQ((*got)[0].data<float>()[r * 4 + k], static_cast<float>(c.indices[r] * 4 + k));
        }
      }
      continue;
    }
    ASSERT_FALSE(got.ok()) << "batch " << c.batch;
    ASSERT_FALSE(want.ok()) << "batch " << c.batch;
    EXPECT_TRUE(absl::StrContains(got.status().message(), c.error)) << got.status();
    EXPECT_EQ(got.status().message(), want.status().message());
  }
  EXPECT_EQ(symbolic_compiles, 1);
}

// Under --shapes symbolic the first launch makes the class: an input fed through a Placeholder
// whose declared dim 0 is fixed (a filter [3, ...]) is not a batch input even when the batch
// size is 3 (it was, and the class failed to compile: a static compile at batch 3).
TEST(SymbolicChecksTest, AFixedPlaceholderIsNeverTheBatch) {
  constexpr char kGraph[] = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: 5 } dim { size: 5 } dim { size: 3 } } } } }
    node { name: "w" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 3 } dim { size: 3 } dim { size: 3 } dim { size: 2 } } } } }
    node { name: "y" op: "Conv2D" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } }
           attr { key: "padding" value { s: "SAME" } } attr { key: "data_format" value { s: "NHWC" } } }
  )pb";
  SessionOptions options;
  options.shapes = ShapeMode::kSymbolic;
  auto session = Session::Load(testing::WriteTempFile("fixed_filter.pbtxt", kGraph), options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::string> classes;
  for (int64_t batch : {3, 4, 2}) {
    RunStats stats;
    auto out = (*session)->Run({{"x", Tensor(DType::kFloat32, {batch, 5, 5, 3})},
                                {"w", Tensor(DType::kFloat32, {3, 3, 3, 2})}},
                               {"y"}, &stats);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{batch, 5, 5, 2}));
    for (const ClusterCompile& c : stats.compiles) classes.push_back(c.shape_class);
  }
  EXPECT_EQ(classes, (std::vector<std::string>{"symbolic (batch >= 2)"}));
}

// A bucket below 2 is refused when the session loads.
TEST(BucketTest, BucketsBelowTwoAreInvalid) {
  SessionOptions options;
  options.batch_buckets = {1, 4};
  auto session = Session::Load(GraphPath("dynamic_batch.pbtxt"), options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(session.status().message(), "batch_buckets")) << session.status();
}

// tf.boolean_mask's core: w = Where(x > 0) (the coordinates of the positive elements, int64
// [n, 2]) and y = GatherNd(x, w) (their values), n known only when x is.
constexpr char kMaskGraph[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0 } } } }
  node { name: "gt" op: "Greater" input: "x" input: "zero" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "w" op: "Where" input: "gt" attr { key: "T" value { type: DT_BOOL } } }
  node { name: "y" op: "GatherNd" input: "x" input: "w"
         attr { key: "Tparams" value { type: DT_FLOAT } } attr { key: "Tindices" value { type: DT_INT64 } } }
)pb";

class WhereRowsTest : public ::testing::TestWithParam<JitMode> {};

// Every mode gives the hand-computed rows. Must-compile and auto mode compile every node, Where
// as the padded output of its own cluster and GatherNd in a second one, compiled once per row
// count.
TEST_P(WhereRowsTest, MaskRowsMatchInEveryMode) {
  const std::string path = testing::WriteTempFile("where_rows.pbtxt", kMaskGraph);
  SessionOptions options;
  options.jit = GetParam();
  auto session = Session::Load(path, options);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<std::vector<float>> inputs = {
      {1, -2, 3, 0, 5, -6}, {-1, -2, -3, 0, 0, -6}, {1, 2, 3, 4, 5, 6}, {0, 7, 0, 0, 0, 8}};
  for (const std::vector<float>& x : inputs) {
    std::vector<int64_t> want_w;
    std::vector<float> want_y;
    for (int64_t k = 0; k < 6; ++k) {
      if (x[static_cast<size_t>(k)] <= 0) continue;
      want_w.insert(want_w.end(), {k / 3, k % 3});
      want_y.push_back(x[static_cast<size_t>(k)]);
    }
    const int64_t n = static_cast<int64_t>(want_y.size());
    RunStats stats;
    auto out = (*session)->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {2, 3}, x)}},
                               {"w", "y"}, &stats);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].ShapeString(), Tensor(DType::kInt64, {n, 2}).ShapeString());
    ASSERT_EQ((*out)[1].ShapeString(), Tensor(DType::kFloat32, {n}).ShapeString());
    EXPECT_EQ(std::vector<int64_t>((*out)[0].data<int64_t>(), (*out)[0].data<int64_t>() + 2 * n),
              want_w);
    EXPECT_EQ(std::vector<float>((*out)[1].data<float>(), (*out)[1].data<float>() + n), want_y);
    if (GetParam() != JitMode::kNone) {
      EXPECT_EQ(stats.nodes_compiled, stats.nodes_total) << "n = " << n;
      EXPECT_EQ(stats.clusters, 2) << "n = " << n;
      EXPECT_EQ(stats.fallbacks, 0) << "n = " << n;
    }
  }
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Jit, WhereRowsTest,
                         ::testing::Values(JitMode::kNone, JitMode::kAuto, JitMode::kAll));

std::string ControlFlowGraph(const std::string& name) {
  std::ifstream in(std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "control_flow" /
                   name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// boxes [3, 6, 4] as [ymin, xmin, ymax, xmax] in the unit square, heavily overlapping, and
// scores [3, 6] in [0, 1): the score threshold 0.3 keeps a varying number of rows per image.
// `all_low` / `all_high` make every score fail / pass it (Where's zero and full row counts).
std::pair<Tensor, Tensor> NmsInputs(uint32_t seed, bool all_low, bool all_high) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> boxes, scores;
  for (int k = 0; k < 18; ++k) {
    const float y = u(rng) * 0.5f, x = u(rng) * 0.5f;
    boxes.insert(boxes.end(), {y, x, y + 0.2f + u(rng) * 0.3f, x + 0.2f + u(rng) * 0.3f});
    scores.push_back(all_low ? u(rng) * 0.3f : all_high ? 0.31f + u(rng) * 0.6f : u(rng));
  }
  return {Tensor::FromVector<float>(DType::kFloat32, {3, 6, 4}, boxes),
          Tensor::FromVector<float>(DType::kFloat32, {3, 6}, scores)};
}

absl::StatusOr<Tensor> RunNmsLoop(const std::string& path, JitMode jit,
                                  const std::pair<Tensor, Tensor>& in, RunStats* stats) {
  SessionOptions options;
  options.jit = jit;
  auto session = Session::Load(path, options);
  if (!session.ok()) return session.status();
  auto out = (*session)->Run({{"boxes", in.first}, {"scores", in.second}}, {"out"}, stats);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

class WhileNmsPadTest : public ::testing::TestWithParam<JitMode> {};

// The OD API's batched-NMS loop (while_nms_pad.pbtxt: Where, gathers, NMS and a pad back to a
// static size in the body) compiles whole, and gives the fallback kernels' answer for row
// counts from none to all.
TEST_P(WhileNmsPadTest, CompilesWholeAndMatchesTheKernels) {
  const std::string path =
      testing::WriteTempFile("while_nms_pad.pbtxt", ControlFlowGraph("while_nms_pad.pbtxt"));
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const auto in = NmsInputs(seed, seed == 5, seed == 6);
    RunStats reference_stats, stats;
    absl::StatusOr<Tensor> want = RunNmsLoop(path, JitMode::kNone, in, &reference_stats);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<Tensor> got = RunNmsLoop(path, GetParam(), in, &stats);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->ShapeString(), want->ShapeString());
    for (int k = 0; k < 4; ++k) {
      EXPECT_NEAR(got->data<float>()[k], want->data<float>()[k], 1e-6) << "seed " << seed;
    }
    if (seed == 5) {
      EXPECT_EQ(want->data<float>()[0], 0.0f);  // nothing kept anywhere
    }
    EXPECT_EQ(stats.clusters, 1) << "seed " << seed;
    EXPECT_EQ(stats.nodes_compiled, stats.nodes_total) << "seed " << seed;
  }
  std::filesystem::remove(path);
}

// Replaces the first `from` in `text` by `to` (the test fails when it is missing).
void ReplaceOnce(std::string* text, const std::string& from, const std::string& to) {
  const size_t at = text->find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text->replace(at, from.size(), to);
}

// With constant paddings the Pad keeps the run-time size (its output stays padded), and the
// L2Loss after it does not compile on a padded value: auto mode leaves the loop to the runtime
// (TF's answer still), must-compile mode fails naming the node.
TEST_P(WhileNmsPadTest, APaddedValueReachingAnotherOpStaysOut) {
  std::string text = ControlFlowGraph("while_nms_pad.pbtxt");
  ReplaceOnce(&text, R"(input: "neg:y:0" input: "pads:output:0")",
              R"(input: "neg:y:0" input: "fixed_pads:output:0")");
  ReplaceOnce(&text, R"(name: "scaled" op: "Mul" input: "padded:output:0" input: "fi:y:0")",
              R"(name: "scaled" op: "L2Loss" input: "padded:output:0")");
  ReplaceOnce(&text, R"(input: "acc" input: "scaled:z:0")",
              R"(input: "acc" input: "scaled:output:0")");
  ReplaceOnce(&text, R"(    ret { key: "counter_out")",
              R"(    node_def { name: "fixed_pads" op: "Const"
               attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32
                 tensor_shape { dim { size: 1 } dim { size: 2 } } int_val: 0 int_val: 1 } } } }
    ret { key: "counter_out")");
  const std::string path = testing::WriteTempFile("while_nms_padded.pbtxt", text);
  const auto in = NmsInputs(3, false, false);
  RunStats stats, reference_stats;
  absl::StatusOr<Tensor> got = RunNmsLoop(path, GetParam(), in, &stats);
  if (GetParam() == JitMode::kAll) {
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.status().message().find("'scaled' (L2Loss)"), std::string::npos) << got.status();
    EXPECT_NE(got.status().message().find("known only at run time"), std::string::npos)
        << got.status();
  } else {
    ASSERT_TRUE(got.ok()) << got.status();
    absl::StatusOr<Tensor> want = RunNmsLoop(path, JitMode::kNone, in, &reference_stats);
    ASSERT_TRUE(want.ok()) << want.status();
    for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(got->data<float>()[k], want->data<float>()[k]);
    EXPECT_LT(stats.nodes_compiled, stats.nodes_total);
  }
  std::filesystem::remove(path);
}

// Detection post-processing at the top level (graphs/padded_postprocess.pbtxt): Where, NMS,
// TopKV2 with a run-time k, a Range to a count, a Slice of a run-time size, Fill and ConcatV2
// of run-time sizes, then a pad to a static size, all in one cluster, compiled once for every
// row count, with the kernels' answers; `ss`, still padded, leaves cut to its rows.
class PaddedPostprocessTest : public ::testing::TestWithParam<JitMode> {};

TEST_P(PaddedPostprocessTest, OneClusterOneCompileForEveryRowCount) {
  SessionOptions options;
  options.jit = GetParam();
  auto session = Session::Load(GraphPath("padded_postprocess.pbtxt"), options);
  ASSERT_TRUE(session.ok()) << session.status();
  SessionOptions reference_options;
  reference_options.jit = JitMode::kNone;
  auto reference = Session::Load(GraphPath("padded_postprocess.pbtxt"), reference_options);
  ASSERT_TRUE(reference.ok()) << reference.status();
  int compiles = 0;
  std::vector<int64_t> row_counts;
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> scores, boxes;
    for (int k = 0; k < 8; ++k) {
      // seed 9: nothing passes the 0.2 threshold; seed 10: every score passes.
      scores.push_back(seed == 9 ? u(rng) * 0.2f : seed == 10 ? 0.21f + u(rng) * 0.7f : u(rng));
      const float y = u(rng) * 0.6f, x = u(rng) * 0.6f;
      boxes.insert(boxes.end(), {y, x, y + 0.1f + u(rng) * 0.4f, x + 0.1f + u(rng) * 0.4f});
    }
    const std::vector<std::pair<std::string, Tensor>> feeds = {
        {"scores", Tensor::FromVector<float>(DType::kFloat32, {8}, scores)},
        {"boxes", Tensor::FromVector<float>(DType::kFloat32, {8, 4}, boxes)}};
    RunStats stats, reference_stats;
    auto got = (*session)->Run(feeds, {"out", "cat", "ss"}, &stats);
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = (*reference)->Run(feeds, {"out", "cat", "ss"}, &reference_stats);
    ASSERT_TRUE(want.ok()) << want.status();
    for (size_t o = 0; o < 3; ++o) {
      ASSERT_EQ((*got)[o].ShapeString(), (*want)[o].ShapeString()) << "seed " << seed;
      for (int64_t k = 0; k < (*want)[o].num_elements(); ++k) {
        EXPECT_FLOAT_EQ((*got)[o].data<float>()[k], (*want)[o].data<float>()[k])
            << "seed " << seed << " output " << o << " element " << k;
      }
    }
    row_counts.push_back((*want)[2].num_elements());
    EXPECT_EQ(stats.clusters, 1) << "seed " << seed;
    EXPECT_EQ(stats.nodes_compiled, stats.nodes_total) << "seed " << seed;
    EXPECT_EQ(stats.fallbacks, 0) << "seed " << seed;
    compiles += stats.compile_ms > 0 && stats.cache_hits == 0 ? 1 : 0;
  }
  EXPECT_EQ(compiles, 1);  // every row count runs the first compile's code
  std::sort(row_counts.begin(), row_counts.end());
  EXPECT_EQ(row_counts.front(), 0);
  EXPECT_GT(row_counts.back(), 1);  // the seeds reach several NMS selection sizes
}

// A padded value meeting a static shape: Reshape to a constant [3] and an Add with a [3]
// constant need the run-time row count to be 3, as TF's kernels do: the count is checked at
// run time, and the same INVALID_ARGUMENT comes back when it is not. Min and Max of Where's
// int64 rows see only real rows (the padding is int64's own extreme, exactly).
constexpr char kStaticMeetGraph[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0 } } } }
  node { name: "gt" op: "Greater" input: "x" input: "zero" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "w" op: "Where" input: "gt" attr { key: "T" value { type: DT_BOOL } } }
  node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 3 } } } }
  node { name: "r" op: "Reshape" input: "w" input: "shape"
         attr { key: "T" value { type: DT_INT64 } } attr { key: "Tshape" value { type: DT_INT32 } } }
  node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 3 } }
                                              int64_val: 10 int64_val: 20 int64_val: 30 } } } }
  node { name: "w1" op: "Squeeze" input: "w" attr { key: "T" value { type: DT_INT64 } }
         attr { key: "squeeze_dims" value { list { i: 1 } } } }
  node { name: "y" op: "AddV2" input: "r" input: "c" attr { key: "T" value { type: DT_INT64 } } }
  node { name: "z" op: "AddV2" input: "w1" input: "c" attr { key: "T" value { type: DT_INT64 } } }
  node { name: "axis0" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
  node { name: "mn" op: "Min" input: "w" input: "axis0" attr { key: "T" value { type: DT_INT64 } }
         attr { key: "Tidx" value { type: DT_INT32 } } }
  node { name: "mx" op: "Max" input: "w" input: "axis0" attr { key: "T" value { type: DT_INT64 } }
         attr { key: "Tidx" value { type: DT_INT32 } } }
)pb";

TEST_P(PaddedPostprocessTest, PaddedMeetsAStaticShape) {
  const std::string path = testing::WriteTempFile("static_meet.pbtxt", kStaticMeetGraph);
  SessionOptions options, reference_options;
  options.jit = GetParam();
  reference_options.jit = JitMode::kNone;
  auto session = Session::Load(path, options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto reference = Session::Load(path, reference_options);
  ASSERT_TRUE(reference.ok()) << reference.status();
  for (const std::vector<float>& x : std::vector<std::vector<float>>{
           {1, -1, 2, 0, 3, -2}, {1, -1, 2, 0, -3, -2}, {0, 5, 0, 6, 7, 0}, {1, 1, 1, 1, 0, 0}}) {
    const std::vector<std::pair<std::string, Tensor>> feeds = {
        {"x", Tensor::FromVector<float>(DType::kFloat32, {6}, x)}};
    for (const char* fetch : {"y", "z", "mn", "mx"}) {
      auto got = (*session)->Run(feeds, {fetch});
      auto want = (*reference)->Run(feeds, {fetch});
      ASSERT_EQ(got.ok(), want.ok()) << fetch << ": " << (got.ok() ? want.status() : got.status());
      if (!want.ok()) {
        EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
        continue;
      }
      ASSERT_EQ((*got)[0].ShapeString(), (*want)[0].ShapeString()) << fetch;
      const int64_t n = (*want)[0].num_elements();
      EXPECT_EQ(std::vector<int64_t>((*got)[0].data<int64_t>(), (*got)[0].data<int64_t>() + n),
                std::vector<int64_t>((*want)[0].data<int64_t>(), (*want)[0].data<int64_t>() + n))
          << fetch;
    }
  }
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Jit, PaddedPostprocessTest,
                         ::testing::Values(JitMode::kAuto, JitMode::kAll));

INSTANTIATE_TEST_SUITE_P(Jit, WhileNmsPadTest, ::testing::Values(JitMode::kAuto, JitMode::kAll));

}  // namespace
}  // namespace tfjit
