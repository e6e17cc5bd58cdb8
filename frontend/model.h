// A loaded model in any supported format: the graph, its signatures, and what must run once
// before the first user run (restoring variables, init ops). The session consumes this.
//
// Formats: a GraphDef file (.pb / .pbtxt), a SavedModel directory (saved_model.pb or
// saved_model.pbtxt + variables/), a TF.js graph model (model.json + weight shards).
#ifndef TFJIT_FRONTEND_MODEL_H_
#define TFJIT_FRONTEND_MODEL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "frontend/graph.h"
#include "frontend/tensor_proto.h"
#include "tfjit/tensor.h"

namespace tfjit::tf {

// One input or output of a signature: the user-facing key and the graph tensor behind it.
struct TensorSpec {
  std::string key;     // signature key ("x", "output_0"); TF.js: the name it reports
  std::string tensor;  // graph tensor name "node:k"
  DType dtype = DType::kInvalid;
  PartialShape shape;  // unknown_rank when the file does not say
};

struct Signature {
  std::string name;         // "serving_default", "classify_x_to_y", ...
  std::string method_name;  // "tensorflow/serving/predict" etc.; empty when absent
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

// One Session::Run the session performs right after loading, in order: e.g. assign the
// restored checkpoint values to the variables, then run the SavedModel's init op.
struct InitRun {
  std::string what;  // for error messages: "restore variables from 'dir/variables/variables'"
  std::vector<std::pair<std::string, Tensor>> feeds;  // tensor name -> value
  std::vector<std::string> targets;                   // nodes to run
};

// Loaders name the nodes they add to a graph (e.g. the placeholder and assign that restore a
// SavedModel variable) "<node>" + kLoaderNodeSuffix + ...: they are not the user's inputs or
// outputs.
inline constexpr char kLoaderNodeSuffix[] = "/_tfjit_restore";

// A SavedModel's checkpoint as loaded: its prefix, and per variable its checkpoint key and the
// tensor (a read node the loader adds) holding the variable's current value, so a session can
// write the trained values back (Session::SaveVariables).
struct CheckpointVariables {
  std::string prefix;  // "<dir>/variables/variables"
  std::vector<std::pair<std::string, std::string>> keys_and_tensors;
};

struct LoadedModel {
  std::unique_ptr<Graph> graph;
  std::string format;                 // "graphdef", "saved_model" or "tfjs"
  std::string path;                   // what the user gave
  std::vector<Signature> signatures;  // in the file's order (sorted by name for SavedModel)
  std::vector<InitRun> init;
  CheckpointVariables checkpoint;  // SavedModels with variables
};

struct ModelLoadOptions {
  // SavedModel: the MetaGraphDef whose tag set contains all of these.
  std::vector<std::string> tags = {"serve"};
};

// Detects the format from `path`: a directory is a SavedModel; a file ending in .json is a
// TF.js graph model; anything else is a GraphDef. Errors name the file.
absl::StatusOr<LoadedModel> LoadModel(const std::string& path,
                                      const ModelLoadOptions& options = {});

// Picks the signature a session uses: `name` when given (NOT_FOUND listing the available
// ones otherwise); else "serving_default" if present; else the only one; else none (nullptr).
absl::StatusOr<const Signature*> SelectSignature(const LoadedModel& model, const std::string& name);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_MODEL_H_
