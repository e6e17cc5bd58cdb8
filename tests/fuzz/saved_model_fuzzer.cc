// Fuzz target: a SavedModel folder (saved_model.pb or .pbtxt, variables/variables.index and
// its data shards) through LoadSavedModel, which also reads every variable from the checkpoint
// bundle. The input is a multi-file container (fuzz_util.h) of named files.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/saved_model.h"
#include "frontend/tensor_bundle.h"
#include "tests/fuzz/fuzz_frontend.h"
#include "tests/fuzz/fuzz_util.h"

[[maybe_unused]] static const bool kLimits = tfjit::fuzz::LowerLoaderLimits();

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tfjit::fuzz::ScratchDir dir("saved_model");
  const std::vector<tfjit::fuzz::FuzzFile> files = tfjit::fuzz::SplitFiles(
      std::string_view(reinterpret_cast<const char*>(data), size), /*max_files=*/8);
  if (files.empty()) return 0;
  dir.Reset();
  for (const tfjit::fuzz::FuzzFile& file : files) {
    if (!dir.Write(file.name, file.bytes)) return 0;
  }
  absl::StatusOr<tfjit::tf::LoadedModel> model =
      tfjit::tf::LoadSavedModel(dir.path().string(), tfjit::tf::ModelLoadOptions{});
  if (model.ok()) tfjit::fuzz::DecodeConsts(*model->graph);
  // The bundle reader on its own: every key, numeric or string, whatever the graph uses.
  absl::StatusOr<std::unique_ptr<tfjit::tf::BundleReader>> bundle =
      tfjit::tf::BundleReader::Open((dir.path() / "variables" / "variables").string());
  if (bundle.ok()) {
    for (const std::string& key : (*bundle)->ListKeys()) {
      (void)(*bundle)->Lookup(key);
      (void)(*bundle)->LookupStrings(key);
    }
  }
  return 0;
}
