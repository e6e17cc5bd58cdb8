// Training-step GraphDefs in the form TensorFlow writes them (tf.compat.v1 with resource
// variables and tf.gradients): resource variables with an "init" op, a forward pass, the
// backward pass as TF's gradient ops (MatMul with transposes, BiasAddGrad, ReluGrad,
// Conv2DBackpropFilter/Input, MaxPoolGrad, FusedBatchNormGradV3, SigmoidGrad, TanhGrad, AddN),
// and one optimizer op per variable (ResourceApplyMomentum), all grouped under a "train" NoOp.
// No TensorFlow is needed to make them: the example in train_convnet.cc, the training-step
// benchmark (bench/train_bench.cc) and training_example_test build their graphs here.
//
// Every graph has the same interface:
//   feeds    "x" (float32, `input_dims`) and "labels" (float32 one-hot, [batch, classes]);
//   fetches  "loss" (mean softmax cross-entropy, a scalar), "accuracy" (a scalar), "logits";
//   targets  "init" (assigns every variable its seeded initial value; run once) and
//            "train" (one step: forward, backward, the momentum update of every variable).
#ifndef TFJIT_EXAMPLES_TRAIN_TRAINING_GRAPHS_H_
#define TFJIT_EXAMPLES_TRAIN_TRAINING_GRAPHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/proto/graph.pb.h"
#include "tfjit/tensor.h"

namespace tfjit::train {

struct TrainingGraph {
  std::string name;
  tensorflow::GraphDef graph;
  std::vector<int64_t> input_dims;  // of "x"; dim 0 is the batch
  int64_t classes = 0;
  int64_t parameters = 0;  // trainable scalars
};

struct Hyper {
  float learning_rate = 0.05f;
  float momentum = 0.9f;
  uint32_t seed = 1;  // of the initial weights
};

// Dense(in → hidden) + ReLU, Dense(hidden → hidden) + ReLU, Dense(hidden → classes).
TrainingGraph MlpGraph(int64_t batch, int64_t in, int64_t hidden, int64_t classes,
                       const Hyper& hyper = {});

// Two blocks of Conv2D 3x3 SAME (no bias) + FusedBatchNormV3 (training mode, moving averages
// updated with momentum 0.99) + ReLU + MaxPool 2x2, then a Dense layer to the classes.
// `height` and `width` must be multiples of 4. Also fetches "inference/logits" and
// "inference/accuracy": the same network with batch norm in inference mode (the moving
// averages), as a trained model is served.
TrainingGraph ConvNetGraph(int64_t batch, int64_t height, int64_t width, int64_t channels,
                           int64_t filters, int64_t classes, const Hyper& hyper = {});

// An LSTM cell (TF's gate order i, f, g, o; forget bias 1) over `steps` time steps of
// x [batch, steps, features], unrolled as Keras does with unroll=True, backpropagated through
// time step by step, then a Dense layer on the last hidden state.
TrainingGraph LstmGraph(int64_t batch, int64_t steps, int64_t features, int64_t hidden,
                        int64_t classes, const Hyper& hyper = {});

// Synthetic images for the conv net: `count` single-channel `size`x`size` images, each a bright
// bar of length size/2 (horizontal, vertical, diagonal or anti-diagonal: the 4 classes) at a
// random place, on Gaussian noise of standard deviation `noise`; with one-hot labels.
struct Batch {
  Tensor x, labels;
};
std::vector<Batch> SyntheticBars(int64_t batches, int64_t batch, int64_t size, float noise,
                                 uint32_t seed);

}  // namespace tfjit::train

#endif  // TFJIT_EXAMPLES_TRAIN_TRAINING_GRAPHS_H_
