// Stateless random ops through the Session: the compiled cluster (CPU JIT and the HLO
// evaluator; --jit auto and all) must reproduce the fallback kernels (--jit none, off) bit for
// bit, for every distribution and dtype, odd and empty shapes, constant and fed seeds, and
// key/counter from StatelessRandomGetKeyCounter inside the cluster.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

using Dims = std::vector<int64_t>;

tensorflow::AttrValue TypeAttr(DType t) {
  tensorflow::AttrValue a;
  a.set_type(static_cast<tensorflow::DataType>(DTypeToTfEnum(t)));
  return a;
}

class GraphBuilder {
 public:
  void Const(const std::string& name, const Tensor& value) {
    auto* n = Node(name, "Const");
    (*n->mutable_attr())["dtype"] = TypeAttr(value.dtype());
    *(*n->mutable_attr())["value"].mutable_tensor() = tf::TensorToProto(value);
  }
  void Placeholder(const std::string& name, const Tensor& value) {
    auto* n = Node(name, "Placeholder");
    (*n->mutable_attr())["dtype"] = TypeAttr(value.dtype());
    feeds_.push_back({name, value});
  }
  tensorflow::NodeDef* Node(const std::string& name, const std::string& op,
                            const std::vector<std::string>& inputs = {}) {
    auto* n = graph_.add_node();
    n->set_name(name);
    n->set_op(op);
    for (const std::string& in : inputs) n->add_input(in);
    return n;
  }
  static void SetType(tensorflow::NodeDef* n, const std::string& attr, DType t) {
    (*n->mutable_attr())[attr] = TypeAttr(t);
  }
  std::string Write(const std::string& name) const {
    std::string text;
    google::protobuf::TextFormat::PrintToString(graph_, &text);
    return WriteTempFile(absl::StrCat("rng_", name, ".pbtxt"), text);
  }
  const std::vector<std::pair<std::string, Tensor>>& feeds() const { return feeds_; }

 private:
  tensorflow::GraphDef graph_;
  std::vector<std::pair<std::string, Tensor>> feeds_;
};

absl::StatusOr<std::vector<Tensor>> RunGraph(const GraphBuilder& g, const std::string& path,
                                             JitMode jit, const std::string& backend,
                                             const std::vector<std::string>& fetches,
                                             RunStats* stats = nullptr) {
  SessionOptions options;
  options.jit = jit;
  options.backend = backend;
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Load(path, options));
  return session->Run(g.feeds(), fetches, stats);
}

void ExpectSameBytes(const std::vector<Tensor>& ref, const std::vector<Tensor>& got,
                     const std::string& what) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  for (size_t i = 0; i < ref.size(); ++i) {
    const Tensor& a = ref[i];
    const Tensor& b = got[i];
    ASSERT_EQ(a.ShapeString(), b.ShapeString()) << what;
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()), 0)
        << what << " output " << i << "\nkernels: " << a.DebugString(12)
        << "\ncompiled: " << b.DebugString(12);
  }
}

// Runs the graph uncompiled (none, off), then auto and all on the CPU JIT and on the
// evaluator; all must agree bytewise.
void ExpectCompiledMatchesKernels(const GraphBuilder& g, const std::string& name,
                                  const std::vector<std::string>& fetches) {
  const std::string path = g.Write(name);
  auto ref = RunGraph(g, path, JitMode::kNone, "cpu", fetches);
  ASSERT_TRUE(ref.ok()) << name << " kernels: " << StatusToString(ref.status());
  auto off = RunGraph(g, path, JitMode::kOff, "cpu", fetches);
  ASSERT_TRUE(off.ok()) << name << " off: " << StatusToString(off.status());
  ExpectSameBytes(*ref, *off, name + " off");
  for (const char* backend : {"cpu", "interpreter"}) {
    for (JitMode jit : {JitMode::kAuto, JitMode::kAll}) {
      const std::string what =
          absl::StrCat(name, " ", backend, jit == JitMode::kAll ? " all" : " auto");
      RunStats stats;
      auto got = RunGraph(g, path, jit, backend, fetches, &stats);
      ASSERT_TRUE(got.ok()) << what << ": " << StatusToString(got.status());
      EXPECT_EQ(stats.clusters, 1) << what << ": the random op must compile";
      EXPECT_EQ(stats.fallbacks, 0) << what;
      ExpectSameBytes(*ref, *got, what);
    }
  }
  std::filesystem::remove(path);
}

Tensor ShapeTensor(const Dims& d) {
  std::vector<int32_t> v(d.begin(), d.end());
  return Tensor::FromVector<int32_t>(DType::kInt32, {static_cast<int64_t>(v.size())}, v);
}

std::string CaseName(const std::string& op, DType t, const Dims& d, const std::string& extra) {
  return absl::StrCat(op, "_", DTypeName(t), "_", d.empty() ? "scalar" : absl::StrJoin(d, "x"),
                      extra);
}

const std::vector<Dims>& Shapes() {
  static const std::vector<Dims> shapes = {{}, {0}, {33, 31}};  // 1023: not a multiple of 4
  return shapes;
}

// Every distribution in every float type the kernels support.
struct FloatCase {
  const char* op;
  DType dtype;
};
const FloatCase kFloatCases[] = {
    {"StatelessRandomUniform", DType::kFloat32},   {"StatelessRandomUniform", DType::kFloat64},
    {"StatelessRandomUniform", DType::kFloat16},   {"StatelessRandomUniform", DType::kBFloat16},
    {"StatelessRandomNormal", DType::kFloat32},    {"StatelessRandomNormal", DType::kFloat64},
    {"StatelessRandomNormal", DType::kFloat16},    {"StatelessRandomNormal", DType::kBFloat16},
    {"StatelessTruncatedNormal", DType::kFloat32}, {"StatelessTruncatedNormal", DType::kFloat64},
    {"StatelessTruncatedNormal", DType::kFloat16}, {"StatelessTruncatedNormal", DType::kBFloat16}};

GraphBuilder V1Graph(const char* op, DType t, const Dims& d, bool fed_seed) {
  GraphBuilder g;
  g.Const("shape", ShapeTensor(d));
  const Tensor seed = Tensor::FromVector<int32_t>(DType::kInt32, {2}, {-17, 99});
  fed_seed ? g.Placeholder("seed", seed) : g.Const("seed", seed);
  auto* n = g.Node("op", op, {"shape", "seed"});
  GraphBuilder::SetType(n, "dtype", t);
  GraphBuilder::SetType(n, "T", DType::kInt32);
  GraphBuilder::SetType(n, "Tseed", DType::kInt32);
  return g;
}

TEST(RandomOpsCompiledTest, StatelessV1FloatOps) {
  for (const FloatCase& c : kFloatCases) {
    for (const Dims& d : Shapes()) {
      ExpectCompiledMatchesKernels(V1Graph(c.op, c.dtype, d, false), CaseName(c.op, c.dtype, d, ""),
                                   {"op"});
    }
  }
}

// TF's known answer (tf.random.Generator.from_seed(1234).normal([2, 3]) is
// StatelessRandomNormalV2 at key 0, counter [1234, 0]) from compiled code, both backends.
TEST(RandomOpsCompiledTest, CompiledNormalV2GivesTfKnownAnswer) {
  GraphBuilder g;
  g.Const("shape", ShapeTensor({2, 3}));
  g.Const("key", Tensor::FromVector<uint64_t>(DType::kUInt64, {1}, {0}));
  g.Const("counter", Tensor::FromVector<uint64_t>(DType::kUInt64, {2}, {1234, 0}));
  g.Const("alg", Tensor::FromVector<int32_t>(DType::kInt32, {}, {1}));
  auto* n = g.Node("op", "StatelessRandomNormalV2", {"shape", "key", "counter", "alg"});
  GraphBuilder::SetType(n, "dtype", DType::kFloat32);
  GraphBuilder::SetType(n, "Tshape", DType::kInt32);
  const std::string path = g.Write("normal_v2_kat");
  for (const char* backend : {"cpu", "interpreter"}) {
    RunStats stats;
    SessionOptions options;
    options.jit = JitMode::kAll;
    options.backend = backend;
    auto session = Session::Load(path, options);
    ASSERT_TRUE(session.ok()) << session.status();
    auto r = (*session)->Run({}, {"op"}, &stats);
    ASSERT_TRUE(r.ok()) << backend << ": " << r.status();
    EXPECT_EQ(stats.clusters, 1) << backend;
    const float* v = (*r)[0].data<float>();
    EXPECT_EQ(std::vector<float>(v, v + 6),
              (std::vector<float>{0.9356609f, 1.0854305f, -0.93788373f, -0.50615472f, 1.31697023f,
                                  0.71375787f}))
        << backend;
  }
  std::filesystem::remove(path);
}

// Seeds computed at run time compile: fed seeds for every distribution, a seed derived from a
// step counter, and a seed split from another (tf.random.split / fold_in: a FullInt draw whose
// words seed the next op), all in one cluster and bit-identical with the kernels. The Philox
// key schedule is computed once per launch (the emitter hoists the scalar work out of the
// output loop), so a large output compiles as fast as a small one.
TEST(RandomOpsCompiledTest, FedSeedsCompile) {
  for (const FloatCase& c : kFloatCases) {
    ExpectCompiledMatchesKernels(V1Graph(c.op, c.dtype, {33, 31}, true),
                                 CaseName(c.op, c.dtype, {33, 31}, "_fed_seed"), {"op"});
  }
  for (const char* op : {"StatelessRandomUniformFullInt", "StatelessRandomUniformInt"}) {
    GraphBuilder g;
    g.Const("shape", ShapeTensor({17, 9}));
    g.Placeholder("seed", Tensor::FromVector<int64_t>(DType::kInt64, {2}, {1LL << 40, -3}));
    std::vector<std::string> inputs = {"shape", "seed"};
    if (absl::EndsWith(op, "Int") && !absl::EndsWith(op, "FullInt")) {
      g.Const("lo", Tensor::FromVector<int64_t>(DType::kInt64, {}, {-1000}));
      g.Const("hi", Tensor::FromVector<int64_t>(DType::kInt64, {}, {1LL << 50}));
      inputs.push_back("lo");
      inputs.push_back("hi");
    }
    auto* n = g.Node("op", op, inputs);
    GraphBuilder::SetType(n, "dtype", DType::kInt64);
    GraphBuilder::SetType(n, "T", DType::kInt32);
    GraphBuilder::SetType(n, "Tseed", DType::kInt64);
    ExpectCompiledMatchesKernels(g, absl::StrCat(op, "_fed_seed"), {"op"});
  }
}

TEST(RandomOpsCompiledTest, SeedsComputedInTheGraphCompile) {
  GraphBuilder g;
  // seed = [step * 7 + 1, step]: a seed derived from a training step counter.
  g.Placeholder("step", Tensor::FromVector<int64_t>(DType::kInt64, {}, {41}));
  g.Const("seven", Tensor::FromVector<int64_t>(DType::kInt64, {}, {7}));
  g.Const("one", Tensor::FromVector<int64_t>(DType::kInt64, {}, {1}));
  GraphBuilder::SetType(g.Node("mul", "Mul", {"step", "seven"}), "T", DType::kInt64);
  GraphBuilder::SetType(g.Node("add", "AddV2", {"mul", "one"}), "T", DType::kInt64);
  auto* pack = g.Node("seed", "Pack", {"add", "step"});
  GraphBuilder::SetType(pack, "T", DType::kInt64);
  (*pack->mutable_attr())["N"].set_i(2);
  (*pack->mutable_attr())["axis"].set_i(0);
  // split: two int64 words drawn from the seed become the seed of the next op (what
  // tf.random.experimental.stateless_split and stateless_fold_in run).
  g.Const("two", ShapeTensor({2}));
  auto* split = g.Node("split", "StatelessRandomUniformFullInt", {"two", "seed"});
  GraphBuilder::SetType(split, "dtype", DType::kInt64);
  GraphBuilder::SetType(split, "T", DType::kInt32);
  GraphBuilder::SetType(split, "Tseed", DType::kInt64);
  // A large output: 256K floats under a seed known only at run time.
  g.Const("shape", ShapeTensor({256, 1024}));
  auto* n = g.Node("op", "StatelessRandomUniform", {"shape", "split"});
  GraphBuilder::SetType(n, "dtype", DType::kFloat32);
  GraphBuilder::SetType(n, "T", DType::kInt32);
  GraphBuilder::SetType(n, "Tseed", DType::kInt64);
  auto* normal = g.Node("normal", "StatelessRandomNormal", {"two", "split"});
  GraphBuilder::SetType(normal, "dtype", DType::kFloat32);
  GraphBuilder::SetType(normal, "T", DType::kInt32);
  GraphBuilder::SetType(normal, "Tseed", DType::kInt64);
  ExpectCompiledMatchesKernels(g, "computed_seed", {"op", "normal", "split"});
}

// TF 2.x's tf.random.stateless_uniform with a seed tensor: StatelessRandomGetKeyCounter on a
// fed seed, feeding the V2 ops, compiled in one cluster.
TEST(RandomOpsCompiledTest, FedSeedThroughGetKeyCounterCompiles) {
  for (const char* op : {"StatelessRandomUniformV2", "StatelessRandomNormalV2"}) {
    GraphBuilder g;
    g.Placeholder("seed", Tensor::FromVector<int64_t>(DType::kInt64, {2}, {-8, 1234567}));
    g.Node("kc", "StatelessRandomGetKeyCounter", {"seed"});
    g.Const("shape", ShapeTensor({64, 33}));
    g.Const("alg", Tensor::FromVector<int32_t>(DType::kInt32, {}, {1}));
    auto* n = g.Node("op", op, {"shape", "kc:0", "kc:1", "alg"});
    GraphBuilder::SetType(n, "dtype", DType::kFloat32);
    GraphBuilder::SetType(n, "Tshape", DType::kInt32);
    ExpectCompiledMatchesKernels(g, absl::StrCat(op, "_fed_seed_kc"), {"op", "kc:0", "kc:1"});
  }
}

TEST(RandomOpsCompiledTest, StatelessUniformIntV1) {
  for (DType t : {DType::kInt32, DType::kInt64}) {
    for (const Dims& d : Shapes()) {
      GraphBuilder g;
      g.Const("shape", ShapeTensor(d));
      g.Const("seed", Tensor::FromVector<int64_t>(DType::kInt64, {2}, {1LL << 40, -3}));
      if (t == DType::kInt32) {
        g.Const("lo", Tensor::FromVector<int32_t>(t, {}, {-1000}));
        g.Const("hi", Tensor::FromVector<int32_t>(t, {}, {2147480000}));
      } else {
        g.Const("lo", Tensor::FromVector<int64_t>(t, {}, {-(1LL << 62)}));
        g.Const("hi", Tensor::FromVector<int64_t>(t, {}, {(1LL << 62) + 12345}));
      }
      auto* n = g.Node("op", "StatelessRandomUniformInt", {"shape", "seed", "lo", "hi"});
      GraphBuilder::SetType(n, "dtype", t);
      GraphBuilder::SetType(n, "T", DType::kInt32);
      GraphBuilder::SetType(n, "Tseed", DType::kInt64);
      ExpectCompiledMatchesKernels(g, CaseName("UniformInt", t, d, ""), {"op"});
    }
  }
}

// GetKeyCounter feeding the V2 ops inside one cluster, plus V2 with fed key/counter.
TEST(RandomOpsCompiledTest, GetKeyCounterAndV2Ops) {
  const FloatCase cases[] = {{"StatelessRandomUniformV2", DType::kFloat32},
                             {"StatelessRandomUniformV2", DType::kFloat16},
                             {"StatelessRandomNormalV2", DType::kFloat32},
                             {"StatelessRandomNormalV2", DType::kFloat64},
                             {"StatelessTruncatedNormalV2", DType::kFloat16},
                             {"StatelessTruncatedNormalV2", DType::kFloat32},
                             {"StatelessRandomUniformIntV2", DType::kInt32},
                             {"StatelessRandomUniformIntV2", DType::kInt64}};
  for (const FloatCase& c : cases) {
    const DType t = c.dtype;
    const bool is_int = IsIntegerDType(t);
    {
      const char* op = c.op;
      for (bool fed : {false, true}) {
        GraphBuilder g;
        g.Const("shape", ShapeTensor({5, 3}));
        g.Const("alg", Tensor::FromVector<int32_t>(DType::kInt32, {}, {1}));
        std::vector<std::string> in = {"shape", "kc:0", "kc:1", "alg"};
        if (fed) {
          g.Placeholder("key",
                        Tensor::FromVector<uint64_t>(DType::kUInt64, {1}, {0xfedcba9876543210ull}));
          g.Placeholder("counter", Tensor::FromVector<uint64_t>(DType::kUInt64, {2},
                                                                {0xffffffffffffffffull, 41}));
          in = {"shape", "key", "counter", "alg"};
        } else {
          g.Const("seed", Tensor::FromVector<int64_t>(DType::kInt64, {2}, {-8, 1234567}));
          g.Node("kc", "StatelessRandomGetKeyCounter", {"seed"});
        }
        if (is_int) {
          g.Const("lo", Tensor::FromVector<int32_t>(DType::kInt32, {}, {3}));
          g.Const("hi", Tensor::FromVector<int32_t>(DType::kInt32, {}, {10}));
          auto* lo = g.Node("lo64", "Cast", {"lo"});
          auto* hi = g.Node("hi64", "Cast", {"hi"});
          for (auto* c : {lo, hi}) {
            GraphBuilder::SetType(c, "SrcT", DType::kInt32);
            GraphBuilder::SetType(c, "DstT", t);
          }
          in.push_back("lo64");
          in.push_back("hi64");
        }
        auto* n = g.Node("op", op, in);
        GraphBuilder::SetType(n, "dtype", t);
        GraphBuilder::SetType(n, "Tshape", DType::kInt32);
        std::vector<std::string> fetches = {"op"};
        if (!fed) fetches = {"op", "kc:0", "kc:1"};
        ExpectCompiledMatchesKernels(g, CaseName(op, t, {5, 3}, fed ? "_fed" : "_kc"), fetches);
      }
    }
  }
}

TEST(RandomOpsCompiledTest, CompileTimeErrorsFollowTf) {
  GraphBuilder g;
  g.Const("shape", ShapeTensor({4}));
  g.Const("seed", Tensor::FromVector<int32_t>(DType::kInt32, {2}, {1, 2}));
  g.Const("lo", Tensor::FromVector<int32_t>(DType::kInt32, {}, {9}));
  g.Const("hi", Tensor::FromVector<int32_t>(DType::kInt32, {}, {9}));
  auto* n = g.Node("op", "StatelessRandomUniformInt", {"shape", "seed", "lo", "hi"});
  GraphBuilder::SetType(n, "dtype", DType::kInt32);
  GraphBuilder::SetType(n, "T", DType::kInt32);
  GraphBuilder::SetType(n, "Tseed", DType::kInt32);
  const std::string path = g.Write("bad_range");
  for (JitMode jit : {JitMode::kNone, JitMode::kAll}) {
    auto r = RunGraph(g, path, jit, "cpu", {"op"});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("Need minval < maxval, got 9 >= 9"), std::string::npos)
        << r.status();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tfjit
