// Loading a TensorFlow SavedModel directory: saved_model.pb (or .pbtxt), the MetaGraphDef whose
// tags match, its SignatureDefs, and the variables restored from the checkpoint in variables/.
#ifndef TFJIT_FRONTEND_SAVED_MODEL_H_
#define TFJIT_FRONTEND_SAVED_MODEL_H_

#include <string>

#include "absl/status/statusor.h"
#include "frontend/model.h"

namespace tfjit::tf {

// `dir` holds saved_model.pb or saved_model.pbtxt. NOT_FOUND when neither exists or no
// MetaGraphDef has all `options.tags`; INVALID_ARGUMENT for a malformed file; DATA_LOSS for a
// corrupt checkpoint (naming the file and tensor).
absl::StatusOr<LoadedModel> LoadSavedModel(const std::string& dir, const ModelLoadOptions& options);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_SAVED_MODEL_H_
