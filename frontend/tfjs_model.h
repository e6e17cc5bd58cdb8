// Loading a TensorFlow.js graph model: model.json (modelTopology = a GraphDef in protobuf's JSON
// form, weightsManifest, signature) and its binary weight shards.
#ifndef TFJIT_FRONTEND_TFJS_MODEL_H_
#define TFJIT_FRONTEND_TFJS_MODEL_H_

#include <string>

#include "absl/status/statusor.h"
#include "frontend/model.h"

namespace tfjit::tf {

// `path` is the model.json file; shards are read relative to its directory.
absl::StatusOr<LoadedModel> LoadTfjsModel(const std::string& path);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_TFJS_MODEL_H_
