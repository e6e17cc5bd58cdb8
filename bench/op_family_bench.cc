// One op per family of issue 19's new ops, run by its fallback kernel (--jit none) and compiled
// (--jit all) through the Session, in the same run, on the default intra-op pool. Report each
// case's ratio of the two times:
//   build/bin/op_family_bench
// A case whose op does not load or compile is skipped with the reason.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "examples/cli_output.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

struct Input {
  std::string name;
  DType dtype;
  std::vector<int64_t> dims;
};

struct FamilyCase {
  std::string family, label;
  std::string nodes;  // the op node(s) after the placeholders, GraphDef text; fetch "y"
  std::vector<Input> inputs;
};

std::string Placeholder(const Input& in) {
  const char* type = in.dtype == DType::kInt32       ? "DT_INT32"
                     : in.dtype == DType::kComplex64 ? "DT_COMPLEX64"
                                                     : "DT_FLOAT";
  return absl::StrCat("node { name: \"", in.name, "\" op: \"Placeholder\" attr { key: \"dtype\" ",
                      "value { type: ", type, " } } }\n");
}

std::string IntConst(const std::string& name, const std::vector<int64_t>& v) {
  std::string values;
  for (int64_t x : v) absl::StrAppend(&values, " int_val: ", x);
  return absl::StrCat("node { name: \"", name, "\" op: \"Const\" attr { key: \"dtype\" value { ",
                      "type: DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 ",
                      "tensor_shape { dim { size: ", v.size(), " } }", values, " } } } }\n");
}

std::string IntScalar(const std::string& name, int64_t v) {
  return absl::StrCat("node { name: \"", name, "\" op: \"Const\" attr { key: \"dtype\" value { ",
                      "type: DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_INT32 ",
                      "tensor_shape { } int_val: ", v, " } } } }\n");
}

constexpr char kFloatT[] = "attr { key: \"T\" value { type: DT_FLOAT } } ";

const std::vector<FamilyCase>& Cases() {
  static const std::vector<FamilyCase> cases = {
      {"gradients",
       "ReluGrad [4M]",
       absl::StrCat("node { name: \"y\" op: \"ReluGrad\" input: \"g\" input: \"x\" ", kFloatT,
                    "}\n"),
       {{"g", DType::kFloat32, {4 << 20}}, {"x", DType::kFloat32, {4 << 20}}}},
      {"gradients",
       "SoftmaxCrossEntropyWithLogits [256,1000]",
       absl::StrCat("node { name: \"y\" op: \"SoftmaxCrossEntropyWithLogits\" input: \"x\" ",
                    "input: \"l\" ", kFloatT, "}\n"),
       {{"x", DType::kFloat32, {256, 1000}}, {"l", DType::kFloat32, {256, 1000}}}},
      {"gradients",
       "BiasAddGrad [32,56,56,64]",
       absl::StrCat("node { name: \"y\" op: \"BiasAddGrad\" input: \"x\" ", kFloatT, "}\n"),
       {{"x", DType::kFloat32, {32, 56, 56, 64}}}},
      {"linalg",
       "MatrixBandPart [64,256,256] (-1, 0)",
       absl::StrCat(IntScalar("lo", -1), IntScalar("hi", 0),
                    "node { name: \"y\" op: \"MatrixBandPart\" input: \"x\" input: \"lo\" ",
                    "input: \"hi\" ", kFloatT,
                    "attr { key: \"Tindex\" value { type: DT_INT32 } } }\n"),
       {{"x", DType::kFloat32, {64, 256, 256}}}},
      {"scatter_segment",
       "UnsortedSegmentSum [65536,64] -> 1024",
       absl::StrCat(IntScalar("n", 1024),
                    "node { name: \"y\" op: \"UnsortedSegmentSum\" input: \"x\" input: \"ids\" ",
                    "input: \"n\" ", kFloatT,
                    "attr { key: \"Tindices\" value { type: DT_INT32 } } ",
                    "attr { key: \"Tnumsegments\" value { type: DT_INT32 } } }\n"),
       {{"x", DType::kFloat32, {65536, 64}}, {"ids", DType::kInt32, {65536}}}},
      {"array",
       "Roll [1024,1024] by (3, -5)",
       absl::StrCat(IntConst("shift", {3, -5}), IntConst("axis", {0, 1}),
                    "node { name: \"y\" op: \"Roll\" input: \"x\" input: \"shift\" ",
                    "input: \"axis\" ", kFloatT,
                    "attr { key: \"Tshift\" value { type: DT_INT32 } } ",
                    "attr { key: \"Taxis\" value { type: DT_INT32 } } }\n"),
       {{"x", DType::kFloat32, {1024, 1024}}}},
      {"special",
       "Erfinv [1M]",
       absl::StrCat("node { name: \"y\" op: \"Erfinv\" input: \"x\" ", kFloatT, "}\n"),
       {{"x", DType::kFloat32, {1 << 20}}}},
      {"nn",
       "LRN [8,56,56,64]",
       absl::StrCat("node { name: \"y\" op: \"LRN\" input: \"x\" ", kFloatT, "}\n"),
       {{"x", DType::kFloat32, {8, 56, 56, 64}}}},
      // Compiled FFTs are DFT GEMMs with a four-step split (fft_lowerings.cc); the kernel is
      // Eigen's FFT in double.
      {"fft",
       "RFFT [64,4096]",
       absl::StrCat(IntConst("len", {4096}),
                    "node { name: \"y\" op: \"RFFT\" input: \"x\" input: \"len\" }\n"),
       {{"x", DType::kFloat32, {64, 4096}}}},
      {"fft",
       "FFT complex64 [256,1024]",
       "node { name: \"y\" op: \"FFT\" input: \"x\" }\n",
       {{"x", DType::kComplex64, {256, 1024}}}},
      {"fft",
       "FFT2D complex64 [8,256,256]",
       "node { name: \"y\" op: \"FFT2D\" input: \"x\" }\n",
       {{"x", DType::kComplex64, {8, 256, 256}}}},
      // Cumsum compiles as a reduce-window over each prefix (reduction_lowerings.cc).
      {"reduction",
       "Cumsum [256,1024] axis 1",
       absl::StrCat(IntScalar("axis", 1),
                    "node { name: \"y\" op: \"Cumsum\" input: \"x\" input: \"axis\" ", kFloatT,
                    "attr { key: \"Tidx\" value { type: DT_INT32 } } }\n"),
       {{"x", DType::kFloat32, {256, 1024}}}},
      {"reduction",
       "TopKV2 [1024,1000] k=5",
       absl::StrCat(IntScalar("k", 5),
                    "node { name: \"y\" op: \"TopKV2\" input: \"x\" input: \"k\" ", kFloatT, "}\n"),
       {{"x", DType::kFloat32, {1024, 1000}}}},
      {"image",
       "ResizeBilinear [8,128,128,3] -> 256x256",
       absl::StrCat(IntConst("size", {256, 256}),
                    "node { name: \"y\" op: \"ResizeBilinear\" input: \"x\" input: \"size\" ",
                    kFloatT, "}\n"),
       {{"x", DType::kFloat32, {8, 128, 128, 3}}}},
      // A constant seed: seeds computed at run time are issue 21's (known issue E).
      {"random",
       "StatelessRandomNormal [1M]",
       absl::StrCat(IntConst("shape", {1 << 20}), IntConst("seed", {7, 11}),
                    "node { name: \"y\" op: \"StatelessRandomNormal\" input: \"shape\" ",
                    "input: \"seed\" attr { key: \"dtype\" value { type: DT_FLOAT } } ",
                    "attr { key: \"T\" value { type: DT_INT32 } } ",
                    "attr { key: \"Tseed\" value { type: DT_INT32 } } }\n"),
       {}},
      // Where's rows: the custom-call tfjit.where, cut to the real count by the runtime.
      {"array",
       "Where(x > 0) [1M]",
       absl::StrCat("node { name: \"zero\" op: \"Const\" attr { key: \"dtype\" value { type: ",
                    "DT_FLOAT } } attr { key: \"value\" value { tensor { dtype: DT_FLOAT ",
                    "tensor_shape { } float_val: 0 } } } }\n",
                    "node { name: \"gt\" op: \"Greater\" input: \"x\" input: \"zero\" ", kFloatT,
                    "}\nnode { name: \"y\" op: \"Where\" input: \"gt\" ",
                    "attr { key: \"T\" value { type: DT_BOOL } } }\n"),
       {{"x", DType::kFloat32, {1 << 20}}}},
      {"math",
       "Mul complex64 [1M]",
       "node { name: \"y\" op: \"Mul\" input: \"x\" input: \"z\" attr { key: \"T\" "
       "value { type: DT_COMPLEX64 } } }\n",
       {{"x", DType::kComplex64, {1 << 20}}, {"z", DType::kComplex64, {1 << 20}}}},
  };
  return cases;
}

void BM_Family(benchmark::State& state, JitMode jit) {
  const FamilyCase& c = Cases()[static_cast<size_t>(state.range(0))];
  std::string text;
  for (const Input& in : c.inputs) text += Placeholder(in);
  text += c.nodes;
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      absl::StrCat("tfjit_family_bench_", state.range(0), "_", static_cast<int>(jit), ".pbtxt");
  std::ofstream(path) << text;
  SessionOptions options;
  options.jit = jit;
  auto session = Session::Load(path.string(), options);
  std::filesystem::remove(path);
  state.SetLabel(absl::StrCat(c.family, ": ", c.label));
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return;
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  uint64_t seed = 1;
  for (const Input& in : c.inputs) {
    Tensor t = cli::RandomTensor(in.dtype, in.dims, seed++);
    if (in.dtype == DType::kInt32) {  // segment ids in [0, 1024)
      for (int64_t i = 0; i < t.num_elements(); ++i) t.data<int32_t>()[i] = (i * 7919) % 1024;
    }
    feeds.push_back({in.name, std::move(t)});
  }
  RunStats stats;
  if (auto out = (*session)->Run(feeds, {"y"}, &stats); !out.ok()) {
    state.SkipWithError(std::string(out.status().message()).c_str());
    return;
  }
  if (jit == JitMode::kAll && stats.nodes_compiled == 0) {
    state.SkipWithError("the op did not compile");
    return;
  }
  for (auto _ : state) {
    auto out = (*session)->Run(feeds, {"y"});
    benchmark::DoNotOptimize(out);
  }
}

void BM_FamilyKernel(benchmark::State& state) { BM_Family(state, JitMode::kNone); }
void BM_FamilyCompiled(benchmark::State& state) { BM_Family(state, JitMode::kAll); }
const int kLastCase = static_cast<int>(Cases().size()) - 1;
BENCHMARK(BM_FamilyKernel)->DenseRange(0, kLastCase)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_FamilyCompiled)
    ->DenseRange(0, kLastCase)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace tfjit
