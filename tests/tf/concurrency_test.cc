// Concurrency of Session::Run (issue 5, part 4): 8 threads with their own inputs get exactly
// (bit for bit) what the same inputs give run one at a time; the first concurrent runs of a new
// input shape compile each cluster once (single flight); variable updates from concurrent runs
// follow TF's semantics without lost updates. Built with TSan (./test.sh --tsan) these tests
// are also the race detector's workload.
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "examples/cli_output.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

constexpr int kThreads = 8;

using Feeds = std::vector<std::pair<std::string, Tensor>>;

std::string SourcePath(const std::string& relative) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / relative).string();
}

// A copy of a graph file with `from` replaced by `to` everywhere (e.g. a placeholder's fixed
// batch dimension made dynamic).
std::string EditedCopy(const std::string& relative, const std::string& name,
                       const std::string& from, const std::string& to) {
  std::ifstream in(SourcePath(relative), std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return WriteTempFile(name, text);
}

// Releases every waiting thread at once, so the runs really overlap (the first ones included,
// which build plans and compile).
class StartLine {
 public:
  explicit StartLine(int n) : waiting_(n) {}
  void ArriveAndWait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (--waiting_ == 0) {
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [this] { return waiting_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_;
};

// Runs body(t) on kThreads threads that start together.
void RunOnThreads(const std::function<void(int)>& body) {
  StartLine start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.ArriveAndWait();
      body(t);
    });
  }
  for (std::thread& th : threads) th.join();
}

// One graph input: dims of -1 take the thread's batch size, so threads run different shapes.
struct InputSpec {
  std::string name;
  DType dtype;
  std::vector<int64_t> dims;
};

struct Case {
  std::string name;
  std::string path;
  std::vector<InputSpec> inputs;
  std::vector<std::string> fetches;  // empty: the session's default fetches
  std::vector<JitMode> modes;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// Inputs of iteration `iter` of thread `thread`: values seeded by both, the batch size by the
// thread (1, 2 or 3), so a dynamic dimension sees three shapes at once.
Feeds MakeFeeds(const Case& c, int thread, int iter) {
  Feeds feeds;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    std::vector<int64_t> dims = c.inputs[k].dims;
    for (int64_t& d : dims) {
      if (d < 0) d = 1 + thread % 3;
    }
    const uint64_t seed =
        1000003ull * static_cast<uint64_t>(thread) + 7919ull * static_cast<uint64_t>(iter) + k + 1;
    feeds.push_back({c.inputs[k].name, cli::RandomTensor(c.inputs[k].dtype, dims, seed)});
  }
  return feeds;
}

constexpr DType kF32 = DType::kFloat32;
constexpr DType kI32 = DType::kInt32;
constexpr DType kBool = DType::kBool;

// Conv2D, MaxPool and a spatial Mean on a batch of any size (no graph file has a convolution).
constexpr char kConvGraph[] = R"pb(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 9 } dim { size: 9 } dim { size: 3 } } } } }
node { name: "w" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 3 } dim { size: 3 } dim { size: 3 } dim { size: 4 } } } } }
node { name: "conv" op: "Conv2D" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } }
  attr { key: "padding" value { s: "SAME" } } attr { key: "data_format" value { s: "NHWC" } } }
node { name: "relu" op: "Relu" input: "conv" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "mp" op: "MaxPool" input: "relu" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "ksize" value { list { i: 1 i: 2 i: 2 i: 1 } } }
  attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } }
  attr { key: "padding" value { s: "VALID" } } attr { key: "data_format" value { s: "NHWC" } } }
node { name: "axes" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 int_val: 2 } } } }
node { name: "mean" op: "Mean" input: "relu" input: "axes" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tidx" value { type: DT_INT32 } } attr { key: "keep_dims" value { b: false } } }
)pb";

std::vector<Case> Cases() {
  const std::vector<JitMode> plain = {JitMode::kNone, JitMode::kAuto, JitMode::kAll};
  // Graphs with functions or TF1 control flow: "off" compiles only must-compile functions.
  const std::vector<JitMode> with_off = {JitMode::kNone, JitMode::kOff, JitMode::kAuto,
                                         JitMode::kAll};
  const std::vector<JitMode> tf1 = {JitMode::kNone, JitMode::kOff, JitMode::kAuto};
  return {
      {"matmul",
       SourcePath("tests/tf/graphs/matmul.pbtxt"),
       {{"a", kF32, {5, 7}},
        {"b", kF32, {7, 3}},
        {"at", kF32, {7, 5}},
        {"bt", kF32, {3, 7}},
        {"bias", kF32, {3}},
        {"img", kF32, {2, 3, 4, 4}}},
       {},
       plain},
      {"reductions",
       SourcePath("tests/tf/graphs/reductions.pbtxt"),
       {{"x", kF32, {4, 1, 33}}},
       {},
       plain},
      {"int_ops",
       SourcePath("tests/tf/graphs/int_ops.pbtxt"),
       {{"i", kI32, {3, 9}}, {"j", kI32, {9}}},
       {},
       plain},
      {"dynamic_batch",
       SourcePath("tests/tf/graphs/dynamic_batch.pbtxt"),
       {{"x", kF32, {-1, 4}}},
       {},
       plain},
      {"conv",
       WriteTempFile("conv.pbtxt", kConvGraph),
       {{"x", kF32, {-1, 9, 9, 3}}, {"w", kF32, {3, 3, 3, 4}}},
       {"mp", "mean"},
       plain},
      {"while_sum",
       SourcePath("tests/tf/control_flow/while_sum.pbtxt"),
       {{"n", kI32, {}}},
       {"Identity", "Identity_1", "Identity_2"},
       with_off},
      {"if",
       SourcePath("tests/tf/control_flow/if.pbtxt"),
       {{"p", kBool, {}}, {"k", kI32, {}}, {"x", kF32, {3}}},
       {"Identity", "Identity_1"},
       with_off},
      {"tensor_list",
       SourcePath("tests/tf/lists/gather_scatter_concat.pbtxt"),
       {{"x", kF32, {4, 3}}},
       {"gathered", "scattered", "concat"},
       with_off},
      // The must-compile function's inputs with a dynamic batch: each new batch size compiles
      // the function body again.
      {"jit_function",
       EditedCopy("tests/tf/functions/jit_function.pbtxt", "jit_function.pbtxt",
                  "value { shape { dim { size: 2 } dim { size: 3 } } } }",
                  "value { shape { dim { size: -1 } dim { size: 3 } } } }"),
       {{"x", kF32, {-1, 3}}, {"y", kF32, {-1, 3}}},
       {"post", "rowsum", "direct:0", "direct:1"},
       with_off},
      {"tf1_while",
       SourcePath("tests/tf/tf1/while_loop.pbtxt"),
       {{"x", kF32, {}}, {"n", kI32, {}}},
       {"acc", "while/Exit"},
       tf1},
      {"tf1_cond_then_compute",
       SourcePath("tests/tf/tf1/cond_then_compute.pbtxt"),
       {{"x", kF32, {4}}, {"p", kBool, {}}, {"n", kI32, {}}},
       {"hsum", "out", "h/add"},
       tf1},
      // Its CheckNumerics stays out of clusters, so it cannot compile as a whole (jit=all).
      {"demo_mlp",
       SourcePath("examples/models/demo_mlp.pbtxt"),
       {{"input", kF32, {-1, 256}}},
       {},
       {JitMode::kNone, JitMode::kAuto}},
  };
}

// Run with targets; typed arguments keep the call unambiguous next to Run(RunOptions, ...).
StatusOr<std::vector<Tensor>> RunTargets(Session& session, const Feeds& feeds,
                                         const std::vector<std::string>& fetches,
                                         const std::vector<std::string>& targets,
                                         RunStats* stats = nullptr) {
  return session.Run(feeds, fetches, targets, stats);
}

std::unique_ptr<Session> Load(const std::string& path, JitMode mode, int threads) {
  SessionOptions options;
  options.jit = mode;
  options.backend = "cpu";
  // One executable per shape: which executable serves a batch size under --shapes auto
  // depends on the order sizes arrive in (shape_policy.h), and a symbolic one may differ from
  // a static one in the last bits; these tests compare runs bit for bit and count compiles.
  options.shapes = ShapeMode::kStatic;
  options.inter_op_threads = threads;
  options.intra_op_threads = threads;
  auto session = Session::Load(path, options);
  EXPECT_TRUE(session.ok()) << path << ": " << StatusToString(session.status());
  return session.ok() ? std::move(*session) : nullptr;
}

// "" when `a` and `b` hold the same tensors (dtype, dims and every byte); else the difference.
std::string BitDifference(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return "different number of results";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype() != b[i].dtype() || a[i].dims() != b[i].dims()) {
      return "result " + std::to_string(i) + ": " + a[i].ShapeString() + " vs " +
             b[i].ShapeString();
    }
    if (std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].byte_size()) != 0) {
      return "result " + std::to_string(i) + " differs: " + a[i].DebugString() + " vs " +
             b[i].DebugString();
    }
  }
  return "";
}

class ConcurrentRunTest : public ::testing::TestWithParam<Case> {};

// Each thread runs its own inputs for several iterations on one fresh session (so plans are
// built and clusters compiled by concurrent first runs); a second session runs the same
// inputs serially. Both pool sizes matter: one thread per pool runs units inline, two let
// units and kernel shards of different runs interleave.
TEST_P(ConcurrentRunTest, EqualsSerialBitForBit) {
  const Case& c = GetParam();
  constexpr int kIters = 3;
  for (int pool_threads : {1, 2}) {
    for (JitMode mode : c.modes) {
      SCOPED_TRACE(std::string("jit=") + JitModeName(mode) +
                   " pool threads=" + std::to_string(pool_threads));
      std::unique_ptr<Session> serial = Load(c.path, mode, pool_threads);
      ASSERT_NE(serial, nullptr);
      const std::vector<std::string> fetches =
          c.fetches.empty() ? serial->DefaultFetches() : c.fetches;
      ASSERT_FALSE(fetches.empty());
      std::vector<std::vector<std::vector<Tensor>>> expected(kThreads);
      int compiled_nodes = 0;
      for (int t = 0; t < kThreads; ++t) {
        for (int i = 0; i < kIters; ++i) {
          RunStats stats;
          auto out = serial->Run(MakeFeeds(c, t, i), fetches, &stats);
          ASSERT_TRUE(out.ok()) << "serial thread " << t << " iter " << i << ": "
                                << StatusToString(out.status());
          expected[t].push_back(*std::move(out));
          compiled_nodes += stats.nodes_compiled;
        }
      }
      if (mode == JitMode::kAll) {
        EXPECT_GT(compiled_nodes, 0) << "jit=all compiled nothing";
      }
      if (mode == JitMode::kNone) {
        EXPECT_EQ(compiled_nodes, 0);
      }

      std::unique_ptr<Session> concurrent = Load(c.path, mode, pool_threads);
      ASSERT_NE(concurrent, nullptr);
      std::vector<std::vector<std::string>> errors(kThreads);
      RunOnThreads([&](int t) {
        for (int i = 0; i < kIters; ++i) {
          auto out = concurrent->Run(MakeFeeds(c, t, i), fetches);
          std::string error =
              out.ok() ? BitDifference(expected[t][i], *out) : StatusToString(out.status());
          if (!error.empty()) {
            errors[t].push_back("thread " + std::to_string(t) + " iter " + std::to_string(i) +
                                ": " + error);
          }
        }
      });
      for (const auto& thread_errors : errors) {
        for (const std::string& e : thread_errors) ADD_FAILURE() << e;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, ConcurrentRunTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// Single flight: 8 runs that start together with an input shape the session has not seen
// compile each cluster once; the other runs wait for that compile and count a cache hit.
struct SingleFlightCase {
  std::string name;
  JitMode mode;
};

void PrintTo(const SingleFlightCase& c, std::ostream* os) {
  *os << c.name << " " << JitModeName(c.mode);
}

class SingleFlightTest : public ::testing::TestWithParam<SingleFlightCase> {};

TEST_P(SingleFlightTest, NewShapeCompilesOncePerCluster) {
  const SingleFlightCase& sf = GetParam();
  Case c;
  for (const Case& k : Cases()) {
    if (k.name == sf.name) c = k;
  }
  ASSERT_FALSE(c.path.empty());
  std::unique_ptr<Session> session = Load(c.path, sf.mode, 2);
  ASSERT_NE(session, nullptr);
  const std::vector<std::string> fetches =
      c.fetches.empty() ? session->DefaultFetches() : c.fetches;
  // Batch size from the thread: MakeFeeds(c, 0, ...) is batch 1, warm-up only.
  auto feeds_of_batch = [&](int64_t batch, int seed) {
    Case shaped = c;
    for (InputSpec& in : shaped.inputs) {
      for (int64_t& d : in.dims) {
        if (d < 0) d = batch;
      }
    }
    return MakeFeeds(shaped, seed, 0);
  };
  // A run compiles each distinct (cluster, input signature) once; a function called from two
  // call sites shares its compiled body, and shape-independent clusters compile only for the
  // first shape. So the expected count for a new shape comes from a second session that runs
  // the same sequence serially.
  std::unique_ptr<Session> serial = Load(c.path, sf.mode, 2);
  ASSERT_NE(serial, nullptr);
  for (Session* s : {session.get(), serial.get()}) {
    RunStats warm;
    auto first = s->Run(feeds_of_batch(1, 0), fetches, &warm);
    ASSERT_TRUE(first.ok()) << StatusToString(first.status());
    ASSERT_GT(warm.clusters, 0) << "nothing compiled: the case does not test single flight";
    EXPECT_EQ(warm.fallbacks, 0);
  }

  for (int64_t batch : {5, 6}) {  // two new shapes, each raced by all threads
    SCOPED_TRACE("batch " + std::to_string(batch));
    RunStats reference;
    ASSERT_TRUE(serial->Run(feeds_of_batch(batch, 0), fetches, &reference).ok());
    const int expected_compiles = reference.clusters - reference.cache_hits;
    ASSERT_GT(expected_compiles, 0) << "the new shape compiles nothing: no single flight to test";
    std::vector<RunStats> stats(kThreads);
    std::vector<std::string> errors(kThreads);
    RunOnThreads([&](int t) {
      auto out = session->Run(feeds_of_batch(batch, t), fetches, &stats[t]);
      if (!out.ok()) errors[t] = StatusToString(out.status());
    });
    int compiles = 0;
    for (int t = 0; t < kThreads; ++t) {
      ASSERT_EQ(errors[t], "") << "thread " << t;
      EXPECT_EQ(stats[t].clusters, reference.clusters) << "thread " << t;
      EXPECT_EQ(stats[t].fallbacks, 0) << "thread " << t;
      const int compiled_here = stats[t].clusters - stats[t].cache_hits;
      compiles += compiled_here;
      // compile_ms counts only the compiles this run did itself, not its wait for another's.
      EXPECT_EQ(compiled_here > 0, stats[t].compile_ms > 0) << "thread " << t;
    }
    EXPECT_EQ(compiles, expected_compiles) << "each new compilation must happen exactly once";
    RunStats again;
    ASSERT_TRUE(session->Run(feeds_of_batch(batch, 99), fetches, &again).ok());
    EXPECT_EQ(again.cache_hits, again.clusters);
    EXPECT_EQ(again.compile_ms, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, SingleFlightTest,
                         ::testing::Values(SingleFlightCase{"dynamic_batch", JitMode::kAuto},
                                           SingleFlightCase{"conv", JitMode::kAll},
                                           SingleFlightCase{"demo_mlp", JitMode::kAuto},
                                           SingleFlightCase{"jit_function", JitMode::kOff},
                                           SingleFlightCase{"jit_function", JitMode::kAll}),
                         [](const auto& info) {
                           return info.param.name + "_" + JitModeName(info.param.mode);
                         });

// One symbolic executable (--shapes symbolic, shape_policy.h) shared by 8 threads, each
// running its own batch sizes 2..9 in its own order: the executable compiles once, runs with
// arenas of different sizes at once, and every result matches a session that compiles each
// shape, within float rounding (the code differs in how loops are bounded, not in what they
// compute, so in practice it is exact).
TEST(SymbolicConcurrencyTest, ThreadsShareOneSymbolicExecutable) {
  for (const char* name : {"dynamic_batch", "conv"}) {
    SCOPED_TRACE(name);
    Case c;
    for (const Case& k : Cases()) {
      if (k.name == name) c = k;
    }
    ASSERT_FALSE(c.path.empty());
    SessionOptions options;
    options.jit = JitMode::kAuto;
    options.inter_op_threads = options.intra_op_threads = 2;
    options.shapes = ShapeMode::kSymbolic;
    auto symbolic = Session::Load(c.path, options);
    ASSERT_TRUE(symbolic.ok()) << StatusToString(symbolic.status());
    std::unique_ptr<Session> fixed = Load(c.path, JitMode::kAuto, 2);
    ASSERT_NE(fixed, nullptr);
    const std::vector<std::string> fetches =
        c.fetches.empty() ? fixed->DefaultFetches() : c.fetches;
    auto feeds_of = [&](int64_t batch, int seed) {
      Case shaped = c;
      for (InputSpec& in : shaped.inputs) {
        for (int64_t& d : in.dims) d = d < 0 ? batch : d;
      }
      return MakeFeeds(shaped, seed, 0);
    };
    std::vector<std::string> errors(kThreads);
    std::vector<int> compiles(kThreads, 0);
    RunOnThreads([&](int t) {
      for (int i = 0; i < 8; ++i) {
        const int64_t batch = 2 + (t + 3 * i) % 8;
        RunStats stats;
        auto out = (*symbolic)->Run(feeds_of(batch, t * 8 + i), fetches, &stats);
        if (!out.ok()) {
          errors[t] += StatusToString(out.status()) + "\n";
          continue;
        }
        compiles[t] += static_cast<int>(stats.compiles.size());
        for (const ClusterCompile& cc : stats.compiles) {
          if (cc.shape_class == "static") errors[t] += "a static compile at batch >= 2\n";
        }
        auto want = fixed->Run(feeds_of(batch, t * 8 + i), fetches);
        if (!want.ok()) {
          errors[t] += StatusToString(want.status()) + "\n";
          continue;
        }
        for (size_t k = 0; k < want->size(); ++k) {
          const Tensor& a = (*out)[k];
          const Tensor& b = (*want)[k];
          if (a.dims() != b.dims()) {
            errors[t] +=
                absl::StrCat("batch ", batch, ": ", a.ShapeString(), " vs ", b.ShapeString(), "\n");
            continue;
          }
          for (int64_t e = 0; e < a.num_elements(); ++e) {
            const float x = a.data<float>()[e], y = b.data<float>()[e];
            if (std::fabs(x - y) > 1e-5f * std::max(1.0f, std::fabs(y))) {
              errors[t] += absl::StrCat("batch ", batch, " element ", e, ": ", x, " vs ", y, "\n");
              break;
            }
          }
        }
      }
    });
    int total = 0;
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(errors[t], "") << "thread " << t;
      total += compiles[t];
    }
    EXPECT_EQ(total, 1) << "one symbolic executable serves every batch size >= 2";
  }
}

// Variables under concurrent runs. Resource variables (TF2): AssignAdd/AssignSubVariableOp
// take the variable's lock for their read-modify-write, so none of N updates from each of 8
// threads is lost, in every jit mode (a compiled cluster holds the lock of each variable it
// writes from its read to its write-back, as TF's XLA launch locks the cluster's variables).
constexpr char kResourceGraph[] = R"pb(
node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } } } } attr { key: "shared_name" value { s: "v" } } }
node { name: "c" op: "VarHandleOp" attr { key: "dtype" value { type: DT_INT64 } }
  attr { key: "shape" value { shape { } } } attr { key: "shared_name" value { s: "c" } } }
node { name: "r" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { } } } attr { key: "shared_name" value { s: "r" } } }
node { name: "v/zero" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 0 float_val: 0 } } } }
node { name: "c/zero" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
  attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 0 } } } }
node { name: "r/zero" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0 } } } }
node { name: "v/init" op: "AssignVariableOp" input: "v" input: "v/zero" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "c/init" op: "AssignVariableOp" input: "c" input: "c/zero" attr { key: "dtype" value { type: DT_INT64 } } }
node { name: "r/init" op: "AssignVariableOp" input: "r" input: "r/zero" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "delta" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: -2 } } } }
node { name: "three" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
  attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 3 } } } }
node { name: "add_v" op: "AssignAddVariableOp" input: "v" input: "delta" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "sub_c" op: "AssignSubVariableOp" input: "c" input: "three" attr { key: "dtype" value { type: DT_INT64 } } }
node { name: "r/read" op: "ReadVariableOp" input: "r" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "r/one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
node { name: "r/plus" op: "AddV2" input: "r/read" input: "r/one" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "r/set" op: "AssignVariableOp" input: "r" input: "r/plus" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "v/peek" op: "ReadVariableOp" input: "v" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "c/peek" op: "ReadVariableOp" input: "c" attr { key: "dtype" value { type: DT_INT64 } } }
node { name: "r/peek" op: "ReadVariableOp" input: "r" attr { key: "dtype" value { type: DT_FLOAT } } }
)pb";

class VariableConcurrencyTest : public ::testing::TestWithParam<JitMode> {};

TEST_P(VariableConcurrencyTest, ResourceUpdatesAreNotLost) {
  constexpr int kUpdates = 25;
  std::unique_ptr<Session> session =
      Load(WriteTempFile("resource.pbtxt", kResourceGraph), GetParam(), 2);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(RunTargets(*session, {}, {}, {"v/init", "c/init", "r/init"}).ok());
  std::vector<std::string> errors(kThreads);
  RunOnThreads([&](int t) {
    for (int i = 0; i < kUpdates && errors[t].empty(); ++i) {
      // Both updates in one run, and a read of v racing with the other threads' updates.
      auto out = RunTargets(*session, {}, {"v/peek"}, {"add_v", "sub_c"});
      if (!out.ok()) errors[t] = StatusToString(out.status());
    }
  });
  for (int t = 0; t < kThreads; ++t) ASSERT_EQ(errors[t], "") << "thread " << t;
  auto out = RunTargets(*session, {}, {"v/peek", "c/peek"}, {});
  ASSERT_TRUE(out.ok()) << StatusToString(out.status());
  const int n = kThreads * kUpdates;
  EXPECT_EQ((*out)[0].data<float>()[0], static_cast<float>(n));
  EXPECT_EQ((*out)[0].data<float>()[1], static_cast<float>(-2 * n));
  EXPECT_EQ((*out)[1].data<int64_t>()[0], -3 * n);
}

// v.assign(v.read_value() + 1): a ReadVariableOp and an AssignVariableOp are two ops, so TF
// does not make the pair atomic when they run as kernels (updates may be lost, which TF
// allows); compiled as one cluster they are (the cluster holds r's lock from its read to its
// write-back), so no update is lost.
TEST_P(VariableConcurrencyTest, ReadThenAssignIsAtomicOnlyWhenCompiled) {
  constexpr int kUpdates = 25;
  std::unique_ptr<Session> session =
      Load(WriteTempFile("resource_rmw.pbtxt", kResourceGraph), GetParam(), 2);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(RunTargets(*session, {}, {}, {"r/init"}).ok());
  RunStats probe;
  ASSERT_TRUE(RunTargets(*session, {}, {}, {"r/set"}, &probe).ok());
  // Compiled as one unit when the read, the add and the assign are all in one cluster.
  const bool one_cluster = probe.clusters == 1 && probe.nodes_compiled >= 3;
  if (GetParam() == JitMode::kAll) {
    EXPECT_TRUE(one_cluster);
  }
  std::vector<std::string> errors(kThreads);
  RunOnThreads([&](int t) {
    for (int i = 0; i < kUpdates && errors[t].empty(); ++i) {
      auto out = RunTargets(*session, {}, {}, {"r/set"});
      if (!out.ok()) errors[t] = StatusToString(out.status());
    }
  });
  for (int t = 0; t < kThreads; ++t) ASSERT_EQ(errors[t], "") << "thread " << t;
  auto out = RunTargets(*session, {}, {"r/peek"}, {});
  ASSERT_TRUE(out.ok()) << StatusToString(out.status());
  const float total = 1 + kThreads * kUpdates;
  const float r = (*out)[0].data<float>()[0];
  if (one_cluster) {
    EXPECT_EQ(r, total);
  } else {
    EXPECT_GE(r, static_cast<float>(1 + kUpdates));  // at least one thread's own updates
    EXPECT_LE(r, total);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, VariableConcurrencyTest,
                         ::testing::Values(JitMode::kNone, JitMode::kAuto, JitMode::kAll),
                         [](const auto& info) { return std::string(JitModeName(info.param)); });

// TF1 reference variables: AssignAdd with use_locking=true must not lose updates. With
// use_locking=false TF allows races between updates; tfjit always takes the variable's lock
// (TF permits that), so those updates are not lost either, and concurrent reads through
// Identity see whole values. Assign of per-thread values leaves one thread's whole value.
constexpr char kRefGraph[] = R"pb(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "w" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } } } }
  attr { key: "container" value { s: "" } } attr { key: "shared_name" value { s: "" } } }
node { name: "u" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } } } }
  attr { key: "container" value { s: "" } } attr { key: "shared_name" value { s: "" } } }
node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 0 float_val: 0 } } } }
node { name: "w/Assign" op: "Assign" input: "w" input: "zero" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "validate_shape" value { b: true } } attr { key: "use_locking" value { b: true } } }
node { name: "u/Assign" op: "Assign" input: "u" input: "zero" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "validate_shape" value { b: true } } attr { key: "use_locking" value { b: true } } }
node { name: "inc" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: 3 } } } }
node { name: "dec" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 0.5 float_val: 1 } } } }
node { name: "add_locked" op: "AssignAdd" input: "w" input: "inc" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "use_locking" value { b: true } } }
node { name: "sub_unlocked" op: "AssignSub" input: "w" input: "dec" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "use_locking" value { b: false } } }
node { name: "w/read" op: "Identity" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "w/sum" op: "Sum" input: "w/read" input: "axis" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tidx" value { type: DT_INT32 } } attr { key: "keep_dims" value { b: false } } }
node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "set_u" op: "Assign" input: "u" input: "x" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "validate_shape" value { b: true } } attr { key: "use_locking" value { b: true } } }
node { name: "u/read" op: "Identity" input: "u" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

class RefVariableConcurrencyTest : public ::testing::TestWithParam<JitMode> {};

TEST_P(RefVariableConcurrencyTest, LockedAndUnlockedUpdatesAreNotLost) {
  constexpr int kUpdates = 25;
  std::unique_ptr<Session> session = Load(WriteTempFile("ref.pbtxt", kRefGraph), GetParam(), 2);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(RunTargets(*session, {}, {}, {"w/Assign", "u/Assign"}).ok());
  std::vector<std::string> errors(kThreads);
  RunOnThreads([&](int t) {
    for (int i = 0; i < kUpdates && errors[t].empty(); ++i) {
      auto a = RunTargets(*session, {}, {}, {"add_locked"});
      auto b = RunTargets(*session, {}, {"w/sum"}, {"sub_unlocked"});
      const Tensor mine =
          Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{1.0f * t, -1.0f * t});
      auto c = RunTargets(*session, {{"x", mine}}, {}, {"set_u"});
      auto d = RunTargets(*session, {}, {"u/read"}, {});
      for (const absl::Status& s :
           std::vector<absl::Status>{a.status(), b.status(), c.status(), d.status()}) {
        if (!s.ok()) errors[t] = StatusToString(s);
      }
      // Another thread may have assigned u since, but never half of a value.
      if (d.ok() && (*d)[0].data<float>()[0] != -(*d)[0].data<float>()[1]) {
        errors[t] = "torn read of u: " + (*d)[0].DebugString();
      }
    }
  });
  for (int t = 0; t < kThreads; ++t) ASSERT_EQ(errors[t], "") << "thread " << t;
  auto out = RunTargets(*session, {}, {"w/read", "u/read"}, {});
  ASSERT_TRUE(out.ok()) << StatusToString(out.status());
  const float n = kThreads * kUpdates;
  EXPECT_EQ((*out)[0].data<float>()[0], n * (1.0f - 0.5f));
  EXPECT_EQ((*out)[0].data<float>()[1], n * (3.0f - 1.0f));
  const float u0 = (*out)[1].data<float>()[0];
  EXPECT_EQ((*out)[1].data<float>()[1], -u0);
  EXPECT_TRUE(u0 >= 0 && u0 < kThreads && u0 == static_cast<int>(u0)) << u0;
}

INSTANTIATE_TEST_SUITE_P(Modes, RefVariableConcurrencyTest,
                         ::testing::Values(JitMode::kNone, JitMode::kAuto),
                         [](const auto& info) { return std::string(JitModeName(info.param)); });

// A must-compile function updating a variable inside a loop and a cond (tests/tf/variables):
// run from 8 threads, each run adds 3x - x = 2x with x = [1, 2] (sum(x) > 0), exactly.
TEST(VariableConcurrencyTest, CompiledLoopUpdatesAreNotLost) {
  constexpr int kRuns = 10;
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
    SCOPED_TRACE(JitModeName(mode));
    std::unique_ptr<Session> session =
        Load(SourcePath("tests/tf/variables/loop_update.pbtxt"), mode, 2);
    ASSERT_NE(session, nullptr);
    ASSERT_TRUE(RunTargets(*session, {}, {}, {"v/Assign"}).ok());
    const Tensor x = Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{1.0f, 2.0f});
    std::vector<std::string> errors(kThreads);
    RunOnThreads([&](int t) {
      for (int i = 0; i < kRuns && errors[t].empty(); ++i) {
        auto out = RunTargets(*session, {{"x", x}}, {"StatefulPartitionedCall"}, {});
        if (!out.ok()) errors[t] = StatusToString(out.status());
      }
    });
    for (int t = 0; t < kThreads; ++t) ASSERT_EQ(errors[t], "") << "thread " << t;
    // "read" runs the function once more before it reads.
    auto out = RunTargets(*session, {{"x", x}}, {"read"}, {});
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    const float n = kThreads * kRuns + 1;
    EXPECT_EQ((*out)[0].data<float>()[0], 1.0f + 2.0f * n);
    EXPECT_EQ((*out)[0].data<float>()[1], 2.0f + 4.0f * n);
  }
}

// The end of a run: many units finishing at once on the inter-op pool's threads while the
// calling thread waits for the last one. A unit's thread must not touch the run's state after
// handing back the last in-flight count (the caller returns and frees it at once): ASan found
// such a read in the executor (heap-use-after-free of the run's scheduling closure). A graph of
// 24 independent branches joined by AddN, run many times with 4 pool threads; each branch
// computes (x + b) * b for its own b, so the sum is hand-computable.
TEST(ConcurrentRunTest, WideGraphRunEndsCleanly) {
  constexpr int kBranches = 24;
  std::string graph =
      "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { "
      "type: DT_FLOAT } } attr { key: \"shape\" value { shape { dim { size: 4 } "
      "} } } }\n";
  auto node = [](const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs) {
    std::string text = "node { name: \"" + name + "\" op: \"" + op + "\"";
    for (const std::string& in : inputs) text += " input: \"" + in + "\"";
    return text + " attr { key: \"T\" value { type: DT_FLOAT } }";
  };
  std::string addn_inputs;
  std::vector<std::string> sums;
  for (int b = 0; b < kBranches; ++b) {
    const std::string k = std::to_string(b);
    graph += "node { name: \"b" + k +
             "\" op: \"Const\" attr { key: \"dtype\" value { type: "
             "DT_FLOAT } } attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape "
             "{ } float_val: " +
             k + " } } } }\n";
    graph += node("add" + k, "AddV2", {"x", "b" + k}) + " }\n";
    graph += node("mul" + k, "Mul", {"add" + k, "b" + k}) + " }\n";
    sums.push_back("mul" + k);
  }
  graph += node("sum", "AddN", sums) +
           " attr { key: \"N\" value { i: " + std::to_string(kBranches) + " } } }\n";
  const std::string path = WriteTempFile("wide_graph.pbtxt", graph);
  const Tensor x = Tensor::FromVector(DType::kFloat32, {4}, std::vector<float>{0, 1, 2, 3});
  // kNone: 49 units on the pool; kAuto: one compiled cluster, whose kernels shard on it.
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto}) {
    SCOPED_TRACE(JitModeName(mode));
    std::unique_ptr<Session> session = Load(path, mode, 4);
    ASSERT_NE(session, nullptr);
    for (int run = 0; run < 200; ++run) {
      auto out = session->Run({{"x", x}}, {"sum"});
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      for (int i = 0; i < 4; ++i) {
        // sum over b of (x + b) * b = x * sum(b) + sum(b^2), all small integers (exact).
        float want = 0;
        for (int b = 0; b < kBranches; ++b) want += (static_cast<float>(i) + b) * b;
        ASSERT_EQ((*out)[0].data<float>()[i], want) << "run " << run << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace tfjit
