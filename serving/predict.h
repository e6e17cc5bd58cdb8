// What the REST and gRPC predict calls share: a signature's inputs, and a run of it.
#ifndef TFJIT_SERVING_PREDICT_H_
#define TFJIT_SERVING_PREDICT_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/proto/saved_model.pb.h"
#include "serving/json_tensor.h"
#include "serving/models.h"

namespace tfjit::serving {

inline constexpr char kDefaultSignature[] = "serving_default";

// A run of signature `def` of `model` that began at `start` and ran with `stats`, in the
// metrics (runtime latency, under the API the signature's method names: Predict, Classify or
// Regress; clusters compiled, which after warm-up should stay 0).
void RecordRun(const std::string& model, const tensorflow::SignatureDef& def, const RunStats& stats,
               std::chrono::steady_clock::time_point start);

// The inputs of `def` by key (sorted), with their dtypes. UNIMPLEMENTED for a dtype tfjit does
// not serve.
absl::StatusOr<std::vector<TensorSpec>> InputSpecs(const tensorflow::SignatureDef& def,
                                                   const std::string& signature);

// Runs signature `signature` (`def`) of `v` on `inputs` (by the signature's keys), through its
// batching queue when it has one, and returns the outputs named by `output_keys` (every
// output, sorted by key, when empty) with their keys. INVALID_ARGUMENT as TF Serving for inputs
// the signature does not have or lacks, and for unknown or repeated output keys; the run's own
// errors otherwise. `timeout_ms` <= 0: no deadline.
absl::StatusOr<NamedTensors> RunSignature(const ServedVersion& v, const std::string& signature,
                                          const tensorflow::SignatureDef& def, NamedTensors inputs,
                                          std::vector<std::string> output_keys, int64_t timeout_ms);

}  // namespace tfjit::serving

#endif  // TFJIT_SERVING_PREDICT_H_
