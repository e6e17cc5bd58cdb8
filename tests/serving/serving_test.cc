// `tfjit serve` (serving/): TF Serving's own test models (shared/data/serving) served over REST
// and gRPC and answered as TF Serving answers them (its documented predictions, its metadata files,
// its error bodies and HTTP codes); the JSON of tensors against hand-written cases; version
// policies, labels and a new version picked up by polling while requests keep succeeding.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "frontend/tensor_proto.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "rapidjson/document.h"
#include "serving/batching.h"
#include "serving/json_tensor.h"
#include "serving/metrics.h"
#include "serving/models.h"
#include "serving/predict.h"
#include "serving/proto/prediction_service.grpc.pb.h"
#include "serving/rest_api.h"
#include "serving/server.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit::serving {
namespace {

namespace fs = std::filesystem;

fs::path ServingData(const std::string& name) {
  return fs::path(TFJIT_SOURCE_DIR) / ".." / "shared" / "data" / "serving" / name;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- JSON of tensors ----

TEST(JsonTensorTest, FloatsPrintAsTfServingPrintsThem) {
  EXPECT_EQ(FormatFloat(3.5f), "3.5");
  EXPECT_EQ(FormatFloat(3.0f), "3.0");
  EXPECT_EQ(FormatFloat(999999.0f), "999999.0");
  EXPECT_EQ(FormatFloat(9e6f), "9e+06");
  EXPECT_EQ(FormatFloat(0.1f), "0.1");
  EXPECT_EQ(FormatFloat(3e-5f), "3e-05");
  EXPECT_EQ(FormatFloat(1.0f / 3.0f), "0.333333343");  // 6 digits do not read back
  EXPECT_EQ(FormatDouble(1.0 / 3.0), "0.33333333333333331");
  EXPECT_EQ(FormatFloat(std::nanf("")), "NaN");
  EXPECT_EQ(FormatFloat(-INFINITY), "-Infinity");
  EXPECT_EQ(JsonString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(ErrorJson("x \"y\""), "{\"error\": \"x \\\"y\\\"\"}");
}

absl::StatusOr<NamedTensors> InputsOf(const std::string& body,
                                      const std::vector<TensorSpec>& specs) {
  TFJIT_ASSIGN_OR_RETURN(PredictJson json, PredictJson::Parse(body));
  return json.Inputs(specs);
}

TEST(JsonTensorTest, RowAndColumnarRequestsBecomeTensors) {
  // Rows of one input: [3, 2]; NaN and Infinity tokens accepted.
  auto rows =
      InputsOf(R"({"instances": [[1, 2], [NaN, -Infinity], [5.5, 6]]})", {{"x", DType::kFloat32}});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  const Tensor& x = (*rows)[0].second;
  EXPECT_EQ(x.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(x.data<float>()[1], 2.0f);
  EXPECT_TRUE(std::isnan(x.data<float>()[2]));
  EXPECT_EQ(x.data<float>()[3], -INFINITY);
  // Named rows: each input gets dim 0 = the rows; a b64 string.
  auto named = InputsOf(R"({"instances": [{"a": 1, "s": {"b64": "aGk="}}, {"a": 2, "s": "yo"}]})",
                        {{"a", DType::kInt64}, {"s", DType::kString}});
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ((*named)[0].second.dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ((*named)[0].second.data<int64_t>()[1], 2);
  EXPECT_EQ(*StringValues((*named)[1].second), (std::vector<std::string>{"hi", "yo"}));
  // Columnar: each input its own shape; a scalar is rank 0.
  auto columns = InputsOf(R"({"inputs": {"a": [[1, 2, 3]], "b": true}, "signature_name": "s"})",
                          {{"a", DType::kInt32}, {"b", DType::kBool}});
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_EQ((*columns)[0].second.dims(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ((*columns)[1].second.rank(), 0);
  EXPECT_TRUE((*columns)[1].second.data<bool>()[0]);
}

TEST(JsonTensorTest, BadRequestsGetTfServingsMessages) {
  const std::vector<TensorSpec> x = {{"x", DType::kFloat32}};
  const std::vector<TensorSpec> two = {{"a", DType::kFloat32}, {"b", DType::kFloat32}};
  struct Case {
    std::string body;
    std::vector<TensorSpec> specs;
    std::string message;
  };
  const Case cases[] = {
      {"", x, "JSON Parse error: The document is empty"},
      {"{\"instances\": [1,", x, "JSON Parse error: "},
      {"[1]", x, "Is not object"},
      {R"({"signature_name": 3, "instances": [1]})", x, "'signature_name' key must be a string"},
      {R"({"instances": [1], "inputs": [1]})", x,
       "expecting only one of 'inputs' or 'instances' keys to exist"},
      {R"({"nothing": 1})", x, "Missing 'inputs' or 'instances' key"},
      {R"({"instances": []})", x, "No values in 'instances' array"},
      {R"({"instances": [[1, 2], [3]]})", x,
       "Failed to process element: 1 of 'instances' list. Error: INVALID_ARGUMENT: Expecting "
       "tensor size: 2 but got: 1"},
      {R"({"instances": ["a"]})", x,
       "JSON Value: \"a\" Type: String is not of expected type: float"},
      {R"({"instances": [1, 2]})", two, "instances is a plain list, but expecting list of objects"},
      {R"({"instances": [{"a": 1, "c": 2}]})", two, "does not have named input: c"},
      {R"({"inputs": {"a": 1}})", two, "Missing named input: b in 'inputs' object."},
      {R"({"inputs": [[1, 2], [3]]})", x, "Encountered list at unexpected size: 1 at level: 1"},
      // Duplicate keys do not stand in for a missing input.
      {R"({"instances": [{"a": 1, "a": 2}]})", two, "keys must be equal to: a,b"},
      // Deep nesting is refused before anything recurses over it.
      {std::string(100000, '[') + std::string(100000, ']'), x, "deeper than 64"},
      {"{\"inputs\": " + std::string(70, '[') + "1" + std::string(70, ']') + "}", x,
       "deeper than 64"},
  };
  for (const Case& c : cases) {
    auto got = InputsOf(c.body, c.specs);
    ASSERT_FALSE(got.ok()) << c.body;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_TRUE(absl::StrContains(got.status().message(), c.message)) << c.body << "\n"
                                                                      << got.status().message();
  }
}

TEST(JsonTensorTest, ResponsesFollowTheRequestsFormat) {
  const Tensor y = Tensor::FromVector<float>(DType::kFloat32, {3}, {3.5f, 4.0f, 5.5f});
  EXPECT_EQ(*PredictResponseJson({{"y", y}}, /*row_format=*/true),
            R"({"predictions": [3.5, 4.0, 5.5]})");
  EXPECT_EQ(*PredictResponseJson({{"y", y}}, /*row_format=*/false),
            R"({"outputs": [3.5, 4.0, 5.5]})");
  const Tensor ids = Tensor::FromVector<int64_t>(DType::kInt64, {3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(*PredictResponseJson({{"y", y}, {"ids", ids}}, true),
            R"({"predictions": [{"ids": [1, 2], "y": 3.5}, {"ids": [3, 4], "y": 4.0}, )"
            R"({"ids": [5, 6], "y": 5.5}]})");
  EXPECT_EQ(*PredictResponseJson({{"y", y}, {"ids", ids}}, false),
            R"({"outputs": {"ids": [[1, 2], [3, 4], [5, 6]], "y": [3.5, 4.0, 5.5]}})");
  const Tensor bytes = MakeStringTensor({1}, {"hi"});
  EXPECT_EQ(*PredictResponseJson({{"out_bytes", bytes}}, true),
            R"({"predictions": [{"b64": "aGk="}]})");
  auto ragged = PredictResponseJson(
      {{"y", y}, {"z", Tensor::FromVector<float>(DType::kFloat32, {2}, {1, 2})}}, true);
  ASSERT_FALSE(ragged.ok());
  EXPECT_TRUE(absl::StrContains(ragged.status().message(),
                                "Tensor name: z has inconsistent batch size: 2 expecting: 3"));
}

// ---- the server ----

struct Served {
  std::unique_ptr<Server> server;
  std::unique_ptr<httplib::Client> client;
};

Served Serve(ServerOptions options) {
  options.rest_api_port = ServerOptions::kAnyPort;
  options.port = 0;
  Served s;
  auto server = Server::Start(std::move(options));
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return s;
  s.server = std::move(*server);
  s.client = std::make_unique<httplib::Client>("127.0.0.1", s.server->rest_port());
  return s;
}

// status, body
std::pair<int, std::string> Post(httplib::Client& c, const std::string& path,
                                 const std::string& body) {
  auto r = c.Post(path.c_str(), body, "application/json");
  if (!r) return {-1, "no response"};
  return {r->status, r->body};
}
std::pair<int, std::string> Get(httplib::Client& c, const std::string& path) {
  auto r = c.Get(path.c_str());
  if (!r) return {-1, "no response"};
  return {r->status, r->body};
}

TEST(ServeTest, HalfPlusThreeAnswersAsTfServingDocumentsIt) {
  ServerOptions options;
  options.model_name = "half_plus_three";
  options.model_base_path = ServingData("saved_model_half_plus_three").string();
  Served s = Serve(options);
  ASSERT_NE(s.client, nullptr);
  EXPECT_EQ(
      Post(*s.client, "/v1/models/half_plus_three:predict", R"({"instances": [1.0, 2.0, 5.0]})"),
      std::make_pair(200, std::string(R"({"predictions": [3.5, 4.0, 5.5]})")));
  EXPECT_EQ(Post(*s.client, "/v1/models/half_plus_three/versions/123:predict",
                 R"({"signature_name": "serving_default", "inputs": [3.0, 4.0]})"),
            std::make_pair(200, std::string(R"({"outputs": [4.5, 5.0]})")));
  // The status: version 123, available.
  auto [code, body] = Get(*s.client, "/v1/models/half_plus_three");
  EXPECT_EQ(code, 200) << body;
  rapidjson::Document status;
  status.Parse(body.c_str());
  ASSERT_TRUE(status.IsObject()) << body;
  const auto& versions = status["model_version_status"];
  ASSERT_EQ(versions.Size(), 1u) << body;
  EXPECT_STREQ(versions[0]["version"].GetString(), "123");
  EXPECT_STREQ(versions[0]["state"].GetString(), "AVAILABLE");
  EXPECT_STREQ(versions[0]["status"]["error_code"].GetString(), "OK");
  // Errors: TF Serving's bodies and codes.
  const std::pair<int, std::string> errors[] = {
      Post(*s.client, "/v1/models/nope:predict", R"({"instances": [1.0]})"),
      Post(*s.client, "/v1/models/half_plus_three:predict", "{\"instances\": [1.0"),
      Post(*s.client, "/v1/models/half_plus_three:predict",
           R"({"signature_name": "nope", "instances": [1.0]})"),
      Post(*s.client, "/v1/models/half_plus_three/versions/7:predict", R"({"instances": [1.0]})"),
      Get(*s.client, "/v1/models"),
      Get(*s.client, "/v1/models/half_plus_three:predict"),
      Get(*s.client, "/v1/models/nope"),
      Post(*s.client, "/v1/models/half_plus_three:classify", R"({"examples": []})"),
  };
  const std::pair<int, std::string> want[] = {
      {404, R"j({"error": "Servable not found for request: Latest(nope)"})j"},
      {400, "{\"error\": \"JSON Parse error: Missing a comma or ']' after an array element."},
      {400, R"({"error": "Serving signature name: \"nope\" not found in signature def"})"},
      {404, R"j({"error": "Servable not found for request: Specific(half_plus_three, 7)"})j"},
      {400, R"({"error": "Missing model name in request."})"},
      {400, R"({"error": "Malformed request: GET /v1/models/half_plus_three:predict"})"},
      {404, R"({"error": "Could not find any versions of model nope"})"},
      {400, "{\"error\": \"JSON Value: {\\\"examples\\\":[]} 'examples' value is an empty array"},
  };
  for (size_t i = 0; i < std::size(want); ++i) {
    EXPECT_EQ(errors[i].first, want[i].first) << errors[i].second;
    EXPECT_TRUE(absl::StartsWith(errors[i].second, want[i].second))
        << errors[i].second << "\nwanted " << want[i].second;
  }
}

// Two versions under one base path: the default policy serves the highest, 124; version 123
// is asked for by number; the metadata equals TF Serving's own answer for it.
TEST(ServeTest, TwoVersionsAndTfServingsMetadata) {
  ServerOptions options;
  options.model_name = "saved_model_half_plus_two_2_versions";
  options.model_base_path = ServingData("saved_model_half_plus_two_2_versions").string();
  Served s = Serve(options);
  ASSERT_NE(s.client, nullptr);
  auto [code, body] = Get(*s.client, "/v1/models/saved_model_half_plus_two_2_versions/metadata");
  ASSERT_EQ(code, 200) << body;
  rapidjson::Document latest;
  latest.Parse(body.c_str());
  ASSERT_TRUE(latest.IsObject()) << body;
  EXPECT_STREQ(latest["model_spec"]["version"].GetString(), "124");
  // Version 124 is the only one loaded by default.
  EXPECT_EQ(
      Get(*s.client, "/v1/models/saved_model_half_plus_two_2_versions/versions/123/metadata").first,
      404);
  options.model_config_file =
      testing::WriteTempFile("two_versions.config", absl::StrCat(R"(
model_config_list {
  config {
    name: "saved_model_half_plus_two_2_versions"
    base_path: ")",
                                                                 options.model_base_path, R"("
    model_platform: "tensorflow"
    model_version_policy { all {} }
    version_labels { key: "stable" value: 123 }
  }
})"));
  s.client.reset();
  s.server.reset();
  s = Serve(options);
  ASSERT_NE(s.client, nullptr);
  auto [code123, body123] =
      Get(*s.client, "/v1/models/saved_model_half_plus_two_2_versions/versions/123/metadata");
  ASSERT_EQ(code123, 200) << body123;
  rapidjson::Document got, want;
  got.Parse(body123.c_str());
  want.Parse(ReadText(ServingData("saved_model_half_plus_two_2_versions_metadata.json")).c_str());
  ASSERT_TRUE(got.IsObject() && want.IsObject()) << body123;
  EXPECT_TRUE(got == want) << body123;
  auto [code_label, body_label] =
      Get(*s.client, "/v1/models/saved_model_half_plus_two_2_versions/labels/stable/metadata");
  ASSERT_EQ(code_label, 200) << body_label;
  EXPECT_TRUE(absl::StrContains(body_label, "\"version\": \"123\"")) << body_label;
  // Status lists both, newest first.
  auto [code_status, status] = Get(*s.client, "/v1/models/saved_model_half_plus_two_2_versions");
  ASSERT_EQ(code_status, 200);
  EXPECT_LT(status.find("\"124\""), status.find("\"123\"")) << status;
  // Both predict: y = 0.5 x + 2.
  EXPECT_EQ(Post(*s.client, "/v1/models/saved_model_half_plus_two_2_versions/labels/stable:predict",
                 R"({"instances": [[2.0], [4.0]]})"),
            std::make_pair(200, std::string(R"({"predictions": [[3.0], [4.0]]})")));
}

// A version that appears under the base path is loaded, warmed up and then served, while
// requests keep being answered (by the old version until the new one is ready).
TEST(ServeTest, NewVersionsArePickedUpWithoutDowntime) {
  const fs::path base = fs::path(testing::TestTempDir()) / "poll_versions";
  fs::remove_all(base);
  fs::create_directories(base);
  const fs::path source = ServingData("saved_model_half_plus_two_2_versions");
  fs::copy(source / "00000123", base / "00000123", fs::copy_options::recursive);
  ServerOptions options;
  options.model_name = "m";
  options.model_base_path = base.string();
  options.file_system_poll_wait_seconds = 1;
  Served s = Serve(options);
  ASSERT_NE(s.client, nullptr);
  auto version = [&]() -> std::string {
    auto [code, body] = Get(*s.client, "/v1/models/m/metadata");
    if (code != 200) return absl::StrCat("HTTP ", code, ": ", body);
    rapidjson::Document d;
    d.Parse(body.c_str());
    return d["model_spec"]["version"].GetString();
  };
  EXPECT_EQ(version(), "123");
  std::atomic<bool> done{false};
  std::atomic<int> failures{0}, answered{0};
  std::thread load([&] {
    httplib::Client c("127.0.0.1", s.server->rest_port());
    while (!done) {
      auto [code, body] = Post(c, "/v1/models/m:predict", R"({"instances": [[2.0]]})");
      if (code != 200 || body != R"({"predictions": [[3.0]]})") ++failures;
      ++answered;
    }
  });
  fs::copy(source / "00000124", base / "00000124", fs::copy_options::recursive);
  std::string seen;
  for (int i = 0; i < 100 && (seen = version()) != "124"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  done = true;
  load.join();
  EXPECT_EQ(seen, "124");
  EXPECT_EQ(failures, 0) << "of " << answered << " requests";
  EXPECT_GT(answered, 0);
  s.client.reset();
  s.server.reset();
  fs::remove_all(base);
}

// The gRPC API: half_plus_three's Predict, GetModelMetadata and GetModelStatus through a
// client stub of TF Serving's services, and its error codes.
TEST(ServeTest, GrpcAnswersAsTfServing) {
  ServerOptions options;
  options.model_name = "half_plus_three";
  options.model_base_path = ServingData("saved_model_half_plus_three").string();
  options.rest_api_port = 0;
  options.port = ServerOptions::kAnyPort;
  auto server = Server::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->grpc_port(), 0);
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*server)->grpc_port()),
                                     grpc::InsecureChannelCredentials());
  auto prediction = tensorflow::serving::PredictionService::NewStub(channel);
  auto model = tensorflow::serving::ModelService::NewStub(channel);

  tensorflow::serving::PredictRequest request;
  request.mutable_model_spec()->set_name("half_plus_three");
  tensorflow::TensorProto& x = (*request.mutable_inputs())["x"];
  x.set_dtype(tensorflow::DT_FLOAT);
  x.mutable_tensor_shape()->add_dim()->set_size(3);
  for (float v : {1.0f, 2.0f, 5.0f}) x.add_float_val(v);
  tensorflow::serving::PredictResponse response;
  {
    grpc::ClientContext context;
    const grpc::Status s = prediction->Predict(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  ASSERT_EQ(response.outputs().count("y"), 1u);
  EXPECT_EQ(response.outputs().at("y").float_val_size(), 3);  // TF Serving's typed field
  absl::StatusOr<Tensor> y = tf::TensorFromProto(response.outputs().at("y"));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(std::vector<float>(y->data<float>(), y->data<float>() + 3),
            (std::vector<float>{3.5f, 4.0f, 5.5f}));
  EXPECT_EQ(response.model_spec().version().value(), 123);
  EXPECT_EQ(response.model_spec().signature_name(), "serving_default");

  tensorflow::serving::GetModelMetadataRequest meta_request;
  meta_request.mutable_model_spec()->set_name("half_plus_three");
  meta_request.add_metadata_field("signature_def");
  tensorflow::serving::GetModelMetadataResponse meta;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(prediction->GetModelMetadata(&context, meta_request, &meta).ok());
  }
  tensorflow::serving::SignatureDefMap signatures;
  ASSERT_TRUE(meta.metadata().at("signature_def").UnpackTo(&signatures));
  EXPECT_EQ(signatures.signature_def().at("serving_default").inputs().at("x").name(), "x:0");

  tensorflow::serving::GetModelStatusRequest status_request;
  status_request.mutable_model_spec()->set_name("half_plus_three");
  tensorflow::serving::GetModelStatusResponse status;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(model->GetModelStatus(&context, status_request, &status).ok());
  }
  ASSERT_EQ(status.model_version_status_size(), 1);
  EXPECT_EQ(status.model_version_status(0).version(), 123);
  EXPECT_EQ(status.model_version_status(0).state(),
            tensorflow::serving::ModelVersionStatus::AVAILABLE);

  // Errors: a shape that would take gigabytes from a few bytes, an unknown model, an unknown
  // signature, an unknown output in the filter.
  {
    tensorflow::serving::PredictRequest huge = request;
    tensorflow::TensorProto& big = (*huge.mutable_inputs())["x"];
    big.clear_float_val();
    big.add_float_val(1.0f);
    big.mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 40);
    grpc::ClientContext context;
    const grpc::Status s = prediction->Predict(&context, huge, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  }
  request.mutable_model_spec()->set_name("nope");
  {
    grpc::ClientContext context;
    const grpc::Status s = prediction->Predict(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(s.error_message(), "Servable not found for request: Latest(nope)");
  }
  request.mutable_model_spec()->set_name("half_plus_three");
  request.mutable_model_spec()->set_signature_name("nope");
  {
    grpc::ClientContext context;
    const grpc::Status s = prediction->Predict(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(s.error_message(), "Serving signature key \"nope\" not found.");
  }
  request.mutable_model_spec()->clear_signature_name();
  request.add_output_filter("z");
  {
    grpc::ClientContext context;
    const grpc::Status s = prediction->Predict(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(
        absl::StartsWith(s.error_message(), "output tensor alias not found in signature: z"))
        << s.error_message();
  }
}

// Dynamic batching: concurrent one-row requests share signature runs (padded up to an allowed
// batch size), each gets its own rows back; a task larger than max_batch_size and parameters
// TF Serving refuses get TF Serving's messages; the server serves with batching on.
TEST(ServeTest, BatchingJoinsConcurrentRequests) {
  tensorflow::serving::BatchingParameters params;
  params.mutable_max_batch_size()->set_value(8);
  params.mutable_batch_timeout_micros()->set_value(200000);
  params.mutable_num_batch_threads()->set_value(1);
  for (int64_t b : {2, 4, 8}) params.add_allowed_batch_sizes(b);
  absl::StatusOr<BatchingOptions> batching = BatchingFromProto(params);
  ASSERT_TRUE(batching.ok()) << batching.status();
  ModelManager models(SessionOptions{}, *batching);
  ModelSource source;
  source.name = "half_plus_three";
  source.base_path = ServingData("saved_model_half_plus_three").string();
  ASSERT_TRUE(models.Configure({source}).ok());
  auto served = models.Find("half_plus_three", std::nullopt, "");
  ASSERT_TRUE(served.ok()) << served.status();
  ASSERT_EQ((*served)->batchers.count("serving_default"), 1u);
  const tensorflow::SignatureDef& def = (*served)->signatures.signature_def().at("serving_default");
  constexpr int kRequests = 7;
  std::vector<float> got(kRequests, -1);
  std::vector<std::thread> clients;
  for (int i = 0; i < kRequests; ++i) {
    clients.emplace_back([&, i] {
      NamedTensors in = {{"x", Tensor::FromVector<float>(DType::kFloat32, {1}, {float(i)})}};
      auto out = RunSignature(**served, "serving_default", def, std::move(in), {}, 10000);
      if (out.ok() && out->size() == 1) got[i] = (*out)[0].second.data<float>()[0];
    });
  }
  for (std::thread& t : clients) t.join();
  for (int i = 0; i < kRequests; ++i) EXPECT_EQ(got[i], 0.5f * i + 3.0f) << i;
  const BatchingStats stats = (*served)->batchers.at("serving_default")->stats();
  EXPECT_EQ(stats.tasks, kRequests);
  EXPECT_EQ(stats.rows, kRequests);
  EXPECT_LT(stats.batches, kRequests);  // requests shared runs
  EXPECT_GT(stats.padding, 0);          // 7 rows run as 8, or smaller batches padded up
  // A task over max_batch_size.
  NamedTensors big = {{"x", Tensor(DType::kFloat32, {9})}};
  auto refused = RunSignature(**served, "serving_default", def, std::move(big), {}, 1000);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "Task size 9 is larger than maximum batch size 8");
  // allowed_batch_sizes must end at max_batch_size.
  params.mutable_max_batch_size()->set_value(16);
  auto bad = BatchingFromProto(params);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StartsWith(bad.status().message(),
                               "Last entry in allowed_batch_sizes must match max_batch_size"));
  // Through the server: --enable_batching with a parameters file.
  ServerOptions options;
  options.model_name = "half_plus_three";
  options.model_base_path = source.base_path;
  options.enable_batching = true;
  options.batching_parameters_file =
      testing::WriteTempFile("batching.config",
                             "max_batch_size { value: 4 }\nbatch_timeout_micros { value: 1000 }\n"
                             "allowed_batch_sizes: 2\nallowed_batch_sizes: 4\n");
  Served s = Serve(options);
  ASSERT_NE(s.client, nullptr);
  EXPECT_EQ(
      Post(*s.client, "/v1/models/half_plus_three:predict", R"({"instances": [1.0, 2.0, 5.0]})"),
      std::make_pair(200, std::string(R"({"predictions": [3.5, 4.0, 5.5]})")));
}

// Classify and Regress (REST :classify/:regress, gRPC): TF Serving's documented regress answer
// for half_plus_three ({"results": [3.5, 4.0]}), half_plus_two's classify signature (scores
// only, so labels are empty), a context's features under each example's own, TF Serving's
// messages for malformed requests and signatures of the wrong kind, and no compile after the
// version's warm-up (which feeds the signatures a tf.Example their ParseExample accepts).
TEST(ServeTest, ClassifyAndRegressAsTfServing) {
  ServerOptions options;
  options.model_config_file = testing::WriteTempFile(
      "classify_models.config", absl::StrCat("model_config_list {\n"
                                             "  config { name: 'half_plus_three' base_path: '",
                                             ServingData("saved_model_half_plus_three").string(),
                                             "' model_platform: 'tensorflow' }\n"
                                             "  config { name: 'half_plus_two' base_path: '",
                                             (fs::path(TFJIT_SOURCE_DIR) / "tests" / "data" /
                                              "savedmodels" / "saved_model_half_plus_two_cpu")
                                                 .string(),
                                             "' model_platform: 'tensorflow' }\n}\n"));
  options.rest_api_port = ServerOptions::kAnyPort;
  options.port = ServerOptions::kAnyPort;
  auto server = Server::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->rest_port());
  const int64_t compiled_three =
      ServingMetrics().Counter("/tfjit/serving/compile_count", {{"model_name", "half_plus_three"}});
  const int64_t compiled_two =
      ServingMetrics().Counter("/tfjit/serving/compile_count", {{"model_name", "half_plus_two"}});
  // TF Serving's REST documentation: regress on half_plus_three.
  EXPECT_EQ(Post(client, "/v1/models/half_plus_three:regress",
                 R"({"signature_name": "tensorflow/serving/regress",
                     "examples": [{"x": 1.0}, {"x": 2.0}]})"),
            std::make_pair(200, std::string(R"({"results": [3.5, 4.0]})")));
  // Three batch sizes: the warm-up compiled for 1 and 2 (>= 2 symbolic).
  EXPECT_EQ(Post(client, "/v1/models/half_plus_three:regress",
                 R"({"signature_name": "tensorflow/serving/regress",
                     "examples": [{"x": 0.0}, {"x": -2.0}, {"x": 8.0}, {"x": 1e3}]})"),
            std::make_pair(200, std::string(R"({"results": [3.0, 2.0, 7.0, 503.0]})")));
  EXPECT_EQ(Post(client, "/v1/models/half_plus_two:classify",
                 R"({"signature_name": "classify_x_to_y", "examples": [{"x": 1.0}, {"x": -4.0}]})"),
            std::make_pair(200, std::string(R"({"results": [[["", 2.5]], [["", 0.0]]]})")));
  EXPECT_EQ(Post(client, "/v1/models/half_plus_two/versions/123:regress",
                 R"({"signature_name": "regress_x_to_y2", "context": {"x": 3.0},
                     "examples": [{}, {"x": 1.0}]})"),
            std::make_pair(200, std::string(R"({"results": [4.5, 3.5]})")));
  EXPECT_EQ(
      ServingMetrics().Counter("/tfjit/serving/compile_count", {{"model_name", "half_plus_three"}}),
      compiled_three);
  EXPECT_EQ(
      ServingMetrics().Counter("/tfjit/serving/compile_count", {{"model_name", "half_plus_two"}}),
      compiled_two);
  // Malformed requests and the wrong kind of signature: 400 with TF Serving's messages.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"instances": [1.0]})",
       "When method is classify, key 'examples' is expected and was not found"},
      {R"({"examples": {"x": 1.0}})", "Expecting 'examples' value to be an list/array"},
      {R"({"examples": []})", "'examples' value is an empty array"},
      {R"({"examples": [1.0]})", "Example must be JSON object but got JSON Number"},
      {R"({"examples": [{"x": [1, 2.5]}]})",
       "Unexpected element type in feature: x expecting type: int64"},
      {R"({"examples": [{"x": [[1.0]]}]})",
       "Feature: x has element with unexpected JSON type: Array"},
      {R"({"examples": [{"x": {"b64": "%%%"}}]})", "Unable to base64 decode"},
      {R"({"signature_name": "classify_x_to_y", "examples": [{"x": 1}]})",
       "Data types don't match. Data type: int64 but expected type: float"},
      {R"({"signature_name": "classify_x_to_y", "examples": [{"y": 1.0}]})",
       "Feature: x (data type: float) is required but could not be found."},
      {R"({"signature_name": "nope", "examples": [{"x": 1.0}]})",
       "No signature was found with the name: nope"},
      {R"({"examples": [{"x": 1.0}]})", "No classification inputs found in SignatureDef: "},
  };
  for (const auto& [body, message] : bad) {
    auto [code, answer] = Post(client, "/v1/models/half_plus_two:classify", body);
    EXPECT_EQ(code, 400) << body << " -> " << answer;
    EXPECT_TRUE(absl::StrContains(answer, message)) << body << " -> " << answer;
    EXPECT_TRUE(absl::StartsWith(answer, "{\"error\": ")) << answer;
  }
  // gRPC: Classify and Regress through TF Serving's service stub.
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*server)->grpc_port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = tensorflow::serving::PredictionService::NewStub(channel);
  auto example = [](float x) {
    tensorflow::Example e;
    (*e.mutable_features()->mutable_feature())["x"].mutable_float_list()->add_value(x);
    return e;
  };
  {
    tensorflow::serving::ClassificationRequest request;
    request.mutable_model_spec()->set_name("half_plus_two");
    request.mutable_model_spec()->set_signature_name("classify_x_to_y");
    for (float x : {2.0f, 6.0f})
      *request.mutable_input()->mutable_example_list()->add_examples() = example(x);
    tensorflow::serving::ClassificationResponse response;
    grpc::ClientContext context;
    const grpc::Status s = stub->Classify(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(response.result().classifications_size(), 2);
    EXPECT_EQ(response.result().classifications(0).classes(0).score(), 3.0f);
    EXPECT_EQ(response.result().classifications(1).classes(0).score(), 5.0f);
    EXPECT_EQ(response.model_spec().name(), "half_plus_two");
    EXPECT_EQ(response.model_spec().signature_name(), "classify_x_to_y");
    EXPECT_EQ(response.model_spec().version().value(), 123);
  }
  {
    tensorflow::serving::RegressionRequest request;
    request.mutable_model_spec()->set_name("half_plus_three");
    request.mutable_model_spec()->set_signature_name("tensorflow/serving/regress");
    auto* with_context = request.mutable_input()->mutable_example_list_with_context();
    *with_context->mutable_context() = example(4.0f);
    with_context->add_examples();
    *with_context->add_examples() = example(-6.0f);
    tensorflow::serving::RegressionResponse response;
    grpc::ClientContext context;
    const grpc::Status s = stub->Regress(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(response.result().regressions_size(), 2);
    EXPECT_EQ(response.result().regressions(0).value(), 5.0f);  // the context's x
    EXPECT_EQ(response.result().regressions(1).value(), 0.0f);  // the example's own x
  }
  {
    // MultiInference: three tasks on one input; then TF Serving's refusals.
    auto task = [](tensorflow::serving::MultiInferenceRequest& r, const char* model,
                   const char* signature, const char* method) {
      tensorflow::serving::InferenceTask* t = r.add_tasks();
      t->mutable_model_spec()->set_name(model);
      t->mutable_model_spec()->set_signature_name(signature);
      t->set_method_name(method);
    };
    constexpr char kClassify[] = "tensorflow/serving/classify";
    constexpr char kRegress[] = "tensorflow/serving/regress";
    tensorflow::serving::MultiInferenceRequest request;
    *request.mutable_input()->mutable_example_list()->add_examples() = example(2.0f);
    task(request, "half_plus_two", "classify_x_to_y", kClassify);
    task(request, "half_plus_two", "regress_x_to_y", kRegress);
    task(request, "half_plus_two", "regress_x_to_y2", kRegress);
    tensorflow::serving::MultiInferenceResponse response;
    {
      grpc::ClientContext context;
      const grpc::Status s = stub->MultiInference(&context, request, &response);
      ASSERT_TRUE(s.ok()) << s.error_message();
    }
    ASSERT_EQ(response.results_size(), 3);
    EXPECT_EQ(response.results(0).classification_result().classifications(0).classes(0).score(),
              3.0f);
    EXPECT_EQ(response.results(1).regression_result().regressions(0).value(), 3.0f);
    EXPECT_EQ(response.results(2).regression_result().regressions(0).value(), 4.0f);
    EXPECT_EQ(response.results(2).model_spec().signature_name(), "regress_x_to_y2");
    EXPECT_EQ(response.results(2).model_spec().version().value(), 123);
    auto refused = [&](void (*add)(tensorflow::serving::MultiInferenceRequest&)) {
      tensorflow::serving::MultiInferenceRequest r = request;
      add(r);
      grpc::ClientContext context;
      return stub->MultiInference(&context, r, &response);
    };
    grpc::Status s = refused(
        [](tensorflow::serving::MultiInferenceRequest& r) { r.add_tasks()->CopyFrom(r.tasks(1)); });
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "Duplicate evaluation of signature: regress_x_to_y");
    s = refused([](tensorflow::serving::MultiInferenceRequest& r) {
      r.mutable_tasks(2)->mutable_model_spec()->set_name("half_plus_three");
    });
    EXPECT_EQ(s.error_message(),
              "All ModelSpecs in a MultiInferenceRequest must access the same model name.");
    s = refused([](tensorflow::serving::MultiInferenceRequest& r) {
      r.mutable_tasks(2)->set_method_name("tensorflow/serving/predict");
    });
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
    EXPECT_EQ(s.error_message(), "Unsupported signature method_name: tensorflow/serving/predict");
    s = refused([](tensorflow::serving::MultiInferenceRequest& r) {
      r.mutable_tasks(2)->mutable_model_spec()->set_signature_name("regress_x2_to_y3");
    });
    EXPECT_EQ(s.error_message(), "Input tensor must be the same for all Signatures.");
  }
  {
    tensorflow::serving::RegressionRequest request;  // no model spec
    tensorflow::serving::RegressionResponse response;
    grpc::ClientContext context;
    const grpc::Status s = stub->Regress(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "Missing ModelSpec");
    request.mutable_model_spec()->set_name("half_plus_three");
    request.mutable_model_spec()->set_signature_name("tensorflow/serving/regress");
    grpc::ClientContext context2;
    const grpc::Status empty = stub->Regress(&context2, request, &response);
    EXPECT_EQ(empty.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(empty.error_message(), "Input is empty.");
  }
}

// pad_variable_length_inputs: requests whose inputs differ after dim 0 share a batch only with
// it, each grown to the batch's largest dims with its own first element (TF Serving's padding;
// the outputs keep the padded dims). Without it they run in separate batches with their own
// dims. String inputs batch, pad and split as numbers do.
TEST(ServeTest, VariableLengthInputsArePaddedAsTfServingPadsThem) {
  constexpr char kGraph[] = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: -1 } } } } }
    node { name: "twice" op: "AddV2" input: "x" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "c" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: -1 } dim { size: -1 } } } } }
    node { name: "cube" op: "Identity" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "s" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "shape" value { shape { dim { size: -1 } } } } }
    node { name: "words" op: "Identity" input: "s" attr { key: "T" value { type: DT_STRING } } }
  )pb";
  auto session = Session::Load(testing::WriteTempFile("padding.pbtxt", kGraph), SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status();
  auto signature = [](const char* in, const char* out, int dtype) {
    tensorflow::SignatureDef def;
    (*def.mutable_inputs())["in"].set_name(absl::StrCat(in, ":0"));
    (*def.mutable_inputs())["in"].set_dtype(static_cast<tensorflow::DataType>(dtype));
    (*def.mutable_outputs())["out"].set_name(absl::StrCat(out, ":0"));
    return def;
  };
  // Two tasks, run concurrently into a queue that waits for both (max_batch_size 2).
  auto run_two = [&](SignatureBatcher& batcher, Tensor a, Tensor b) {
    std::vector<absl::StatusOr<NamedTensors>> got(2, Internal("not run"));
    std::thread first([&] { got[0] = batcher.Run({{"in", a}}, 10000); });
    std::thread second([&] { got[1] = batcher.Run({{"in", b}}, 10000); });
    first.join();
    second.join();
    std::vector<Tensor> out;
    for (auto& g : got) {
      EXPECT_TRUE(g.ok()) << g.status();
      out.push_back(g.ok() && g->size() == 1 ? (*g)[0].second : Tensor());
    }
    return out;
  };
  BatchingOptions options;
  options.max_batch_size = 2;
  options.batch_timeout_micros = 2000000;
  options.num_batch_threads = 1;
  options.pad_variable_length_inputs = true;
  {
    SignatureBatcher batcher("m", **session, signature("x", "twice", 1), options);
    std::vector<Tensor> out =
        run_two(batcher, Tensor::FromVector<float>(DType::kFloat32, {1, 3}, {1, 2, 3}),
                Tensor::FromVector<float>(DType::kFloat32, {1, 1}, {4}));
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[0].dims(), (std::vector<int64_t>{1, 3}));
    ASSERT_EQ(out[1].dims(), (std::vector<int64_t>{1, 3}));  // [4] grown to [4, 4, 4]
    EXPECT_EQ(std::vector<float>(out[0].data<float>(), out[0].data<float>() + 3),
              (std::vector<float>{2, 4, 6}));
    EXPECT_EQ(std::vector<float>(out[1].data<float>(), out[1].data<float>() + 3),
              (std::vector<float>{8, 8, 8}));
    EXPECT_EQ(batcher.stats().batches, 1);
  }
  {
    // Rank 3: each dim grown at its end.
    SignatureBatcher batcher("m", **session, signature("c", "cube", 1), options);
    std::vector<Tensor> out =
        run_two(batcher, Tensor::FromVector<float>(DType::kFloat32, {1, 2, 2}, {1, 2, 3, 4}),
                Tensor::FromVector<float>(DType::kFloat32, {1, 1, 3}, {5, 6, 7}));
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[0].dims(), (std::vector<int64_t>{1, 2, 3}));
    ASSERT_EQ(out[1].dims(), (std::vector<int64_t>{1, 2, 3}));
    EXPECT_EQ(std::vector<float>(out[0].data<float>(), out[0].data<float>() + 6),
              (std::vector<float>{1, 2, 1, 3, 4, 1}));
    EXPECT_EQ(std::vector<float>(out[1].data<float>(), out[1].data<float>() + 6),
              (std::vector<float>{5, 6, 7, 5, 5, 5}));
  }
  {
    // Without padding the two run apart, each with its own dims.
    options.pad_variable_length_inputs = false;
    SignatureBatcher batcher("m", **session, signature("x", "twice", 1), options);
    std::vector<Tensor> out =
        run_two(batcher, Tensor::FromVector<float>(DType::kFloat32, {1, 3}, {1, 2, 3}),
                Tensor::FromVector<float>(DType::kFloat32, {1, 1}, {4}));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{1, 3}));
    ASSERT_EQ(out[1].dims(), (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(out[1].data<float>()[0], 8.0f);
    EXPECT_EQ(batcher.stats().batches, 2);
  }
  {
    // Strings: joined, padded up to an allowed batch size with the last row, split back.
    options.max_batch_size = 4;
    options.allowed_batch_sizes = {4};
    options.batch_timeout_micros = 300000;
    SignatureBatcher batcher("m", **session, signature("s", "words", 7), options);
    std::vector<Tensor> out = run_two(batcher, MakeStringTensor({2}, {"a", "bc"}),
                                      MakeStringTensor({1}, {std::string("d\0e", 3)}));
    ASSERT_EQ(out.size(), 2u);
    ASSERT_NE(StringValues(out[0]), nullptr);
    ASSERT_NE(StringValues(out[1]), nullptr);
    EXPECT_EQ(*StringValues(out[0]), (std::vector<std::string>{"a", "bc"}));
    EXPECT_EQ(*StringValues(out[1]), (std::vector<std::string>{std::string("d\0e", 3)}));
    const BatchingStats stats = batcher.stats();
    EXPECT_EQ(stats.rows, 3);
    EXPECT_EQ(stats.padding, stats.batches == 1 ? 1 : 5);  // one batch of 4, or 2 + 3 padding
  }
}

// --monitoring_config_file: the Prometheus page on the REST port, with TF Serving's metric
// names, labels and format.
// The model config changes without a restart: ModelService.HandleReloadConfigRequest adds
// and removes models (a config with a missing base path changes nothing and says why), and
// --model_config_file_poll_wait_seconds serves a config file's new text.
TEST(ServeTest, ModelConfigReloadsWithoutRestart) {
  auto config = [](bool three, bool two, const std::string& two_path) {
    std::string text = "model_config_list {\n";
    if (three) {
      absl::StrAppend(&text, "  config { name: 'three' base_path: '",
                      ServingData("saved_model_half_plus_three").string(),
                      "' model_platform: 'tensorflow' }\n");
    }
    if (two) {
      absl::StrAppend(&text, "  config { name: 'two' base_path: '", two_path,
                      "' model_platform: 'tensorflow' }\n");
    }
    return text + "}\n";
  };
  const std::string two_path = ServingData("saved_model_half_plus_two_2_versions").string();
  const std::string file =
      testing::WriteTempFile("reload_models.config", config(true, false, two_path));
  ServerOptions options;
  options.model_config_file = file;
  options.model_config_file_poll_wait_seconds = 1;
  options.rest_api_port = ServerOptions::kAnyPort;
  options.port = ServerOptions::kAnyPort;
  auto server = Server::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->rest_port());
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*server)->grpc_port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = tensorflow::serving::ModelService::NewStub(channel);
  auto reload = [&](const std::string& text, tensorflow::serving::ReloadConfigResponse* response) {
    tensorflow::serving::ReloadConfigRequest request;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, request.mutable_config()));
    grpc::ClientContext context;
    return stub->HandleReloadConfigRequest(&context, request, response);
  };
  auto status_of = [&](const std::string& model) {
    return Get(client, "/v1/models/" + model).first;
  };
  EXPECT_EQ(status_of("three"), 200);
  EXPECT_EQ(status_of("two"), 404);
  {
    tensorflow::serving::ReloadConfigResponse response;
    const grpc::Status s = reload(config(true, true, two_path), &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(response.status().error_code(), tensorflow::error::OK);
    // Loaded before the call returned: version 124 by default.
    EXPECT_EQ(Post(client, "/v1/models/two:predict", R"({"instances": [[1.0]]})"),
              std::make_pair(200, std::string(R"({"predictions": [[2.5]]})")));
    EXPECT_EQ(status_of("three"), 200);
  }
  {
    tensorflow::serving::ReloadConfigResponse response;
    const grpc::Status s = reload(config(false, true, "/no/such/base/path"), &response);
    // (gRPC sends no answer with an error status: the status says it.)
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(absl::StrContains(s.error_message(), "Could not find base path /no/such/base/path"))
        << s.error_message();
    EXPECT_EQ(status_of("three"), 200);  // nothing changed
    EXPECT_EQ(status_of("two"), 200);
  }
  {
    tensorflow::serving::ReloadConfigResponse response;
    ASSERT_TRUE(reload(config(false, true, two_path), &response).ok());
    EXPECT_EQ(status_of("three"), 404);
    EXPECT_EQ(status_of("two"), 200);
  }
  // The config file, changed: polled within a second or two.
  {
    std::ofstream out(file, std::ios::trunc);
    out << "# three is back\n" << config(true, false, two_path);
  }
  bool reloaded = false;
  for (int i = 0; i < 200 && !reloaded; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    reloaded = status_of("three") == 200 && status_of("two") == 404;
  }
  EXPECT_TRUE(reloaded);
}

// A raw TCP connection to the REST port (clients that misbehave below HTTP).
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawClient() { Close(); }
  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Everything the server sends until it closes the connection.
  std::string ReadAll() {
    std::string out;
    char buffer[4096];
    for (ssize_t n; (n = ::recv(fd_, buffer, sizeof(buffer), 0)) > 0;) out.append(buffer, n);
    return out;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// Faults never crash the server or hold a worker: clients that disconnect mid-body, send
// bytes that are not HTTP, or stall in the middle of their headers, while other clients are
// answered; a request past --rest_api_timeout_in_ms answers 504 with TF Serving's error body.
TEST(ServeTest, FaultsNeverStickAWorker) {
  ServerOptions options;
  options.model_name = "half_plus_three";
  options.model_base_path = ServingData("saved_model_half_plus_three").string();
  options.rest_api_num_threads = 2;  // two workers: a stuck one would show at once
  Served s = Serve(options);
  ASSERT_NE(s.client, nullptr);
  s.client->set_read_timeout(30, 0);  // it may queue behind the stalled clients below
  const int port = s.server->rest_port();
  const std::string predict = R"({"instances": [1.0, 2.0, 5.0]})";
  const std::pair<int, std::string> good = {200, R"({"predictions": [3.5, 4.0, 5.5]})"};
  {
    // A body cut short: the client promised 1000 bytes, sends 10 and leaves.
    RawClient c(port);
    ASSERT_TRUE(c.connected());
    c.Send(
        "POST /v1/models/half_plus_three:predict HTTP/1.1\r\nHost: x\r\n"
        "Content-Length: 1000\r\n\r\n{\"instanc");
    c.Close();
  }
  {
    // Not HTTP at all: an error status, then the connection closes.
    RawClient c(port);
    ASSERT_TRUE(c.connected());
    c.Send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http\r\n\r\n", 27));
    const std::string answer = c.ReadAll();
    EXPECT_TRUE(answer.empty() || absl::StartsWith(answer, "HTTP/1.1 4")) << answer;
  }
  // Two clients stalled in their headers hold both workers until the read timeout; requests
  // on new connections are answered once it passes, and the stalled ones are closed.
  RawClient stalled1(port), stalled2(port);
  ASSERT_TRUE(stalled1.connected() && stalled2.connected());
  stalled1.Send("POST /v1/models/half_plus_three:predict HTTP/1.1\r\nHost:");
  stalled2.Send("GET /v1/models/half_plus_three HTTP/1.1\r\n");
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(Post(*s.client, "/v1/models/half_plus_three:predict", predict), good);
  EXPECT_EQ(stalled1.ReadAll().find("200 OK"), std::string::npos);
  EXPECT_EQ(stalled2.ReadAll().find("200 OK"), std::string::npos);

  // Deadlines: a batching queue that waits 3 s for more rows, and a 200 ms REST deadline.
  ServerOptions slow = options;
  slow.enable_batching = true;
  slow.batching_parameters_file = testing::WriteTempFile(
      "slow_batching.config",
      "max_batch_size { value: 64 }\nbatch_timeout_micros { value: 3000000 }\n"
      "num_batch_threads { value: 1 }\n");
  slow.rest_api_timeout_in_ms = 200;
  Served late = Serve(slow);
  ASSERT_NE(late.client, nullptr);
  auto [code, body] = Post(*late.client, "/v1/models/half_plus_three:predict", predict);
  EXPECT_EQ(code, 504) << body;
  EXPECT_TRUE(absl::StartsWith(body, "{\"error\": \"the request did not run within its deadline"))
      << body;
  // The server still answers (the queue drops the late request's rows).
  EXPECT_EQ(Get(*late.client, "/v1/models/half_plus_three").first, 200);
  EXPECT_EQ(Post(*s.client, "/v1/models/half_plus_three:predict", predict), good);
}

// Label sets per metric are bounded: model names taken from request URLs cannot grow the
// metrics without end; past the bound they count under "_overflow".
TEST(MetricsTest, SeriesPerMetricAreBounded) {
  Metrics metrics;
  const size_t extra = 5;
  for (size_t i = 0; i < Metrics::kMaxSeries + extra; ++i) {
    metrics.Add("/tensorflow/serving/request_count",
                {{"model_name", absl::StrCat("m", i)}, {"status", "NOT_FOUND"}});
    metrics.Observe("/tensorflow/serving/request_latency", {{"model_name", absl::StrCat("m", i)}},
                    1.0, Metrics::LatencyBuckets());
  }
  EXPECT_EQ(metrics.Counter("/tensorflow/serving/request_count",
                            {{"model_name", "m0"}, {"status", "NOT_FOUND"}}),
            1);
  EXPECT_EQ(metrics.Counter("/tensorflow/serving/request_count",
                            {{"model_name", "_overflow"}, {"status", "_overflow"}}),
            static_cast<int64_t>(extra));
  EXPECT_EQ(metrics.Count("/tensorflow/serving/request_latency", {{"model_name", "_overflow"}}),
            static_cast<int64_t>(extra));
  // A label set already kept still counts as itself.
  metrics.Add("/tensorflow/serving/request_count", {{"model_name", "m0"}, {"status", "NOT_FOUND"}});
  EXPECT_EQ(metrics.Counter("/tensorflow/serving/request_count",
                            {{"model_name", "m0"}, {"status", "NOT_FOUND"}}),
            2);
}

TEST(ServeTest, PrometheusMetricsUseTfServingsNames) {
  ServerOptions options;
  options.model_name = "half_plus_three";
  options.model_base_path = ServingData("saved_model_half_plus_three").string();
  options.monitoring_config_file = testing::WriteTempFile(
      "monitoring.config", "prometheus_config { enable: true, path: \"/metrics\" }\n");
  Served s = Serve(options);
  ASSERT_NE(s.client, nullptr);
  const Metrics::Labels ok = {{"model_name", "half_plus_three"}, {"status", "OK"}};
  const int64_t before = ServingMetrics().Counter("/tensorflow/serving/request_count", ok);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(
        Post(*s.client, "/v1/models/half_plus_three:predict", R"({"instances": [1.0]})").first,
        200);
  }
  EXPECT_EQ(Post(*s.client, "/v1/models/nope:predict", R"({"instances": [1.0]})").first, 404);
  EXPECT_EQ(ServingMetrics().Counter("/tensorflow/serving/request_count", ok), before + 3);
  auto [code, page] = Get(*s.client, "/metrics");
  ASSERT_EQ(code, 200);
  for (const std::string want :
       {std::string("# TYPE :tensorflow:serving:request_count counter\n"),
        absl::StrCat(
            ":tensorflow:serving:request_count{model_name=\"half_plus_three\",status=\"OK\"} ",
            before + 3, "\n"),
        std::string(":tensorflow:serving:request_count{model_name=\"nope\",status=\"NOT_FOUND\"} "),
        std::string("# TYPE :tensorflow:serving:request_latency histogram\n"),
        std::string(":tensorflow:serving:request_latency_bucket{model_name=\"half_plus_three\","
                    "API=\"predict\",entrypoint=\"REST\",le=\"10\"} "),
        std::string(":tensorflow:serving:runtime_latency_count{model_name=\"half_plus_three\","
                    "API=\"Predict\",runtime=\"tfjit\"} ")}) {
    EXPECT_TRUE(absl::StrContains(page, want)) << want << "\nnot in\n" << page;
  }
  EXPECT_EQ(PrometheusName("/tensorflow/serving/batching_session/padding_size"),
            ":tensorflow:serving:batching_session:padding_size");
}

// A new version that does not load leaves the old one serving, and the status says why.
TEST(ServeTest, ABrokenNewVersionLeavesTheOldOneServing) {
  const fs::path base = fs::path(testing::TestTempDir()) / "broken_version";
  fs::remove_all(base);
  fs::create_directories(base);
  fs::copy(ServingData("saved_model_half_plus_two_2_versions") / "00000123", base / "00000123",
           fs::copy_options::recursive);
  ServerOptions options;
  options.model_name = "m";
  options.model_base_path = base.string();
  options.file_system_poll_wait_seconds = 1;
  Served s = Serve(options);
  ASSERT_NE(s.client, nullptr);
  fs::create_directories(base / "00000124");
  std::ofstream(base / "00000124" / "saved_model.pb") << "not a SavedModel";
  std::string status;
  for (int i = 0; i < 50 && !absl::StrContains(status, "\"124\""); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    status = Get(*s.client, "/v1/models/m").second;
  }
  EXPECT_TRUE(absl::StrContains(status, "\"END\"")) << status;
  EXPECT_TRUE(absl::StrContains(status, "INVALID_ARGUMENT")) << status;
  EXPECT_EQ(Post(*s.client, "/v1/models/m:predict", R"({"instances": [[2.0]]})"),
            std::make_pair(200, std::string(R"({"predictions": [[3.0]]})")));
  s.client.reset();
  s.server.reset();
  fs::remove_all(base);
}

TEST(ServeTest, FlagsAreTfServings) {
  auto o = ParseServeFlags({"--port=9000", "--rest_api_port=8501", "--model_name=m",
                            "--model_base_path=/models/m", "--enable_batching",
                            "--rest_api_timeout_in_ms=500", "--jit", "off", "--threads=2",
                            "--model_config_file_poll_wait_seconds=60"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->model_config_file_poll_wait_seconds, 60);
  EXPECT_EQ(o->port, 9000);
  EXPECT_EQ(o->rest_api_port, 8501);
  EXPECT_EQ(o->model_name, "m");
  EXPECT_TRUE(o->enable_batching);
  EXPECT_EQ(o->rest_api_timeout_in_ms, 500);
  EXPECT_EQ(o->session.jit, JitMode::kOff);
  EXPECT_EQ(o->session.intra_op_threads, 2);
  EXPECT_FALSE(ParseServeFlags({"--bogus=1"}).ok());
  EXPECT_FALSE(ParseServeFlags({"--port=x"}).ok());
  auto none = Server::Start(ServerOptions{});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::StrContains(none.status().message(),
                                "Both server_options.model_base_path and "
                                "server_options.model_config_file are empty!"));
  ServerOptions missing;
  missing.model_base_path = "/nonexistent/tfjit/models";
  missing.rest_api_port = ServerOptions::kAnyPort;
  missing.port = 0;
  auto bad = Server::Start(missing);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "Could not find base path"))
      << bad.status();
}

}  // namespace
}  // namespace tfjit::serving
