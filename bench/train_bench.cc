// Training-step benchmarks (issue 22): one step (forward, backward, momentum update of every
// variable) of an MLP, a small conv net (conv + batch norm + max-pool) and an LSTM unrolled over
// 16 steps, each uncompiled (--jit none: the fallback kernels) and compiled (--jit auto: one
// cluster), at 1 and 2 threads, in the same run; the graphs come from
// examples/train/training_graphs.h. Report the ratio none/auto per model and thread count:
//   build/bin/train_bench --benchmark_filter=Step
// BM_ConvPass times the conv net's second convolution forward (Conv2D) and its two backward
// convolutions (Conv2DBackpropInput, Conv2DBackpropFilter) compiled, with their FLOP rates:
//   build/bin/train_bench --benchmark_filter=ConvPass
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "examples/cli_output.h"
#include "examples/train/training_graphs.h"
#include "google/protobuf/text_format.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

train::TrainingGraph Model(int64_t which) {
  switch (which) {
    case 0:
      return train::MlpGraph(/*batch=*/64, /*in=*/784, /*hidden=*/256, /*classes=*/10);
    case 1:
      return train::ConvNetGraph(/*batch=*/32, 32, 32, /*channels=*/3, /*filters=*/16,
                                 /*classes=*/10);
    default:
      return train::LstmGraph(/*batch=*/32, /*steps=*/16, /*features=*/32, /*hidden=*/64,
                              /*classes=*/10);
  }
}

std::unique_ptr<Session> LoadGraph(const tensorflow::GraphDef& graph, const std::string& tag,
                                   JitMode jit, int threads, benchmark::State& state) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / absl::StrCat("tfjit_train_bench_", tag, ".pb");
  {
    std::ofstream out(path, std::ios::binary);
    graph.SerializeToOstream(&out);
  }
  // TFJIT_TRAIN_BENCH_GRAPHS=DIR keeps each graph as DIR/<tag>.pb (for tfjit train --profile).
  if (const char* dir = std::getenv("TFJIT_TRAIN_BENCH_GRAPHS")) {
    std::filesystem::copy_file(path, std::filesystem::path(dir) / absl::StrCat(tag, ".pb"),
                               std::filesystem::copy_options::overwrite_existing);
  }
  SessionOptions options;
  options.jit = jit;
  options.intra_op_threads = threads;
  options.inter_op_threads = threads;
  auto session = Session::Load(path.string(), options);
  std::filesystem::remove(path);
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return nullptr;
  }
  return std::move(*session);
}

// Args: model (0 MLP, 1 conv net, 2 LSTM), threads.
void BM_Step(benchmark::State& state, JitMode jit) {
  const train::TrainingGraph model = Model(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  auto session = LoadGraph(model.graph, absl::StrCat(model.name, "_", static_cast<int>(jit)), jit,
                           threads, state);
  if (!session) return;
  if (auto r = session->Run({}, {}, {"init"}); !r.ok()) {
    state.SkipWithError(std::string(r.status().message()).c_str());
    return;
  }
  const int64_t batch = model.input_dims[0];
  Tensor labels(DType::kFloat32, {batch, model.classes});
  for (int64_t i = 0; i < labels.num_elements(); ++i) labels.data<float>()[i] = 0;
  for (int64_t e = 0; e < batch; ++e)
    labels.data<float>()[e * model.classes + e % model.classes] = 1;
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", cli::RandomTensor(DType::kFloat32, model.input_dims, 1)}, {"labels", labels}};
  // Warm-up: compiles outside the timed loop.
  RunStats stats;
  for (int i = 0; i < 3; ++i) {
    auto out = session->Run(feeds, {"loss"}, {"train"}, &stats);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
  }
  if (jit != JitMode::kNone && stats.clusters == 0) {
    state.SkipWithError("the step did not compile");
    return;
  }
  for (auto _ : state) {
    auto out = session->Run(feeds, {"loss"}, {"train"});
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["clusters"] = stats.clusters;
  state.counters["compiled_nodes"] = stats.nodes_compiled;
  state.SetLabel(absl::StrCat(model.name, " ", model.parameters, " params, ", threads, " thread",
                              threads > 1 ? "s" : ""));
}

void BM_StepUncompiled(benchmark::State& state) { BM_Step(state, JitMode::kNone); }
void BM_StepCompiled(benchmark::State& state) { BM_Step(state, JitMode::kAuto); }
BENCHMARK(BM_StepUncompiled)
    ->ArgsProduct({{0, 1, 2}, {1, 2}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_StepCompiled)
    ->ArgsProduct({{0, 1, 2}, {1, 2}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// The conv net's block-2 convolution: x [32,16,16,16], w [3,3,16,32], SAME, stride 1.
constexpr int64_t kX[] = {32, 16, 16, 16}, kW[] = {3, 3, 16, 32}, kY[] = {32, 16, 16, 32};

std::string DimsConst(const std::string& name, const int64_t* dims) {
  std::string vals;
  for (int i = 0; i < 4; ++i) absl::StrAppend(&vals, " int_val: ", dims[i]);
  return absl::StrCat("node { name: \"", name, "\" op: \"Const\" attr { key: \"dtype\" value { ",
                      "type: DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 ",
                      "tensor_shape { dim { size: 4 } }", vals, " } } } }\n");
}

// Args: 0 Conv2D, 1 Conv2DBackpropInput, 2 Conv2DBackpropFilter; all compiled (--jit all).
void BM_ConvPass(benchmark::State& state) {
  static const char* kOps[] = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"};
  const int which = static_cast<int>(state.range(0));
  const std::string attrs =
      "attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"strides\" value { list { i: 1 "
      "i: 1 i: 1 i: 1 } } } attr { key: \"padding\" value { s: \"SAME\" } }";
  std::string text;
  for (const char* p : {"a", "b"}) {
    absl::StrAppend(&text, "node { name: \"", p, "\" op: \"Placeholder\" attr { key: \"dtype\" ",
                    "value { type: DT_FLOAT } } }\n");
  }
  const int64_t *a = kX, *b = kW;
  std::string inputs = "input: \"a\" input: \"b\"";
  if (which == 1) {  // (input_sizes, filter, out_backprop)
    text += DimsConst("sizes", kX);
    a = kW;
    b = kY;
    inputs = "input: \"sizes\" input: \"a\" input: \"b\"";
  } else if (which == 2) {  // (input, filter_sizes, out_backprop)
    text += DimsConst("sizes", kW);
    a = kX;
    b = kY;
    inputs = "input: \"a\" input: \"sizes\" input: \"b\"";
  }
  absl::StrAppend(&text, "node { name: \"y\" op: \"", kOps[which], "\" ", inputs, " ", attrs,
                  " }\n");
  tensorflow::GraphDef graph;
  google::protobuf::TextFormat::ParseFromString(text, &graph);
  auto session = LoadGraph(graph, absl::StrCat("conv_", which), JitMode::kAll, 0, state);
  if (!session) return;
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"a", cli::RandomTensor(DType::kFloat32, {a, a + 4}, 1)},
      {"b", cli::RandomTensor(DType::kFloat32, {b, b + 4}, 2)}};
  if (auto out = session->Run(feeds, {"y"}); !out.ok()) {
    state.SkipWithError(std::string(out.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    auto out = session->Run(feeds, {"y"});
    benchmark::DoNotOptimize(out);
  }
  // The same multiply-adds in all three: 2 * |y| * kh * kw * cin.
  const double flops = 2.0 * kY[0] * kY[1] * kY[2] * kY[3] * kW[0] * kW[1] * kW[2];
  state.counters["FLOP/s"] = benchmark::Counter(flops * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
  state.SetLabel(kOps[which]);
}
BENCHMARK(BM_ConvPass)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace tfjit
