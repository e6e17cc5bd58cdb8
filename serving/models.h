// The models `tfjit serve` serves, as TF Serving's ServerCore keeps them: each model a base
// path whose integer-named children are its versions (leading zeros allowed: 00000123 is
// version 123), a version policy (the latest N, all, or specific versions) and labels. A
// version is loaded (a Session on its SavedModel), warmed up (each predict signature run at
// batch sizes 1 and 2, so that later batch sizes run on compiled code without compiling:
// docs/USER_GUIDE.md 2.6) and only then made available; Poll() rescans the base paths and
// swaps versions without downtime (a new one is available before an old one goes; one that
// fails to load is reported in the status, tried again up to 5 times, 1, 2, 4, ... s apart,
// and the version it was to replace keeps serving).
#ifndef TFJIT_SERVING_MODELS_H_
#define TFJIT_SERVING_MODELS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "serving/batching.h"
#include "serving/proto/serving.pb.h"
#include "tfjit/session.h"

namespace tfjit::serving {

struct VersionPolicy {
  enum class Kind { kLatest, kAll, kSpecific };
  Kind kind = Kind::kLatest;
  int64_t num_versions = 1;       // kLatest
  std::vector<int64_t> versions;  // kSpecific
};

// One model of the server's config (ModelConfig).
struct ModelSource {
  std::string name;
  std::string base_path;
  VersionPolicy policy;
  std::map<std::string, int64_t> labels;
};

// The models of a ModelServerConfig; INVALID_ARGUMENT with TF Serving's messages for a
// duplicate name, a relative base path or a platform other than "tensorflow".
absl::StatusOr<std::vector<ModelSource>> SourcesFromConfig(
    const tensorflow::serving::ModelServerConfig& config);

// A loaded version: its session and its signatures (the SavedModel's "serve" MetaGraph).
struct ServedVersion {
  std::string model;
  int64_t version = 0;
  std::string path;
  std::unique_ptr<Session> session;
  tensorflow::serving::SignatureDefMap signatures;
  // A serialized tf.Example the model's parsing nodes accept, for warming up classify and
  // regress signatures (ExampleForWarmUp); empty for models that are not SavedModels.
  std::string warmup_example;
  // The graph's string Placeholders ("name:0"): signature inputs that take such strings.
  std::set<std::string> string_placeholders;
  // With batching on: a queue per predict, classify or regress signature whose inputs and
  // outputs are batched along dim 0 (dim 0 unknown in the signature). Declared after the session,
  // so destroyed before it.
  std::map<std::string, std::unique_ptr<SignatureBatcher>> batchers;
};

class ModelManager {
 public:
  // `options`: the sessions' options (jit mode, threads, cache dir, shapes, ...); `batching`:
  // TF Serving's --enable_batching with its parameters (nullopt: off).
  explicit ModelManager(SessionOptions options,
                        std::optional<BatchingOptions> batching = std::nullopt)
      : options_(std::move(options)), batching_(std::move(batching)) {}

  // Serves `sources` (replacing any earlier set) and loads what their policies ask for, before
  // returning: at start, and for a new config (TF Serving's HandleReloadConfigRequest, a
  // polled --model_config_file). A model that keeps its base path keeps serving its loaded
  // versions throughout; a model left out is unloaded once its requests finish.
  // INVALID_ARGUMENT naming the model when a base path does not exist (nothing changes then);
  // a version that fails to load is reported by Status, not here.
  absl::Status Configure(std::vector<ModelSource> sources);
  // Rescans every base path: loads and warms up the versions the policy now selects, then
  // unloads the ones it no longer does.
  void Poll();

  // The version a request names: `version`, or `label`, or the highest available. NOT_FOUND
  // as TF Serving ("Servable not found for request: Latest(m)" / "Specific(m, 3)");
  // INVALID_ARGUMENT for an unknown label ("Unrecognized servable version label: x").
  absl::StatusOr<std::shared_ptr<const ServedVersion>> Find(const std::string& model,
                                                            std::optional<int64_t> version,
                                                            const std::string& label) const;
  // GetModelStatus: every version the model has had a state for, newest first, or the one
  // asked for. NOT_FOUND: "Could not find any versions of model m" / "Could not find version
  // 3 of model m".
  absl::StatusOr<tensorflow::serving::GetModelStatusResponse> Status(
      const std::string& model, std::optional<int64_t> version) const;
  // The names of the models served.
  std::vector<std::string> ModelNames() const;

 private:
  struct VersionEntry {
    tensorflow::serving::ModelVersionStatus::State state =
        tensorflow::serving::ModelVersionStatus::START;
    absl::Status status;
    std::shared_ptr<const ServedVersion> served;
    int failures = 0;  // failed loads so far
    std::chrono::steady_clock::time_point failed_at;
  };
  static constexpr int kMaxLoadTries = 5;
  struct Model {
    ModelSource source;
    std::map<int64_t, VersionEntry> versions;
  };

  // Loads what `source`'s policy selects under its base path and drops what it no longer
  // selects; `initial`: a missing base path is an error (later polls only log it).
  absl::Status Sync(const ModelSource& source, bool initial);
  absl::StatusOr<std::shared_ptr<ServedVersion>> Load(const ModelSource& source, int64_t version,
                                                      const std::string& path) const;

  SessionOptions options_;
  std::optional<BatchingOptions> batching_;
  std::mutex sync_mu_;  // one Configure or Poll at a time (they load and unload versions)
  mutable std::mutex mu_;
  std::map<std::string, Model> models_;
};

// The integer-named children of `base_path` (files or folders), version -> path.
std::map<int64_t, std::string> ScanVersions(const std::string& base_path);

// The versions `policy` selects among `available`.
std::vector<int64_t> SelectVersions(const VersionPolicy& policy,
                                    const std::map<int64_t, std::string>& available);

}  // namespace tfjit::serving

#endif  // TFJIT_SERVING_MODELS_H_
