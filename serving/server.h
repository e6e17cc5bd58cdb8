// `tfjit serve`: TF Serving's tensorflow_model_server, with its flags and config files
// (docs/USER_GUIDE.md 2.7). The REST API (rest_api.h) runs on cpp-httplib (Debian's
// libcpp-httplib-dev: HTTP/1.1 with a thread pool; its keep-alive limit of 5 requests per
// connection is raised, since serving clients keep connections open), the gRPC API
// (grpc_api.h) on Debian's libgrpc++; the model versions are a ModelManager's, polled for new
// versions; --enable_batching puts a batching queue (batching.h) before each predict
// signature; --monitoring_config_file turns on the Prometheus page (metrics.h) on the REST
// port.
#ifndef TFJIT_SERVING_SERVER_H_
#define TFJIT_SERVING_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tfjit/session.h"

namespace tfjit::serving {

struct ServerOptions {
  // TF Serving's flags (model_servers/main.cc), with its defaults.
  int port = 8500;               // gRPC; 0: none; kAnyPort: a free port (tests)
  int rest_api_port = 0;         // 0: no REST API; kAnyPort: a free port (tests)
  int rest_api_num_threads = 0;  // 0: 4 x the CPUs
  int64_t rest_api_timeout_in_ms = 30000;
  std::string model_name = "default";
  std::string model_base_path;
  std::string model_config_file;
  int64_t model_config_file_poll_wait_seconds = 0;  // > 0: re-read a changed config file
  int64_t file_system_poll_wait_seconds = 1;        // 0: once; < 0: never
  bool enable_batching = false;
  std::string batching_parameters_file;
  std::string monitoring_config_file;
  // tfjit's own: the sessions' options (--jit, --threads, --cache-dir, --shapes, ...).
  SessionOptions session;

  static constexpr int kAnyPort = -1;
};

// TF Serving's `--name=value` flags (booleans also as `--name`) and tfjit's session flags
// (`--jit auto`, `--jit=auto`, `--threads N`, `--cache-dir DIR`, `--shapes MODE`,
// `--batch-buckets B,...`, `--device D`). INVALID_ARGUMENT naming the flag otherwise.
absl::StatusOr<ServerOptions> ParseServeFlags(const std::vector<std::string>& args);

class Server {
 public:
  // Loads the models (every version the policies select, warmed up) and starts serving.
  // INVALID_ARGUMENT for flags TF Serving refuses (no model, both a base path and a config
  // file missing, a bad config file) and for a port that cannot be bound.
  static absl::StatusOr<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();

  // The ports the REST and gRPC APIs listen on (0 when off).
  int rest_port() const;
  int grpc_port() const;
  // Stops serving: in-flight requests finish, the poller stops. Idempotent.
  void Stop();
  // Blocks until Stop() (from another thread or a signal handler's thread).
  void Wait();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// `tfjit serve ARGS...`: parses the flags, starts the server, serves until SIGINT or SIGTERM.
// Returns the process exit code (0 after a signal; 1 when the server cannot start; 2 for a
// usage error).
int ServeMain(const std::vector<std::string>& args);

}  // namespace tfjit::serving

#endif  // TFJIT_SERVING_SERVER_H_
