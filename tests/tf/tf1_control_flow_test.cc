// TF1 control flow (Switch/Merge deadness, Enter/Exit/NextIteration frames) through the
// Session, on graphs shaped as TF 1.x exports tf.while_loop and tf.cond, against values
// computed by hand. --jit none and off run them in the frame executor; auto and all first
// turn each loop frame into a functional While (frontend/functionalize.h), which compiles,
// and leave what cannot be turned (conditionals inside loops) to the frame executor; all
// then reports those with TF's unsupported-operations message.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

std::string Tf1Graph(const std::string& name) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "tf1" / name).string();
}

std::unique_ptr<Session> Load(const std::string& name, JitMode mode, bool autofix = false) {
  SessionOptions options;
  options.jit = mode;
  options.autofix = autofix;
  auto session = Session::Load(Tf1Graph(name), options);
  EXPECT_TRUE(session.ok()) << StatusToString(session.status());
  return session.ok() ? std::move(*session) : nullptr;
}

Tensor Scalar(float v) { return Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{v}); }

// `tfjit explain`'s text for tf1 graph `name` under `mode`, explaining `fetch`.
std::string ExplainText(const std::string& name, JitMode mode, const std::string& fetch) {
  SessionOptions options;
  options.jit = mode;
  auto session = Session::Load(Tf1Graph(name), options);
  EXPECT_TRUE(session.ok()) << StatusToString(session.status());
  if (!session.ok()) return "";
  auto text = (*session)->Explain({fetch});
  EXPECT_TRUE(text.ok()) << StatusToString(text.status());
  return text.ok() ? *text : "";
}

TEST(Tf1ControlFlowTest, WhileLoopWithLoopConstantsAndTwoExits) {
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto}) {
    auto session = Load("while_loop.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    for (int n : {0, 1, 10}) {
      auto out = session->Run(
          {{"x", Scalar(0.5f)}, {"n", Tensor::FromVector(DType::kInt32, {}, std::vector<int>{n})}},
          {"acc", "while/Exit"});
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      float acc = 0.5f;
      for (int i = 0; i < n; ++i) acc = acc * 2.0f + static_cast<float>(i);
      EXPECT_EQ((*out)[0].data<float>()[0], acc) << "n=" << n;
      EXPECT_EQ((*out)[1].data<int32_t>()[0], n);
    }
  }
}

// The part of a TF1 graph that depends on no control flow compiles ahead of the frames in
// --jit off's frame executor; in auto the functionalized loop compiles with it and the tail
// as one cluster.
TEST(Tf1ControlFlowTest, StaticPrefixCompilesAheadOfTheLoop) {
  const std::vector<float> x = {-0.5f, 0.0f, 0.25f, 1.0f};
  float s = 0.0f;
  std::vector<float> tanh_x;
  for (float v : x) {
    tanh_x.push_back(std::tanh(v * 3.0f + 1.0f));
    s += tanh_x.back();
  }
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto}) {
    auto session = Load("prefix_loop.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    for (int n : {0, 3}) {
      RunStats stats;
      auto out = session->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {4}, x)},
                               {"n", Tensor::FromVector(DType::kInt32, {}, std::vector<int>{n})}},
                              {"out", "pre/tanh"}, &stats);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      float acc = s;
      for (int i = 0; i < n; ++i) acc = acc * 2.0f + static_cast<float>(i);
      EXPECT_NEAR((*out)[0].data<float>()[0], (acc + 0.25f) * 2.0f, 1e-5f) << "n=" << n;
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR((*out)[1].data<float>()[i], tanh_x[i], 1e-6f);
      }
      if (mode == JitMode::kAuto) {
        // The prefix (mul, add, tanh, sum and their constants), the While the loop became,
        // and the tail after its Exit (acc, post/sum, post/two, out): one cluster.
        EXPECT_EQ(stats.clusters, 1);
        EXPECT_GE(stats.nodes_compiled, 12);
      } else {
        EXPECT_EQ(stats.clusters, 0);
      }
    }
  }
}

// Root-frame nodes that can never be dead compile even though they come after control flow:
// the tf.cond's Merge joins both branches of one predicate, and a loop entered with live
// values ends with a live Exit. The frame executor runs each cluster as one unit.
TEST(Tf1ControlFlowTest, NeverDeadRootFrameNodesAfterCondAndLoopCompile) {
  const std::vector<float> x = {-1.0f, 0.0f, 0.5f, 2.0f};
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto}) {
    auto session = Load("cond_then_compute.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    for (bool p : {true, false}) {
      for (int n : {0, 2}) {
        RunStats stats;
        auto out = session->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {4}, x)},
                                 {"p", Tensor::FromVector<bool>(DType::kBool, {}, {p})},
                                 {"n", Tensor::FromVector(DType::kInt32, {}, std::vector<int>{n})}},
                                {"hsum", "out", "h/add"}, &stats);
        ASSERT_TRUE(out.ok()) << StatusToString(out.status());
        float hsum = 0.0f, total = 0.0f;
        for (size_t i = 0; i < x.size(); ++i) {
          const float m = p ? x[i] * 3.0f : x[i] + 1.0f;
          const float h = std::tanh(m * 0.5f) + m;
          hsum += h;
          total += m * static_cast<float>(1 << n) * 0.5f + h;
          EXPECT_NEAR((*out)[2].data<float>()[i], h, 1e-5f) << "p=" << p << " n=" << n;
        }
        EXPECT_NEAR((*out)[0].data<float>()[0], hsum, 1e-4f) << "p=" << p << " n=" << n;
        EXPECT_NEAR((*out)[1].data<float>()[0], total, 1e-4f) << "p=" << p << " n=" << n;
        if (mode == JitMode::kAuto) {
          EXPECT_GE(stats.clusters, 1);
          EXPECT_GE(stats.nodes_compiled, 7);  // h/mul, h/tanh, h/add, hsum, post/*, out
        } else {
          EXPECT_EQ(stats.clusters, 0);
        }
      }
    }
  }
}

// The frame executor skips the dead branch's loop. Auto and all turn the loop into a While and
// the conditional (both Merges of one predicate) into one If whose else branch holds the
// While: one cluster.
TEST(Tf1ControlFlowTest, CondTakesOneBranchAndALoopInTheUntakenBranchEndsDead) {
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto, JitMode::kAll}) {
    auto session = Load("cond.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    for (bool p : {true, false}) {
      RunStats stats;
      auto out = session->Run(
          {{"x", Scalar(1.5f)}, {"p", Tensor::FromVector<bool>(DType::kBool, {}, {p})}},
          {"out", "looped"}, &stats);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      EXPECT_EQ((*out)[0].data<float>()[0], p ? 4.5f : 2.5f) << "p=" << p;
      EXPECT_EQ((*out)[1].data<float>()[0], p ? 1.5f : 12.0f) << "p=" << p;
      EXPECT_EQ(stats.clusters, mode == JitMode::kNone ? 0 : 1) << JitModeName(mode);
      if (mode != JitMode::kNone) {
        EXPECT_EQ(stats.fallbacks, 0) << JitModeName(mode);
      }
    }
  }
}

// cond_in_loop.pbtxt's acc for x = 0.75 against the hand-computed value, for each n.
void ExpectCondInLoopValues(Session& session, const std::vector<int>& ns) {
  for (int n : ns) {
    auto out = session.Run(
        {{"x", Scalar(0.75f)}, {"n", Tensor::FromVector(DType::kInt32, {}, std::vector<int>{n})}},
        {"acc"});
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    float acc = 0.75f;
    for (int i = 0; i < n; ++i) acc = i % 2 == 0 ? acc + 1.0f : acc * 2.0f;
    EXPECT_EQ((*out)[0].data<float>()[0], acc) << "n=" << n;
  }
}

TEST(Tf1ControlFlowTest, CondInsideALoopTakesItsBranchInEveryIteration) {
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto, JitMode::kAll}) {
    auto session = Load("cond_in_loop.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    ExpectCondInLoopValues(*session, {0, 1, 2, 5});
  }
}

TEST(Tf1ControlFlowTest, FetchingADeadTensorIsAnError) {
  auto session = Load("cond.pbtxt", JitMode::kNone);
  ASSERT_NE(session, nullptr);
  auto out =
      session->Run({{"x", Scalar(1.0f)}, {"p", Tensor::FromVector<bool>(DType::kBool, {}, {true})}},
                   {"cond/add"});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(out.status().message(), "is dead")) << out.status();
}

// --jit all compiles a functionalized loop whole (XLA's bridge functionalizes TF1 loops the
// same way); a frame that stays TF1 (its conditional's Merge:1 is read) is reported with TF's
// unsupported-operations message naming the frame ops.
TEST(Tf1ControlFlowTest, MustCompileCompilesLoopsAndReportsFramesLeft) {
  auto session = Load("while_loop.pbtxt", JitMode::kAll);
  ASSERT_NE(session, nullptr);
  RunStats stats;
  auto out = session->Run(
      {{"x", Scalar(1.0f)}, {"n", Tensor::FromVector(DType::kInt32, {}, std::vector<int>{2})}},
      {"acc"}, &stats);
  ASSERT_TRUE(out.ok()) << StatusToString(out.status());
  EXPECT_EQ((*out)[0].data<float>()[0], (1.0f * 2.0f + 0.0f) * 2.0f + 1.0f);
  EXPECT_EQ(stats.clusters, 1);

  auto left = Load("cond_value_index_in_loop.pbtxt", JitMode::kAll);
  ASSERT_NE(left, nullptr);
  auto bad = left->Run(
      {{"x", Scalar(1.0f)}, {"n", Tensor::FromVector(DType::kInt32, {}, std::vector<int>{2})}},
      {"acc"});
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(bad.status().message(),
                               "Detected unsupported operations when trying to compile graph"))
      << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "Enter")) << bad.status();
}

// Nested loops: the inner frame becomes a While inside the outer loop's body, then the outer
// one a While; every mode gives the hand-computed values, auto and all in one cluster.
TEST(Tf1ControlFlowTest, NestedLoopsFunctionalizeInnermostFirst) {
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
    auto session = Load("nested_loops.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    for (int n : {0, 1, 4}) {
      RunStats stats;
      auto out = session->Run(
          {{"x", Scalar(0.75f)}, {"n", Tensor::FromVector(DType::kInt32, {}, std::vector<int>{n})}},
          {"acc", "outer/Exit"}, &stats);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      float acc = 0.75f;
      for (int i = 0; i < n; ++i) {
        float t = acc;
        for (int j = 0; j < i; ++j) t = t * 2.0f + 1.0f;
        acc = t + 0.5f;
      }
      EXPECT_EQ((*out)[0].data<float>()[0], acc) << "n=" << n;
      EXPECT_EQ((*out)[1].data<int32_t>()[0], n);
      const bool compiles = mode == JitMode::kAuto || mode == JitMode::kAll;
      EXPECT_EQ(stats.clusters, compiles ? 1 : 0) << JitModeName(mode);
    }
  }
  std::string text = ExplainText("nested_loops.pbtxt", JitMode::kAuto, "acc");
  EXPECT_TRUE(absl::StrContains(text, "TF1 loops turned into While nodes: 2")) << text;
}

// A conditional inside a loop becomes an If, then the loop a While: one cluster in auto, and
// explain counts both. One whose Merge:1 is read stays TF1 with the loop holding it, and
// explain says why for each; the frame executor still gives the values.
TEST(Tf1ControlFlowTest, ExplainSaysWhatWasFunctionalizedAndWhy) {
  std::string text = ExplainText("cond_in_loop.pbtxt", JitMode::kAuto, "acc");
  EXPECT_TRUE(absl::StrContains(text, "TF1 loops turned into While nodes: 1")) << text;
  EXPECT_TRUE(absl::StrContains(text, "TF1 conditionals turned into If nodes: 1")) << text;
  EXPECT_TRUE(absl::StrContains(text, "jit mode: auto, 1 cluster(s)")) << text;

  text = ExplainText("cond_value_index_in_loop.pbtxt", JitMode::kAuto, "acc");
  EXPECT_TRUE(absl::StrContains(text,
                                "TF1 conditional at Merge 'while/cond/Merge' stays in the "
                                "runtime: node 'while/cond/which' reads Merge "
                                "'while/cond/Merge''s value_index"))
      << text;
  EXPECT_TRUE(absl::StrContains(text,
                                "TF1 loop frame 'while/while_context' stays in the "
                                "runtime: Merge 'while/cond/Merge' is a TF1 "
                                "conditional's"))
      << text;
  auto left = Load("cond_value_index_in_loop.pbtxt", JitMode::kAuto);
  ASSERT_NE(left, nullptr);
  ExpectCondInLoopValues(*left, {0, 3});
}

// A TF1 TensorArray written in a TF1 loop and stacked after it: auto and all turn it into
// TensorList ops whose list the flow carries (as XLA represents TensorArrays), so --jit all
// compiles the loop, the writes and the gather as one cluster. Every mode gives rows x * i.
TEST(Tf1ControlFlowTest, TensorArrayInALoopBecomesATensorList) {
  const std::vector<float> x = {1.5f, -2.0f};
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
    auto session = Load("tensor_array_loop.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    RunStats stats;
    auto out = session->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {2}, x)}},
                            {"out", "TensorArraySize"}, &stats);
    ASSERT_TRUE(out.ok()) << JitModeName(mode) << ": " << StatusToString(out.status());
    ASSERT_EQ((*out)[0].ShapeString(), "float32[4,2]");
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 2; ++j) {
        EXPECT_EQ((*out)[0].data<float>()[i * 2 + j],
                  x[static_cast<size_t>(j)] * static_cast<float>(i));
      }
    }
    EXPECT_EQ((*out)[1].data<int32_t>()[0], 4);
    if (mode == JitMode::kAll) {
      EXPECT_EQ(stats.clusters, 1);
    }
  }
  std::string text = ExplainText("tensor_array_loop.pbtxt", JitMode::kAll, "out");
  EXPECT_TRUE(absl::StrContains(text, "TF1 TensorArrays turned into TensorLists: 1")) << text;
}

// ta.stack() as TF 1.x exports it: Range(0, TensorArraySizeV3(ta)) indexes the gather. The
// array's size is its constant reserve, carried unchanged through the loop, so the Range
// compiles; with --autofix auto-clustering then compiles the whole stack (loop, size, range,
// gather) as one cluster. `head` gathers the first k rows, k fed: that Range stays in the
// runtime, so the list would cross a cluster's edge; with --autofix the nodes on that edge stay
// in the runtime with the list (they used to fail every cluster with known issue B and run
// all of them on kernels). Every mode gives the hand values (--jit all fetches `out` only).
TEST(Tf1ControlFlowTest, StackRangeFromTheArraySizeCompiles) {
  const std::vector<float> x = {1.5f, -2.0f};
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", Tensor::FromVector<float>(DType::kFloat32, {2}, x)},
      {"k", Tensor::FromVector<int32_t>(DType::kInt32, {}, {3})}};
  struct Mode {
    JitMode jit;
    bool autofix;
  };
  for (const Mode& mode : {Mode{JitMode::kNone, false}, Mode{JitMode::kAuto, false},
                           Mode{JitMode::kAuto, true}, Mode{JitMode::kAll, false}}) {
    SCOPED_TRACE(absl::StrCat(JitModeName(mode.jit), mode.autofix ? " autofix" : ""));
    auto session = Load("tensor_array_stack_range.pbtxt", mode.jit, mode.autofix);
    ASSERT_NE(session, nullptr);
    for (const std::vector<std::string>& fetches :
         {std::vector<std::string>{"out"}, std::vector<std::string>{"out", "head"}}) {
      // (--jit all: head's Range bound is a fed argument, known issue F.)
      if (mode.jit == JitMode::kAll && fetches.size() == 2) continue;
      RunStats stats;
      auto out = session->Run(fetches == std::vector<std::string>{"out"}
                                  ? std::vector<std::pair<std::string, Tensor>>{feeds[0]}
                                  : feeds,
                              fetches, &stats);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      ASSERT_EQ((*out)[0].ShapeString(), "float32[4,2]");
      for (int i = 0; i < 8; ++i) {
        EXPECT_EQ((*out)[0].data<float>()[i],
                  x[static_cast<size_t>(i % 2)] * static_cast<float>(i / 2));
      }
      if (fetches.size() == 2) {
        ASSERT_EQ((*out)[1].ShapeString(), "float32[3,2]");
        for (int i = 0; i < 6; ++i)
          EXPECT_EQ((*out)[1].data<float>()[i], (*out)[0].data<float>()[i]);
      }
      if (mode.jit != JitMode::kNone) {
        EXPECT_EQ(stats.fallbacks, 0);
      }
      if (mode.jit == JitMode::kAuto && mode.autofix && fetches.size() == 1) {
        EXPECT_EQ(stats.clusters, 1);
        EXPECT_EQ(stats.nodes_compiled, stats.nodes_total);
      }
    }
  }
  auto session = Load("tensor_array_stack_range.pbtxt", JitMode::kAuto, true);
  ASSERT_NE(session, nullptr);
  auto text = session->Explain({"out", "head"});
  ASSERT_TRUE(text.ok()) << StatusToString(text.status());
  EXPECT_TRUE(absl::StrContains(*text, "would cross a cluster's edge")) << *text;
}

// TensorArraySplitV3 before a loop that reads the pieces, TensorArrayConcatV3 after it: both
// have list forms (TensorListSplit, TensorListConcatV2), so --jit all compiles the whole graph
// in one cluster; every mode gives the hand values.
TEST(Tf1ControlFlowTest, TensorArraySplitAndConcatAroundALoop) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto, JitMode::kAll}) {
    auto session = Load("tensor_array_split_concat.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    RunStats stats;
    auto out = session->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {6}, x)}},
                            {"out", "out_lengths"}, &stats);
    ASSERT_TRUE(out.ok()) << JitModeName(mode) << ": " << StatusToString(out.status());
    ASSERT_EQ((*out)[0].ShapeString(), "float32[6]");
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ((*out)[0].data<float>()[i],
                x[static_cast<size_t>(i)] * static_cast<float>(i / 2 + 1))
          << JitModeName(mode) << " element " << i;
    }
    ASSERT_EQ((*out)[1].ShapeString(), "int64[3]");
    for (int i = 0; i < 3; ++i) EXPECT_EQ((*out)[1].data<int64_t>()[i], 2);
    if (mode == JitMode::kAll) {
      EXPECT_EQ(stats.clusters, 1);
      EXPECT_EQ(stats.nodes_compiled, stats.nodes_total);
    }
    // The graph's own outputs (its sinks, as `tfjit run` fetches them): the split replaced the
    // first array's list, which must not be left behind as an output (a list leaving the
    // cluster would fail --jit all with known issue B).
    auto sinks = session->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {6}, x)}},
                              session->DefaultFetches());
    ASSERT_TRUE(sinks.ok()) << JitModeName(mode) << ": " << StatusToString(sinks.status());
  }
  std::string text = ExplainText("tensor_array_split_concat.pbtxt", JitMode::kAll, "out");
  EXPECT_TRUE(absl::StrContains(text, "TF1 TensorArrays turned into TensorLists: 2")) << text;
}

// Conditionals on one predicate chained through their Merges (batch norms on one
// is_training feed) are separate Ifs: one If for both would read its own output. --jit all
// compiles both; every mode gives the hand values.
TEST(Tf1ControlFlowTest, ChainedConditionalsOnOnePredicateAreSeparateIfs) {
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto, JitMode::kAll}) {
    auto session = Load("chained_conds.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    for (bool p : {true, false}) {
      RunStats stats;
      auto out = session->Run(
          {{"x", Scalar(1.5f)}, {"p", Tensor::FromVector<bool>(DType::kBool, {}, {p})}}, {"out"},
          &stats);
      ASSERT_TRUE(out.ok()) << JitModeName(mode) << ": " << StatusToString(out.status());
      EXPECT_EQ((*out)[0].data<float>()[0], p ? 1.5f * 2.0f * 3.0f : 1.5f + 1.0f - 1.0f)
          << JitModeName(mode) << " p=" << p;
      if (mode == JitMode::kAll) {
        EXPECT_EQ(stats.clusters, 1);
      }
    }
  }
  std::string text = ExplainText("chained_conds.pbtxt", JitMode::kAll, "out");
  EXPECT_TRUE(absl::StrContains(text, "TF1 conditionals turned into If nodes: 2")) << text;
}

}  // namespace
}  // namespace tfjit
