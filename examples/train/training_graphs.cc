#include "examples/train/training_graphs.h"

#include <cmath>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontend/tensor_proto.h"
#include "tfjit/tensor.h"

namespace tfjit::train {
namespace {

using tensorflow::NodeDef;

void SetType(NodeDef* n, const char* key, tensorflow::DataType t) {
  (*n->mutable_attr())[key].set_type(t);
}
void SetBool(NodeDef* n, const char* key, bool b) { (*n->mutable_attr())[key].set_b(b); }
void SetInt(NodeDef* n, const char* key, int64_t i) { (*n->mutable_attr())[key].set_i(i); }
void SetFloat(NodeDef* n, const char* key, float f) { (*n->mutable_attr())[key].set_f(f); }
void SetString(NodeDef* n, const char* key, const std::string& s) {
  (*n->mutable_attr())[key].set_s(s);
}
void SetInts(NodeDef* n, const char* key, std::initializer_list<int64_t> values) {
  auto* list = (*n->mutable_attr())[key].mutable_list();
  for (int64_t v : values) list->add_i(v);
}

// Writes nodes, the variables' initializers and their optimizer updates.
class Builder {
 public:
  explicit Builder(const Hyper& hyper) : hyper_(hyper), seed_(hyper.seed) {}

  NodeDef* Node(const std::string& name, const std::string& op,
                std::initializer_list<std::string> inputs) {
    NodeDef* n = graph_.add_node();
    n->set_name(name);
    n->set_op(op);
    for (const std::string& in : inputs) n->add_input(in);
    return n;
  }
  // An op with T = float; returns its name (its output 0).
  std::string F(const std::string& name, const std::string& op,
                std::initializer_list<std::string> inputs) {
    SetType(Node(name, op, inputs), "T", tensorflow::DT_FLOAT);
    return name;
  }
  NodeDef* FNode(const std::string& name, const std::string& op,
                 std::initializer_list<std::string> inputs) {
    NodeDef* n = Node(name, op, inputs);
    SetType(n, "T", tensorflow::DT_FLOAT);
    return n;
  }
  std::string Const(const std::string& name, const Tensor& value) {
    NodeDef* n = Node(name, "Const", {});
    SetType(n, "dtype",
            value.dtype() == DType::kInt32 ? tensorflow::DT_INT32 : tensorflow::DT_FLOAT);
    *(*n->mutable_attr())["value"].mutable_tensor() = tf::TensorToProto(value);
    return name;
  }
  std::string Scalar(const std::string& name, float v) {
    return Const(name, Tensor::FromVector<float>(DType::kFloat32, {}, {v}));
  }
  std::string Int(const std::string& name, int32_t v) {
    return Const(name, Tensor::FromVector<int32_t>(DType::kInt32, {}, {v}));
  }
  std::string Ints(const std::string& name, const std::vector<int32_t>& v) {
    return Const(name,
                 Tensor::FromVector<int32_t>(DType::kInt32, {static_cast<int64_t>(v.size())}, v));
  }
  std::string Placeholder(const std::string& name, const std::vector<int64_t>& dims) {
    NodeDef* n = Node(name, "Placeholder", {});
    SetType(n, "dtype", tensorflow::DT_FLOAT);
    auto* shape = (*n->mutable_attr())["shape"].mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_size(d);
    return name;
  }

  // Glorot-uniform values for a weight of `dims` ([..., fan_in, fan_out] with the receptive
  // field in front), from a fixed LCG so graphs are the same on every machine.
  Tensor Glorot(const std::vector<int64_t>& dims) {
    Tensor t(DType::kFloat32, dims);
    int64_t receptive = 1;
    for (size_t i = 0; i + 2 < dims.size(); ++i) receptive *= dims[i];
    const double fan_in = static_cast<double>(dims[dims.size() - 2] * receptive);
    const double fan_out = static_cast<double>(dims.back() * receptive);
    const double limit = std::sqrt(6.0 / (fan_in + fan_out));
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      seed_ = seed_ * 1664525u + 1013904223u;
      t.data<float>()[i] = static_cast<float>(((seed_ >> 8) / 16777216.0 * 2 - 1) * limit);
    }
    return t;
  }
  static Tensor Filled(const std::vector<int64_t>& dims, float v) {
    Tensor t(DType::kFloat32, dims);
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = v;
    return t;
  }

  // A resource variable `name` holding `init` after "init"; returns its ReadVariableOp.
  std::string Variable(const std::string& name, const Tensor& init, bool trainable = true) {
    NodeDef* h = Node(name, "VarHandleOp", {});
    SetType(h, "dtype", tensorflow::DT_FLOAT);
    auto* shape = (*h->mutable_attr())["shape"].mutable_shape();
    for (int64_t d : init.dims()) shape->add_dim()->set_size(d);
    SetString(h, "shared_name", name);
    SetString(h, "container", "");
    const std::string value = Const(name + "/Initializer/value", init);
    NodeDef* assign = Node(name + "/Assign", "AssignVariableOp", {name, value});
    SetType(assign, "dtype", tensorflow::DT_FLOAT);
    init_.push_back("^" + assign->name());
    NodeDef* read = Node(name + "/Read/ReadVariableOp", "ReadVariableOp", {name});
    SetType(read, "dtype", tensorflow::DT_FLOAT);
    if (trainable) {
      trainable_.push_back({name, init.dims()});
      parameters_ += init.num_elements();
    }
    return read->name();
  }
  // The gradient of the trainable variable `name`.
  void Gradient(const std::string& name, const std::string& grad) { grads_[name] = grad; }
  // An update that runs with the step (batch norm's moving averages).
  void Update(const std::string& op) { updates_.push_back("^" + op); }

  // The momentum update of every trainable variable, "train" and "init".
  void Finish() {
    const std::string lr = Scalar("Momentum/learning_rate", hyper_.learning_rate);
    const std::string mom = Scalar("Momentum/momentum", hyper_.momentum);
    std::vector<std::string> train = updates_;
    for (const auto& [name, dims] : trainable_) {
      const std::string accum = name + "/Momentum";
      Variable(accum, Filled(dims, 0), /*trainable=*/false);
      NodeDef* apply = FNode(absl::StrCat("Momentum/update_", name, "/ResourceApplyMomentum"),
                             "ResourceApplyMomentum", {name, accum, lr, grads_.at(name), mom});
      SetBool(apply, "use_locking", false);
      SetBool(apply, "use_nesterov", false);
      train.push_back("^" + apply->name());
    }
    NodeDef* t = Node("train", "NoOp", {});
    for (const std::string& c : train) t->add_input(c);
    NodeDef* i = Node("init", "NoOp", {});
    for (const std::string& c : init_) i->add_input(c);
    graph_.mutable_versions()->set_producer(1087);
  }

  tensorflow::GraphDef& graph() { return graph_; }
  int64_t parameters() const { return parameters_; }

 private:
  Hyper hyper_;
  uint32_t seed_;
  tensorflow::GraphDef graph_;
  std::vector<std::string> init_, updates_;
  std::vector<std::pair<std::string, std::vector<int64_t>>> trainable_;
  std::map<std::string, std::string> grads_;
  int64_t parameters_ = 0;
};

struct Dense {
  std::string x, w, out;  // input, kernel read, output (before any activation)
};

// x·w + bias, with the variables' reads given.
Dense DenseLayer(Builder& b, const std::string& scope, const std::string& x, const std::string& w,
                 const std::string& bias) {
  NodeDef* mm = b.FNode(scope + "/MatMul", "MatMul", {x, w});
  SetBool(mm, "transpose_a", false);
  SetBool(mm, "transpose_b", false);
  NodeDef* add = b.FNode(scope + "/BiasAdd", "BiasAdd", {mm->name(), bias});
  SetString(add, "data_format", "NHWC");
  return {x, w, add->name()};
}

Dense DenseForward(Builder& b, const std::string& scope, const std::string& x, int64_t in,
                   int64_t out) {
  const std::string w = b.Variable(scope + "/kernel", b.Glorot({in, out}));
  const std::string bias = b.Variable(scope + "/bias", Builder::Filled({out}, 0));
  return DenseLayer(b, scope, x, w, bias);
}

// The kernel's and bias's gradients from `dout`; returns dx unless `need_dx` is false.
std::string DenseBackward(Builder& b, const std::string& scope, const Dense& d,
                          const std::string& dout, bool need_dx) {
  const std::string g = "gradients/" + scope;
  b.Gradient(scope + "/bias", b.F(g + "/BiasAdd_grad/BiasAddGrad", "BiasAddGrad", {dout}));
  NodeDef* dw = b.FNode(g + "/MatMul_grad/MatMul_1", "MatMul", {d.x, dout});
  SetBool(dw, "transpose_a", true);
  SetBool(dw, "transpose_b", false);
  b.Gradient(scope + "/kernel", dw->name());
  if (!need_dx) return "";
  NodeDef* dx = b.FNode(g + "/MatMul_grad/MatMul", "MatMul", {dout, d.w});
  SetBool(dx, "transpose_a", false);
  SetBool(dx, "transpose_b", true);
  return dx->name();
}

// "<scope>": the fraction of rows whose largest logit is the label's.
void Accuracy(Builder& b, const std::string& scope, const std::string& logits) {
  const std::string axis0 = b.Ints(scope + "/Const", {0});
  const std::string dim = b.Int(scope + "/dimension", 1);
  for (const auto& [name, in] : {std::pair<std::string, std::string>{scope + "/ArgMax", logits},
                                 {scope + "/ArgMax_1", "labels"}}) {
    NodeDef* am = b.FNode(name, "ArgMax", {in, dim});
    SetType(am, "Tidx", tensorflow::DT_INT32);
    SetType(am, "output_type", tensorflow::DT_INT64);
  }
  NodeDef* eq = b.Node(scope + "/Equal", "Equal", {scope + "/ArgMax", scope + "/ArgMax_1"});
  SetType(eq, "T", tensorflow::DT_INT64);
  SetBool(eq, "incompatible_shape_error", true);
  NodeDef* cast = b.Node(scope + "/Cast", "Cast", {eq->name()});
  SetType(cast, "SrcT", tensorflow::DT_BOOL);
  SetType(cast, "DstT", tensorflow::DT_FLOAT);
  SetBool(cast, "Truncate", false);
  NodeDef* acc = b.FNode(scope, "Mean", {cast->name(), axis0});
  SetBool(acc, "keep_dims", false);
  SetType(acc, "Tidx", tensorflow::DT_INT32);
}

// Mean softmax cross-entropy of `logits` against one-hot "labels", "accuracy", and the
// gradient of the loss with respect to the logits.
std::string LossAndAccuracy(Builder& b, const std::string& logits, int64_t batch) {
  const std::string xent = b.F("loss/xent", "SoftmaxCrossEntropyWithLogits", {logits, "labels"});
  const std::string axis0 = b.Ints("loss/Const", {0});
  NodeDef* mean = b.FNode("loss", "Mean", {xent, axis0});
  SetBool(mean, "keep_dims", false);
  SetType(mean, "Tidx", tensorflow::DT_INT32);

  Accuracy(b, "accuracy", logits);

  // d loss / d xent = 1/batch for each example; times the op's own backprop output.
  const std::string inv = b.Scalar("gradients/loss_grad/truediv", 1.0f / batch);
  return b.F("gradients/loss/xent_grad/mul", "Mul", {xent + ":1", inv});
}

void ConvAttrs(NodeDef* n) {
  SetInts(n, "strides", {1, 1, 1, 1});
  SetInts(n, "dilations", {1, 1, 1, 1});
  SetString(n, "padding", "SAME");
  SetString(n, "data_format", "NHWC");
  SetBool(n, "use_cudnn_on_gpu", true);
}
void PoolAttrs(NodeDef* n) {
  SetInts(n, "ksize", {1, 2, 2, 1});
  SetInts(n, "strides", {1, 2, 2, 1});
  SetString(n, "padding", "VALID");
  SetString(n, "data_format", "NHWC");
}
void BatchNormAttrs(NodeDef* n) {
  SetType(n, "U", tensorflow::DT_FLOAT);
  SetFloat(n, "epsilon", 0.001f);
  SetString(n, "data_format", "NHWC");
  SetBool(n, "is_training", true);
}

// One conv block's variables (their reads) and nodes, kept for its backward pass.
struct ConvBlock {
  std::string scope, x, w, conv, scale, beta, mean, var, bn, relu, pool;
  std::vector<int64_t> x_dims, w_dims;
};

ConvBlock ConvBlockVariables(Builder& b, const std::string& scope,
                             const std::vector<int64_t>& x_dims, int64_t filters) {
  ConvBlock c;
  c.scope = scope;
  c.x_dims = x_dims;
  c.w_dims = {3, 3, x_dims[3], filters};
  c.w = b.Variable(scope + "/conv/kernel", b.Glorot(c.w_dims));
  c.scale = b.Variable(scope + "/bn/gamma", Builder::Filled({filters}, 1));
  c.beta = b.Variable(scope + "/bn/beta", Builder::Filled({filters}, 0));
  c.mean = b.Variable(scope + "/bn/moving_mean", Builder::Filled({filters}, 0), false);
  c.var = b.Variable(scope + "/bn/moving_variance", Builder::Filled({filters}, 1), false);
  return c;
}

// The block on `x`: in training mode (batch statistics, moving averages updated with the
// step) or in inference mode (the moving averages), whose nodes go under "<prefix>".
ConvBlock ConvBlockForward(Builder& b, ConvBlock c, const std::string& x, bool training,
                           const std::string& prefix) {
  const std::string scope = prefix + c.scope;
  c.x = x;
  NodeDef* conv = b.FNode(scope + "/conv/Conv2D", "Conv2D", {x, c.w});
  ConvAttrs(conv);
  c.conv = conv->name();
  NodeDef* bn = b.FNode(scope + "/bn/FusedBatchNormV3", "FusedBatchNormV3",
                        {c.conv, c.scale, c.beta, c.mean, c.var});
  BatchNormAttrs(bn);
  SetBool(bn, "is_training", training);
  SetFloat(bn, "exponential_avg_factor", 1.0f);
  c.bn = bn->name();
  if (training) {
    // Keras' moving averages: moving -= (moving - batch statistic) * (1 - 0.99).
    const std::string decay = b.Scalar(scope + "/bn/AssignMovingAvg/decay", 0.01f);
    for (const auto& [stat, read, out] :
         {std::tuple<std::string, std::string, int>{"moving_mean", c.mean, 1},
          {"moving_variance", c.var, 2}}) {
      const std::string s = scope + "/bn/AssignMovingAvg_" + stat;
      const std::string diff = b.F(s + "/sub", "Sub", {read, absl::StrCat(c.bn, ":", out)});
      const std::string step = b.F(s + "/mul", "Mul", {diff, decay});
      NodeDef* upd = b.Node(s + "/AssignSubVariableOp", "AssignSubVariableOp",
                            {c.scope + "/bn/" + stat, step});
      SetType(upd, "dtype", tensorflow::DT_FLOAT);
      b.Update(upd->name());
    }
  }
  c.relu = b.F(scope + "/Relu", "Relu", {c.bn});
  NodeDef* pool = b.FNode(scope + "/MaxPool", "MaxPool", {c.relu});
  PoolAttrs(pool);
  c.pool = pool->name();
  return c;
}

std::string ConvBlockBackward(Builder& b, const ConvBlock& c, const std::string& dpool,
                              bool need_dx) {
  const std::string g = "gradients/" + c.scope;
  NodeDef* dr = b.FNode(g + "/MaxPool_grad/MaxPoolGrad", "MaxPoolGrad", {c.relu, c.pool, dpool});
  PoolAttrs(dr);
  const std::string dbn = b.F(g + "/Relu_grad/ReluGrad", "ReluGrad", {dr->name(), c.relu});
  NodeDef* bng =
      b.FNode(g + "/bn/FusedBatchNormV3_grad/FusedBatchNormGradV3", "FusedBatchNormGradV3",
              {dbn, c.conv, c.scale, c.bn + ":3", c.bn + ":4", c.bn + ":5"});
  BatchNormAttrs(bng);
  b.Gradient(c.scope + "/bn/gamma", bng->name() + ":1");
  b.Gradient(c.scope + "/bn/beta", bng->name() + ":2");
  std::vector<int32_t> wd(c.w_dims.begin(), c.w_dims.end());
  const std::string wsize = b.Ints(g + "/conv/Conv2D_grad/ShapeN_1", wd);
  NodeDef* dw = b.FNode(g + "/conv/Conv2D_grad/Conv2DBackpropFilter", "Conv2DBackpropFilter",
                        {c.x, wsize, bng->name()});
  ConvAttrs(dw);
  b.Gradient(c.scope + "/conv/kernel", dw->name());
  if (!need_dx) return "";
  std::vector<int32_t> xd(c.x_dims.begin(), c.x_dims.end());
  const std::string xsize = b.Ints(g + "/conv/Conv2D_grad/ShapeN", xd);
  NodeDef* dx = b.FNode(g + "/conv/Conv2D_grad/Conv2DBackpropInput", "Conv2DBackpropInput",
                        {xsize, c.w, bng->name()});
  ConvAttrs(dx);
  return dx->name();
}

TrainingGraph Finish(Builder& b, std::string name, std::vector<int64_t> input_dims,
                     int64_t classes) {
  b.Finish();
  TrainingGraph t;
  t.name = std::move(name);
  t.graph = std::move(b.graph());
  t.input_dims = std::move(input_dims);
  t.classes = classes;
  t.parameters = b.parameters();
  return t;
}

}  // namespace

TrainingGraph MlpGraph(int64_t batch, int64_t in, int64_t hidden, int64_t classes,
                       const Hyper& hyper) {
  Builder b(hyper);
  b.Placeholder("x", {batch, in});
  b.Placeholder("labels", {batch, classes});
  const Dense d1 = DenseForward(b, "dense", "x", in, hidden);
  const std::string r1 = b.F("dense/Relu", "Relu", {d1.out});
  const Dense d2 = DenseForward(b, "dense_1", r1, hidden, hidden);
  const std::string r2 = b.F("dense_1/Relu", "Relu", {d2.out});
  const Dense d3 = DenseForward(b, "dense_2", r2, hidden, classes);
  b.F("logits", "Identity", {d3.out});
  const std::string dlogits = LossAndAccuracy(b, d3.out, batch);
  std::string d = DenseBackward(b, "dense_2", d3, dlogits, true);
  d = b.F("gradients/dense_1/Relu_grad/ReluGrad", "ReluGrad", {d, r2});
  d = DenseBackward(b, "dense_1", d2, d, true);
  d = b.F("gradients/dense/Relu_grad/ReluGrad", "ReluGrad", {d, r1});
  DenseBackward(b, "dense", d1, d, false);
  return Finish(b, "mlp", {batch, in}, classes);
}

TrainingGraph ConvNetGraph(int64_t batch, int64_t height, int64_t width, int64_t channels,
                           int64_t filters, int64_t classes, const Hyper& hyper) {
  Builder b(hyper);
  b.Placeholder("x", {batch, height, width, channels});
  b.Placeholder("labels", {batch, classes});
  const int64_t flat = (height / 4) * (width / 4) * 2 * filters;
  const ConvBlock v1 = ConvBlockVariables(b, "block1", {batch, height, width, channels}, filters);
  const ConvBlock v2 =
      ConvBlockVariables(b, "block2", {batch, height / 2, width / 2, filters}, 2 * filters);
  const std::string w = b.Variable("dense/kernel", b.Glorot({flat, classes}));
  const std::string bias = b.Variable("dense/bias", Builder::Filled({classes}, 0));
  const std::string shape = b.Ints("flatten/Const", {-1, static_cast<int32_t>(flat)});
  // The network on `x` in training or inference mode; returns the second block and the
  // dense layer.
  auto forward = [&](bool training, const std::string& prefix) {
    const ConvBlock c1 = ConvBlockForward(b, v1, "x", training, prefix);
    const ConvBlock c2 = ConvBlockForward(b, v2, c1.pool, training, prefix);
    NodeDef* reshape = b.FNode(prefix + "flatten/Reshape", "Reshape", {c2.pool, shape});
    SetType(reshape, "Tshape", tensorflow::DT_INT32);
    return std::tuple<ConvBlock, ConvBlock, Dense>{
        c1, c2, DenseLayer(b, prefix + "dense", reshape->name(), w, bias)};
  };
  const auto [c1, c2, d] = forward(true, "");
  b.F("logits", "Identity", {d.out});
  const auto [e1, e2, e] = forward(false, "inference/");
  b.F("inference/logits", "Identity", {e.out});
  Accuracy(b, "inference/accuracy", e.out);
  const std::string dlogits = LossAndAccuracy(b, d.out, batch);
  const std::string dflat = DenseBackward(b, "dense", d, dlogits, true);
  const std::string pool_shape =
      b.Ints("gradients/flatten/Reshape_grad/Shape",
             {static_cast<int32_t>(batch), static_cast<int32_t>(height / 4),
              static_cast<int32_t>(width / 4), static_cast<int32_t>(2 * filters)});
  NodeDef* dpool =
      b.FNode("gradients/flatten/Reshape_grad/Reshape", "Reshape", {dflat, pool_shape});
  SetType(dpool, "Tshape", tensorflow::DT_INT32);
  const std::string dx2 = ConvBlockBackward(b, c2, dpool->name(), true);
  ConvBlockBackward(b, c1, dx2, false);
  return Finish(b, "convnet", {batch, height, width, channels}, classes);
}

TrainingGraph LstmGraph(int64_t batch, int64_t steps, int64_t features, int64_t hidden,
                        int64_t classes, const Hyper& hyper) {
  Builder b(hyper);
  b.Placeholder("x", {batch, steps, features});
  b.Placeholder("labels", {batch, classes});
  const std::string w = b.Variable("lstm/kernel", b.Glorot({features + hidden, 4 * hidden}));
  const std::string bias = b.Variable("lstm/bias", Builder::Filled({4 * hidden}, 0));
  NodeDef* unstack = b.FNode("lstm/unstack", "Unpack", {"x"});
  SetInt(unstack, "num", steps);
  SetInt(unstack, "axis", 1);
  const std::string axis1 = b.Int("lstm/concat/axis", 1);
  const std::string zeros = b.Const("lstm/zeros", Builder::Filled({batch, hidden}, 0));
  const std::string one = b.Scalar("lstm/forget_bias", 1.0f);

  struct Step {
    std::string cat, si, sf, gg, so, c, tc, h, c_prev;
  };
  std::vector<Step> s(static_cast<size_t>(steps));
  std::string h = zeros, c = zeros;
  for (int64_t t = 0; t < steps; ++t) {
    Step& st = s[static_cast<size_t>(t)];
    const std::string p = absl::StrCat("lstm/while/step_", t, "/");
    NodeDef* cat = b.FNode(p + "concat", "ConcatV2", {absl::StrCat("lstm/unstack:", t), h, axis1});
    SetInt(cat, "N", 2);
    SetType(cat, "Tidx", tensorflow::DT_INT32);
    st.cat = cat->name();
    NodeDef* mm = b.FNode(p + "MatMul", "MatMul", {st.cat, w});
    SetBool(mm, "transpose_a", false);
    SetBool(mm, "transpose_b", false);
    NodeDef* z = b.FNode(p + "BiasAdd", "BiasAdd", {mm->name(), bias});
    SetString(z, "data_format", "NHWC");
    NodeDef* split = b.FNode(p + "split", "Split", {axis1, z->name()});
    SetInt(split, "num_split", 4);
    st.si = b.F(p + "Sigmoid", "Sigmoid", {split->name() + ":0"});
    st.sf = b.F(p + "Sigmoid_1", "Sigmoid", {b.F(p + "add", "AddV2", {split->name() + ":1", one})});
    st.gg = b.F(p + "Tanh", "Tanh", {split->name() + ":2"});
    st.so = b.F(p + "Sigmoid_2", "Sigmoid", {split->name() + ":3"});
    st.c_prev = c;
    st.c = b.F(p + "add_1", "AddV2",
               {b.F(p + "mul", "Mul", {st.sf, c}), b.F(p + "mul_1", "Mul", {st.si, st.gg})});
    st.tc = b.F(p + "Tanh_1", "Tanh", {st.c});
    st.h = b.F(p + "mul_2", "Mul", {st.so, st.tc});
    h = st.h;
    c = st.c;
  }
  const Dense d = DenseForward(b, "dense", h, hidden, classes);
  b.F("logits", "Identity", {d.out});
  const std::string dlogits = LossAndAccuracy(b, d.out, batch);
  std::string dh = DenseBackward(b, "dense", d, dlogits, true);
  std::string dc;
  const std::string begin =
      b.Ints("gradients/lstm/Slice/begin", {0, static_cast<int32_t>(features)});
  const std::string size = b.Ints("gradients/lstm/Slice/size",
                                  {static_cast<int32_t>(batch), static_cast<int32_t>(hidden)});
  std::vector<std::string> dws, dbs;
  for (int64_t t = steps - 1; t >= 0; --t) {
    const Step& st = s[static_cast<size_t>(t)];
    const std::string p = absl::StrCat("gradients/lstm/while/step_", t, "/");
    const std::string dso = b.F(p + "mul_2_grad/Mul", "Mul", {dh, st.tc});
    const std::string dtc = b.F(p + "mul_2_grad/Mul_1", "Mul", {dh, st.so});
    std::string dct = b.F(p + "Tanh_1_grad/TanhGrad", "TanhGrad", {st.tc, dtc});
    if (!dc.empty()) dct = b.F(p + "AddN", "AddV2", {dct, dc});
    const std::string dsf = b.F(p + "mul_grad/Mul", "Mul", {dct, st.c_prev});
    dc = b.F(p + "mul_grad/Mul_1", "Mul", {dct, st.sf});
    const std::string dsi = b.F(p + "mul_1_grad/Mul", "Mul", {dct, st.gg});
    const std::string dgg = b.F(p + "mul_1_grad/Mul_1", "Mul", {dct, st.si});
    NodeDef* dz =
        b.FNode(p + "split_grad/concat", "ConcatV2",
                {b.F(p + "Sigmoid_grad/SigmoidGrad", "SigmoidGrad", {st.si, dsi}),
                 b.F(p + "Sigmoid_1_grad/SigmoidGrad", "SigmoidGrad", {st.sf, dsf}),
                 b.F(p + "Tanh_grad/TanhGrad", "TanhGrad", {st.gg, dgg}),
                 b.F(p + "Sigmoid_2_grad/SigmoidGrad", "SigmoidGrad", {st.so, dso}), axis1});
    SetInt(dz, "N", 4);
    SetType(dz, "Tidx", tensorflow::DT_INT32);
    dbs.push_back(b.F(p + "BiasAdd_grad/BiasAddGrad", "BiasAddGrad", {dz->name()}));
    NodeDef* dw = b.FNode(p + "MatMul_grad/MatMul_1", "MatMul", {st.cat, dz->name()});
    SetBool(dw, "transpose_a", true);
    SetBool(dw, "transpose_b", false);
    dws.push_back(dw->name());
    if (t == 0) break;
    NodeDef* dcat = b.FNode(p + "MatMul_grad/MatMul", "MatMul", {dz->name(), w});
    SetBool(dcat, "transpose_a", false);
    SetBool(dcat, "transpose_b", true);
    NodeDef* slice = b.FNode(p + "concat_grad/Slice_1", "Slice", {dcat->name(), begin, size});
    SetType(slice, "Index", tensorflow::DT_INT32);
    dh = slice->name();
  }
  NodeDef* dw_sum = b.FNode("gradients/lstm/kernel_grad/AddN", "AddN", {});
  NodeDef* db_sum = b.FNode("gradients/lstm/bias_grad/AddN", "AddN", {});
  for (const std::string& g : dws) dw_sum->add_input(g);
  for (const std::string& g : dbs) db_sum->add_input(g);
  SetInt(dw_sum, "N", static_cast<int64_t>(dws.size()));
  SetInt(db_sum, "N", static_cast<int64_t>(dbs.size()));
  b.Gradient("lstm/kernel", dw_sum->name());
  b.Gradient("lstm/bias", db_sum->name());
  return Finish(b, "lstm", {batch, steps, features}, classes);
}

std::vector<Batch> SyntheticBars(int64_t batches, int64_t batch, int64_t size, float noise,
                                 uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> gauss(0, noise);
  const int64_t len = size / 2;
  std::uniform_int_distribution<int64_t> cls(0, 3), pos(0, size - len);
  // (dy, dx) of each class's bar.
  constexpr int kStep[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
  std::vector<Batch> out;
  for (int64_t n = 0; n < batches; ++n) {
    Batch b{Tensor(DType::kFloat32, {batch, size, size, 1}), Tensor(DType::kFloat32, {batch, 4})};
    float* x = b.x.data<float>();
    float* y = b.labels.data<float>();
    for (int64_t i = 0; i < batch * size * size; ++i) x[i] = gauss(rng);
    for (int64_t i = 0; i < batch * 4; ++i) y[i] = 0;
    for (int64_t e = 0; e < batch; ++e) {
      const int64_t k = cls(rng);
      y[e * 4 + k] = 1;
      int64_t r = pos(rng), c = pos(rng);
      if (kStep[k][1] < 0) c += len - 1;  // the anti-diagonal runs down and to the left
      for (int64_t j = 0; j < len; ++j) {
        x[(e * size + r + j * kStep[k][0]) * size + c + j * kStep[k][1]] += 1.0f;
      }
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace tfjit::train
