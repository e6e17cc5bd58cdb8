// BundleReader on the checkpoints of TF-written SavedModels (tests/data/savedmodels): the TF1
// and TF2 half_plus_two indexes have Snappy-compressed blocks, the counter's is uncompressed
// (formats.md 2.3). Values are the generating script's (a = 0.5, b = 2, c = 3, counter = 0).
#include "frontend/tensor_bundle.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "core/status.h"
#include "gtest/gtest.h"

namespace tfjit::tf {
namespace {

namespace fs = std::filesystem;

std::string Prefix(const std::string& model) {
  return (fs::path(TFJIT_SOURCE_DIR) / "tests" / "data" / "savedmodels" / model / "00000123" /
          "variables" / "variables")
      .string();
}

float ScalarOf(const BundleReader& r, const std::string& key) {
  absl::StatusOr<Tensor> t = r.Lookup(key);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return -1e9f;
  EXPECT_EQ(t->dtype(), DType::kFloat32);
  EXPECT_EQ(t->rank(), 0);
  return t->data<float>()[0];
}

TEST(TensorBundleTest, Tf1SnappyIndex) {
  auto r = BundleReader::Open(Prefix("saved_model_half_plus_two_cpu"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->ListKeys(), (std::vector<std::string>{"a", "a2", "b", "c", "c2"}));
  EXPECT_EQ((*r)->num_shards(), 1);
  EXPECT_EQ(ScalarOf(**r, "a"), 0.5f);
  EXPECT_EQ(ScalarOf(**r, "a2"), 0.5f);
  EXPECT_EQ(ScalarOf(**r, "b"), 2.0f);
  EXPECT_EQ(ScalarOf(**r, "c"), 3.0f);
  EXPECT_EQ(ScalarOf(**r, "c2"), 3.0f);
}

TEST(TensorBundleTest, Tf2KeysAndObjectGraphString) {
  auto r = BundleReader::Open(Prefix("saved_model_half_plus_two_tf2_cpu"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->ListKeys(),
            (std::vector<std::string>{"_CHECKPOINTABLE_OBJECT_GRAPH",
                                      "a/.ATTRIBUTES/VARIABLE_VALUE",
                                      "b/.ATTRIBUTES/VARIABLE_VALUE",
                                      "c/.ATTRIBUTES/VARIABLE_VALUE"}));
  EXPECT_EQ(ScalarOf(**r, "b/.ATTRIBUTES/VARIABLE_VALUE"), 2.0f);
  // A string entry is listed and refused by Lookup, readable with LookupStrings.
  absl::StatusOr<Tensor> as_tensor = (*r)->Lookup("_CHECKPOINTABLE_OBJECT_GRAPH");
  EXPECT_EQ(as_tensor.status().code(), absl::StatusCode::kUnimplemented) << as_tensor.status();
  auto strings = (*r)->LookupStrings("_CHECKPOINTABLE_OBJECT_GRAPH");
  ASSERT_TRUE(strings.ok()) << strings.status();
  ASSERT_EQ(strings->size(), 1u);
  EXPECT_EQ((*strings)[0].size(), 613u);  // formats.md 2.5
  tensorflow::TrackableObjectGraph graph;
  ASSERT_TRUE(graph.ParseFromString((*strings)[0]));
  ASSERT_GE(graph.nodes_size(), 4);
  ASSERT_GE(graph.nodes(0).children_size(), 3);
  EXPECT_EQ(graph.nodes(0).children(0).local_name(), "a");
  const int a = graph.nodes(0).children(0).node_id();
  ASSERT_GT(graph.nodes(a).attributes_size(), 0);
  EXPECT_EQ(graph.nodes(a).attributes(0).checkpoint_key(), "a/.ATTRIBUTES/VARIABLE_VALUE");
}

TEST(TensorBundleTest, UncompressedCounterIndex) {
  auto r = BundleReader::Open(Prefix("saved_model_counter"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->ListKeys(), std::vector<std::string>{"counter"});
  EXPECT_EQ(ScalarOf(**r, "counter"), 0.0f);
  EXPECT_TRUE(absl::EndsWith((*r)->DataPath(0), "variables.data-00000-of-00001"));
}

TEST(TensorBundleTest, ErrorsNameFileAndKey) {
  const std::string absent = ::testing::TempDir() + "tfjit_no_such_dir/variables";
  auto missing = BundleReader::Open(absent);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), absent + ".index"));

  auto r = BundleReader::Open(Prefix("saved_model_counter"));
  ASSERT_TRUE(r.ok()) << r.status();
  auto none = (*r)->Lookup("no_such_tensor");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(none.status().message(), "no_such_tensor"));
  EXPECT_TRUE(absl::StrContains(none.status().message(), "counter"));  // lists what exists
}

TEST(TensorBundleTest, CorruptRecordIsDataLoss) {
  const fs::path dir = fs::temp_directory_path() / "tfjit_bundle_corrupt";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* ext : {".index", ".data-00000-of-00001"}) {
    fs::copy_file(Prefix("saved_model_half_plus_two_cpu") + ext, dir / (std::string("v") + ext));
    fs::permissions(dir / (std::string("v") + ext), fs::perms::owner_write, fs::perm_options::add);
  }
  const std::string data = (dir / "v.data-00000-of-00001").string();
  std::string bytes;
  {
    std::ifstream in(data, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_EQ(bytes.size(), 20u);
  bytes[13] ^= 0x01;  // c (a, a2, b, c, c2 are written in that order)
  std::ofstream(data, std::ios::binary | std::ios::trunc) << bytes;
  auto r = BundleReader::Open((dir / "v").string());
  ASSERT_TRUE(r.ok()) << r.status();  // the index is intact
  EXPECT_EQ(ScalarOf(**r, "b"), 2.0f);
  auto c = (*r)->Lookup("c");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(c.status().message(), "v.data-00000-of-00001")) << c.status();
  EXPECT_TRUE(absl::StrContains(c.status().message(), "'c'")) << c.status();
}

}  // namespace
}  // namespace tfjit::tf
