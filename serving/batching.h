// Dynamic batching, as TF Serving's --enable_batching does it (its BatchingParameters, their
// defaults and meaning; shared/docs/shapes-and-serving.md): one queue per model version and
// signature; requests (tasks) queue up, a batch thread takes as many as fit in
// max_batch_size (waiting up to batch_timeout_micros after the first for more; 0: whatever is
// there when a thread is free), concatenates their inputs along dim 0, pads the batch up to the
// next of allowed_batch_sizes when there are any, runs the signature once and splits the
// outputs back. A queue holding max_enqueued_batches full batches answers UNAVAILABLE; a task
// larger than max_batch_size is INVALID_ARGUMENT. Every batch size runs on compiled code
// without compiling: allowed sizes are warmed up (and compiled as tfjit's batch buckets),
// other sizes run on the symbolic-batch executable (docs/USER_GUIDE.md 2.6).
//
// Only requests whose inputs agree on dtype and on every dim after dim 0 share a batch (TF
// Serving fails a batch that mixes them). With pad_variable_length_inputs, requests of one rank
// share it and each input is grown to the batch's largest dims, the new elements holding the
// input's first element (TF Serving's padding); outputs keep the padded dims. Inner dims that
// vary compile per shape (only the batch dim is symbolic). String inputs batch and pad as
// numbers do.
#ifndef TFJIT_SERVING_BATCHING_H_
#define TFJIT_SERVING_BATCHING_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/proto/saved_model.pb.h"
#include "serving/json_tensor.h"
#include "serving/proto/serving.pb.h"

namespace tfjit {
class Session;
}

namespace tfjit::serving {

struct BatchingOptions {
  int64_t max_batch_size = 1000;
  int64_t batch_timeout_micros = 0;
  int64_t max_enqueued_batches = 10;
  int64_t num_batch_threads = 0;  // 0: the CPUs
  std::vector<int64_t> allowed_batch_sizes;
  bool pad_variable_length_inputs = false;
};

// TF Serving's BatchingParameters (unset fields keep their defaults); INVALID_ARGUMENT as TF
// Serving for allowed_batch_sizes that do not increase or do not end at max_batch_size.
absl::StatusOr<BatchingOptions> BatchingFromProto(
    const tensorflow::serving::BatchingParameters& params);

// Counters of one queue (tests, metrics).
struct BatchingStats {
  int64_t tasks = 0;    // requests run
  int64_t batches = 0;  // signature runs
  int64_t rows = 0;     // real rows run
  int64_t padding = 0;  // rows added up to an allowed batch size
};

class SignatureBatcher {
 public:
  // Batches runs of signature `def` on `session` (which outlives it).
  SignatureBatcher(std::string model, Session& session, const tensorflow::SignatureDef& def,
                   BatchingOptions options);
  ~SignatureBatcher();  // runs what is queued, then stops its threads

  // Runs `inputs` (every signature input, by key, all with one dim 0) as part of a batch and
  // returns every output by key (sorted). `timeout_ms` > 0: DEADLINE_EXCEEDED when the task
  // has not run by then (it is dropped from its batch if it has not started).
  absl::StatusOr<NamedTensors> Run(NamedTensors inputs, int64_t timeout_ms);

  BatchingStats stats() const;

 private:
  struct Task;
  void Work();
  void RunBatch(std::vector<std::shared_ptr<Task>> batch);

  const std::string model_;
  Session& session_;
  const tensorflow::SignatureDef def_;
  const BatchingOptions options_;
  const bool examples_;                   // a classify or regress signature
  std::vector<std::string> output_keys_;  // sorted

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Task>> queue_;
  int64_t queued_rows_ = 0;
  bool stopping_ = false;
  BatchingStats stats_;
  std::vector<std::thread> threads_;
};

}  // namespace tfjit::serving

#endif  // TFJIT_SERVING_BATCHING_H_
