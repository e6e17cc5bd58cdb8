// Writes examples/models/demo_mlp.pbtxt: a small MLP GraphDef in the form TensorFlow writes
// (scoped names, T attrs, tensor_content constants), with a CheckNumerics node in the middle
// that stays uncompiled, so auto-clustering forms two clusters around it.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "frontend/proto/graph.pb.h"
#include "frontend/tensor_proto.h"
#include "google/protobuf/text_format.h"

namespace {

using tensorflow::NodeDef;

class GraphWriter {
 public:
  NodeDef* Node(const std::string& name, const std::string& op,
                std::initializer_list<std::string> inputs) {
    NodeDef* n = graph_.add_node();
    n->set_name(name);
    n->set_op(op);
    for (const std::string& in : inputs) n->add_input(in);
    return n;
  }
  // An op with attr T = float.
  NodeDef* Float(const std::string& name, const std::string& op,
                 std::initializer_list<std::string> inputs) {
    NodeDef* n = Node(name, op, inputs);
    (*n->mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
    return n;
  }
  void Const(const std::string& name, const tfjit::Tensor& value) {
    NodeDef* n = Node(name, "Const", {});
    (*n->mutable_attr())["dtype"].set_type(
        static_cast<tensorflow::DataType>(value.dtype() == tfjit::DType::kInt32 ? 3 : 1));
    *(*n->mutable_attr())["value"].mutable_tensor() = tfjit::tf::TensorToProto(value);
  }
  // Deterministic weights scaled for stable activations.
  void Weights(const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
    tfjit::Tensor t(tfjit::DType::kFloat32, dims);
    const double scale = 1.0 / std::sqrt(static_cast<double>(dims[0]));
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      seed = seed * 1664525u + 1013904223u;
      t.data<float>()[i] = static_cast<float>(((seed >> 8) / 16777216.0 * 2 - 1) * scale);
    }
    Const(name, t);
  }
  tensorflow::GraphDef& graph() { return graph_; }

 private:
  tensorflow::GraphDef graph_;
};

void Dense(GraphWriter& g, const std::string& scope, const std::string& input, int64_t in,
           int64_t out, const std::string& activation, uint32_t seed) {
  g.Weights(scope + "/kernel", {in, out}, seed);
  g.Weights(scope + "/bias", {out}, seed + 1);
  NodeDef* mm = g.Float(scope + "/MatMul", "MatMul", {input, scope + "/kernel"});
  (*mm->mutable_attr())["transpose_a"].set_b(false);
  (*mm->mutable_attr())["transpose_b"].set_b(false);
  g.Float(scope + "/BiasAdd", "BiasAdd", {scope + "/MatMul", scope + "/bias"});
  if (!activation.empty()) g.Float(scope + "/" + activation, activation, {scope + "/BiasAdd"});
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out_path = argc > 1 ? argv[1] : "demo_mlp.pbtxt";
  GraphWriter g;
  NodeDef* x = g.Node("input", "Placeholder", {});
  (*x->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  auto* shape = (*x->mutable_attr())["shape"].mutable_shape();
  shape->add_dim()->set_size(-1);
  shape->add_dim()->set_size(256);

  Dense(g, "dense", "input", 256, 256, "Relu", 11);
  // CheckNumerics stays in the runtime (as in TF), splitting the graph into two clusters.
  NodeDef* check = g.Float("dense/check", "CheckNumerics", {"dense/Relu"});
  (*check->mutable_attr())["message"].set_s("activations of dense");
  Dense(g, "dense_1", "dense/check", 256, 128, "Tanh", 23);

  // Layer norm without scale: (h - mean) * rsqrt(var + eps).
  tfjit::Tensor axis = tfjit::Tensor::FromVector<int32_t>(tfjit::DType::kInt32, {1}, {1});
  g.Const("norm/axis", axis);
  NodeDef* mean = g.Float("norm/Mean", "Mean", {"dense_1/Tanh", "norm/axis"});
  (*mean->mutable_attr())["keep_dims"].set_b(true);
  g.Float("norm/sub", "Sub", {"dense_1/Tanh", "norm/Mean"});
  g.Float("norm/Square", "Square", {"norm/sub"});
  NodeDef* var = g.Float("norm/variance", "Mean", {"norm/Square", "norm/axis"});
  (*var->mutable_attr())["keep_dims"].set_b(true);
  g.Const("norm/epsilon", tfjit::Tensor::FromVector<float>(tfjit::DType::kFloat32, {}, {1e-3f}));
  g.Float("norm/add", "AddV2", {"norm/variance", "norm/epsilon"});
  g.Float("norm/Rsqrt", "Rsqrt", {"norm/add"});
  g.Float("norm/mul", "Mul", {"norm/sub", "norm/Rsqrt"});

  Dense(g, "logits", "norm/mul", 128, 10, "", 37);
  g.Float("probs", "Softmax", {"logits/BiasAdd"});
  // A shape computed in the graph: Reshape(probs, Shape(logits)) keeps the static shape.
  NodeDef* s = g.Float("logits/Shape", "Shape", {"logits/BiasAdd"});
  (*s->mutable_attr())["out_type"].set_type(tensorflow::DT_INT32);
  NodeDef* r = g.Float("output", "Reshape", {"probs", "logits/Shape"});
  (*r->mutable_attr())["Tshape"].set_type(tensorflow::DT_INT32);
  g.graph().mutable_versions()->set_producer(1087);

  std::string text;
  google::protobuf::TextFormat::PrintToString(g.graph(), &text);
  std::ofstream(out_path) << text;
  std::printf("wrote %s (%d nodes)\n", out_path.c_str(), g.graph().node_size());
  return 0;
}
