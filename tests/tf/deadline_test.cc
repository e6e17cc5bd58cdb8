// Deadlines and cancellation hold everywhere a run spends time (issue 24): at every compile
// stage (lowering, each HLO pass, IR emission, each part of LLVM's code generation, linking),
// while waiting for another run's compile of the same cluster, before each cluster launch and
// between the kernels of compiled code, in every jit mode. The tests make a stage slow, or
// cancel the run there, through the checkpoint hook (core/run_control.h) rather than relying
// on this machine's speed; each then checks that the compilation cache stayed consistent.
#include <atomic>
#include <cctype>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/run_control.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/tf/graph_text.h"
#include "tfjit/cancellation.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::ConstNode;
using ::tfjit::testing::LoadGraphText;
using ::tfjit::testing::PlaceholderNode;

// y = tanh(...tanh(tanh(x w0) w1)... w{n-1}): x f32[4, 4], each layer a dot and a tanh, so a
// compiled cluster runs at least `layers` kernels.
std::string LayersGraph(int layers) {
  std::string g = PlaceholderNode("x", "DT_FLOAT", {4, 4});
  std::string h = "x";
  for (int i = 0; i < layers; ++i) {
    std::vector<float> w(16);
    for (int k = 0; k < 16; ++k)
      w[static_cast<size_t>(k)] = 0.05f * static_cast<float>((k + i) % 7 - 3);
    const std::string wi = absl::StrCat("w", i), mi = absl::StrCat("m", i);
    const std::string ti = i + 1 == layers ? std::string("y") : absl::StrCat("t", i);
    absl::StrAppend(&g, ConstNode<float>(wi, "DT_FLOAT", "float_val", {4, 4}, w));
    absl::StrAppend(&g, "node { name: '", mi, "' op: 'MatMul' input: '", h, "' input: '", wi,
                    "' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    absl::StrAppend(&g, "node { name: '", ti, "' op: 'Tanh' input: '", mi,
                    "' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    h = ti;
  }
  return g;
}

Tensor Input() {
  std::vector<float> v(16);
  for (int k = 0; k < 16; ++k) v[static_cast<size_t>(k)] = 0.1f * static_cast<float>(k - 8);
  return Tensor::FromVector<float>(DType::kFloat32, {4, 4}, v);
}

// What the fallback kernels compute (--jit none): the reference.
std::vector<float> Reference(int layers) {
  auto session = LoadGraphText(absl::StrCat("deadline_ref_", layers, ".pbtxt"), LayersGraph(layers),
                               JitMode::kNone);
  EXPECT_NE(session, nullptr);
  if (session == nullptr) return {};
  absl::StatusOr<std::vector<Tensor>> r = session->Run({{"x", Input()}}, {"y"}, {});
  EXPECT_TRUE(r.ok()) << StatusToString(r.status());
  if (!r.ok()) return {};
  const float* p = (*r)[0].data<float>();
  return std::vector<float>(p, p + (*r)[0].num_elements());
}

void ExpectNear(const Tensor& t, const std::vector<float>& want) {
  ASSERT_EQ(static_cast<size_t>(t.num_elements()), want.size());
  const float* got = t.data<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

// The checkpoint hook for one test: every checkpoint's `where` is recorded; the first whose
// `where` starts with `stage` runs `action` (cancel the run, or sleep past its deadline).
// Clears the hook when it goes.
class StageHook {
 public:
  StageHook(std::string stage, std::function<void()> action) : state_(std::make_shared<State>()) {
    state_->stage = std::move(stage);
    state_->action = std::move(action);
    std::shared_ptr<State> state = state_;  // by value: the hook may outlive this object
    SetCheckpointHookForTesting([state](absl::string_view where) {
      bool fire = false;
      {
        std::lock_guard<std::mutex> lock(state->mu);
        state->seen.emplace_back(where);
        fire = absl::StartsWith(where, state->stage) && !state->fired;
        state->fired = state->fired || fire;
      }
      if (fire) state->action();
    });
  }
  ~StageHook() { SetCheckpointHookForTesting(nullptr); }

  bool fired() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->fired;
  }
  // The checkpoints reached whose `where` starts with `prefix`.
  std::vector<std::string> Seen(const std::string& prefix) const {
    std::lock_guard<std::mutex> lock(state_->mu);
    std::vector<std::string> out;
    for (const std::string& w : state_->seen) {
      if (absl::StartsWith(w, prefix)) out.push_back(w);
    }
    return out;
  }

 private:
  struct State {
    mutable std::mutex mu;
    std::string stage;
    std::function<void()> action;
    bool fired = false;
    std::vector<std::string> seen;
  };
  std::shared_ptr<State> state_;
};

struct StageCase {
  const char* stage;    // the checkpoint's `where` starts with this
  const char* stopped;  // the status says "stopped at <this>..."
  bool compiled;        // the compile had finished there (the next run finds it cached)
};

const StageCase kStages[] = {
    {"lowering ", "lowering ", false},
    {"HLO pass", "HLO pass", false},
    {"emitting LLVM IR", "emitting LLVM IR", false},
    {"LLVM code generation", "LLVM code generation", false},
    {"linking module", "linking module", false},
    {"launching ", "launching ", true},
    {"between the kernels", "compiled module", true},
};

class StageTest : public ::testing::TestWithParam<std::tuple<JitMode, int>> {};

// Cancelled at each stage: CANCELLED naming the stage, and the next run (no hook) gives the
// kernels' answer, compiling again when the compile was abandoned and finding it cached when
// it had finished.
TEST_P(StageTest, CancelledAtTheStageAndTheCacheStaysConsistent) {
  const JitMode mode = std::get<0>(GetParam());
  const StageCase& c = kStages[std::get<1>(GetParam())];
  const std::vector<float> want = Reference(2);
  auto session = LoadGraphText("deadline_stage.pbtxt", LayersGraph(2), mode);
  ASSERT_NE(session, nullptr);
  auto token = std::make_shared<CancellationToken>();
  RunOptions run;
  run.cancel = token;
  {
    StageHook hook(c.stage, [token] { token->Cancel(); });
    absl::StatusOr<std::vector<Tensor>> r = session->Run(run, {{"x", Input()}}, {"y"}, {});
    ASSERT_TRUE(hook.fired()) << "no checkpoint '" << c.stage << "'";
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << StatusToString(r.status());
    EXPECT_TRUE(absl::StrContains(r.status().message(), absl::StrCat("stopped at ", c.stopped)))
        << StatusToString(r.status());
  }
  RunStats stats;
  absl::StatusOr<std::vector<Tensor>> r = session->Run({{"x", Input()}}, {"y"}, {}, &stats);
  ASSERT_TRUE(r.ok()) << StatusToString(r.status());
  ExpectNear((*r)[0], want);
  EXPECT_EQ(stats.clusters, 1);
  if (c.compiled) {
    EXPECT_EQ(stats.cache_hits, 1);
    EXPECT_TRUE(stats.compiles.empty());
  } else {
    EXPECT_EQ(stats.cache_hits, 0);
    EXPECT_EQ(stats.compiles.size(), 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Stages, StageTest,
                         ::testing::Combine(::testing::Values(JitMode::kAuto, JitMode::kAll),
                                            ::testing::Range(0,
                                                             static_cast<int>(std::size(kStages)))),
                         [](const ::testing::TestParamInfo<std::tuple<JitMode, int>>& info) {
                           std::string stage = kStages[std::get<1>(info.param)].stage;
                           std::string name =
                               std::get<0>(info.param) == JitMode::kAuto ? "auto_" : "all_";
                           for (char ch : stage) {
                             if (std::isalnum(static_cast<unsigned char>(ch))) name += ch;
                           }
                           return name;
                         });

// The deadline holds in every jit mode: the first place the run spends time (a kernel in none
// and off, lowering in auto and all) is made slower than the deadline.
class DeadlineModeTest : public ::testing::TestWithParam<JitMode> {};

TEST_P(DeadlineModeTest, PastTheDeadlineEndsDeadlineExceeded) {
  const JitMode mode = GetParam();
  auto session = LoadGraphText("deadline_mode.pbtxt", LayersGraph(2), mode);
  ASSERT_NE(session, nullptr);
  const bool compiles = mode == JitMode::kAuto || mode == JitMode::kAll;
  RunOptions run;
  run.timeout_ms = 200;
  StageHook hook(compiles ? "lowering " : "node ",
                 [] { std::this_thread::sleep_for(std::chrono::milliseconds(400)); });
  absl::StatusOr<std::vector<Tensor>> r = session->Run(run, {{"x", Input()}}, {"y"}, {});
  ASSERT_TRUE(hook.fired());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << StatusToString(r.status());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "limit 200 ms")) << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(Modes, DeadlineModeTest,
                         ::testing::Values(JitMode::kNone, JitMode::kOff, JitMode::kAuto,
                                           JitMode::kAll),
                         [](const ::testing::TestParamInfo<JitMode>& info) {
                           return std::string(JitModeName(info.param));
                         });

// Compiled code stops between its kernels, not only in its loops: the first kernel made slower
// than the deadline, the run ends there (the compile itself was cached by a warm-up run).
TEST(DeadlineTest, CompiledCodeStopsBetweenKernels) {
  auto session = LoadGraphText("deadline_kernels.pbtxt", LayersGraph(4), JitMode::kAuto);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(session->Run({{"x", Input()}}, {"y"}, {}).ok());  // compiles
  RunOptions run;
  run.timeout_ms = 200;
  StageHook hook("between the kernels",
                 [] { std::this_thread::sleep_for(std::chrono::milliseconds(400)); });
  RunStats stats;
  absl::StatusOr<std::vector<Tensor>> r = session->Run(run, {{"x", Input()}}, {"y"}, {}, &stats);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << StatusToString(r.status());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "stopped at compiled module"))
      << r.status().message();
  // It stopped at the first checkpoint after the slow one: the other kernels did not run.
  EXPECT_EQ(hook.Seen("between the kernels").size(), 1u);
}

// A run that waits for another run's compile of the same cluster keeps its own deadline: it
// ends DEADLINE_EXCEEDED while the compile goes on, and the compile's result is then cached
// for everyone.
TEST(DeadlineTest, WaitingForAnotherRunsCompileKeepsTheDeadline) {
  const std::vector<float> want = Reference(2);
  auto session = LoadGraphText("deadline_wait.pbtxt", LayersGraph(2), JitMode::kAuto);
  ASSERT_NE(session, nullptr);
  std::atomic<bool> compiling{false};
  std::atomic<bool> first_done{false};
  StageHook hook("emitting LLVM IR", [&] {
    compiling = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  });
  absl::StatusOr<std::vector<Tensor>> first = absl::UnknownError("not run");
  std::thread compiler([&] {
    first = session->Run({{"x", Input()}}, {"y"}, {});
    first_done = true;
  });
  while (!compiling) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  RunOptions run;
  run.timeout_ms = 200;
  absl::StatusOr<std::vector<Tensor>> waiter = session->Run(run, {{"x", Input()}}, {"y"}, {});
  const bool first_was_done = first_done;
  compiler.join();
  ASSERT_FALSE(waiter.ok());
  EXPECT_EQ(waiter.status().code(), absl::StatusCode::kDeadlineExceeded)
      << StatusToString(waiter.status());
  EXPECT_TRUE(absl::StrContains(waiter.status().message(), "waiting for another run's compile"))
      << waiter.status().message();
  EXPECT_FALSE(first_was_done) << "the waiter waited for the whole compile";
  ASSERT_TRUE(first.ok()) << StatusToString(first.status());
  ExpectNear((*first)[0], want);
  RunStats stats;
  ASSERT_TRUE(session->Run({{"x", Input()}}, {"y"}, {}, &stats).ok());
  EXPECT_EQ(stats.cache_hits, 1);
  EXPECT_TRUE(stats.compiles.empty());
}

// Cancelled during LLVM's code generation, which runs in parallel parts: no worker starts
// another part once one saw the cancellation (each worker reaches at most one checkpoint
// after it), so a cancelled run leaves no thread compiling for it.
TEST(DeadlineTest, CancelledCodeGenerationStartsNoMoreParts) {
  auto session = LoadGraphText("deadline_parts.pbtxt", LayersGraph(48), JitMode::kAuto);
  ASSERT_NE(session, nullptr);
  auto token = std::make_shared<CancellationToken>();
  RunOptions run;
  run.cancel = token;
  // (The process's generated GEMM kernels are compiled in parts too, on the first compile,
  // but never for a run: only the cluster's module is named after it.)
  StageHook hook("LLVM code generation of 'cluster", [token] { token->Cancel(); });
  absl::StatusOr<std::vector<Tensor>> r = session->Run(run, {{"x", Input()}}, {"y"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << StatusToString(r.status());
  const std::vector<std::string> parts = hook.Seen("LLVM code generation of 'cluster");
  ASSERT_FALSE(parts.empty());
  // "... part k of n": the module was split into n parts; at most one checkpoint per worker
  // (at most 4) ran, and no part after them.
  const std::string& first = parts.front();
  ASSERT_TRUE(absl::StrContains(first, " of ")) << first << " (the module was not split)";
  const int n = std::stoi(first.substr(first.rfind(" of ") + 4));
  EXPECT_GE(n, 8) << first;
  EXPECT_LE(parts.size(), 4u);
  EXPECT_LT(static_cast<int>(parts.size()), n);
}

}  // namespace
}  // namespace tfjit
