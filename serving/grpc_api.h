// TF Serving's gRPC API over a ModelManager (Debian's libgrpc++, the synchronous API):
// PredictionService.Predict and GetModelMetadata, ModelService.GetModelStatus, with TF
// Serving's method paths, messages (serving/proto, wire-compatible) and error codes and
// messages. Tensors cross as TensorProto (tensor_content for numbers, string_val for strings).
#ifndef TFJIT_SERVING_GRPC_API_H_
#define TFJIT_SERVING_GRPC_API_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "serving/models.h"

namespace grpc {
class Server;
}

namespace tfjit::serving {

class GrpcApi {
 public:
  // Listens on `address` ("0.0.0.0:8500"; port 0: any free port). INVALID_ARGUMENT when it
  // cannot bind. `timeout_ms`: each Predict's deadline when the client sets none (<= 0:
  // none). ModelService.HandleReloadConfigRequest reconfigures `models`.
  static absl::StatusOr<std::unique_ptr<GrpcApi>> Start(ModelManager& models,
                                                        const std::string& address,
                                                        int64_t timeout_ms);
  ~GrpcApi();
  int port() const { return port_; }
  // Stops accepting calls and waits for the calls in flight. Idempotent.
  void Stop();

 private:
  struct Services;
  GrpcApi() = default;
  std::unique_ptr<Services> services_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace tfjit::serving

#endif  // TFJIT_SERVING_GRPC_API_H_
