// Tests for status builders, context and node payloads.
#include "core/status.h"

#include "gtest/gtest.h"

namespace tfjit {
namespace {

TEST(StatusTest, BuildersFormatAndKeepCode) {
  absl::Status s = InvalidArgument("node '%s' (%s): bad rank %d", "a/b", "Reshape", 3);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "node 'a/b' (Reshape): bad rank 3");
  EXPECT_EQ(StatusToString(s), "INVALID_ARGUMENT: node 'a/b' (Reshape): bad rank 3");
}

TEST(StatusTest, ContextPrependsAndKeepsPayload) {
  absl::Status s = AttachNode(Unimplemented("no kernel"), "x", "Foo");
  absl::Status c = WithContext(s, "running graph");
  EXPECT_EQ(c.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(c.message(), "running graph: no kernel");
  EXPECT_EQ(NodeOfError(c).first, "x");
  EXPECT_EQ(NodeOfError(c).second, "Foo");
  EXPECT_TRUE(WithContext(absl::OkStatus(), "ctx").ok());
}

absl::StatusOr<int> Half(int x) {
  if (x % 2) return InvalidArgument("%d is odd", x);
  return x / 2;
}

absl::Status UseMacros(int x, int* out) {
  TFJIT_ASSIGN_OR_RETURN(int h, Half(x));
  TFJIT_RETURN_IF_ERROR(h > 10 ? OutOfRange("too big") : absl::OkStatus());
  *out = h;
  return absl::OkStatus();
}

TEST(StatusTest, Macros) {
  int out = 0;
  EXPECT_TRUE(UseMacros(8, &out).ok());
  EXPECT_EQ(out, 4);
  EXPECT_EQ(UseMacros(7, &out).message(), "7 is odd");
  EXPECT_EQ(UseMacros(40, &out).code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace tfjit
