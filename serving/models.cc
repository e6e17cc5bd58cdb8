// ModelManager (models.h).
#include "serving/models.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/file_system.h"
#include "core/logging.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "frontend/proto/saved_model.pb.h"
#include "serving/classify.h"

namespace tfjit::serving {
namespace {

namespace fs = std::filesystem;
using tensorflow::serving::ModelVersionStatus;

constexpr char kPredictMethod[] = "tensorflow/serving/predict";
constexpr char kClassifyMethod[] = "tensorflow/serving/classify";
constexpr char kRegressMethod[] = "tensorflow/serving/regress";

// The signatures of the SavedModel at `dir`: its MetaGraph tagged "serve" (else the first);
// `v`'s warm-up Example (one its parsing nodes accept: ExampleForWarmUp) and string
// placeholders.
absl::StatusOr<tensorflow::serving::SignatureDefMap> ReadSignatures(const std::string& dir,
                                                                    ServedVersion& v) {
  const std::string path = (fs::path(dir) / "saved_model.pb").string();
  TFJIT_ASSIGN_OR_RETURN(std::string bytes, Files().ReadFile(path));
  tensorflow::SavedModel model;
  if (!model.ParseFromString(bytes)) {
    return InvalidArgument("'%s' is not a SavedModel (it does not parse)", path);
  }
  if (model.meta_graphs_size() == 0) return InvalidArgument("'%s' has no MetaGraph", path);
  const tensorflow::MetaGraphDef* chosen = &model.meta_graphs(0);
  for (const tensorflow::MetaGraphDef& m : model.meta_graphs()) {
    const auto& tags = m.meta_info_def().tags();
    if (std::find(tags.begin(), tags.end(), "serve") != tags.end()) chosen = &m;
  }
  tensorflow::serving::SignatureDefMap out;
  for (const auto& [key, def] : chosen->signature_def()) (*out.mutable_signature_def())[key] = def;
  v.warmup_example = ExampleForWarmUp(chosen->graph_def());
  for (const tensorflow::NodeDef& node : chosen->graph_def().node()) {
    auto dtype = node.attr().find("dtype");
    if (node.op() == "Placeholder" && dtype != node.attr().end() &&
        dtype->second.type() == tensorflow::DT_STRING) {
      v.string_placeholders.insert(node.name() + ":0");
    }
  }
  return out;
}

// Runs each predict signature of `v` at `batch_sizes` (1 and 2, and a batching queue's allowed
// sizes) on zeros, so that the clusters it compiles (a static executable for 1, one symbolic
// executable for every size >= 2, the allowed sizes' buckets) are there before the first
// request. A signature whose inputs are not numeric with only dim 0 unknown is left to its
// first request. Classify and regress signatures fed by a string placeholder (tf.Examples)
// run on copies of the version's warm-up Example.
void WarmUp(const ServedVersion& v, const std::vector<int64_t>& batch_sizes) {
  for (const auto& [key, def] : v.signatures.signature_def()) {
    const bool examples =
        def.method_name() == kClassifyMethod || def.method_name() == kRegressMethod;
    if (def.method_name() != kPredictMethod && !examples) continue;
    for (int64_t batch : batch_sizes) {
      std::vector<std::pair<std::string, Tensor>> feeds;
      bool ok = true;
      for (const auto& [name, info] : def.inputs()) {
        std::optional<DType> dtype = DTypeFromTfEnum(info.dtype());
        // A classify or regress signature whose one input is a string placeholder takes
        // serialized tf.Examples, whatever dtype the signature declares (half_plus_three's
        // says float); others (half_plus_two's regress_x2_to_y3) take their declared tensor.
        if (examples && def.inputs_size() == 1 && v.string_placeholders.count(info.name()) > 0) {
          feeds.emplace_back(
              info.name(),
              MakeStringTensor(
                  {batch}, std::vector<std::string>(static_cast<size_t>(batch), v.warmup_example)));
          break;
        }
        if (!dtype.has_value() || DTypeSize(*dtype) == 0 || !info.has_tensor_shape() ||
            info.tensor_shape().unknown_rank()) {
          ok = false;
          break;
        }
        std::vector<int64_t> dims;
        for (int d = 0; d < info.tensor_shape().dim_size(); ++d) {
          const int64_t size = info.tensor_shape().dim(d).size();
          if (size < 0 && d > 0) ok = false;
          dims.push_back(size < 0 ? batch : size);
        }
        if (!ok) break;
        feeds.emplace_back(info.name(), Tensor(*dtype, dims));
      }
      if (!ok || feeds.empty()) break;
      std::vector<std::string> fetches;
      // (The session finds requests' plan whatever order they name these in.)
      for (const auto& [name, info] : def.outputs()) fetches.push_back(info.name());
      StatusOr<std::vector<Tensor>> out = v.session->Run(feeds, fetches);
      if (!out.ok()) {
        Log(LogLevel::kWarning,
            "tfjit serve: warm-up of model %s version %d signature %s at batch %d failed: %s",
            v.model, v.version, key, batch, out.status().message());
        break;
      }
    }
  }
}

// The model file of a version folder without a SavedModel: a TF.js model.json (any .json) or a
// GraphDef (.pb, .pbtxt). NOT_FOUND when there is none.
absl::StatusOr<std::string> GraphFileIn(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string ext = it->path().extension().string();
    std::error_code kind;
    if (it->is_regular_file(kind) && (ext == ".json" || ext == ".pb" || ext == ".pbtxt")) {
      found.push_back(it->path().string());
    }
  }
  std::sort(found.begin(), found.end());
  if (found.size() != 1) {
    return NotFound(
        "version folder %s holds %d model files: it needs a SavedModel (saved_model.pb), or "
        "exactly one TF.js model.json or GraphDef (.pb, .pbtxt)",
        dir, found.size());
  }
  return found[0];
}

// The predict signature "serving_default" of a session on a graph without signatures: its
// inputs (keys without a ":0") and default fetches, the outputs' dtypes and shapes from one run
// at batch size 1 (dim 0 left open where the inputs' is).
absl::StatusOr<tensorflow::serving::SignatureDefMap> SignatureOf(Session& session) {
  auto key_of = [](const std::string& name) {
    return absl::EndsWith(name, ":0") ? name.substr(0, name.size() - 2) : name;
  };
  tensorflow::SignatureDef def;
  def.set_method_name(kPredictMethod);
  std::vector<std::pair<std::string, Tensor>> feeds;
  bool batched = false;
  for (const InputInfo& in : session.Inputs()) {
    tensorflow::TensorInfo& info = (*def.mutable_inputs())[key_of(in.name)];
    info.set_name(in.tensor);
    info.set_dtype(static_cast<tensorflow::DataType>(DTypeToTfEnum(in.dtype)));
    std::vector<int64_t> dims = in.dims;
    if (in.unknown_rank) {
      info.mutable_tensor_shape()->set_unknown_rank(true);
    } else {
      for (int64_t d : in.dims) info.mutable_tensor_shape()->add_dim()->set_size(d);
    }
    batched = batched || (!dims.empty() && dims[0] < 0);
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    if (DTypeSize(in.dtype) > 0 && !in.unknown_rank)
      feeds.emplace_back(in.tensor, Tensor(in.dtype, dims));
  }
  const std::vector<std::string> fetches = session.DefaultFetches();
  StatusOr<std::vector<Tensor>> out = session.Run(feeds, fetches);
  for (size_t k = 0; k < fetches.size(); ++k) {
    tensorflow::TensorInfo& info = (*def.mutable_outputs())[key_of(fetches[k])];
    info.set_name(fetches[k]);
    if (!out.ok()) continue;  // dtypes unknown: the first request will tell
    const Tensor& t = (*out)[k];
    info.set_dtype(static_cast<tensorflow::DataType>(DTypeToTfEnum(t.dtype())));
    for (int d = 0; d < t.rank(); ++d) {
      info.mutable_tensor_shape()->add_dim()->set_size(d == 0 && batched ? -1 : t.dim(d));
    }
  }
  tensorflow::serving::SignatureDefMap map;
  (*map.mutable_signature_def())["serving_default"] = std::move(def);
  return map;
}

// Whether requests to `def` can be batched: a predict, classify or regress signature whose
// inputs and outputs are numbers or strings, each with dim 0 unknown (the batch) or of unknown
// rank.
bool Batchable(const tensorflow::SignatureDef& def) {
  if ((def.method_name() != kPredictMethod && def.method_name() != kClassifyMethod &&
       def.method_name() != kRegressMethod) ||
      def.inputs().empty()) {
    return false;
  }
  for (const auto* map : {&def.inputs(), &def.outputs()}) {
    for (const auto& [key, info] : *map) {
      std::optional<DType> dtype = DTypeFromTfEnum(info.dtype());
      if (!dtype.has_value() || (DTypeSize(*dtype) == 0 && *dtype != DType::kString)) {
        return false;
      }
      // A known shape must leave dim 0 open; an unknown rank is checked per request.
      const tensorflow::TensorShapeProto& shape = info.tensor_shape();
      // (A TensorInfo without a shape has an unknown one.)
      if (info.has_tensor_shape() && !shape.unknown_rank() &&
          (shape.dim_size() < 1 || shape.dim(0).size() >= 0)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<ModelSource>> SourcesFromConfig(
    const tensorflow::serving::ModelServerConfig& config) {
  if (!config.has_model_config_list()) {
    return InvalidArgument(
        "the model config file has no model_config_list (a custom_model_config "
        "is not supported)");
  }
  std::vector<ModelSource> out;
  std::set<std::string> names;
  for (const tensorflow::serving::ModelConfig& c : config.model_config_list().config()) {
    if (!names.insert(c.name()).second) {
      return InvalidArgument("Illegal to list model %s multiple times in config list", c.name());
    }
    if (!fs::path(c.base_path()).is_absolute()) {
      return InvalidArgument(
          "Expected model %s to have an absolute path or URI; got base_path()=%s", c.name(),
          c.base_path());
    }
    if (c.model_platform().empty() && c.model_type() != tensorflow::serving::TENSORFLOW) {
      return InvalidArgument(
          "Illegal setting neither ModelServerConfig::model_type (deprecated) nor "
          "ModelServerConfig::model_platform, model name is %s",
          c.name());
    }
    if (!c.model_platform().empty() && c.model_platform() != "tensorflow") {
      return InvalidArgument("PlatformConfigMap has no entry for platform %s", c.model_platform());
    }
    ModelSource s;
    s.name = c.name();
    s.base_path = c.base_path();
    const auto& p = c.model_version_policy();
    if (p.has_all()) {
      s.policy.kind = VersionPolicy::Kind::kAll;
    } else if (p.has_specific()) {
      s.policy.kind = VersionPolicy::Kind::kSpecific;
      s.policy.versions.assign(p.specific().versions().begin(), p.specific().versions().end());
    } else if (p.has_latest()) {
      s.policy.num_versions = std::max<int64_t>(1, p.latest().num_versions());
    }
    for (const auto& [label, version] : c.version_labels()) s.labels[label] = version;
    out.push_back(std::move(s));
  }
  return out;
}

std::map<int64_t, std::string> ScanVersions(const std::string& base_path) {
  std::map<int64_t, std::string> out;
  std::error_code error;
  for (fs::directory_iterator it(base_path, error), end; !error && it != end; it.increment(error)) {
    int64_t version = 0;
    if (absl::SimpleAtoi(it->path().filename().string(), &version)) {
      out.emplace(version, it->path().string());
    }
  }
  return out;
}

std::vector<int64_t> SelectVersions(const VersionPolicy& policy,
                                    const std::map<int64_t, std::string>& available) {
  std::vector<int64_t> out;
  switch (policy.kind) {
    case VersionPolicy::Kind::kAll:
      for (const auto& [v, path] : available) out.push_back(v);
      break;
    case VersionPolicy::Kind::kSpecific:
      for (int64_t v : policy.versions) {
        if (available.count(v) > 0) out.push_back(v);
      }
      break;
    case VersionPolicy::Kind::kLatest:
      for (auto it = available.rbegin();
           it != available.rend() && static_cast<int64_t>(out.size()) < policy.num_versions; ++it) {
        out.push_back(it->first);
      }
      break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<std::shared_ptr<ServedVersion>> ModelManager::Load(const ModelSource& source,
                                                                  int64_t version,
                                                                  const std::string& path) const {
  auto v = std::make_shared<ServedVersion>();
  v->model = source.name;
  v->version = version;
  v->path = path;
  std::error_code exists_error;
  if (fs::exists(fs::path(path) / "saved_model.pb", exists_error)) {
    TFJIT_ASSIGN_OR_RETURN(v->signatures, ReadSignatures(path, *v));
    StatusOr<std::unique_ptr<Session>> session = Session::Load(path, options_);
    if (!session.ok()) return session.status();
    v->session = std::move(*session);
  } else {
    // Beyond TF Serving: a version folder holding a GraphDef or a TF.js graph model.
    TFJIT_ASSIGN_OR_RETURN(const std::string file, GraphFileIn(path));
    StatusOr<std::unique_ptr<Session>> session = Session::Load(file, options_);
    if (!session.ok()) return session.status();
    v->session = std::move(*session);
    TFJIT_ASSIGN_OR_RETURN(v->signatures, SignatureOf(*v->session));
  }
  std::vector<int64_t> sizes = {1, 2};
  if (batching_.has_value()) {
    for (int64_t b : batching_->allowed_batch_sizes) {
      if (b > 2) sizes.push_back(b);
    }
  }
  WarmUp(*v, sizes);
  if (batching_.has_value()) {
    for (const auto& [key, def] : v->signatures.signature_def()) {
      if (Batchable(def)) {
        v->batchers[key] =
            std::make_unique<SignatureBatcher>(source.name, *v->session, def, *batching_);
      }
    }
  }
  return v;
}

absl::Status ModelManager::Sync(const ModelSource& source, bool initial) {
  std::error_code error;
  if (!fs::is_directory(source.base_path, error)) {
    const absl::Status missing = InvalidArgument("Could not find base path %s for servable %s",
                                                 source.base_path, source.name);
    if (initial) return missing;
    Log(LogLevel::kWarning, "tfjit serve: %s", missing.message());
    return absl::OkStatus();
  }
  const std::map<int64_t, std::string> available = ScanVersions(source.base_path);
  if (available.empty()) {
    Log(LogLevel::kWarning,
        "tfjit serve: No versions of servable %s found under base path %s. Did you forget to "
        "name your leaf directory as a number (eg. '/1/')?",
        source.name, source.base_path);
  }
  const std::vector<int64_t> wanted = SelectVersions(source.policy, available);
  // Load what is new first (outside the lock: loading and warming up take time), then make
  // it available and drop what the policy no longer selects.
  for (int64_t v : wanted) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Model& m = models_[source.name];
      auto it = m.versions.find(v);
      if (it != m.versions.end()) {
        const VersionEntry& e = it->second;
        if (e.state == ModelVersionStatus::AVAILABLE || e.state == ModelVersionStatus::LOADING) {
          continue;
        }
        // A failed load is tried again (a folder still being copied), at most kMaxLoadTries
        // times, waiting 1, 2, 4, ... seconds between tries.
        if (!e.status.ok() &&
            (e.failures >= kMaxLoadTries ||
             std::chrono::steady_clock::now() <
                 e.failed_at + std::chrono::seconds(int64_t{1} << (e.failures - 1)))) {
          continue;
        }
      }
      m.versions[v].state = ModelVersionStatus::LOADING;
    }
    Log(LogLevel::kInfo, "tfjit serve: Loading servable version {name: %s version: %d}",
        source.name, v);
    absl::StatusOr<std::shared_ptr<ServedVersion>> loaded = Load(source, v, available.at(v));
    std::lock_guard<std::mutex> lock(mu_);
    VersionEntry& e = models_[source.name].versions[v];
    if (loaded.ok()) {
      e.state = ModelVersionStatus::AVAILABLE;
      e.status = absl::OkStatus();
      e.served = std::move(*loaded);
      Log(LogLevel::kInfo,
          "tfjit serve: Successfully loaded servable version {name: %s version: %d}", source.name,
          v);
    } else {
      e.state = ModelVersionStatus::END;
      e.status = loaded.status();
      e.failures += 1;
      e.failed_at = std::chrono::steady_clock::now();
      Log(LogLevel::kWarning,
          "tfjit serve: loading servable version {name: %s version: %d} failed: %s", source.name, v,
          loaded.status().message());
    }
  }
  // Versions leave only once one the policy wants serves (a new version that failed to load
  // leaves the old one serving), and are destroyed outside the lock (their batching queues
  // drain first).
  std::vector<std::shared_ptr<const ServedVersion>> unloaded;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Model& m = models_[source.name];
    bool wanted_serves = false;
    for (int64_t v : wanted) {
      auto it = m.versions.find(v);
      wanted_serves = wanted_serves ||
                      (it != m.versions.end() && it->second.state == ModelVersionStatus::AVAILABLE);
    }
    for (auto& [v, e] : m.versions) {
      if (!wanted_serves || e.state != ModelVersionStatus::AVAILABLE) continue;
      if (std::find(wanted.begin(), wanted.end(), v) != wanted.end()) continue;
      // Requests that hold the version finish on it; it goes with their last reference.
      e.state = ModelVersionStatus::END;
      unloaded.push_back(std::move(e.served));
      Log(LogLevel::kInfo, "tfjit serve: Unloaded servable version {name: %s version: %d}",
          source.name, v);
    }
  }
  unloaded.clear();
  return absl::OkStatus();
}

absl::Status ModelManager::Configure(std::vector<ModelSource> sources) {
  std::lock_guard<std::mutex> syncing(sync_mu_);
  // A config naming a base path that does not exist changes nothing.
  for (const ModelSource& s : sources) {
    std::error_code error;
    if (!fs::is_directory(s.base_path, error)) {
      return InvalidArgument("Could not find base path %s for servable %s", s.base_path, s.name);
    }
  }
  std::map<std::string, Model> dropped;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<std::string, Model> kept;
    for (ModelSource& s : sources) {
      Model& m = kept[s.name];
      auto old = models_.find(s.name);
      // A model that stays at its base path keeps its loaded versions (no reload, no gap).
      if (old != models_.end() && old->second.source.base_path == s.base_path) {
        m.versions = std::move(old->second.versions);
      }
      m.source = s;
    }
    std::swap(models_, kept);
    dropped = std::move(kept);
  }
  for (const ModelSource& s : sources) TFJIT_RETURN_IF_ERROR(Sync(s, /*initial=*/true));
  return absl::OkStatus();
}

void ModelManager::Poll() {
  std::lock_guard<std::mutex> syncing(sync_mu_);
  std::vector<ModelSource> sources;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, m] : models_) sources.push_back(m.source);
  }
  for (const ModelSource& s : sources) {
    // A file system that changes while it is read (a folder removed mid-scan) must not end
    // the server.
    try {
      (void)Sync(s, /*initial=*/false);
    } catch (const std::exception& e) {
      Log(LogLevel::kWarning, "tfjit serve: polling %s failed: %s", s.base_path, e.what());
    }
  }
}

absl::StatusOr<std::shared_ptr<const ServedVersion>> ModelManager::Find(
    const std::string& model, std::optional<int64_t> version, const std::string& label) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto m = models_.find(model);
  if (!label.empty()) {
    if (m == models_.end() || m->second.source.labels.count(label) == 0) {
      return InvalidArgument("Unrecognized servable version label: %s", label);
    }
    version = m->second.source.labels.at(label);
  }
  if (m != models_.end()) {
    if (version.has_value()) {
      auto it = m->second.versions.find(*version);
      if (it != m->second.versions.end() && it->second.served != nullptr) return it->second.served;
    } else {
      for (auto it = m->second.versions.rbegin(); it != m->second.versions.rend(); ++it) {
        if (it->second.served != nullptr) return it->second.served;
      }
    }
  }
  if (version.has_value()) {
    return NotFound("Servable not found for request: Specific(%s, %d)", model, *version);
  }
  return NotFound("Servable not found for request: Latest(%s)", model);
}

absl::StatusOr<tensorflow::serving::GetModelStatusResponse> ModelManager::Status(
    const std::string& model, std::optional<int64_t> version) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto m = models_.find(model);
  if (m == models_.end() || m->second.versions.empty()) {
    return NotFound("Could not find any versions of model %s", model);
  }
  tensorflow::serving::GetModelStatusResponse out;
  for (auto it = m->second.versions.rbegin(); it != m->second.versions.rend(); ++it) {
    if (version.has_value() && it->first != *version) continue;
    ModelVersionStatus* s = out.add_model_version_status();
    s->set_version(it->first);
    s->set_state(it->second.state);
    s->mutable_status()->set_error_code(
        static_cast<tensorflow::error::Code>(static_cast<int>(it->second.status.code())));
    s->mutable_status()->set_error_message(std::string(it->second.status.message()));
  }
  if (out.model_version_status_size() == 0) {
    return NotFound("Could not find version %d of model %s", *version, model);
  }
  return out;
}

std::vector<std::string> ModelManager::ModelNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, m] : models_) out.push_back(name);
  return out;
}

}  // namespace tfjit::serving
