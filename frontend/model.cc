// Format detection and signature selection for LoadedModel (see model.h).
#include "frontend/model.h"

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "frontend/graphdef_loader.h"
#include "frontend/saved_model.h"
#include "frontend/tfjs_model.h"

namespace tfjit::tf {

absl::StatusOr<LoadedModel> LoadModel(const std::string& path, const ModelLoadOptions& options) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return NotFound("model '%s': no such file or directory", path);
  }
  if (S_ISDIR(st.st_mode)) return LoadSavedModel(path, options);
  if (absl::EndsWith(path, ".json")) return LoadTfjsModel(path);
  LoadedModel model;
  model.format = "graphdef";
  model.path = path;
  TFJIT_ASSIGN_OR_RETURN(model.graph, LoadGraphDefFile(path));
  return model;
}

absl::StatusOr<const Signature*> SelectSignature(const LoadedModel& model,
                                                 const std::string& name) {
  auto find = [&](const std::string& n) -> const Signature* {
    for (const Signature& s : model.signatures) {
      if (s.name == n) return &s;
    }
    return nullptr;
  };
  if (!name.empty()) {
    if (const Signature* s = find(name)) return s;
    std::vector<std::string> names;
    for (const Signature& s : model.signatures) names.push_back(s.name);
    return NotFound(
        "model '%s': no signature '%s'; the model has %s", model.path, name,
        names.empty() ? std::string("none") : absl::StrCat("'", absl::StrJoin(names, "', '"), "'"));
  }
  if (const Signature* s = find("serving_default")) return s;
  if (model.signatures.size() == 1) return &model.signatures[0];
  return static_cast<const Signature*>(nullptr);
}

}  // namespace tfjit::tf
