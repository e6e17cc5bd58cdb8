// Tests GraphDef loading: text, binary, binary-named text, parse errors and missing files.
#include "frontend/graphdef_loader.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace tfjit::tf {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(GraphDefLoaderTest, BinaryAndTextGiveTheSameGraph) {
  absl::StatusOr<tensorflow::GraphDef> text =
      ReadGraphDefFile(testing::TestDataPath("dense_relu.pbtxt"));
  ASSERT_TRUE(text.ok()) << text.status();
  ASSERT_EQ(text->node_size(), 7);
  const std::string binary = text->SerializeAsString();
  const std::string path = WriteTemp("dense_relu.pb", binary);
  absl::StatusOr<tensorflow::GraphDef> parsed = ReadGraphDefFile(path);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  // Map order in serialised bytes is unspecified, so compare messages.
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*parsed, *text));
  absl::StatusOr<std::unique_ptr<Graph>> graph = LoadGraphDefFile(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ((*graph)->source(), path);
  EXPECT_NE((*graph)->FindNode("dense/Relu"), nullptr);
}

TEST(GraphDefLoaderTest, TextContentWithBinaryExtensionParses) {
  const std::string path =
      WriteTemp("really_text.pb", ReadFile(testing::TestDataPath("dense_relu.pbtxt")));
  absl::StatusOr<std::unique_ptr<Graph>> graph = LoadGraphDefFile(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ((*graph)->num_nodes(), 7);
}

TEST(GraphDefLoaderTest, TextErrorsReportLineAndColumn) {
  absl::Status s = LoadGraphDefFile(testing::TestDataPath("bad_syntax.pbtxt")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("bad_syntax.pbtxt"));
  EXPECT_THAT(s.message(), HasSubstr("line 4:"));
  EXPECT_THAT(s.message(), HasSubstr("DT_FLOTA"));
}

TEST(GraphDefLoaderTest, NeitherBinaryNorText) {
  const std::string path = WriteTemp("garbage.pb", std::string("\x0a\xff\x01{{{ not a graph"));
  absl::Status s = LoadGraphDefFile(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("file '" + path +
                         "': not a GraphDef: binary parse failed "
                         "and text parse failed at line 2:1:"));  // after the 0x0a
}

TEST(GraphDefLoaderTest, MissingFileIsNotFound) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "tfjit_no_such_dir" / "model.pb").string();
  absl::Status s = LoadGraphDefFile(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr(path));
}

TEST(GraphDefLoaderTest, ParseFromStringBothForms) {
  absl::StatusOr<tensorflow::GraphDef> g =
      ParseGraphDefFromString("node { name: 'a' op: 'NoOp' }", /*is_text=*/true, "mem");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->node(0).name(), "a");
  absl::StatusOr<tensorflow::GraphDef> b =
      ParseGraphDefFromString(g->SerializeAsString(), /*is_text=*/false, "mem");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->node(0).op(), "NoOp");
  absl::Status s = ParseGraphDefFromString("node { nme: 'a' }", true, "mem").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("file 'mem': text GraphDef parse failed at line 1:11"));
  EXPECT_THAT(s.message(), HasSubstr("nme"));
}

TEST(GraphDefLoaderTest, GraphErrorsNameTheFile) {
  const std::string path = WriteTemp("unknown.pbtxt", "node { name: 'a' op: 'FooBar' }");
  absl::Status s = LoadGraphDefFile(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("graph '" + path + "': 1 unknown op: 'FooBar' (node 'a')"));
}

}  // namespace
}  // namespace tfjit::tf
