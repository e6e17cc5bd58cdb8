// GrpcApi (grpc_api.h).
#include "serving/grpc_api.h"

#include <chrono>
#include <climits>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/logging.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "frontend/tensor_proto.h"
#include "grpcpp/grpcpp.h"
#include "serving/classify.h"
#include "serving/metrics.h"
#include "serving/predict.h"
#include "serving/proto/prediction_service.grpc.pb.h"

namespace tfjit::serving {
namespace {

namespace ts = tensorflow::serving;

// gRPC carries TF's status codes unchanged (the same numbers as absl's); messages are cut at
// 1024 characters as TF Serving cuts them.
grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  std::string message(s.message());
  if (message.size() > 1024) message = message.substr(0, 1024) + "...TRUNCATED";
  return grpc::Status(static_cast<grpc::StatusCode>(static_cast<int>(s.code())), message);
}

// The version a ModelSpec names: a number, a label, or neither.
struct VersionChoice {
  std::optional<int64_t> version;
  std::string label;
};
VersionChoice ChoiceOf(const ts::ModelSpec& spec) {
  VersionChoice c;
  if (spec.has_version()) c.version = spec.version().value();
  if (spec.version_choice_case() == ts::ModelSpec::kVersionLabel) c.label = spec.version_label();
  return c;
}

// The most elements one request tensor may have: TF's TensorProto may give a shape and a single
// value, which decoding repeats, so a few bytes could otherwise ask for gigabytes.
constexpr int64_t kMaxRequestElements = int64_t{1} << 28;

absl::StatusOr<Tensor> FromProto(const tensorflow::TensorProto& proto) {
  absl::StatusOr<std::vector<int64_t>> dims = tf::ShapeFromProto(proto.tensor_shape());
  if (!dims.ok()) return dims.status();
  int64_t n = 1;
  for (int64_t d : *dims) {
    if (d < 0) return InvalidArgument("a request tensor's shape must be fully defined");
    if (d > 0 && n > kMaxRequestElements / d) {
      n = kMaxRequestElements + 1;
      break;
    }
    n *= d;
  }
  if (n > kMaxRequestElements) {
    return ResourceExhausted("a request tensor has more than %d elements", kMaxRequestElements);
  }
  return tf::TensorFromProto(proto);
}

// A tensor in TF Serving's answer form: the typed *_val fields (clients such as
// tf.make_ndarray read those first), tensor_content for the dtypes without one.
tensorflow::TensorProto ToProto(const Tensor& t) {
  tensorflow::TensorProto proto;
  proto.set_dtype(static_cast<tensorflow::DataType>(DTypeToTfEnum(t.dtype())));
  *proto.mutable_tensor_shape() = tf::ShapeToProto(t.dims());
  const int64_t n = t.num_elements();
  switch (t.dtype()) {
    case DType::kFloat32:
      proto.mutable_float_val()->Add(t.data<float>(), t.data<float>() + n);
      return proto;
    case DType::kFloat64:
      proto.mutable_double_val()->Add(t.data<double>(), t.data<double>() + n);
      return proto;
    case DType::kInt32:
      proto.mutable_int_val()->Add(t.data<int32_t>(), t.data<int32_t>() + n);
      return proto;
    case DType::kInt16:
      for (int64_t i = 0; i < n; ++i) proto.add_int_val(t.data<int16_t>()[i]);
      return proto;
    case DType::kInt8:
      for (int64_t i = 0; i < n; ++i) proto.add_int_val(t.data<int8_t>()[i]);
      return proto;
    case DType::kUInt8:
      for (int64_t i = 0; i < n; ++i) proto.add_int_val(t.data<uint8_t>()[i]);
      return proto;
    case DType::kInt64:
      proto.mutable_int64_val()->Add(t.data<int64_t>(), t.data<int64_t>() + n);
      return proto;
    case DType::kBool:
      for (int64_t i = 0; i < n; ++i) proto.add_bool_val(t.data<bool>()[i]);
      return proto;
    case DType::kString:
      if (const std::vector<std::string>* values = StringValues(t)) {
        for (const std::string& s : *values) proto.add_string_val(s);
      }
      return proto;
    default:
      return tf::TensorToProto(t);
  }
}

// What is left of the client's deadline, in milliseconds (the server's default without one).
int64_t TimeoutOf(const grpc::ServerContext& context, int64_t fallback_ms) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return fallback_ms;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::system_clock::now())
                        .count();
  return std::max<int64_t>(1, left);
}

}  // namespace

struct GrpcApi::Services {
  class Prediction final : public ts::PredictionService::Service {
   public:
    Prediction(const ModelManager& models, int64_t timeout_ms)
        : models_(models), timeout_ms_(timeout_ms) {}

    grpc::Status Predict(grpc::ServerContext* context, const ts::PredictRequest* request,
                         ts::PredictResponse* response) override {
      const auto start = std::chrono::steady_clock::now();
      return Counted(request->model_spec().name(), "Predict", start,
                     DoPredict(*context, *request, *response));
    }

    grpc::Status Classify(grpc::ServerContext* context, const ts::ClassificationRequest* request,
                          ts::ClassificationResponse* response) override {
      return Examples("Classify", *context, *request, *response, serving::Classify);
    }

    grpc::Status Regress(grpc::ServerContext* context, const ts::RegressionRequest* request,
                         ts::RegressionResponse* response) override {
      return Examples("Regress", *context, *request, *response, serving::Regress);
    }

    grpc::Status MultiInference(grpc::ServerContext* context,
                                const ts::MultiInferenceRequest* request,
                                ts::MultiInferenceResponse* response) override {
      const auto start = std::chrono::steady_clock::now();
      // The version is the first task's (TF Serving's); the tasks must all name its model.
      const ts::ModelSpec& spec = request->tasks_size() > 0 ? request->tasks(0).model_spec()
                                                            : ts::ModelSpec::default_instance();
      auto answer = [&]() -> absl::Status {
        TFJIT_ASSIGN_OR_RETURN(Target target, Resolve(spec));
        TFJIT_ASSIGN_OR_RETURN(
            *response,
            serving::MultiInference(*target.served, *request, TimeoutOf(*context, timeout_ms_)));
        return absl::OkStatus();
      };
      return Counted(spec.name(), "MultiInference", start, answer());
    }

    grpc::Status GetModelMetadata(grpc::ServerContext* context,
                                  const ts::GetModelMetadataRequest* request,
                                  ts::GetModelMetadataResponse* response) override {
      (void)context;
      return ToGrpc(DoMetadata(*request, *response));
    }

   private:
    // A request's outcome in the metrics (its count by status; its latency when it succeeded),
    // as gRPC's answer.
    static grpc::Status Counted(const std::string& model, const char* api,
                                std::chrono::steady_clock::time_point start,
                                const absl::Status& s) {
      Metrics& metrics = ServingMetrics();
      metrics.Add("/tensorflow/serving/request_count",
                  {{"model_name", model}, {"status", absl::StatusCodeToString(s.code())}});
      if (s.ok()) {
        metrics.Observe(
            "/tensorflow/serving/request_latency",
            {{"model_name", model}, {"API", api}, {"entrypoint", "GRPC"}},
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count(),
            Metrics::LatencyBuckets());
      }
      return ToGrpc(s);
    }

    // Classify and Regress: `run` on the version the request's spec names, the answer's result
    // and spec (TF Serving's: the name, the signature run, the version), in the metrics.
    template <typename Request, typename Response, typename Result>
    grpc::Status Examples(const char* api, const grpc::ServerContext& context,
                          const Request& request, Response& response,
                          absl::StatusOr<Result> (*run)(const ServedVersion&, const std::string&,
                                                        const ts::Input&, int64_t)) {
      const auto start = std::chrono::steady_clock::now();
      auto answer = [&]() -> absl::Status {
        if (!request.has_model_spec()) return InvalidArgument("Missing ModelSpec");
        TFJIT_ASSIGN_OR_RETURN(Target target, Resolve(request.model_spec()));
        TFJIT_ASSIGN_OR_RETURN(*response.mutable_result(),
                               run(*target.served, target.signature, request.input(),
                                   TimeoutOf(context, timeout_ms_)));
        target.Describe(request.model_spec(), *response.mutable_model_spec());
        return absl::OkStatus();
      };
      return Counted(request.model_spec().name(), api, start, answer());
    }

    // What a request's ModelSpec names: a served version and a signature (serving_default
    // when it names none).
    struct Target {
      std::shared_ptr<const ServedVersion> served;
      std::string signature;
      // The answer's spec, as TF Serving's: the name asked, the signature run, the version.
      void Describe(const ts::ModelSpec& asked, ts::ModelSpec& out) const {
        out.set_name(asked.name());
        out.set_signature_name(signature);
        out.mutable_version()->set_value(served->version);
      }
    };
    absl::StatusOr<Target> Resolve(const ts::ModelSpec& spec) const {
      const VersionChoice choice = ChoiceOf(spec);
      Target t;
      TFJIT_ASSIGN_OR_RETURN(t.served, models_.Find(spec.name(), choice.version, choice.label));
      t.signature = spec.signature_name().empty() ? kDefaultSignature : spec.signature_name();
      return t;
    }

    absl::Status DoPredict(const grpc::ServerContext& context, const ts::PredictRequest& request,
                           ts::PredictResponse& response) {
      if (!request.has_model_spec()) return InvalidArgument("Missing ModelSpec");
      const ts::ModelSpec& spec = request.model_spec();
      TFJIT_ASSIGN_OR_RETURN(Target target, Resolve(spec));
      const std::shared_ptr<const ServedVersion>& served = target.served;
      const std::string& name = target.signature;
      const auto& defs = served->signatures.signature_def();
      auto def = defs.find(name);
      if (def == defs.end()) {
        return FailedPrecondition("Serving signature key \"%s\" not found.", name);
      }
      NamedTensors inputs;
      for (const auto& [key, proto] : request.inputs()) {
        absl::StatusOr<Tensor> t = FromProto(proto);
        if (!t.ok()) {
          return absl::Status(t.status().code(),
                              absl::StrCat("input '", key, "': ", t.status().message()));
        }
        inputs.emplace_back(key, *std::move(t));
      }
      std::vector<std::string> filter(request.output_filter().begin(),
                                      request.output_filter().end());
      TFJIT_ASSIGN_OR_RETURN(NamedTensors outputs,
                             RunSignature(*served, name, def->second, std::move(inputs),
                                          std::move(filter), TimeoutOf(context, timeout_ms_)));
      for (const auto& [key, t] : outputs) (*response.mutable_outputs())[key] = ToProto(t);
      target.Describe(spec, *response.mutable_model_spec());
      return absl::OkStatus();
    }

    absl::Status DoMetadata(const ts::GetModelMetadataRequest& request,
                            ts::GetModelMetadataResponse& response) {
      if (!request.has_model_spec()) return InvalidArgument("Missing ModelSpec");
      if (request.metadata_field_size() == 0) {
        return InvalidArgument("GetModelMetadataRequest must specify at least one metadata_field");
      }
      for (const std::string& field : request.metadata_field()) {
        if (field != "signature_def") {
          return InvalidArgument("Metadata field %s is not supported", field);
        }
      }
      const VersionChoice choice = ChoiceOf(request.model_spec());
      TFJIT_ASSIGN_OR_RETURN(
          std::shared_ptr<const ServedVersion> served,
          models_.Find(request.model_spec().name(), choice.version, choice.label));
      ts::ModelSpec* spec = response.mutable_model_spec();
      spec->set_name(request.model_spec().name());
      spec->mutable_version()->set_value(served->version);
      (*response.mutable_metadata())["signature_def"].PackFrom(served->signatures);
      return absl::OkStatus();
    }

    const ModelManager& models_;
    int64_t timeout_ms_;
  };

  class Model final : public ts::ModelService::Service {
   public:
    explicit Model(ModelManager& models) : models_(models) {}

    // A new ModelServerConfig (TF Serving's ServerCore::ReloadConfig): models it adds are
    // loaded and warmed up before the call returns, models it leaves out are unloaded, and
    // models it keeps at their base path serve throughout. The status is in the answer too.
    grpc::Status HandleReloadConfigRequest(grpc::ServerContext* context,
                                           const ts::ReloadConfigRequest* request,
                                           ts::ReloadConfigResponse* response) override {
      (void)context;
      absl::Status s = [&]() -> absl::Status {
        TFJIT_ASSIGN_OR_RETURN(std::vector<ModelSource> sources,
                               SourcesFromConfig(request->config()));
        return models_.Configure(std::move(sources));
      }();
      if (!s.ok())
        Log(LogLevel::kError, "tfjit serve: reloading the config failed: %s", s.message());
      response->mutable_status()->set_error_code(
          static_cast<tensorflow::error::Code>(static_cast<int>(s.code())));
      response->mutable_status()->set_error_message(std::string(s.message()));
      return ToGrpc(s);
    }

    grpc::Status GetModelStatus(grpc::ServerContext* context,
                                const ts::GetModelStatusRequest* request,
                                ts::GetModelStatusResponse* response) override {
      (void)context;
      if (!request->has_model_spec()) return ToGrpc(InvalidArgument("Missing ModelSpec"));
      const ts::ModelSpec& spec = request->model_spec();
      absl::StatusOr<ts::GetModelStatusResponse> status = models_.Status(
          spec.name(),
          spec.has_version() ? std::optional<int64_t>(spec.version().value()) : std::nullopt);
      if (!status.ok()) return ToGrpc(status.status());
      *response = *std::move(status);
      return grpc::Status::OK;
    }

   private:
    ModelManager& models_;
  };

  Services(ModelManager& models, int64_t timeout_ms)
      : prediction(models, timeout_ms), model(models) {}
  Prediction prediction;
  Model model;
};

absl::StatusOr<std::unique_ptr<GrpcApi>> GrpcApi::Start(ModelManager& models,
                                                        const std::string& address,
                                                        int64_t timeout_ms) {
  std::unique_ptr<GrpcApi> api(new GrpcApi());
  api->services_ = std::make_unique<Services>(models, timeout_ms);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &api->port_);
  builder.SetMaxReceiveMessageSize(INT_MAX);
  builder.SetMaxSendMessageSize(INT_MAX);
  builder.RegisterService(&api->services_->prediction);
  builder.RegisterService(&api->services_->model);
  api->server_ = builder.BuildAndStart();
  if (api->server_ == nullptr || api->port_ == 0) {
    return InvalidArgument("tfjit serve: cannot start the gRPC server at %s", address);
  }
  return api;
}

GrpcApi::~GrpcApi() { Stop(); }

void GrpcApi::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown();
  server_->Wait();
  server_.reset();
}

}  // namespace tfjit::serving
