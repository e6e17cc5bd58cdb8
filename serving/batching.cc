// SignatureBatcher (batching.h).
#include "serving/batching.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"
#include "serving/metrics.h"
#include "serving/predict.h"
#include "tfjit/session.h"

namespace tfjit::serving {

struct SignatureBatcher::Task {
  NamedTensors inputs;  // sorted by key
  int64_t rows = 0;
  std::string shape;  // dtypes and dims after dim 0: only tasks alike share a batch
  std::chrono::steady_clock::time_point enqueued;
  std::atomic<bool> cancelled{false};
  std::promise<absl::StatusOr<NamedTensors>> done;
};

absl::StatusOr<BatchingOptions> BatchingFromProto(
    const tensorflow::serving::BatchingParameters& p) {
  BatchingOptions o;
  if (p.has_max_batch_size()) o.max_batch_size = p.max_batch_size().value();
  if (p.has_batch_timeout_micros()) o.batch_timeout_micros = p.batch_timeout_micros().value();
  if (p.has_max_enqueued_batches()) o.max_enqueued_batches = p.max_enqueued_batches().value();
  if (p.has_num_batch_threads()) o.num_batch_threads = p.num_batch_threads().value();
  o.allowed_batch_sizes.assign(p.allowed_batch_sizes().begin(), p.allowed_batch_sizes().end());
  o.pad_variable_length_inputs = p.pad_variable_length_inputs();
  if (o.max_batch_size < 1 || o.max_enqueued_batches < 1 || o.batch_timeout_micros < 0 ||
      o.num_batch_threads < 0) {
    return InvalidArgument(
        "batching parameters: max_batch_size and max_enqueued_batches must be >= 1, "
        "batch_timeout_micros and num_batch_threads >= 0");
  }
  for (size_t i = 0; i < o.allowed_batch_sizes.size(); ++i) {
    if (o.allowed_batch_sizes[i] < 1 ||
        (i > 0 && o.allowed_batch_sizes[i] <= o.allowed_batch_sizes[i - 1])) {
      return InvalidArgument("allowed_batch_sizes entries must be monotonically increasing");
    }
  }
  if (!o.allowed_batch_sizes.empty() && o.allowed_batch_sizes.back() != o.max_batch_size) {
    return InvalidArgument(
        "Last entry in allowed_batch_sizes must match max_batch_size; last entry was %d; "
        "expected %d",
        o.allowed_batch_sizes.back(), o.max_batch_size);
  }
  return o;
}

SignatureBatcher::SignatureBatcher(std::string model, Session& session,
                                   const tensorflow::SignatureDef& def, BatchingOptions options)
    : model_(std::move(model)), session_(session), def_(def), options_(std::move(options)) {
  for (const auto& [key, info] : def_.outputs()) output_keys_.push_back(key);
  std::sort(output_keys_.begin(), output_keys_.end());
  int64_t threads = options_.num_batch_threads;
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (int64_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

SignatureBatcher::~SignatureBatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

BatchingStats SignatureBatcher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

absl::StatusOr<NamedTensors> SignatureBatcher::Run(NamedTensors inputs, int64_t timeout_ms) {
  auto task = std::make_shared<Task>();
  std::sort(inputs.begin(), inputs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  task->rows = -1;
  for (const auto& [key, t] : inputs) {
    if (t.rank() < 1 || (task->rows >= 0 && t.dim(0) != task->rows)) {
      return InvalidArgument(
          "Batching session Run() input tensors must have equal 0th-dimension size");
    }
    auto info = def_.inputs().find(key);
    if (info != def_.inputs().end() && info->second.dtype() != 0 &&
        info->second.dtype() != DTypeToTfEnum(t.dtype())) {
      return InvalidArgument("input '%s' must be %s, got %s", key,
                             DTypeName(*DTypeFromTfEnum(info->second.dtype())),
                             DTypeName(t.dtype()));
    }
    task->rows = t.dim(0);
    absl::StrAppend(&task->shape, key, ":", DTypeName(t.dtype()), "[");
    for (int d = 1; d < t.rank(); ++d) absl::StrAppend(&task->shape, t.dim(d), ",");
    task->shape += "]";
  }
  if (task->rows > options_.max_batch_size) {
    return InvalidArgument("Task size %d is larger than maximum batch size %d", task->rows,
                           options_.max_batch_size);
  }
  task->inputs = std::move(inputs);
  std::future<absl::StatusOr<NamedTensors>> result = task->done.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queued_rows_ + task->rows > options_.max_enqueued_batches * options_.max_batch_size) {
      return absl::UnavailableError(
          "The batch scheduling queue to which this task was submitted is full");
    }
    task->enqueued = std::chrono::steady_clock::now();
    queue_.push_back(task);
    queued_rows_ += task->rows;
  }
  cv_.notify_all();
  if (timeout_ms > 0 &&
      result.wait_for(std::chrono::milliseconds(timeout_ms)) != std::future_status::ready) {
    task->cancelled = true;
    return absl::DeadlineExceededError(
        absl::StrCat("the request did not run within its deadline of ", timeout_ms,
                     " ms (queued for batching)"));
  }
  return result.get();
}

void SignatureBatcher::Work() {
  for (;;) {
    std::vector<std::shared_ptr<Task>> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to run
      if (options_.batch_timeout_micros > 0 && !stopping_) {
        // More tasks may join the batch until the first one has waited the timeout.
        const auto deadline =
            queue_.front()->enqueued + std::chrono::microseconds(options_.batch_timeout_micros);
        cv_.wait_until(lock, deadline,
                       [&] { return stopping_ || queued_rows_ >= options_.max_batch_size; });
        if (queue_.empty()) continue;  // another thread took them
      }
      int64_t rows = 0;
      const std::string shape = queue_.front()->shape;
      while (!queue_.empty() && rows + queue_.front()->rows <= options_.max_batch_size &&
             queue_.front()->shape == shape) {
        std::shared_ptr<Task> t = queue_.front();
        queue_.pop_front();
        queued_rows_ -= t->rows;
        if (t->cancelled) continue;
        rows += t->rows;
        batch.push_back(std::move(t));
      }
    }
    if (!batch.empty()) RunBatch(std::move(batch));
  }
}

namespace {

// `parts` concatenated along dim 0, then grown to `rows` rows by repeating the last one.
absl::StatusOr<Tensor> Concatenate(const std::vector<const Tensor*>& parts, int64_t rows) {
  const Tensor& first = *parts[0];
  std::vector<int64_t> dims = first.dims();
  for (const Tensor* t : parts) {
    if (t->dtype() != first.dtype() || t->rank() != first.rank() ||
        !std::equal(t->dims().begin() + 1, t->dims().end(), first.dims().begin() + 1)) {
      return InvalidArgument(
          "the requests batched together disagree on an input's dtype or on its dims after "
          "dim 0 (%s and %s)",
          first.ShapeString(), t->ShapeString());
    }
  }
  dims[0] = rows;
  Tensor out = Tensor::Uninitialized(first.dtype(), dims);
  char* dst = static_cast<char*>(out.raw_data());
  for (const Tensor* t : parts) {
    if (t->byte_size() > 0) std::memcpy(dst, t->raw_data(), t->byte_size());
    dst += t->byte_size();
  }
  int64_t real = 0;
  for (const Tensor* t : parts) real += t->dim(0);
  const size_t row_bytes = rows > 0 ? out.byte_size() / static_cast<size_t>(rows) : 0;
  for (int64_t r = real; r < rows && real > 0; ++r) {
    std::memcpy(static_cast<char*>(out.raw_data()) + static_cast<size_t>(r) * row_bytes,
                static_cast<char*>(out.raw_data()) + static_cast<size_t>(real - 1) * row_bytes,
                row_bytes);
  }
  return out;
}

// Rows [first, first + count) of `t`.
Tensor Rows(const Tensor& t, int64_t first, int64_t count) {
  std::vector<int64_t> dims = t.dims();
  const size_t row_bytes = dims[0] > 0 ? t.byte_size() / static_cast<size_t>(dims[0]) : 0;
  dims[0] = count;
  Tensor out = Tensor::Uninitialized(t.dtype(), dims);
  if (out.byte_size() > 0) {
    std::memcpy(out.raw_data(),
                static_cast<const char*>(t.raw_data()) + static_cast<size_t>(first) * row_bytes,
                out.byte_size());
  }
  return out;
}

}  // namespace

void SignatureBatcher::RunBatch(std::vector<std::shared_ptr<Task>> batch) {
  int64_t rows = 0;
  for (const auto& t : batch) rows += t->rows;
  int64_t padded = rows;
  for (int64_t allowed : options_.allowed_batch_sizes) {
    if (allowed >= rows) {
      padded = allowed;
      break;
    }
  }
  auto fail = [&](const absl::Status& s) {
    for (const auto& t : batch) t->done.set_value(s);
  };
  std::vector<std::pair<std::string, Tensor>> feeds;
  const NamedTensors& keys = batch[0]->inputs;
  for (size_t k = 0; k < keys.size(); ++k) {
    std::vector<const Tensor*> parts;
    for (const auto& t : batch) {
      if (t->inputs.size() != keys.size() || t->inputs[k].first != keys[k].first) {
        return fail(Internal("batched requests name different inputs"));
      }
      parts.push_back(&t->inputs[k].second);
    }
    absl::StatusOr<Tensor> joined = Concatenate(parts, padded);
    if (!joined.ok()) return fail(joined.status());
    feeds.emplace_back(def_.inputs().at(keys[k].first).name(), *std::move(joined));
  }
  std::vector<std::string> fetches;
  for (const std::string& key : output_keys_) fetches.push_back(def_.outputs().at(key).name());
  RunOptions options;
  options.timeout_ms = -1;
  RunStats run_stats;
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::vector<Tensor>> out = session_.Run(options, feeds, fetches, {}, &run_stats);
  RecordRun(model_, run_stats, start);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.batches += 1;
    stats_.tasks += static_cast<int64_t>(batch.size());
    stats_.rows += rows;
    stats_.padding += padded - rows;
  }
  Metrics& metrics = ServingMetrics();
  const std::string prefix = "/tensorflow/serving/batching_session/";
  metrics.Observe(prefix + "processed_batch_size", {}, static_cast<double>(padded),
                  Metrics::BatchSizeBuckets());
  metrics.Observe(prefix + "padding_size", {{"execution_batch_size", absl::StrCat(padded)}},
                  static_cast<double>(padded - rows), Metrics::BatchSizeBuckets());
  for (const auto& t : batch) {
    metrics.Observe(prefix + "input_batch_size", {}, static_cast<double>(t->rows),
                    Metrics::BatchSizeBuckets());
    metrics.Observe(prefix + "queuing_latency",
                    {{"thread_pool_name", "model_server_batch_threads"}},
                    std::chrono::duration<double, std::micro>(start - t->enqueued).count(),
                    Metrics::QueuingBuckets());
    metrics.Add(prefix + "wrapped_run_count", {});
  }
  if (!out.ok()) return fail(out.status());
  for (size_t k = 0; k < out->size(); ++k) {
    const Tensor& t = (*out)[k];
    if (t.rank() < 1 || t.dim(0) != padded) {
      return fail(InvalidArgument(
          "Batched output tensor's 0th dimension does not equal the sum of the 0th dimension "
          "sizes of the input tensors (output '%s' is %s for a batch of %d)",
          output_keys_[k], t.ShapeString(), padded));
    }
  }
  int64_t offset = 0;
  for (const auto& t : batch) {
    NamedTensors mine;
    for (size_t k = 0; k < out->size(); ++k) {
      mine.emplace_back(output_keys_[k], Rows((*out)[k], offset, t->rows));
    }
    offset += t->rows;
    t->done.set_value(std::move(mine));
  }
}

}  // namespace tfjit::serving
