// Loader limits (issue 5): shapes and sizes in a model file that would make tfjit allocate
// unbounded memory are refused, with the node/tensor and the field named, before anything is
// allocated. Each input here would otherwise ask for terabytes (the test would die of it).
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "frontend/attr.h"
#include "frontend/graph.h"
#include "frontend/proto/saved_model.pb.h"
#include "frontend/tensor_bundle.h"
#include "frontend/tensor_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/table_builder.h"
#include "test_util.h"

namespace tfjit::tf {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ParseTextProto;

absl::Status DecodeError(const std::string& text) {
  return TensorFromProto(ParseTextProto<tensorflow::TensorProto>(text)).status();
}

// Restores the process-wide limits a test changed.
class ScopedLoaderLimits {
 public:
  explicit ScopedLoaderLimits(const LoaderLimits& limits) : saved_(GetLoaderLimits()) {
    SetLoaderLimits(limits);
  }
  ~ScopedLoaderLimits() { SetLoaderLimits(saved_); }

 private:
  LoaderLimits saved_;
};

TEST(LoaderLimitsTest, ConstOfATrillionElementsIsResourceExhaustedNamingNodeAndAttr) {
  // One float_val that TF would pad out to 10^12 elements (4 TB).
  auto def = ParseTextProto<tensorflow::GraphDef>(R"pb(
    node { name: "big" op: "Const"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT
        tensor_shape { dim { size: 1000000 } dim { size: 1000000 } } float_val: 1 } } } })pb");
  absl::StatusOr<std::unique_ptr<Graph>> graph = Graph::Build(def, "big.pbtxt");
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::Status s = GetTensorAttr(*(*graph)->FindNode("big"), "value").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("node 'big' (Const)"));
  EXPECT_THAT(s.message(), HasSubstr("attr 'value'"));
  EXPECT_THAT(s.message(), HasSubstr("float32[1000000,1000000] has 1000000000000 elements "
                                     "(4000000000000 bytes); tfjit refuses tensors from a file "
                                     "over 2147483648 elements or 4294967296 bytes"));
}

TEST(LoaderLimitsTest, ElementCountOverflowIsInvalidArgument) {
  absl::Status s = DecodeError(R"pb(dtype: DT_INT8 tensor_shape {
      dim { size: 4611686018427387904 } dim { size: 4 } dim { size: 0 } })pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("int8[4611686018427387904,4,0] has more elements than "
                                     "int64 can count"));
  // A zero dim first makes the product 0 whatever follows (as in TF).
  EXPECT_TRUE(TensorFromProto(ParseTextProto<tensorflow::TensorProto>(R"pb(dtype: DT_INT8
      tensor_shape { dim { size: 0 } dim { size: 4611686018427387904 } dim { size: 4 } })pb"))
                  .ok());
}

TEST(LoaderLimitsTest, ContentSizeIsCheckedBeforeAllocatingTheDeclaredShape) {
  // 10^9 floats are within the default limits (4 GB), but the 4 content bytes cannot be them:
  // the mismatch is reported without allocating the 4 GB.
  absl::Status s = DecodeError(R"pb(dtype: DT_FLOAT tensor_shape { dim { size: 1000000000 } }
                                    tensor_content: "\000\000\200?")pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(),
              HasSubstr("tensor_content has 4 bytes, expected 4000000000 for float32[1000000000]"));
}

TEST(LoaderLimitsTest, LimitsAreAdjustable) {
  ScopedLoaderLimits limits({/*max_tensor_elements=*/100, /*max_tensor_bytes=*/256});
  EXPECT_TRUE(
      TensorFromProto(ParseTextProto<tensorflow::TensorProto>(
                          R"pb(dtype: DT_FLOAT tensor_shape { dim { size: 64 } } float_val: 2)pb"))
          .ok());
  // 65 floats = 260 bytes > 256.
  absl::Status s =
      DecodeError(R"pb(dtype: DT_FLOAT tensor_shape { dim { size: 65 } } float_val: 2)pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("over 100 elements or 256 bytes"));
  // 101 bools = 101 bytes, but more than 100 elements.
  s = DecodeError(R"pb(dtype: DT_BOOL tensor_shape { dim { size: 101 } } bool_val: true)pb");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("bool[101] has 101 elements"));
}

// ---- checkpoint bundles ----

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Writes prefix.index (a LevelDB table: the header under "", then `entries` by key) and a
// 4-byte data shard.
void WriteBundle(const fs::path& prefix,
                 const std::map<std::string, tensorflow::BundleEntryProto>& entries) {
  leveldb::WritableFile* file = nullptr;
  ASSERT_TRUE(leveldb::Env::Default()->NewWritableFile(prefix.string() + ".index", &file).ok());
  leveldb::Options options;
  options.compression = leveldb::kNoCompression;
  {
    leveldb::TableBuilder builder(options, file);
    tensorflow::BundleHeaderProto header;
    header.set_num_shards(1);
    builder.Add("", header.SerializeAsString());
    for (const auto& [key, entry] : entries) builder.Add(key, entry.SerializeAsString());
    ASSERT_TRUE(builder.Finish().ok());
  }
  ASSERT_TRUE(file->Close().ok());
  delete file;
  std::ofstream(prefix.string() + ".data-00000-of-00001", std::ios::binary) << "abcd";
}

TEST(LoaderLimitsTest, BundleEntryWithHugeShapeIsRefusedBeforeAllocating) {
  const fs::path prefix = FreshDir("tfjit_limits_bundle") / "variables";
  tensorflow::BundleEntryProto huge, overflow, mismatch;
  huge.set_dtype(tensorflow::DT_FLOAT);
  huge.mutable_shape()->add_dim()->set_size(1000000);
  huge.mutable_shape()->add_dim()->set_size(1000000);
  huge.set_size(4);
  overflow = huge;
  overflow.mutable_shape()->add_dim()->set_size(int64_t{1} << 62);
  mismatch.set_dtype(tensorflow::DT_FLOAT);
  mismatch.mutable_shape()->add_dim()->set_size(1000);  // 4000 bytes, the record says 4
  mismatch.set_size(4);
  WriteBundle(prefix, {{"huge", huge}, {"mismatch", mismatch}, {"overflow", overflow}});
  absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix.string());
  ASSERT_TRUE(reader.ok()) << reader.status();

  absl::Status s = (*reader)->Lookup("huge").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("variables.index': tensor 'huge'"));
  EXPECT_THAT(s.message(), HasSubstr("float32[1000000,1000000] has 1000000000000 elements"));

  s = (*reader)->Lookup("overflow").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("tensor 'overflow' has a bad shape"));
  EXPECT_THAT(s.message(), HasSubstr("more elements than int64 can count"));

  s = (*reader)->Lookup("mismatch").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("tensor 'mismatch' is float32[1000] (4000 bytes) but its "
                                     "record in"));
  EXPECT_THAT(s.message(), HasSubstr("is 4 bytes"));
}

// LevelDB allocates a block at the size its handle claims before reading it, and the table
// footer has no checksum: the reader checks the footer's handles against the file first.
TEST(LoaderLimitsTest, BundleIndexFooterWithHugeBlockHandleIsDataLoss) {
  const fs::path prefix = FreshDir("tfjit_limits_footer") / "variables";
  tensorflow::BundleEntryProto entry;
  entry.set_dtype(tensorflow::DT_FLOAT);
  entry.set_size(4);
  WriteBundle(prefix, {{"x", entry}});
  const std::string index_path = prefix.string() + ".index";
  ASSERT_TRUE(BundleReader::Open(prefix.string()).ok());

  std::string bytes = ReadAll(index_path);
  ASSERT_GE(bytes.size(), 48u);
  // Footer: metaindex handle, index handle (varint64 offset and size each), zero padding to
  // 40 bytes, 8-byte magic. Re-encode the index handle with a 2^40-byte size.
  std::string footer = bytes.substr(bytes.size() - 48);
  size_t pos = 0;
  auto skip_varint = [&] {
    while (static_cast<uint8_t>(footer[pos++]) & 0x80) {
    }
  };
  skip_varint();  // metaindex offset
  skip_varint();  // metaindex size
  skip_varint();  // index offset
  std::string handles = footer.substr(0, pos);
  for (uint64_t v = uint64_t{1} << 40;; v >>= 7) {
    if (v < 0x80) {
      handles.push_back(static_cast<char>(v));
      break;
    }
    handles.push_back(static_cast<char>((v & 0x7f) | 0x80));
  }
  handles.resize(40, '\0');
  bytes.replace(bytes.size() - 48, 40, handles);
  std::ofstream(index_path, std::ios::binary | std::ios::trunc) << bytes;

  absl::Status s = BundleReader::Open(prefix.string()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("variables.index' is corrupt: the index block"));
  EXPECT_THAT(s.message(), HasSubstr("with 1099511627776 bytes lies outside the"));
}

}  // namespace
}  // namespace tfjit::tf
