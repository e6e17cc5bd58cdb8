// Server and ServeMain (server.h).
#include "serving/server.h"

#include <signal.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/file_system.h"
#include "core/logging.h"
#include "core/status.h"
#include "google/protobuf/text_format.h"
#include "httplib.h"
#include "serving/grpc_api.h"
#include "serving/json_tensor.h"
#include "serving/metrics.h"
#include "serving/models.h"
#include "serving/rest_api.h"

namespace tfjit::serving {
namespace {

namespace fs = std::filesystem;

absl::Status BadFlag(const std::string& flag, const std::string& why) {
  return InvalidArgument("tfjit serve: %s: %s", flag, why);
}

bool ParseBool(const std::string& v, bool* out) {
  if (v.empty() || v == "true" || v == "1") {
    *out = true;
    return true;
  }
  if (v == "false" || v == "0") {
    *out = false;
    return true;
  }
  return false;
}

// The request's path as sent (still %-escaped: RestApi decodes the model name and label once),
// without the query.
std::string RawPath(const httplib::Request& req) {
  const std::string& target = req.target.empty() ? req.path : req.target;
  return target.substr(0, target.find('?'));
}

// `text`, the model config file at `path`, as a ModelServerConfig.
absl::StatusOr<tensorflow::serving::ModelServerConfig> ParseModelConfig(const std::string& text,
                                                                        const std::string& path) {
  tensorflow::serving::ModelServerConfig config;
  // Fields tfjit does not read (logging_config, ...) are skipped, as TF Serving's own configs
  // carry them.
  google::protobuf::TextFormat::Parser parser;
  parser.AllowUnknownField(true);
  if (!parser.ParseFromString(text, &config)) {
    return InvalidArgument(
        "--model_config_file=%s is not a ModelServerConfig in protobuf text format", path);
  }
  return config;
}

}  // namespace

absl::StatusOr<ServerOptions> ParseServeFlags(const std::vector<std::string>& args) {
  ServerOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!absl::StartsWith(arg, "--")) {
      return BadFlag(arg, "expected a flag (--name=value), as tensorflow_model_server takes");
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const bool has_value = eq != std::string::npos;
    std::string value = has_value ? arg.substr(eq + 1) : "";
    // tfjit's own flags also take their value as the next argument, as the other commands do.
    auto tfjit_value = [&]() -> absl::StatusOr<std::string> {
      if (has_value) return value;
      if (i + 1 >= args.size()) return BadFlag(arg, "needs a value");
      return args[++i];
    };
    auto int_flag = [&](int64_t* out) -> absl::Status {
      if (!absl::SimpleAtoi(value, out)) return BadFlag(arg, "takes an integer (--name=N)");
      return absl::OkStatus();
    };
    int64_t n = 0;
    if (name == "port") {
      TFJIT_RETURN_IF_ERROR(int_flag(&n));
      o.port = static_cast<int>(n);
    } else if (name == "rest_api_port") {
      TFJIT_RETURN_IF_ERROR(int_flag(&n));
      o.rest_api_port = static_cast<int>(n);
    } else if (name == "rest_api_num_threads") {
      TFJIT_RETURN_IF_ERROR(int_flag(&n));
      o.rest_api_num_threads = static_cast<int>(n);
    } else if (name == "rest_api_timeout_in_ms") {
      TFJIT_RETURN_IF_ERROR(int_flag(&o.rest_api_timeout_in_ms));
    } else if (name == "file_system_poll_wait_seconds") {
      TFJIT_RETURN_IF_ERROR(int_flag(&o.file_system_poll_wait_seconds));
    } else if (name == "model_config_file_poll_wait_seconds") {
      TFJIT_RETURN_IF_ERROR(int_flag(&o.model_config_file_poll_wait_seconds));
    } else if (name == "model_name") {
      o.model_name = value;
    } else if (name == "model_base_path") {
      o.model_base_path = value;
    } else if (name == "model_config_file") {
      o.model_config_file = value;
    } else if (name == "batching_parameters_file") {
      o.batching_parameters_file = value;
    } else if (name == "monitoring_config_file") {
      o.monitoring_config_file = value;
    } else if (name == "enable_batching") {
      if (!ParseBool(value, &o.enable_batching)) return BadFlag(arg, "takes true or false");
    } else if (name == "jit") {
      TFJIT_ASSIGN_OR_RETURN(std::string v, tfjit_value());
      StatusOr<JitMode> mode = ParseJitMode(v);
      if (!mode.ok()) return BadFlag(arg, std::string(mode.status().message()));
      o.session.jit = *mode;
    } else if (name == "shapes") {
      TFJIT_ASSIGN_OR_RETURN(std::string v, tfjit_value());
      StatusOr<ShapeMode> mode = ParseShapeMode(v);
      if (!mode.ok()) return BadFlag(arg, std::string(mode.status().message()));
      o.session.shapes = *mode;
    } else if (name == "threads") {
      TFJIT_ASSIGN_OR_RETURN(std::string v, tfjit_value());
      if (!absl::SimpleAtoi(v, &n) || n < 1) return BadFlag(arg, "takes a thread count >= 1");
      o.session.intra_op_threads = o.session.inter_op_threads = static_cast<int>(n);
    } else if (name == "cache-dir") {
      TFJIT_ASSIGN_OR_RETURN(o.session.compile_cache_dir, tfjit_value());
    } else if (name == "device") {
      TFJIT_ASSIGN_OR_RETURN(o.session.device, tfjit_value());
    } else if (name == "batch-buckets") {
      TFJIT_ASSIGN_OR_RETURN(std::string v, tfjit_value());
      for (absl::string_view d : absl::StrSplit(v, ',', absl::SkipEmpty())) {
        if (!absl::SimpleAtoi(d, &n) || n < 2) return BadFlag(arg, "takes batch sizes >= 2");
        o.session.batch_buckets.push_back(n);
      }
    } else {
      return BadFlag(arg, "unknown flag");
    }
  }
  return o;
}

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<ModelManager> models;
  std::unique_ptr<RestApi> rest;
  std::unique_ptr<GrpcApi> grpc;
  httplib::Server http;
  std::thread http_thread;
  int rest_port = 0;
  std::thread poller;
  std::mutex mu;
  std::condition_variable cv;
  bool stopped = false;  // Stop() was asked for: the poller ends
  bool done = false;     // Stop() finished: Wait() returns
  std::mutex stop_mu;    // one Stop() at a time; a second one waits for the first

  // The config file's text last read (--model_config_file_poll_wait_seconds).
  std::string config_text;

  // Every --file_system_poll_wait_seconds, new and removed versions; every
  // --model_config_file_poll_wait_seconds, a changed model config file.
  void Poll() {
    using Clock = std::chrono::steady_clock;
    const bool versions = options.file_system_poll_wait_seconds > 0;
    const bool config =
        options.model_config_file_poll_wait_seconds > 0 && !options.model_config_file.empty();
    const auto versions_every =
        std::chrono::seconds(std::max<int64_t>(1, options.file_system_poll_wait_seconds));
    const auto config_every =
        std::chrono::seconds(std::max<int64_t>(1, options.model_config_file_poll_wait_seconds));
    Clock::time_point next_versions = Clock::now() + versions_every;
    Clock::time_point next_config = Clock::now() + config_every;
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      const Clock::time_point next = !config     ? next_versions
                                     : !versions ? next_config
                                                 : std::min(next_versions, next_config);
      if (cv.wait_until(lock, next, [&] { return stopped; })) return;
      lock.unlock();
      if (config && Clock::now() >= next_config) {
        ReloadConfigFile();
        next_config = Clock::now() + config_every;
      }
      if (versions && Clock::now() >= next_versions) {
        models->Poll();
        next_versions = Clock::now() + versions_every;
      }
      lock.lock();
    }
  }

  // Serves the model config file's models when its text changed; a config that does not read
  // or load is logged, and the models served stay as they were.
  void ReloadConfigFile() {
    absl::StatusOr<std::string> text = Files().ReadFile(options.model_config_file);
    if (!text.ok() || *text == config_text) return;
    config_text = *text;
    absl::Status s = [&]() -> absl::Status {
      TFJIT_ASSIGN_OR_RETURN(tensorflow::serving::ModelServerConfig parsed,
                             ParseModelConfig(*text, options.model_config_file));
      TFJIT_ASSIGN_OR_RETURN(std::vector<ModelSource> sources, SourcesFromConfig(parsed));
      return models->Configure(std::move(sources));
    }();
    if (s.ok()) {
      Log(LogLevel::kInfo, "tfjit serve: serving the models of the changed %s",
          options.model_config_file);
    } else {
      Log(LogLevel::kError, "tfjit serve: the changed %s is not served: %s",
          options.model_config_file, s.message());
    }
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { Stop(); }

int Server::rest_port() const { return impl_->rest_port; }

int Server::grpc_port() const { return impl_->grpc == nullptr ? 0 : impl_->grpc->port(); }

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  if (options.model_base_path.empty() && options.model_config_file.empty()) {
    return InvalidArgument(
        "Both server_options.model_base_path and server_options.model_config_file are empty!");
  }
  if (!options.batching_parameters_file.empty() && !options.enable_batching) {
    return InvalidArgument(
        "server_options.batching_parameters_file is set without setting "
        "server_options.enable_batching to true.");
  }
  std::vector<ModelSource> sources;
  std::string config_text;
  if (!options.model_config_file.empty()) {
    TFJIT_ASSIGN_OR_RETURN(config_text, Files().ReadFile(options.model_config_file));
    TFJIT_ASSIGN_OR_RETURN(tensorflow::serving::ModelServerConfig config,
                           ParseModelConfig(config_text, options.model_config_file));
    TFJIT_ASSIGN_OR_RETURN(sources, SourcesFromConfig(config));
  } else {
    Log(LogLevel::kInfo,
        "tfjit serve: Building single TensorFlow model file config:  model_name: %s "
        "model_base_path: %s",
        options.model_name, options.model_base_path);
    ModelSource s;
    s.name = options.model_name;
    s.base_path = fs::absolute(options.model_base_path).string();
    sources.push_back(std::move(s));
  }
  std::optional<BatchingOptions> batching;
  if (options.enable_batching) {
    tensorflow::serving::BatchingParameters params;
    if (!options.batching_parameters_file.empty()) {
      TFJIT_ASSIGN_OR_RETURN(std::string text, Files().ReadFile(options.batching_parameters_file));
      if (!google::protobuf::TextFormat::ParseFromString(text, &params)) {
        return InvalidArgument(
            "--batching_parameters_file=%s is not a BatchingParameters in protobuf text format",
            options.batching_parameters_file);
      }
    }
    TFJIT_ASSIGN_OR_RETURN(batching, BatchingFromProto(params));
    // The allowed batch sizes are compiled as static buckets (warmed up at load); every other
    // size runs on the symbolic executable.
    for (int64_t b : batching->allowed_batch_sizes) {
      if (b >= 2) options.session.batch_buckets.push_back(b);
    }
  }
  std::string metrics_path;
  if (!options.monitoring_config_file.empty()) {
    TFJIT_ASSIGN_OR_RETURN(std::string text, Files().ReadFile(options.monitoring_config_file));
    tensorflow::serving::MonitoringConfig monitoring;
    if (!google::protobuf::TextFormat::ParseFromString(text, &monitoring)) {
      return InvalidArgument(
          "--monitoring_config_file=%s is not a MonitoringConfig in protobuf text format",
          options.monitoring_config_file);
    }
    if (monitoring.prometheus_config().enable()) {
      metrics_path = monitoring.prometheus_config().path().empty()
                         ? "/monitoring/prometheus/metrics"
                         : monitoring.prometheus_config().path();
      if (options.rest_api_port == 0) {
        Log(LogLevel::kWarning,
            "tfjit serve: the Prometheus metrics are served on the REST port, and there is none "
            "(--rest_api_port)");
      }
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->config_text = std::move(config_text);
  impl->models = std::make_unique<ModelManager>(options.session, batching);
  TFJIT_RETURN_IF_ERROR(impl->models->Configure(std::move(sources)));
  impl->rest = std::make_unique<RestApi>(*impl->models, options.rest_api_timeout_in_ms);
  if (options.port != 0) {
    const int port = options.port == ServerOptions::kAnyPort ? 0 : options.port;
    TFJIT_ASSIGN_OR_RETURN(impl->grpc, GrpcApi::Start(*impl->models, absl::StrCat("0.0.0.0:", port),
                                                      options.rest_api_timeout_in_ms));
    std::printf("Running gRPC ModelServer at 0.0.0.0:%d ...\n", impl->grpc->port());
    std::fflush(stdout);
  }
  if (options.rest_api_port != 0) {
    const int threads =
        options.rest_api_num_threads > 0
            ? options.rest_api_num_threads
            : 4 * std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    httplib::Server& http = impl->http;
    // Serving clients keep their connections: httplib's default closes one after 5 requests.
    http.set_keep_alive_max_count(1u << 20);
    http.set_keep_alive_timeout(5);  // an idle connection holds a pool thread
    // Answers leave at once (the headers and the body are two writes: Nagle's algorithm would
    // hold the second for the client's delayed ACK, 40 ms).
    http.set_tcp_nodelay(true);
    // Bodies up to 1 GiB (Debian's library otherwise caps them far lower); past that, 413 with
    // a TF Serving-shaped error body.
    http.set_payload_max_length(size_t{1} << 30);
    http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (!res.body.empty()) return;
      const std::string message = res.status == 413
                                      ? "the request body is larger than 1 GiB"
                                      : absl::StrCat("HTTP ", res.status, " from the HTTP layer");
      res.set_content(ErrorJson(message), "application/json");
    });
    http.new_task_queue = [threads] {
      return new httplib::ThreadPool(static_cast<size_t>(threads));
    };
    const RestApi* rest = impl->rest.get();
    auto handle = [rest](const httplib::Request& req, httplib::Response& res) {
      const RestResponse r = rest->Handle(req.method, RawPath(req), req.body);
      res.status = r.http_status;
      res.set_content(r.body, "application/json");
    };
    http.Get(R"(/[vV]1/.*)", handle);
    // POST bodies are read here, whatever their Content-Type: curl -d (TF Serving's examples)
    // sends JSON as application/x-www-form-urlencoded, which the library would parse as a
    // form and cap at 8 KiB.
    http.Post(R"(/[vV]1/.*)", [rest](const httplib::Request& req, httplib::Response& res,
                                     const httplib::ContentReader& reader) {
      std::string body;
      const bool read = reader([&](const char* data, size_t n) {
        body.append(data, n);
        return true;
      });
      if (!read) return;  // too large, cut short or badly encoded: the library's status stands
      const RestResponse r = rest->Handle(req.method, RawPath(req), body);
      res.status = r.http_status;
      res.set_content(r.body, "application/json");
    });
    if (!metrics_path.empty()) {
      http.Get(metrics_path, [](const httplib::Request&, httplib::Response& res) {
        res.set_content(ServingMetrics().Page(), "text/plain");
      });
    }
    if (options.rest_api_port == ServerOptions::kAnyPort) {
      impl->rest_port = http.bind_to_any_port("0.0.0.0");
    } else if (http.bind_to_port("0.0.0.0", options.rest_api_port)) {
      impl->rest_port = options.rest_api_port;
    }
    if (impl->rest_port <= 0) {
      return InvalidArgument("tfjit serve: Failed to start HTTP Server at localhost:%d",
                             options.rest_api_port);
    }
    impl->http_thread = std::thread([&http] { http.listen_after_bind(); });
    // stop() does nothing before the listening loop runs: wait for it, so that a Stop() right
    // after Start() (a signal during loading) cannot hang.
    while (!http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::printf("Exporting HTTP/REST API at:localhost:%d ...\n", impl->rest_port);
    std::fflush(stdout);
  }
  if (options.file_system_poll_wait_seconds > 0 ||
      (options.model_config_file_poll_wait_seconds > 0 && !options.model_config_file.empty())) {
    Impl* raw = impl.get();
    impl->poller = std::thread([raw] { raw->Poll(); });
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::Stop() {
  std::lock_guard<std::mutex> stopping(impl_->stop_mu);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->done) return;
    impl_->stopped = true;
  }
  impl_->cv.notify_all();
  impl_->http.stop();
  if (impl_->http_thread.joinable()) impl_->http_thread.join();
  if (impl_->grpc != nullptr) impl_->grpc->Stop();
  if (impl_->poller.joinable()) impl_->poller.join();
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->done = true;
  }
  impl_->cv.notify_all();
}

void Server::Wait() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->cv.wait(lock, [&] { return impl_->done; });
}

int ServeMain(const std::vector<std::string>& args) {
  absl::StatusOr<ServerOptions> options = ParseServeFlags(args);
  if (!options.ok()) {
    std::fprintf(stderr, "%s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  // SIGINT and SIGTERM go to this thread's sigwait, not to the server's threads (which
  // inherit the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(*std::move(options));
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  int signal = 0;
  sigwait(&signals, &signal);
  Log(LogLevel::kInfo, "tfjit serve: signal %d: stopping", signal);
  (*server)->Stop();
  return 0;
}

}  // namespace tfjit::serving
