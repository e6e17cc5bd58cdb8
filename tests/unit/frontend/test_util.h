// Helpers for frontend tests: GraphDefs from inline text.
#ifndef TFJIT_TESTS_UNIT_FRONTEND_TEST_UTIL_H_
#define TFJIT_TESTS_UNIT_FRONTEND_TEST_UTIL_H_

#include <filesystem>
#include <string>

#include "frontend/proto/graph.pb.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace tfjit::tf::testing {

template <typename Proto>
Proto ParseTextProto(const std::string& text) {
  Proto proto;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &proto)) << text;
  return proto;
}

inline std::string TestDataPath(const std::string& name) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "unit" / "frontend" / "testdata" /
          name)
      .string();
}

}  // namespace tfjit::tf::testing

#endif  // TFJIT_TESTS_UNIT_FRONTEND_TEST_UTIL_H_
