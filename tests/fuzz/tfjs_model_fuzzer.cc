// Fuzz target: a TF.js graph model (model.json + weight shards) through LoadTfjsModel and the
// decoding of every Const. The input is a multi-file container (fuzz_util.h): the first part
// is written as model.json, the others under their own names (the shards the manifest names).
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/tfjs_model.h"
#include "tests/fuzz/fuzz_frontend.h"
#include "tests/fuzz/fuzz_util.h"

[[maybe_unused]] static const bool kLimits = tfjit::fuzz::LowerLoaderLimits();

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tfjit::fuzz::ScratchDir dir("tfjs_model");
  const std::vector<tfjit::fuzz::FuzzFile> files = tfjit::fuzz::SplitFiles(
      std::string_view(reinterpret_cast<const char*>(data), size), /*max_files=*/8);
  if (files.empty()) return 0;
  dir.Reset();
  for (size_t i = 0; i < files.size(); ++i) {
    if (!dir.Write(i == 0 ? "model.json" : files[i].name, files[i].bytes)) return 0;
  }
  absl::StatusOr<tfjit::tf::LoadedModel> model =
      tfjit::tf::LoadTfjsModel((dir.path() / "model.json").string());
  if (model.ok()) tfjit::fuzz::DecodeConsts(*model->graph);
  return 0;
}
