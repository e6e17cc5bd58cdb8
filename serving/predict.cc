// InputSpecs and RunSignature (predict.h).
#include "serving/predict.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/status.h"
#include "serving/metrics.h"

namespace tfjit::serving {

void RecordRun(const std::string& model, const tensorflow::SignatureDef& def, const RunStats& stats,
               std::chrono::steady_clock::time_point start) {
  const std::string& method = def.method_name();
  const char* api = method == "tensorflow/serving/classify"  ? "Classify"
                    : method == "tensorflow/serving/regress" ? "Regress"
                                                             : "Predict";
  Metrics& metrics = ServingMetrics();
  metrics.Observe(
      "/tensorflow/serving/runtime_latency",
      {{"model_name", model}, {"API", api}, {"runtime", "tfjit"}},
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count(),
      Metrics::LatencyBuckets());
  if (!stats.compiles.empty()) {
    metrics.Add("/tfjit/serving/compile_count", {{"model_name", model}},
                static_cast<int64_t>(stats.compiles.size()));
    metrics.Add("/tfjit/serving/compile_ms", {{"model_name", model}},
                static_cast<int64_t>(stats.compile_ms));
  }
}

absl::StatusOr<std::vector<TensorSpec>> InputSpecs(const tensorflow::SignatureDef& def,
                                                   const std::string& signature) {
  std::vector<TensorSpec> specs;
  for (const auto& [key, info] : def.inputs()) {
    std::optional<DType> dtype = DTypeFromTfEnum(info.dtype());
    if (!dtype.has_value()) {
      return Unimplemented("signature %s input %s has a dtype tfjit does not serve (%d)", signature,
                           key, info.dtype());
    }
    specs.push_back({key, *dtype});
  }
  std::sort(specs.begin(), specs.end(),
            [](const TensorSpec& a, const TensorSpec& b) { return a.key < b.key; });
  return specs;
}

absl::StatusOr<NamedTensors> RunSignature(const ServedVersion& v, const std::string& signature,
                                          const tensorflow::SignatureDef& def, NamedTensors inputs,
                                          std::vector<std::string> output_keys,
                                          int64_t timeout_ms) {
  std::set<std::string> sent, expected, extra, missing;
  for (const auto& [key, t] : inputs) sent.insert(key);
  for (const auto& [key, info] : def.inputs()) expected.insert(key);
  for (const std::string& k : sent) {
    if (expected.count(k) == 0) extra.insert(k);
  }
  for (const std::string& k : expected) {
    if (sent.count(k) == 0) missing.insert(k);
  }
  if (!extra.empty() || !missing.empty()) {
    return InvalidArgument(
        "input size does not match signature: %d!=%d len({%s}) != len({%s}). Sent extra: {%s}. "
        "Missing but required: {%s}.",
        sent.size(), expected.size(), absl::StrJoin(sent, ","), absl::StrJoin(expected, ","),
        absl::StrJoin(extra, ","), absl::StrJoin(missing, ","));
  }
  if (output_keys.empty()) {
    for (const auto& [key, info] : def.outputs()) output_keys.push_back(key);
    std::sort(output_keys.begin(), output_keys.end());
  }
  std::set<std::string> seen;
  std::vector<std::string> fetches;
  for (const std::string& key : output_keys) {
    if (!seen.insert(key).second) {
      return InvalidArgument("duplicate output tensor alias: %s", key);
    }
    auto it = def.outputs().find(key);
    if (it == def.outputs().end()) {
      std::vector<std::string> names;
      for (const auto& [k, info] : def.outputs()) names.push_back(k);
      std::sort(names.begin(), names.end());
      return InvalidArgument(
          "output tensor alias not found in signature: %s Outputs expected to be in the set "
          "{%s}.",
          key, absl::StrJoin(names, ","));
    }
    fetches.push_back(it->second.name());
  }
  auto batcher = v.batchers.find(signature);
  if (batcher != v.batchers.end()) {
    // The queue runs every output; the ones asked for are picked from them.
    TFJIT_ASSIGN_OR_RETURN(NamedTensors all, batcher->second->Run(std::move(inputs), timeout_ms));
    NamedTensors result;
    for (const std::string& key : output_keys) {
      for (auto& [k, t] : all) {
        if (k == key) result.emplace_back(k, t);
      }
    }
    return result;
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (auto& [key, t] : inputs) feeds.emplace_back(def.inputs().at(key).name(), std::move(t));
  RunOptions options;
  options.timeout_ms = timeout_ms > 0 ? timeout_ms : -1;
  RunStats stats;
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::vector<Tensor>> out = v.session->Run(options, feeds, fetches, {}, &stats);
  RecordRun(v.model, def, stats, start);
  if (!out.ok()) return out.status();
  NamedTensors result;
  for (size_t k = 0; k < output_keys.size(); ++k) {
    result.emplace_back(output_keys[k], std::move((*out)[k]));
  }
  return result;
}

}  // namespace tfjit::serving
