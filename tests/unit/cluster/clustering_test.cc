// Tests for auto-clustering: maximal clusters, no cycles through uncompiled nodes, the
// must-compile error, and the reasons recorded for nodes left out.
#include "compiler/cluster/clustering.h"

#include "absl/strings/match.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace tfjit::cluster {
namespace {

std::unique_ptr<tf::Graph> BuildGraph(const std::string& text) {
  tensorflow::GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def));
  auto graph = tf::Graph::Build(def, "g.pbtxt");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

std::string Unary(const std::string& name, const std::string& op, const std::string& in) {
  return "node { name: \"" + name + "\" op: \"" + op + "\" input: \"" + in +
         "\" attr { key: \"T\" value { type: DT_FLOAT } } }\n";
}
std::string Binary(const std::string& name, const std::string& op, const std::string& a,
                   const std::string& b) {
  return "node { name: \"" + name + "\" op: \"" + op + "\" input: \"" + a + "\" input: \"" + b +
         "\" attr { key: \"T\" value { type: DT_FLOAT } } }\n";
}
std::string Check(const std::string& name, const std::string& in) {
  return "node { name: \"" + name + "\" op: \"CheckNumerics\" input: \"" + in +
         "\" attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"message\" value { s: "
         "\"m\" } } }\n";
}
const char kX[] =
    "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";

int ClusterOf(const tf::Graph& g, const ClusteringResult& r, const std::string& name) {
  return r.cluster_of[g.FindNode(name)->id()];
}

TEST(ClusteringTest, UncompiledNodeSplitsChainIntoTwoClusters) {
  auto g = BuildGraph(std::string(kX) + Unary("a", "Exp", "x") + Unary("b", "Tanh", "a") +
                      Check("c", "b") + Unary("d", "Relu", "c") + Unary("e", "Neg", "d"));
  auto r = FindClusters(*g, {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->clusters.size(), 2u);
  EXPECT_EQ(ClusterOf(*g, *r, "a"), ClusterOf(*g, *r, "b"));
  EXPECT_EQ(ClusterOf(*g, *r, "d"), ClusterOf(*g, *r, "e"));
  EXPECT_NE(ClusterOf(*g, *r, "a"), ClusterOf(*g, *r, "d"));
  EXPECT_EQ(ClusterOf(*g, *r, "c"), -1);
  EXPECT_TRUE(absl::StrContains(r->why_not.at(g->FindNode("c")->id()), "CheckNumerics"));
  // The first cluster exports b (read by c); the second imports c.
  const Cluster& first = r->clusters[ClusterOf(*g, *r, "a")];
  ASSERT_EQ(first.spec.outputs.size(), 1u);
  EXPECT_EQ(first.spec.outputs[0].node->name(), "b");
}

TEST(ClusteringTest, NoCycleThroughUncompiledNode) {
  // a -> c -> b and a -> b, with c uncompiled: merging a and b would form a cycle a,b -> c -> a,b.
  auto g = BuildGraph(std::string(kX) + Unary("a", "Exp", "x") + Check("c", "a") +
                      Binary("b", "AddV2", "a", "c"));
  auto r = FindClusters(*g, {});
  ASSERT_TRUE(r.ok()) << r.status();
  const int ca = ClusterOf(*g, *r, "a"), cb = ClusterOf(*g, *r, "b");
  EXPECT_TRUE(ca == -1 || cb == -1 || ca != cb);
}

TEST(ClusteringTest, IndependentBranchesMerge) {
  auto g = BuildGraph(std::string(kX) + Unary("a", "Exp", "x") + Unary("b", "Tanh", "x") +
                      Binary("c", "AddV2", "a", "b"));
  auto r = FindClusters(*g, {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->clusters.size(), 1u);
  EXPECT_EQ(r->clusters[0].spec.nodes.size(), 3u);
  EXPECT_EQ(r->clusters[0].spec.inputs.size(), 1u);
}

TEST(ClusteringTest, MustCompileReportsUnsupportedOpsWithTfMessage) {
  auto g = BuildGraph(std::string(kX) + Unary("a", "Exp", "x") + Check("c", "a"));
  ClusteringOptions options;
  options.mode = JitMode::kAll;
  auto r = FindClusters(*g, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(r.status().message(),
                               "Detected unsupported operations when trying to compile graph "
                               "g.pbtxt on /job:localhost/replica:0/task:0/device:CPU:0: "
                               "CheckNumerics"))
      << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "{{node c}}"));
}

TEST(ClusteringTest, OffAndNoneCompileNothingAndSayWhy) {
  auto g = BuildGraph(std::string(kX) + Unary("a", "Exp", "x"));
  for (JitMode mode : {JitMode::kOff, JitMode::kNone}) {
    ClusteringOptions options;
    options.mode = mode;
    auto r = FindClusters(*g, options);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->clusters.empty());
    EXPECT_TRUE(absl::StrContains(r->why_not.at(g->FindNode("a")->id()), "jit mode"));
  }
}

TEST(ClusteringTest, XlaCompileFalseAndFedOutputsStayOut) {
  auto g = BuildGraph(std::string(kX) +
                      "node { name: \"a\" op: \"Exp\" input: \"x\" attr { key: \"T\" value { "
                      "type: DT_FLOAT } } attr { key: \"_XlaCompile\" value { b: false } } }\n" +
                      Unary("b", "Tanh", "x") + Unary("c", "Neg", "b"));
  ClusteringOptions options;
  options.fed.insert({g->FindNode("b"), 0});
  auto r = FindClusters(*g, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ClusterOf(*g, *r, "a"), -1);
  EXPECT_EQ(ClusterOf(*g, *r, "b"), -1);
  EXPECT_TRUE(absl::StrContains(r->why_not.at(g->FindNode("a")->id()), "_XlaCompile"));
  EXPECT_TRUE(absl::StrContains(r->why_not.at(g->FindNode("b")->id()), "fed"));
}

}  // namespace
}  // namespace tfjit::cluster

namespace tfjit::cluster {
namespace {

std::string WithAttr(std::string node, const std::string& attr) {
  node.insert(node.rfind('}'), attr + " ");
  return node;
}

TEST(ClusteringTest, DifferentXlaScopesNeverShareACluster) {
  const std::string scope_a = "attr { key: \"_XlaScope\" value { s: \"a\" } }";
  const std::string scope_b = "attr { key: \"_XlaScope\" value { s: \"b\" } }";
  auto g = BuildGraph(std::string(kX) + WithAttr(Unary("a", "Exp", "x"), scope_a) +
                      WithAttr(Unary("b", "Tanh", "a"), scope_a) +
                      WithAttr(Unary("c", "Neg", "b"), scope_b) +
                      WithAttr(Unary("d", "Relu", "c"), scope_b));
  auto r = FindClusters(*g, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ClusterOf(*g, *r, "a"), ClusterOf(*g, *r, "b"));
  EXPECT_EQ(ClusterOf(*g, *r, "c"), ClusterOf(*g, *r, "d"));
  EXPECT_NE(ClusterOf(*g, *r, "a"), ClusterOf(*g, *r, "c"));
}

TEST(ClusteringTest, NodesOnDifferentDevicesNeverShareACluster) {
  auto g = BuildGraph(std::string(kX) + Unary("a", "Exp", "x") + Unary("b", "Tanh", "a") +
                      Unary("c", "Neg", "b") + Unary("d", "Relu", "c"));
  ClusteringOptions options;
  options.node_devices.assign(g->num_nodes(), "/job:localhost/replica:0/task:0/device:CPU:0");
  options.node_devices[g->FindNode("c")->id()] = "/job:localhost/replica:0/task:0/device:CPU:1";
  options.node_devices[g->FindNode("d")->id()] = "/job:localhost/replica:0/task:0/device:CPU:1";
  auto r = FindClusters(*g, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->clusters.size(), 2u);
  EXPECT_NE(ClusterOf(*g, *r, "b"), ClusterOf(*g, *r, "c"));
  EXPECT_EQ(r->clusters[ClusterOf(*g, *r, "c")].device,
            "/job:localhost/replica:0/task:0/device:CPU:1");
}

// Without auto-clustering, nodes placed on a GPU still compile, one cluster each (tfjit has
// no hand-written GPU kernels); CPU nodes do not.
TEST(ClusteringTest, GpuNodesCompileAsOneOpClustersWithJitOff) {
  auto g = BuildGraph(std::string(kX) + Unary("a", "Exp", "x") + Unary("b", "Tanh", "a") +
                      Unary("c", "Neg", "b") + Unary("d", "Relu", "c"));
  ClusteringOptions options;
  options.mode = JitMode::kOff;
  options.node_devices.assign(g->num_nodes(), "/job:localhost/replica:0/task:0/device:GPU:0");
  options.node_devices[g->FindNode("d")->id()] = "/job:localhost/replica:0/task:0/device:CPU:0";
  auto r = FindClusters(*g, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->clusters.size(), 3u);
  for (const char* name : {"a", "b", "c"}) {
    const int c = ClusterOf(*g, *r, name);
    ASSERT_NE(c, -1) << name;
    EXPECT_EQ(r->clusters[c].spec.nodes.size(), 1u) << name;
    EXPECT_FALSE(r->clusters[c].must_compile);
    EXPECT_EQ(r->clusters[c].device, "/job:localhost/replica:0/task:0/device:GPU:0");
  }
  EXPECT_EQ(ClusterOf(*g, *r, "d"), -1);
  EXPECT_TRUE(absl::StrContains(r->why_not.at(g->FindNode("d")->id()), "jit mode is off"));
  // Auto-clustering merges the GPU nodes into one cluster.
  options.mode = JitMode::kAuto;
  r = FindClusters(*g, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ClusterOf(*g, *r, "a"), ClusterOf(*g, *r, "c"));
  EXPECT_NE(ClusterOf(*g, *r, "c"), ClusterOf(*g, *r, "d"));
}

TEST(ClusteringTest, VariableOfAnotherDeviceKeepsItsOpsOut) {
  auto g = BuildGraph(
      "node { name: \"v\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
      "attr { key: \"shape\" value { shape { } } } }\n"
      "node { name: \"r\" op: \"ReadVariableOp\" input: \"v\" "
      "attr { key: \"dtype\" value { type: DT_FLOAT } } }\n" +
      Unary("e", "Exp", "r") + Unary("t", "Tanh", "e"));
  ClusteringOptions options;
  options.node_devices.assign(g->num_nodes(), "/job:localhost/replica:0/task:0/device:CPU:1");
  options.node_devices[g->FindNode("v")->id()] = "/job:localhost/replica:0/task:0/device:CPU:0";
  auto r = FindClusters(*g, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ClusterOf(*g, *r, "r"), -1);
  EXPECT_TRUE(absl::StrContains(r->why_not.at(g->FindNode("r")->id()), "lives on"))
      << r->why_not.at(g->FindNode("r")->id());
  EXPECT_NE(ClusterOf(*g, *r, "e"), -1);
  // Same device: the read joins the cluster.
  options.node_devices[g->FindNode("v")->id()] = "/job:localhost/replica:0/task:0/device:CPU:1";
  r = FindClusters(*g, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ClusterOf(*g, *r, "r"), ClusterOf(*g, *r, "e"));
}

}  // namespace
}  // namespace tfjit::cluster
