// TF Serving's Classify and Regress APIs, shared by REST (:classify, :regress) and gRPC
// (PredictionService.Classify, .Regress), with TF Serving's semantics and messages: the request's
// tf.Examples (with the context's features, where given, under each example's own) are
// serialized into a string tensor fed to the signature's "inputs"; a classification signature
// answers "classes" (string [batch, n]) and/or "scores" (float [batch, n]), a regression
// signature "outputs" (float [batch] or [batch, 1]). The signature runs as a predict would:
// through its batching queue when it has one, on compiled code (its ParseExample runs on the
// fallback kernel).
#ifndef TFJIT_SERVING_CLASSIFY_H_
#define TFJIT_SERVING_CLASSIFY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "frontend/proto/graph.pb.h"
#include "serving/models.h"
#include "serving/proto/serving.pb.h"
#include "tfjit/tensor.h"

namespace tfjit::serving {

// The input's examples as serialized tf.Example records (string [n]), each the context's bytes
// followed by the example's, so the example's own features win (protobuf's merge of repeated
// map entries). INVALID_ARGUMENT "Input is empty." when there is no example.
absl::StatusOr<Tensor> SerializedExamples(const tensorflow::serving::Input& input);

// A serialized tf.Example that every ParseExample and ParseExampleV2 node of `graph` (its
// function bodies included) parses: each dense feature whose key is a constant, with zeros (or
// empty strings) of its shape (one row of a variable-length one). Warm-up feeds it to classify
// and regress signatures, so that their compiled clusters exist before the first request.
std::string ExampleForWarmUp(const tensorflow::GraphDef& graph);

// Runs signature `signature` ("" for serving_default) of `v` on `input` as a classification
// or a regression. `timeout_ms` <= 0: no deadline.
absl::StatusOr<tensorflow::serving::ClassificationResult> Classify(
    const ServedVersion& v, const std::string& signature, const tensorflow::serving::Input& input,
    int64_t timeout_ms);
absl::StatusOr<tensorflow::serving::RegressionResult> Regress(
    const ServedVersion& v, const std::string& signature, const tensorflow::serving::Input& input,
    int64_t timeout_ms);

// MultiInference: classify and regress tasks of one model version on one input, each as its
// own Classify or Regress, with TF Serving's checks first (one model, no signature twice, a
// signature that exists, classify or regress only, one input tensor for all). `v` is the
// version the first task names.
absl::StatusOr<tensorflow::serving::MultiInferenceResponse> MultiInference(
    const ServedVersion& v, const tensorflow::serving::MultiInferenceRequest& request,
    int64_t timeout_ms);

}  // namespace tfjit::serving

#endif  // TFJIT_SERVING_CLASSIFY_H_
