// TF Serving's REST API over a ModelManager, independent of any HTTP library (the server in
// server.h hands it each request): model status, metadata and predict, with TF Serving's
// URLs, JSON bodies, error messages and status -> HTTP mapping (shared/docs/
// shapes-and-serving.md). Thread-safe: requests run concurrently.
#ifndef TFJIT_SERVING_REST_API_H_
#define TFJIT_SERVING_REST_API_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "serving/models.h"

namespace tfjit::serving {

struct RestResponse {
  int http_status = 200;
  std::string body;  // JSON
};

// The HTTP status TF Serving answers a failed request with (InvalidArgument and
// FailedPrecondition 400, NotFound 404, ResourceExhausted 429, Unimplemented 501,
// Unavailable 503, DeadlineExceeded 504, ...).
int HttpStatusOf(absl::StatusCode code);

class RestApi {
 public:
  // `timeout_ms`: each predict's deadline (TF Serving's --rest_api_timeout_in_ms).
  RestApi(const ModelManager& models, int64_t timeout_ms)
      : models_(models), timeout_ms_(timeout_ms) {}

  // Answers `method` ("GET", "POST") on `path` (under /v1/) with request `body`.
  RestResponse Handle(const std::string& method, const std::string& path,
                      const std::string& body) const;

 private:
  absl::StatusOr<std::string> Status(const std::string& model, const std::string& version,
                                     const std::string& label) const;
  absl::StatusOr<std::string> Metadata(const std::string& model, const std::string& version,
                                       const std::string& label) const;
  absl::StatusOr<std::string> Predict(const std::string& model, const std::string& version,
                                      const std::string& label, const std::string& body) const;
  // :classify and :regress (`verb`), TF Serving's tf.Example APIs (classify.h).
  absl::StatusOr<std::string> ClassifyOrRegress(const std::string& model,
                                                const std::string& version,
                                                const std::string& label, const std::string& body,
                                                const std::string& verb) const;

  const ModelManager& models_;
  int64_t timeout_ms_;
};

}  // namespace tfjit::serving

#endif  // TFJIT_SERVING_REST_API_H_
