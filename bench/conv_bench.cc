// Convolution benchmarks: one TF convolution node run by the fallback kernel (--jit none,
// runtime/kernels/nn_conv_kernels.cc) and compiled (--jit all: the CPU backend's call into
// tfjit_cpu_conv2d_f32) through the Session, in the same run, on the default intra-op pool.
// Report the ratio of each case's two times:
//   build/bin/conv_bench --benchmark_filter=Conv
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "examples/cli_output.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

struct ConvCase {
  std::string op;  // Conv2D, DepthwiseConv2dNative or Conv2DBackpropInput
  std::vector<int64_t> x, w;
  int64_t stride = 1;
  std::vector<int64_t> out;  // Conv2DBackpropInput only: input_sizes
};

const std::vector<ConvCase>& Cases() {
  static const std::vector<ConvCase> cases = {
      {"Conv2D", {1, 64, 64, 32}, {3, 3, 32, 64}, 1, {}},
      {"Conv2D", {1, 128, 128, 16}, {3, 3, 16, 32}, 2, {}},
      {"Conv2D", {1, 32, 32, 128}, {1, 1, 128, 128}, 1, {}},
      {"DepthwiseConv2dNative", {1, 64, 64, 64}, {3, 3, 64, 1}, 1, {}},
      {"DepthwiseConv2dNative", {1, 128, 128, 32}, {3, 3, 32, 2}, 2, {}},
      {"Conv2DBackpropInput", {1, 32, 32, 32}, {3, 3, 16, 32}, 2, {1, 64, 64, 16}},
  };
  return cases;
}

std::string Placeholder(const std::string& name) {
  return absl::StrCat("node { name: \"", name,
                      "\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
                      "}\n");
}

// A GraphDef (text) with placeholders x, w and the convolution "y".
std::string GraphText(const ConvCase& c) {
  const std::string strides =
      absl::StrCat("attr { key: \"strides\" value { list { i: 1 i: ", c.stride, " i: ", c.stride,
                   " i: 1 } } } ");
  const std::string common = absl::StrCat("attr { key: \"T\" value { type: DT_FLOAT } } ", strides,
                                          "attr { key: \"padding\" value { s: \"SAME\" } } ");
  std::string text = Placeholder("x") + Placeholder("w");
  if (c.op == "Conv2DBackpropInput") {
    std::string sizes;
    for (int64_t d : c.out) absl::StrAppend(&sizes, " int_val: ", d);
    absl::StrAppend(&text,
                    "node { name: \"sizes\" op: \"Const\" attr { key: \"dtype\" value { type: "
                    "DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 "
                    "tensor_shape { dim { size: 4 } }",
                    sizes, " } } } }\n",
                    "node { name: \"y\" op: \"Conv2DBackpropInput\" input: \"sizes\" input: "
                    "\"w\" input: \"x\" ",
                    common, "}\n");
  } else {
    absl::StrAppend(&text, "node { name: \"y\" op: \"", c.op, "\" input: \"x\" input: \"w\" ",
                    common, "}\n");
  }
  return text;
}

void BM_Conv(benchmark::State& state, JitMode jit) {
  const ConvCase& c = Cases()[static_cast<size_t>(state.range(0))];
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      absl::StrCat("tfjit_conv_bench_", state.range(0), "_", static_cast<int>(jit), ".pbtxt");
  std::ofstream(path) << GraphText(c);
  SessionOptions options;
  options.jit = jit;
  auto session = Session::Load(path.string(), options);
  std::filesystem::remove(path);
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return;
  }
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", cli::RandomTensor(DType::kFloat32, c.x, 1)},
      {"w", cli::RandomTensor(DType::kFloat32, c.w, 2)}};
  RunStats stats;
  // Warm-up: compiles outside the timed loop.
  if (auto out = (*session)->Run(feeds, {"y"}, &stats); !out.ok()) {
    state.SkipWithError(std::string(out.status().message()).c_str());
    return;
  }
  if (jit == JitMode::kAll && stats.nodes_compiled == 0) {
    state.SkipWithError("the convolution did not compile");
    return;
  }
  for (auto _ : state) {
    auto out = (*session)->Run(feeds, {"y"});
    benchmark::DoNotOptimize(out);
  }
  state.SetLabel(absl::StrCat(c.op, " x=[", absl::StrJoin(c.x, ","), "] w=[",
                              absl::StrJoin(c.w, ","), "] stride=", c.stride));
}

void BM_ConvFallback(benchmark::State& state) { BM_Conv(state, JitMode::kNone); }
void BM_ConvCompiled(benchmark::State& state) { BM_Conv(state, JitMode::kAll); }
BENCHMARK(BM_ConvFallback)->DenseRange(0, 5)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ConvCompiled)->DenseRange(0, 5)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tfjit
