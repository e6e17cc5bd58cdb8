// SavedModel loader (see saved_model.h; shared/docs/formats.md 1.11-1.13 and 2).
//
// The MetaGraphDef's graph holds much tfjit cannot run and never needs for inference: the
// Saver's subgraph (SaveV2, RestoreV2, StringJoin, ...), tf.Example parsing, asset-path
// string variables. So the GraphDef is pruned to what the signatures, the variables and a
// runnable init op need before Graph::Build; variables are restored by assigning the checkpoint
// values through added Placeholder -> Assign/AssignVariableOp nodes, one InitRun for all.
#include "frontend/saved_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/logging.h"
#include "core/status.h"
#include "frontend/proto/saved_model.pb.h"
#include "frontend/saved_model_internal.h"
#include "frontend/tensor_bundle.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace tfjit::tf {
namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

class TextErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first.empty()) first = absl::StrCat("line ", line + 1, ":", column + 1, ": ", message);
  }
  std::string first;
};

// Reads saved_model.pb (binary) or saved_model.pbtxt (text) from `dir`.
absl::StatusOr<tensorflow::SavedModel> ReadSavedModelProto(const std::string& dir,
                                                           std::string* path) {
  const std::string pb = absl::StrCat(dir, "/saved_model.pb");
  const std::string pbtxt = absl::StrCat(dir, "/saved_model.pbtxt");
  const bool text = !FileExists(pb) && FileExists(pbtxt);
  *path = text ? pbtxt : pb;
  if (!text && !FileExists(pb)) {
    if (FileExists(absl::StrCat(dir, "/saved_model.cpb"))) {
      return Unimplemented(
          "SavedModel '%s' is chunked (saved_model.cpb, written for models "
          "over 2 GiB); tfjit reads saved_model.pb / saved_model.pbtxt only",
          dir);
    }
    return NotFound("SavedModel '%s': no saved_model.pb or saved_model.pbtxt in the directory",
                    dir);
  }
  std::ifstream in(*path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (!in) return InvalidArgument("file '%s': cannot read", *path);
  const std::string bytes = buffer.str();
  tensorflow::SavedModel model;
  if (text) {
    google::protobuf::TextFormat::Parser parser;
    TextErrors errors;
    parser.RecordErrorsTo(&errors);
    // Our schema is a subset: fields we never read (and Any payloads) are skipped.
    parser.AllowUnknownField(true);
    parser.AllowUnknownExtension(true);
    if (!parser.ParseFromString(bytes, &model)) {
      return InvalidArgument("file '%s': not a text SavedModel: %s", *path, errors.first);
    }
  } else if (!model.ParseFromString(bytes)) {
    return InvalidArgument(
        "file '%s': not a SavedModel: the binary proto does not parse (%d "
        "bytes; truncated or corrupt?)",
        *path, bytes.size());
  }
  if (model.meta_graphs_size() == 0) {
    return InvalidArgument(
        "file '%s': the SavedModel has no MetaGraphDef (%d bytes; truncated "
        "or corrupt?)",
        *path, bytes.size());
  }
  return model;
}

std::string TagSetString(const tensorflow::MetaGraphDef& mg) {
  std::vector<std::string> tags(mg.meta_info_def().tags().begin(), mg.meta_info_def().tags().end());
  std::sort(tags.begin(), tags.end());
  return absl::StrCat("[", absl::StrJoin(tags, ", "), "]");
}

absl::StatusOr<const tensorflow::MetaGraphDef*> SelectMetaGraph(
    const tensorflow::SavedModel& model, const std::vector<std::string>& tags,
    const std::string& path) {
  for (const tensorflow::MetaGraphDef& mg : model.meta_graphs()) {
    const auto& have = mg.meta_info_def().tags();
    bool all = true;
    for (const std::string& t : tags) {
      all = all && std::find(have.begin(), have.end(), t) != have.end();
    }
    if (all) return &mg;
  }
  std::vector<std::string> sets;
  for (const tensorflow::MetaGraphDef& mg : model.meta_graphs()) sets.push_back(TagSetString(mg));
  return NotFound(
      "SavedModel '%s': no MetaGraphDef has the tags [%s]; its tag sets are %s "
      "(choose one with --tags)",
      path, absl::StrJoin(tags, ", "), absl::StrJoin(sets, ", "));
}

absl::StatusOr<TensorSpec> SpecFromInfo(const std::string& key,
                                        const tensorflow::TensorInfo& info) {
  if (info.encoding_case() != tensorflow::TensorInfo::kName) {
    return Unimplemented(
        "'%s' is a sparse or composite tensor; tfjit supports dense signature "
        "tensors only",
        key);
  }
  TensorSpec spec;
  spec.key = key;
  spec.tensor = info.name();
  spec.dtype = DTypeFromTfEnum(info.dtype()).value_or(DType::kInvalid);
  if (info.has_tensor_shape()) {
    absl::StatusOr<PartialShape> shape = PartialShapeFromProto(info.tensor_shape());
    if (!shape.ok()) return WithContext(shape.status(), absl::StrCat("'", key, "'"));
    spec.shape = *shape;
  } else {
    spec.shape.unknown_rank = true;
  }
  return spec;
}

// Signatures sorted by name; the init-op pseudo signature is not one users can run.
absl::StatusOr<std::vector<Signature>> ReadSignatures(const tensorflow::MetaGraphDef& mg,
                                                      const std::string& path) {
  std::vector<Signature> out;
  for (const auto& [name, def] : mg.signature_def()) {
    if (name == kInitOpSignatureKey) continue;
    Signature sig;
    sig.name = name;
    sig.method_name = def.method_name();
    auto add = [&](const auto& map, std::vector<TensorSpec>* specs) -> absl::Status {
      for (const auto& [key, info] : map) {
        absl::StatusOr<TensorSpec> spec = SpecFromInfo(key, info);
        if (!spec.ok()) {
          return WithContext(spec.status(),
                             absl::StrCat("file '", path, "': signature '", name, "'"));
        }
        specs->push_back(*std::move(spec));
      }
      std::sort(specs->begin(), specs->end(),
                [](const TensorSpec& a, const TensorSpec& b) { return a.key < b.key; });
      return absl::OkStatus();
    };
    absl::Status st = add(def.inputs(), &sig.inputs);
    if (st.ok()) st = add(def.outputs(), &sig.outputs);
    if (!st.ok()) {
      // One unusable signature (sparse inputs) should not make the others unloadable.
      Log(LogLevel::kWarning, "%s; the signature is left out", st.message());
      continue;
    }
    out.push_back(std::move(sig));
  }
  std::sort(out.begin(), out.end(),
            [](const Signature& a, const Signature& b) { return a.name < b.name; });
  return out;
}

// The main op's node name: collection saved_model_main_op / legacy_init_op, else the init-op
// signature. Empty when the model has none.
std::string InitOpName(const tensorflow::MetaGraphDef& mg) {
  for (const char* key : {"saved_model_main_op", "legacy_init_op"}) {
    auto it = mg.collection_def().find(key);
    if (it != mg.collection_def().end() && it->second.has_node_list() &&
        it->second.node_list().value_size() > 0) {
      return NodeNameOf(it->second.node_list().value(0));
    }
  }
  auto it = mg.signature_def().find(kInitOpSignatureKey);
  if (it != mg.signature_def().end()) {
    for (const auto& [key, info] : it->second.outputs()) {
      if (!info.name().empty()) return NodeNameOf(info.name());
    }
  }
  return "";
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

// TF Serving's layout: a base directory holding numbered versions (base/1, base/00000123).
// Given such a base (no saved_model file of its own), the highest version is used, as TF
// Serving serves it; anything else is returned unchanged.
std::string ResolveVersionDir(const std::string& dir) {
  if (FileExists(absl::StrCat(dir, "/saved_model.pb")) ||
      FileExists(absl::StrCat(dir, "/saved_model.pbtxt"))) {
    return dir;
  }
  std::error_code ec;
  int64_t best = -1;
  std::string best_path;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    int64_t version = 0;
    if (!entry.is_directory(ec) || !absl::SimpleAtoi(name, &version) || version < 0) continue;
    const std::string candidate = entry.path().string();
    if (!FileExists(absl::StrCat(candidate, "/saved_model.pb")) &&
        !FileExists(absl::StrCat(candidate, "/saved_model.pbtxt"))) {
      continue;
    }
    if (version > best) {
      best = version;
      best_path = candidate;
    }
  }
  if (best < 0) return dir;
  Log(LogLevel::kInfo, "SavedModel '%s' holds numbered versions; using the highest, '%s'", dir,
      best_path);
  return best_path;
}

absl::StatusOr<LoadedModel> LoadSavedModel(const std::string& given,
                                           const ModelLoadOptions& options) {
  if (!IsDirectory(given)) return NotFound("SavedModel '%s': not a directory", given);
  const std::string dir = ResolveVersionDir(given);
  std::string path;
  TFJIT_ASSIGN_OR_RETURN(tensorflow::SavedModel model, ReadSavedModelProto(dir, &path));
  TFJIT_ASSIGN_OR_RETURN(const tensorflow::MetaGraphDef* mg,
                         SelectMetaGraph(model, options.tags, path));

  LoadedModel loaded;
  loaded.format = "saved_model";
  loaded.path = dir;
  TFJIT_ASSIGN_OR_RETURN(loaded.signatures, ReadSignatures(*mg, path));

  // What the graph must keep: signature tensors, variables, and the init op if it can run.
  PruneRoots roots;
  for (const Signature& sig : loaded.signatures) {
    for (const TensorSpec& s : sig.inputs) roots.signature_inputs.emplace(NodeNameOf(s.tensor), s);
    for (const TensorSpec& s : sig.outputs) roots.nodes.push_back(NodeNameOf(s.tensor));
  }
  const std::string init_op = InitOpName(*mg);
  std::string init_skip_reason;
  if (!init_op.empty()) {
    init_skip_reason = WhyNotRunnable(mg->graph_def(), init_op);
    if (init_skip_reason.empty()) roots.nodes.push_back(init_op);
  }
  std::vector<VariableNode> variables = FindVariables(mg->graph_def());
  for (const VariableNode& v : variables) roots.nodes.push_back(v.name);

  TFJIT_ASSIGN_OR_RETURN(tensorflow::GraphDef graph_def, PruneGraphDef(mg->graph_def(), roots));

  // Restore: one Placeholder + assign per variable, fed from the bundle in one run.
  InitRun restore;
  const std::string prefix = absl::StrCat(dir, "/variables/variables");
  if (!variables.empty()) {
    if (!FileExists(absl::StrCat(prefix, ".index"))) {
      std::vector<std::string> names;
      for (const VariableNode& v : variables) names.push_back(v.name);
      return NotFound(
          "SavedModel '%s' has %d variable(s) (%s) but no checkpoint: '%s.index' "
          "is missing; the variables/ directory must be copied with the model",
          dir, variables.size(), absl::StrJoin(names, ", "), prefix);
    }
    TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> bundle, BundleReader::Open(prefix));
    TFJIT_ASSIGN_OR_RETURN(auto keys, CheckpointKeys(*mg, variables, *bundle));
    restore.what = absl::StrCat("restore variables from '", prefix, "'");
    loaded.checkpoint.prefix = prefix;
    for (const VariableNode& v : variables) {
      const std::string& key = keys.at(v.name);
      absl::StatusOr<Tensor> value = bundle->Lookup(key);
      if (!value.ok()) {
        return WithContext(value.status(),
                           absl::StrCat("SavedModel '", dir, "': variable '", v.name, "'"));
      }
      if (value->dtype() != v.dtype) {
        return InvalidArgument(
            "SavedModel '%s': variable '%s' is %s but its checkpoint value "
            "'%s' is %s",
            dir, v.name, DTypeName(v.dtype), key, value->ShapeString());
      }
      const std::string placeholder = AddRestoreNodes(v, value->dims(), &graph_def);
      restore.feeds.emplace_back(absl::StrCat(placeholder, ":0"), *std::move(value));
      restore.targets.push_back(absl::StrCat(placeholder, "/assign"));
      loaded.checkpoint.keys_and_tensors.emplace_back(key, absl::StrCat(placeholder, "/read:0"));
    }
  }
  TFJIT_ASSIGN_OR_RETURN(loaded.graph, Graph::Build(graph_def, path));
  if (!restore.targets.empty()) loaded.init.push_back(std::move(restore));
  if (!init_op.empty()) {
    if (init_skip_reason.empty()) {
      loaded.init.push_back(
          {absl::StrCat("run the SavedModel's init op '", init_op, "'"), {}, {init_op}});
    } else {
      Log(LogLevel::kWarning, "SavedModel '%s': skipping its init op '%s': %s", dir, init_op,
          init_skip_reason);
    }
  }
  return loaded;
}

}  // namespace tfjit::tf
