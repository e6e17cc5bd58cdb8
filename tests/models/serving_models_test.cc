// tfjit serve on TF.js corpus models (issue 26): each model's folder served as version 1 (a
// model.json is a version beyond TF Serving's SavedModels); REST and gRPC answers to random
// batches equal a Session's run of the same inputs (the JSON prints floats so that they read
// back exactly), with dynamic batching on, and no request compiles anything after the
// version's warm-up (the :tfjit:serving:compile_count metric stays 0).
//
// The models come from the conformance test's cache (TFJIT_MODEL_CACHE, default
// ~/.cache/tfjit/models), which that test fills first on a fresh machine.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "frontend/tensor_proto.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "rapidjson/document.h"
#include "serving/json_tensor.h"
#include "serving/metrics.h"
#include "serving/proto/prediction_service.grpc.pb.h"
#include "serving/server.h"
#include "tfjit/session.h"

namespace tfjit::serving {
namespace {

namespace fs = std::filesystem;

std::string CacheDir() {
  if (const char* env = std::getenv("TFJIT_MODEL_CACHE"); env != nullptr && env[0] != '\0') {
    return env;
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : "/root", "/.cache/tfjit/models");
}

fs::path ModelJson(const std::string& id) {
  return fs::path(CacheDir()) / "models" / "@vladmandic" / "human-models" / "models" /
         (id + ".json");
}

// A base path whose version 1 holds `id`'s model.json and weight files (links).
fs::path BasePathFor(const std::string& id, const fs::path& root) {
  const fs::path json = ModelJson(id);
  const fs::path version = root / id / "1";
  fs::create_directories(version);
  fs::create_symlink(json, version / json.filename());
  std::ifstream in(json);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document d;
  d.Parse(text.str().c_str());
  for (const auto& group : d["weightsManifest"].GetArray()) {
    for (const auto& path : group["paths"].GetArray()) {
      const fs::path file = json.parent_path() / path.GetString();
      fs::create_symlink(file, version / file.filename());
    }
  }
  return root / id;
}

Tensor Random(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(DType::kFloat32, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// `t` as a JSON nested list.
std::string Json(const Tensor& t) {
  NamedTensors one = {{"x", t}};
  absl::StatusOr<std::string> s = PredictResponseJson(one, /*row_format=*/false);
  EXPECT_TRUE(s.ok());
  // {"outputs": <tensor>}
  return s->substr(12, s->size() - 13);
}

void ExpectEqualFloats(const rapidjson::Value& got, const Tensor& want, const std::string& what) {
  std::vector<float> flat;
  std::function<void(const rapidjson::Value&)> walk = [&](const rapidjson::Value& v) {
    if (v.IsArray()) {
      for (const auto& e : v.GetArray()) walk(e);
    } else {
      flat.push_back(static_cast<float>(v.GetDouble()));
    }
  };
  walk(got);
  ASSERT_EQ(static_cast<int64_t>(flat.size()), want.num_elements()) << what;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    ASSERT_EQ(flat[static_cast<size_t>(i)], want.data<float>()[i]) << what << " element " << i;
  }
}

TEST(ServingModelsTest, ServedAnswersEqualASessionsAndNothingCompilesAfterWarmUp) {
  const std::vector<std::string> ids = {"age", "emotion", "liveness"};
  for (const std::string& id : ids) {
    ASSERT_TRUE(fs::exists(ModelJson(id))) << ModelJson(id) << " is missing: the model "
                                           << "conformance test fills " << CacheDir();
  }
  const fs::path root = fs::temp_directory_path() / absl::StrCat("tfjit_serving_", getpid());
  fs::remove_all(root);
  std::string config = "model_config_list {\n";
  for (const std::string& id : ids) {
    absl::StrAppend(&config, "  config { name: \"", id, "\" base_path: \"",
                    BasePathFor(id, root).string(), "\" model_platform: \"tensorflow\" }\n");
  }
  config += "}\n";
  std::ofstream(root / "models.config") << config;
  std::ofstream(root / "batching.config")
      << "max_batch_size { value: 8 }\nbatch_timeout_micros { value: 2000 }\n"
         "allowed_batch_sizes: 4\nallowed_batch_sizes: 8\n";
  ServerOptions options;
  options.model_config_file = (root / "models.config").string();
  options.enable_batching = true;
  options.batching_parameters_file = (root / "batching.config").string();
  options.rest_api_port = ServerOptions::kAnyPort;
  options.port = ServerOptions::kAnyPort;
  auto server = Server::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client http("127.0.0.1", (*server)->rest_port());
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*server)->grpc_port()),
                                     grpc::InsecureChannelCredentials());
  auto grpc_stub = tensorflow::serving::PredictionService::NewStub(channel);
  for (const std::string& id : ids) {
    SCOPED_TRACE(id);
    auto session = Session::Load(ModelJson(id).string());
    ASSERT_TRUE(session.ok()) << session.status();
    const std::vector<InputInfo> inputs = (*session)->Inputs();
    ASSERT_EQ(inputs.size(), 1u);
    const std::string fetch = (*session)->DefaultFetches().at(0);
    const std::string out_key = fetch.substr(0, fetch.rfind(':'));
    const std::string in_key = inputs[0].name.substr(0, inputs[0].name.rfind(':'));
    const int64_t compiled_before =
        ServingMetrics().Counter("/tfjit/serving/compile_count", {{"model_name", id}});
    for (int64_t batch : {1, 3, 5, 8}) {
      std::vector<int64_t> dims = inputs[0].dims;
      dims[0] = batch;
      const Tensor x = Random(dims, static_cast<uint32_t>(batch * 7 + id.size()));
      auto want = (*session)->Run({{inputs[0].name, x}}, {fetch});
      ASSERT_TRUE(want.ok()) << want.status();
      // REST, columnar.
      auto r = http.Post(absl::StrCat("/v1/models/", id, ":predict").c_str(),
                         absl::StrCat("{\"inputs\": {\"", in_key, "\": ", Json(x), "}}"),
                         "application/json");
      ASSERT_TRUE(r) << "no REST answer";
      ASSERT_EQ(r->status, 200) << r->body.substr(0, 300);
      rapidjson::Document got;
      got.Parse(r->body.c_str());
      ASSERT_TRUE(got.IsObject() && got.HasMember("outputs"));
      ExpectEqualFloats(got["outputs"], (*want)[0], absl::StrCat("REST batch ", batch));
      // gRPC.
      tensorflow::serving::PredictRequest request;
      request.mutable_model_spec()->set_name(id);
      (*request.mutable_inputs())[in_key] = tf::TensorToProto(x);
      tensorflow::serving::PredictResponse response;
      grpc::ClientContext context;
      const grpc::Status s = grpc_stub->Predict(&context, request, &response);
      ASSERT_TRUE(s.ok()) << s.error_message();
      absl::StatusOr<Tensor> y = tf::TensorFromProto(response.outputs().at(out_key));
      ASSERT_TRUE(y.ok()) << y.status();
      ASSERT_EQ(y->dims(), (*want)[0].dims());
      for (int64_t i = 0; i < y->num_elements(); ++i) {
        ASSERT_EQ(y->data<float>()[i], (*want)[0].data<float>()[i]) << "gRPC batch " << batch;
      }
    }
    EXPECT_EQ(ServingMetrics().Counter("/tfjit/serving/compile_count", {{"model_name", id}}),
              compiled_before)
        << "a request compiled after warm-up";
  }
  (*server)->Stop();
  fs::remove_all(root);
}

}  // namespace
}  // namespace tfjit::serving
