// ClusterShapes (shape_policy.h).
#include "runtime/shape_policy.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

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

void ClusterShapes::MarkServed(const std::string& class_key, int64_t bucket) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bucket > 0) {
    buckets_.insert(bucket);
    return;
  }
  for (Class& c : classes_) {
    if (c.key == class_key) c.served_symbolic = true;
  }
}

std::shared_ptr<const hlo::RowAnalysis> ClusterShapes::RowsOf(const std::string& class_key) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Class& c : classes_) {
    if (c.key == class_key) return c.rows;
  }
  return nullptr;
}

void ClusterShapes::SetRows(const std::string& class_key, hlo::RowAnalysis rows) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Class& c : classes_) {
    if (c.key == class_key && c.rows == nullptr) {
      c.rows = std::make_shared<const hlo::RowAnalysis>(std::move(rows));
    }
  }
}

std::string ClusterShapes::Summary() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> parts;
  if (!static_.empty()) parts.push_back(absl::StrCat("static x", static_.size()));
  int symbolic = 0;
  for (const Class& c : classes_) symbolic += c.failed || !c.served_symbolic ? 0 : 1;
  if (symbolic > 0) {
    parts.push_back(absl::StrCat("symbolic (batch >= ", kMinSymbolicBatch, ") x", symbolic));
  }
  if (!buckets_.empty()) {
    parts.push_back(absl::StrCat("bucket", buckets_.size() > 1 ? "s " : " ",
                                 absl::StrJoin(buckets_, ", "), " (padded)"));
  }
  std::string out = absl::StrJoin(parts, ", ");
  for (const Class& c : classes_) {
    if (c.failed) absl::StrAppend(&out, "\n  not symbolic", c.key, ": ", c.reason);
    if (c.rows != nullptr && !c.rows->independent) {
      absl::StrAppend(&out, "\n  no buckets", c.key, ": ", c.rows->reason);
    }
  }
  return out;
}

int64_t BucketFor(const std::vector<int64_t>& buckets, int64_t batch) {
  auto it = std::lower_bound(buckets.begin(), buckets.end(), batch);
  return it == buckets.end() ? 0 : *it;
}

namespace {
std::atomic<PaddingFill> padding_fill{PaddingFill::kRepeatLastRow};
}  // namespace

void SetPaddingForTesting(PaddingFill fill) { padding_fill.store(fill); }

Tensor PadRows(const Tensor& t, int64_t rows) {
  std::vector<int64_t> dims = t.dims();
  const int64_t real = dims[0];
  dims[0] = rows;
  Tensor out = Tensor::Uninitialized(t.dtype(), dims);
  const size_t row_bytes = real > 0 ? t.byte_size() / static_cast<size_t>(real) : 0;
  auto* dst = static_cast<char*>(out.raw_data());
  if (t.byte_size() > 0) std::memcpy(dst, t.raw_data(), t.byte_size());
  const bool nan = padding_fill.load() == PaddingFill::kNaN &&
                   (t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat64);
  for (int64_t r = real; r < rows && row_bytes > 0; ++r) {
    char* row = dst + static_cast<size_t>(r) * row_bytes;
    if (!nan) {
      std::memcpy(row, dst + static_cast<size_t>(real - 1) * row_bytes, row_bytes);
    } else if (t.dtype() == DType::kFloat32) {
      std::fill_n(reinterpret_cast<float*>(row), row_bytes / sizeof(float),
                  std::numeric_limits<float>::quiet_NaN());
    } else {
      std::fill_n(reinterpret_cast<double*>(row), row_bytes / sizeof(double),
                  std::numeric_limits<double>::quiet_NaN());
    }
  }
  return out;
}

Tensor FirstRows(const Tensor& t, int64_t rows) {
  std::vector<int64_t> dims = t.dims();
  const int64_t all = dims[0];
  dims[0] = rows;
  Tensor out = Tensor::Uninitialized(t.dtype(), dims);
  if (out.byte_size() > 0) {
    std::memcpy(out.raw_data(), t.raw_data(),
                t.byte_size() / static_cast<size_t>(all) * static_cast<size_t>(rows));
  }
  return out;
}

}  // namespace tfjit::runtime
