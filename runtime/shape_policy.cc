// ClusterShapes (shape_policy.h).
#include "runtime/shape_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tfjit::runtime {
namespace {

std::string ClassKey(const std::vector<std::vector<int64_t>>& dims, const std::vector<bool>& mask) {
  std::string key;
  for (size_t i = 0; i < dims.size(); ++i) {
    absl::StrAppend(&key, "|");
    if (mask[i]) {
      std::vector<int64_t> rest(dims[i].begin() + 1, dims[i].end());
      absl::StrAppend(&key, "?b", rest.empty() ? "" : ",", absl::StrJoin(rest, ","));
    } else {
      absl::StrAppend(&key, "[", absl::StrJoin(dims[i], ","), "]");
    }
  }
  return key;
}

// The inputs whose dim 0 differs between `seen` and `dims` when nothing else does, all from
// one size to one other: the batch inputs that tell the two apart. Empty otherwise.
std::vector<bool> ChangedBatch(const std::vector<std::vector<int64_t>>& seen,
                               const std::vector<std::vector<int64_t>>& dims,
                               const std::vector<bool>& eligible) {
  std::vector<bool> mask(dims.size(), false);
  int64_t from = -1, to = -1;
  bool any = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (seen[i].size() != dims[i].size()) return {};
    if (seen[i] == dims[i]) continue;
    if (!eligible[i] || !std::equal(seen[i].begin() + 1, seen[i].end(), dims[i].begin() + 1)) {
      return {};
    }
    if (any && (seen[i][0] != from || dims[i][0] != to)) return {};
    from = seen[i][0];
    to = dims[i][0];
    mask[i] = any = true;
  }
  if (!any) return {};
  return mask;
}

}  // namespace

int64_t ClusterShapes::BatchIn(const Class& c, const std::vector<std::vector<int64_t>>& dims) {
  if (dims.size() != c.dims.size()) return -1;
  int64_t batch = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!c.mask[i]) {
      if (dims[i] != c.dims[i]) return -1;
      continue;
    }
    if (dims[i].size() != c.dims[i].size() ||
        !std::equal(dims[i].begin() + 1, dims[i].end(), c.dims[i].begin() + 1) ||
        (batch >= 0 && dims[i][0] != batch)) {
      return -1;
    }
    batch = dims[i][0];
  }
  return batch;
}

ShapeChoice ClusterShapes::Choose(ShapeMode mode, const std::vector<std::vector<int64_t>>& dims,
                                  const std::vector<bool>& eligible) {
  ShapeChoice choice;
  if (mode == ShapeMode::kStatic) return choice;
  std::lock_guard<std::mutex> lock(mu_);
  ++launches_;
  for (const Class& c : classes_) {
    const int64_t b = BatchIn(c, dims);
    if (b >= kMinSymbolicBatch && !c.failed) {
      choice.kind = ShapeChoice::Kind::kSymbolic;
      choice.batch_inputs = c.mask;
      choice.batch = b;
      choice.class_key = c.key;
      return choice;
    }
  }
  const bool seen = std::find(static_.begin(), static_.end(), dims) != static_.end();
  if (!seen) {
    // A new class: under kSymbolic from the first launch (the batch inputs are those whose
    // dim 0 is the first eligible input's), under kAuto from the second batch size.
    std::vector<bool> mask;
    int64_t b = -1;
    if (mode == ShapeMode::kSymbolic) {
      for (size_t i = 0; i < dims.size(); ++i) {
        if (!eligible[i]) continue;
        if (b < 0) b = dims[i][0];
        if (mask.empty()) mask.assign(dims.size(), false);
        mask[i] = dims[i][0] == b;
      }
    } else {
      for (const auto& s : static_) {
        mask = ChangedBatch(s, dims, eligible);
        if (mask.empty()) continue;
        for (size_t i = 0; i < dims.size(); ++i) {
          if (mask[i]) b = dims[i][0];
        }
        break;
      }
    }
    if (!mask.empty() && b >= kMinSymbolicBatch) {
      const std::string key = ClassKey(dims, mask);
      const bool known = std::any_of(classes_.begin(), classes_.end(),
                                     [&](const Class& c) { return c.key == key; });
      if (!known) {
        classes_.push_back({mask, dims, key, false, ""});
        choice.kind = ShapeChoice::Kind::kSymbolic;
        choice.batch_inputs = mask;
        choice.batch = b;
        choice.class_key = key;
        return choice;
      }
    }
    // TF's brake (device_compilation_profiler.cc): past the cap, a cluster that runs fewer
    // than kMinLaunchesPerCompile times per compile is not compiled again.
    if (mode == ShapeMode::kAuto && static_.size() >= static_cast<size_t>(kMaxStaticShapes) &&
        launches_ < kMinLaunchesPerCompile * static_cast<int64_t>(static_.size())) {
      choice.kind = ShapeChoice::Kind::kTooMany;
      return choice;
    }
    static_.push_back(dims);
  }
  return choice;
}

bool ClusterShapes::MarkFailed(const std::string& class_key, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Class& c : classes_) {
    if (c.key != class_key || c.failed) continue;
    c.failed = true;
    c.reason = reason;
    return true;
  }
  return false;
}

std::string ClusterShapes::Summary() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> parts;
  if (!static_.empty()) parts.push_back(absl::StrCat("static x", static_.size()));
  int symbolic = 0;
  for (const Class& c : classes_) symbolic += c.failed ? 0 : 1;
  if (symbolic > 0) {
    parts.push_back(absl::StrCat("symbolic (batch >= ", kMinSymbolicBatch, ") x", symbolic));
  }
  std::string out = absl::StrJoin(parts, ", ");
  for (const Class& c : classes_) {
    if (c.failed) absl::StrAppend(&out, "\n  not symbolic", c.key, ": ", c.reason);
  }
  return out;
}

}  // namespace tfjit::runtime
