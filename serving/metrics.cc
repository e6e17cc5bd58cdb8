// Metrics (metrics.h).
#include "serving/metrics.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace tfjit::serving {
namespace {

std::vector<double> Exponential(double scale, double growth, int count) {
  std::vector<double> limits;
  double v = scale;
  for (int i = 0; i < count; ++i) {
    limits.push_back(v);
    v *= growth;
  }
  return limits;
}

std::string LabelText(const Metrics::Labels& labels, const std::string& extra = "") {
  std::vector<std::string> parts;
  for (const auto& [k, v] : labels) {
    parts.push_back(absl::StrCat(
        k, "=\"", absl::StrReplaceAll(v, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}}), "\""));
  }
  if (!extra.empty()) parts.push_back(extra);
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

// The labels a sample is recorded under: its own, unless `series` already holds
// kMaxSeries label sets and these are new; then the same keys with the value "_overflow", so
// requests naming ever new models (the model_name label comes from the URL) cannot grow the
// page and the server's memory without bound.
template <typename Series>
Metrics::Labels Bounded(const Series& series, const Metrics::Labels& labels) {
  if (series.size() < Metrics::kMaxSeries || series.count(labels) > 0) return labels;
  Metrics::Labels overflow = labels;
  for (auto& [key, value] : overflow) value = "_overflow";
  return overflow;
}

}  // namespace

std::string PrometheusName(const std::string& path) {
  std::string out = path;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = ':';
  }
  if (!out.empty() && std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

const std::vector<double>& Metrics::LatencyBuckets() {
  static const std::vector<double> b = Exponential(10, 1.8, 33);
  return b;
}
const std::vector<double>& Metrics::BatchSizeBuckets() {
  static const std::vector<double> b = Exponential(1, 2, 14);
  return b;
}
const std::vector<double>& Metrics::QueuingBuckets() {
  static const std::vector<double> b = Exponential(100, 1.2, 52);
  return b;
}

void Metrics::Add(const std::string& counter, const Labels& labels, int64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& series = counters_[counter];
  series[Bounded(series, labels)] += value;
}

void Metrics::Observe(const std::string& name, const Labels& labels, double value,
                      const std::vector<double>& limits) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& series = histograms_[name];
  Histogram& h = series[Bounded(series, labels)];
  if (h.limits.empty()) {
    h.limits = limits;
    h.counts.assign(limits.size() + 1, 0);
  }
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(h.limits.begin(), h.limits.end(), value) - h.limits.begin());
  h.counts[bucket] += 1;
  h.sum += value;
  h.count += 1;
}

int64_t Metrics::Counter(const std::string& counter, const Labels& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto c = counters_.find(counter);
  if (c == counters_.end()) return 0;
  auto v = c->second.find(labels);
  return v == c->second.end() ? 0 : v->second;
}

int64_t Metrics::Count(const std::string& histogram, const Labels& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto h = histograms_.find(histogram);
  if (h == histograms_.end()) return 0;
  auto v = h->second.find(labels);
  return v == h->second.end() ? 0 : v->second.count;
}

std::string Metrics::Page() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [path, series] : counters_) {
    const std::string name = PrometheusName(path);
    absl::StrAppend(&out, "# TYPE ", name, " counter\n");
    for (const auto& [labels, value] : series) {
      absl::StrAppend(&out, name, LabelText(labels), " ", value, "\n");
    }
  }
  for (const auto& [path, series] : histograms_) {
    const std::string name = PrometheusName(path);
    absl::StrAppend(&out, "# TYPE ", name, " histogram\n");
    for (const auto& [labels, h] : series) {
      int64_t cumulative = 0;
      for (size_t i = 0; i < h.limits.size(); ++i) {
        cumulative += h.counts[i];
        absl::StrAppend(&out, name, "_bucket",
                        LabelText(labels, absl::StrCat("le=\"", h.limits[i], "\"")), " ",
                        cumulative, "\n");
      }
      absl::StrAppend(&out, name, "_bucket", LabelText(labels, "le=\"+Inf\""), " ", h.count, "\n");
      absl::StrAppend(&out, name, "_sum", LabelText(labels), " ", h.sum, "\n");
      absl::StrAppend(&out, name, "_count", LabelText(labels), " ", h.count, "\n");
    }
  }
  return out;
}

Metrics& ServingMetrics() {
  static Metrics* metrics = new Metrics();
  return *metrics;
}

}  // namespace tfjit::serving
