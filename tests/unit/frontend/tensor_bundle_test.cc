// BundleReader on the checkpoints of TF-written SavedModels (tests/data/savedmodels), and
// BundleWriter against them (byte for byte) and by round trips. For the reader: the TF1
// and TF2 half_plus_two indexes have Snappy-compressed blocks, the counter's is uncompressed
// (formats.md 2.3). Values are the generating script's (a = 0.5, b = 2, c = 3, counter = 0).
#include "frontend/tensor_bundle.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "frontend/tensor_proto.h"
#include "gtest/gtest.h"
#include "tests/testlib/faulty_file_system.h"

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
  EXPECT_EQ((*r)->ListKeys(), (std::vector<std::string>{
                                  "_CHECKPOINTABLE_OBJECT_GRAPH", "a/.ATTRIBUTES/VARIABLE_VALUE",
                                  "b/.ATTRIBUTES/VARIABLE_VALUE", "c/.ATTRIBUTES/VARIABLE_VALUE"}));
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

// Another process rewrites the checkpoint while it is read (the file seam's read hook): a
// record whose bytes changed fails its CRC, a record or index cut short is DATA_LOSS naming
// the file, and the other tensors still read.
TEST(TensorBundleTest, ACheckpointChangedWhileReadIsDataLoss) {
  const std::string prefix = Prefix("saved_model_half_plus_two_cpu");
  const std::string data_file = prefix + ".data-00000-of-00001";
  for (const char* change : {"flip", "cut"}) {
    SCOPED_TRACE(change);
    tfjit::testing::ScopedFaultyFileSystem faulty;
    auto r = BundleReader::Open(prefix);
    ASSERT_TRUE(r.ok()) << r.status();
    faulty->OnRead([&](const std::string& path, std::string& bytes) {
      if (path != data_file || bytes.empty()) return;
      if (std::string(change) == "flip") {
        bytes[0] ^= 0x40;
      } else {
        bytes.pop_back();
      }
    });
    auto c = (*r)->Lookup("c");
    EXPECT_EQ(c.status().code(), absl::StatusCode::kDataLoss) << c.status();
    EXPECT_TRUE(absl::StrContains(c.status().message(), data_file)) << c.status();
    EXPECT_TRUE(absl::StrContains(c.status().message(),
                                  std::string(change) == "flip" ? "CRC32C" : "truncated"))
        << c.status();
    faulty->OnRead(nullptr);
    EXPECT_EQ(ScalarOf(**r, "c"), 3.0f);  // read again, unchanged
  }
  for (const size_t keep : {0, 10, 40}) {
    SCOPED_TRACE(keep);
    tfjit::testing::ScopedFaultyFileSystem faulty;
    faulty->OnRead([&](const std::string& path, std::string& bytes) {
      if (path == prefix + ".index" && bytes.size() > keep) bytes.resize(keep);
    });
    auto r = BundleReader::Open(prefix);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), prefix + ".index")) << r.status();
    EXPECT_GE(faulty->reads.load(), 1);
  }
}

// --- BundleWriter ---------------------------------------------------------------------------

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Re-adds every tensor of the TF-written bundle at `prefix` in its data-file order and checks
// that the writer reproduces both files byte for byte.
void ExpectRewriteIsIdentical(const std::string& prefix, const std::string& out_name) {
  auto r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::pair<int64_t, std::string>> order;
  for (const std::string& key : (*r)->ListKeys()) {
    auto entry = (*r)->Entry(key);
    ASSERT_TRUE(entry.ok()) << entry.status();
    order.push_back({(*entry)->offset(), key});
  }
  std::sort(order.begin(), order.end());
  const fs::path dir = fs::temp_directory_path() / "tfjit_bundle_writer";
  fs::create_directories(dir);
  const std::string out = (dir / out_name).string();
  BundleWriter writer(out);
  for (const auto& [offset, key] : order) {
    auto t = (*r)->LookupAny(key);
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_TRUE(writer.Add(key, *t).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_EQ(FileBytes(out + ".index"), FileBytes(prefix + ".index")) << prefix;
  EXPECT_EQ(FileBytes(out + ".data-00000-of-00001"), FileBytes(prefix + ".data-00000-of-00001"))
      << prefix;
}

// TF 1.5's counter checkpoint (formats.md 2.6, uncompressed, one float) and TF 2.x's Keras
// regression checkpoint (floats, an int64 iteration count, the object graph string).
TEST(BundleWriterTest, RewritesTfWrittenBundlesByteForByte) {
  ExpectRewriteIsIdentical(Prefix("saved_model_counter"), "counter");
  const fs::path tf2 = fs::path(TFJIT_SOURCE_DIR) / ".." / "shared" / "data" / "training" /
                       "tf2_regression_savedmodel" / "variables" / "variables";
  ASSERT_TRUE(fs::exists(tf2.string() + ".index")) << "shared/data must sit beside the checkout";
  ExpectRewriteIsIdentical(tf2.lexically_normal().string(), "tf2_regression");
}

TEST(BundleWriterTest, RoundTripsEveryKind) {
  const fs::path dir = fs::temp_directory_path() / "tfjit_bundle_writer";
  fs::create_directories(dir);
  const std::string prefix = (dir / "kinds").string();
  BundleWriter writer(prefix);
  const Tensor f = Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {1, -2, 3.5f, 0, 5, 6});
  const Tensor i = Tensor::FromVector<int64_t>(DType::kInt64, {}, {-7});
  const Tensor b = Tensor::FromVector<bool>(DType::kBool, {3}, {true, false, true});
  const Tensor h = Tensor::FromVector<uint16_t>(DType::kUInt16, {0}, {});
  const Tensor s = MakeStringTensor({3}, {"a", "", std::string(300, 'x')});
  const Tensor e = MakeStringTensor({0}, {});
  for (const auto& [key, t] : std::vector<std::pair<std::string, Tensor>>{
           {"z/f", f}, {"a/i", i}, {"m/b", b}, {"h", h}, {"s", s}, {"empty", e}}) {
    ASSERT_TRUE(writer.Add(key, t).ok()) << key;
  }
  EXPECT_EQ(writer.Add("s", s).code(), absl::StatusCode::kInvalidArgument);  // twice
  EXPECT_EQ(writer.Add("", f).code(), absl::StatusCode::kInvalidArgument);   // the header's key
  ASSERT_TRUE(writer.Finish().ok());
  auto r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->ListKeys(), (std::vector<std::string>{"a/i", "empty", "h", "m/b", "s", "z/f"}));
  for (const auto& [key, want] :
       std::vector<std::pair<std::string, Tensor>>{{"z/f", f}, {"a/i", i}, {"m/b", b}, {"h", h}}) {
    auto got = (*r)->Lookup(key);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->ShapeString(), want.ShapeString()) << key;
    EXPECT_EQ(std::string(static_cast<const char*>(got->raw_data()), got->byte_size()),
              std::string(static_cast<const char*>(want.raw_data()), want.byte_size()))
        << key;
  }
  auto strings = (*r)->LookupStrings("s");
  ASSERT_TRUE(strings.ok()) << strings.status();
  EXPECT_EQ(*strings, (std::vector<std::string>{"a", "", std::string(300, 'x')}));
  auto empty = (*r)->LookupStrings("empty");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());
  // No temporary file is left beside the checkpoint.
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find("tempstate"), std::string::npos) << entry.path();
  }
}

TEST(BundleWriterTest, UnwritablePathIsInvalidArgumentNamingIt) {
  const std::string prefix = ::testing::TempDir() + "tfjit_no_such_dir/ckpt";
  BundleWriter writer(prefix);
  ASSERT_TRUE(writer.Add("v", Tensor::FromVector<float>(DType::kFloat32, {1}, {1})).ok());
  absl::Status s = writer.Finish();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "tfjit_no_such_dir/ckpt.data-00000-of-00001'"))
      << s;  // the checkpoint's own file, not a temporary name
  EXPECT_FALSE(fs::exists(prefix + ".index"));
}

// A save that fails on the disk (injected: a write cut short, a full disk, a failed rename, a
// read-only folder) is INVALID_ARGUMENT naming the checkpoint, leaves no temporary, and
// leaves the checkpoint that was there readable with its old values.
TEST(BundleWriterTest, AFailedSaveKeepsThePreviousCheckpoint) {
  const fs::path dir = fs::temp_directory_path() / "tfjit_bundle_faults";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string prefix = (dir / "ckpt").string();
  const Tensor old_value = Tensor::FromVector<float>(DType::kFloat32, {2}, {1, 2});
  {
    BundleWriter writer(prefix);
    ASSERT_TRUE(writer.Add("v", old_value).ok());
    ASSERT_TRUE(writer.Finish().ok());
  }
  for (const std::string& fault : tfjit::testing::WriteFaults()) {
    SCOPED_TRACE(fault);
    {
      tfjit::testing::ScopedFaultyFileSystem faulty;
      faulty->Inject(fault, 3, dir.string());
      BundleWriter writer(prefix);
      ASSERT_TRUE(writer.Add("v", Tensor::FromVector<float>(DType::kFloat32, {2}, {7, 8})).ok());
      const absl::Status s = writer.Finish();
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_TRUE(absl::StrContains(s.message(), "checkpoint '" + prefix)) << s;
    }
    for (const auto& entry : fs::directory_iterator(dir)) {
      EXPECT_EQ(entry.path().string().find("tempstate"), std::string::npos) << entry.path();
    }
    auto r = BundleReader::Open(prefix);
    ASSERT_TRUE(r.ok()) << r.status();
    auto got = (*r)->Lookup("v");
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->data<float>()[0], 1.0f);
    EXPECT_EQ(got->data<float>()[1], 2.0f);
  }
}

}  // namespace
}  // namespace tfjit::tf
