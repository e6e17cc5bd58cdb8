// The server's Prometheus metrics, under TF Serving's names and labels (its metric paths with
// every character outside [a-zA-Z0-9_] written ':', so `/tensorflow/serving/request_count` is
// `:tensorflow:serving:request_count`) and its page format (a `# TYPE` line per metric, then
// its samples; histograms as cumulative `_bucket{le=...}`, `_sum` and `_count`), plus tfjit's
// own compile counters, so that dashboards built for TF Serving keep working:
//   :tensorflow:serving:request_count{model_name,status}          counter
//   :tensorflow:serving:request_latency{model_name,API,entrypoint} histogram, microseconds
//   :tensorflow:serving:runtime_latency{model_name,API,runtime}    histogram, microseconds
//   :tensorflow:serving:batching_session:input_batch_size          histogram (a request's rows)
//   :tensorflow:serving:batching_session:processed_batch_size      histogram (a run's rows)
//   :tensorflow:serving:batching_session:padding_size{execution_batch_size} histogram
//   :tensorflow:serving:batching_session:queuing_latency{thread_pool_name}  histogram, us
//   :tensorflow:serving:batching_session:wrapped_run_count         counter
//   :tfjit:serving:compile_count{model_name}                       counter (clusters compiled
//                                                                  by requests, after warm-up)
//   :tfjit:serving:compile_ms{model_name}                          counter
#ifndef TFJIT_SERVING_METRICS_H_
#define TFJIT_SERVING_METRICS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tfjit::serving {

class Metrics {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;
  // The most label sets one metric keeps; samples with new labels past it are recorded under
  // the same keys with the value "_overflow".
  static constexpr size_t kMaxSeries = 10000;

  void Add(const std::string& counter, const Labels& labels, int64_t value = 1);
  // Records `value` in histogram `name`, whose bucket limits `limits` are fixed by its first
  // use.
  void Observe(const std::string& name, const Labels& labels, double value,
               const std::vector<double>& limits);
  // The value of a counter (tests).
  int64_t Counter(const std::string& counter, const Labels& labels) const;
  // The number of observations of a histogram (tests).
  int64_t Count(const std::string& histogram, const Labels& labels) const;

  // The Prometheus text page.
  std::string Page() const;

  // TF Serving's buckets: latencies exponential(10, 1.8, 33) us; batch sizes
  // exponential(1, 2, 14); queuing latency exponential(100, 1.2, 52) us.
  static const std::vector<double>& LatencyBuckets();
  static const std::vector<double>& BatchSizeBuckets();
  static const std::vector<double>& QueuingBuckets();

 private:
  struct Histogram {
    std::vector<double> limits;
    std::vector<int64_t> counts;  // per bucket (not cumulative); one more for +Inf
    double sum = 0;
    int64_t count = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, std::map<Labels, int64_t>> counters_;
  std::map<std::string, std::map<Labels, Histogram>> histograms_;
};

// The process's metrics (TF Serving's are process-wide too).
Metrics& ServingMetrics();

// TF Serving's metric path as a Prometheus name: every character outside [a-zA-Z0-9_] is ':'.
std::string PrometheusName(const std::string& path);

}  // namespace tfjit::serving

#endif  // TFJIT_SERVING_METRICS_H_
