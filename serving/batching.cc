// SignatureBatcher (batching.h).
#include "serving/batching.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/string_tensor.h"
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
    : model_(std::move(model)),
      session_(session),
      def_(def),
      options_(std::move(options)),
      examples_(def_.method_name() == "tensorflow/serving/classify" ||
                def_.method_name() == "tensorflow/serving/regress") {
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
    // (A classify or regress signature takes serialized tf.Examples, whatever dtype it says.)
    if (info != def_.inputs().end() && info->second.dtype() != 0 && !examples_ &&
        info->second.dtype() != DTypeToTfEnum(t.dtype())) {
      return InvalidArgument("input '%s' must be %s, got %s", key,
                             DTypeName(*DTypeFromTfEnum(info->second.dtype())),
                             DTypeName(t.dtype()));
    }
    task->rows = t.dim(0);
    // Tasks join one batch when their inputs agree on dtype and on the dims after dim 0 (on
    // the rank only with pad_variable_length_inputs).
    absl::StrAppend(&task->shape, key, ":", DTypeName(t.dtype()), "[");
    for (int d = 1; d < t.rank(); ++d) {
      absl::StrAppend(&task->shape, options_.pad_variable_length_inputs ? -1 : t.dim(d), ",");
    }
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

// Element storage of a tensor of any dtype the batcher moves: numbers by their bytes, strings
// (a StringArray object, no buffer) by value.
struct Elements {
  explicit Elements(const Tensor& t)
      : strings(StringValues(t)),
        bytes(static_cast<const char*>(t.raw_data())),
        width(DTypeSize(t.dtype())) {}
  const std::vector<std::string>* strings;
  const char* bytes;
  size_t width;
};

// A tensor of `dtype` and `dims` built element by element: `fill(out, count)` appends values.
class Builder {
 public:
  Builder(DType dtype, std::vector<int64_t> dims)
      : dtype_(dtype), dims_(std::move(dims)), width_(DTypeSize(dtype)) {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    if (dtype_ == DType::kString) {
      strings_.reserve(static_cast<size_t>(n));
    } else {
      tensor_ = Tensor::Uninitialized(dtype_, dims_);
      next_ = static_cast<char*>(tensor_.raw_data());
    }
  }
  // Appends `count` elements of `from` starting at element `first`.
  void Append(const Elements& from, int64_t first, int64_t count) {
    if (count <= 0) return;
    if (dtype_ == DType::kString) {
      if (from.strings == nullptr) {  // a string tensor without values reads as empty strings
        strings_.resize(strings_.size() + static_cast<size_t>(count));
        return;
      }
      strings_.insert(strings_.end(), from.strings->begin() + first,
                      from.strings->begin() + first + count);
    } else {
      std::memcpy(next_, from.bytes + static_cast<size_t>(first) * width_,
                  static_cast<size_t>(count) * width_);
      next_ += static_cast<size_t>(count) * width_;
    }
  }
  // Appends `count` copies of element `index` of `from` (zero or "" when `index` < 0).
  void Repeat(const Elements& from, int64_t index, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      if (dtype_ == DType::kString) {
        strings_.push_back(index < 0 || from.strings == nullptr
                               ? std::string()
                               : (*from.strings)[static_cast<size_t>(index)]);
      } else if (index < 0) {
        std::memset(next_, 0, width_);
        next_ += width_;
      } else {
        Append(from, index, 1);
      }
    }
  }
  Tensor Finish() {
    return dtype_ == DType::kString ? MakeStringTensor(dims_, std::move(strings_))
                                    : std::move(tensor_);
  }

 private:
  DType dtype_;
  std::vector<int64_t> dims_;
  size_t width_;
  Tensor tensor_;
  char* next_ = nullptr;
  std::vector<std::string> strings_;
};

// Rows [first, first + count) of `t`.
Tensor Rows(const Tensor& t, int64_t first, int64_t count) {
  std::vector<int64_t> dims = t.dims();
  const int64_t row = dims[0] > 0 ? t.num_elements() / dims[0] : 0;
  dims[0] = count;
  Builder out(t.dtype(), dims);
  out.Append(Elements(t), first * row, count * row);
  return out.Finish();
}

// `t` grown to `dims` (same rank and dim 0; every other dim at least t's) as TF Serving's
// pad_variable_length_inputs grows it: values keep their indices, the new elements at the end
// of each dim hold t's first element (zero, or "", when t has none).
void AppendPadded(Builder& out, const Tensor& t, const std::vector<int64_t>& dims) {
  const Elements from(t);
  const int64_t pad_with = t.num_elements() > 0 ? 0 : -1;
  // Walks dims depth-first: at depth d, t's rows of dim d are copied (recursively) and the
  // missing ones filled.
  std::vector<int64_t> stride(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) stride[d - 1] = stride[d] * t.dim(static_cast<int>(d));
  auto walk = [&](auto& self, size_t d, int64_t offset) -> void {
    const int64_t have = t.dim(static_cast<int>(d));
    int64_t inner = 1;
    for (size_t k = d + 1; k < dims.size(); ++k) inner *= dims[k];
    if (d + 1 == dims.size()) {
      out.Append(from, offset, have);
    } else {
      for (int64_t i = 0; i < have; ++i) self(self, d + 1, offset + i * stride[d]);
    }
    out.Repeat(from, pad_with, (dims[d] - have) * inner);
  };
  for (int64_t row = 0; row < t.dim(0); ++row) {
    if (dims.size() == 1) {
      out.Append(from, row, 1);
    } else {
      walk(walk, 1, row * stride[0]);
    }
  }
}

// `parts` concatenated along dim 0, then grown to `rows` rows by repeating the last one. With
// `pad` (pad_variable_length_inputs) parts of one rank whose other dims differ are each grown
// to the largest; otherwise they must agree.
absl::StatusOr<Tensor> Concatenate(const std::vector<const Tensor*>& parts, int64_t rows,
                                   bool pad) {
  const Tensor& first = *parts[0];
  std::vector<int64_t> dims = first.dims();
  for (const Tensor* t : parts) {
    const bool same_inner =
        t->rank() == first.rank() &&
        std::equal(t->dims().begin() + 1, t->dims().end(), first.dims().begin() + 1);
    if (t->dtype() != first.dtype() || t->rank() != first.rank() || (!pad && !same_inner)) {
      return InvalidArgument(
          "the requests batched together disagree on an input's dtype or on its dims after "
          "dim 0 (%s and %s)",
          first.ShapeString(), t->ShapeString());
    }
    for (int d = 1; d < t->rank(); ++d) dims[d] = std::max(dims[d], t->dim(d));
  }
  dims[0] = rows;
  Builder out(first.dtype(), dims);
  int64_t real = 0;
  const Tensor* last = nullptr;
  for (const Tensor* t : parts) {
    real += t->dim(0);
    if (t->dim(0) > 0) last = t;
    if (std::equal(t->dims().begin() + 1, t->dims().end(), dims.begin() + 1)) {
      out.Append(Elements(*t), 0, t->num_elements());
    } else {
      std::vector<int64_t> grown = dims;
      grown[0] = t->dim(0);
      AppendPadded(out, *t, grown);
    }
  }
  if (real < rows && last != nullptr) {
    // Padding rows repeat the last real row (as grown above).
    std::vector<int64_t> one = dims;
    one[0] = 1;
    Builder row(first.dtype(), one);
    AppendPadded(row, Rows(*last, last->dim(0) - 1, 1), one);
    const Tensor padding_row = row.Finish();
    for (int64_t r = real; r < rows; ++r) {
      out.Append(Elements(padding_row), 0, padding_row.num_elements());
    }
  }
  return out.Finish();
}

}  // namespace

void SignatureBatcher::RunBatch(std::vector<std::shared_ptr<Task>> batch) {
  int64_t rows = 0;
  for (const auto& t : batch) rows += t->rows;
  int64_t padded = rows;
  for (int64_t allowed : options_.allowed_batch_sizes) {
    if (rows > 0 && allowed >= rows) {
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
    absl::StatusOr<Tensor> joined = Concatenate(parts, padded, options_.pad_variable_length_inputs);
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
  RecordRun(model_, def_, run_stats, start);
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
