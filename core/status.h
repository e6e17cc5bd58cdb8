// Status helpers: printf-checked error builders, context, node payloads and the macros.
#ifndef TFJIT_CORE_STATUS_H_
#define TFJIT_CORE_STATUS_H_

#include <string>
#include <utility>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "tfjit/status.h"

namespace tfjit {

// Builders: InvalidArgument("node '%s' (%s): ...", name, op). Codes follow DESIGN.md:
// INVALID_ARGUMENT = the user's graph/feed/option is wrong; UNIMPLEMENTED = valid TF we do not
// support; NOT_FOUND = missing file/node/function; FAILED_PRECONDITION = state;
// INTERNAL = our bug.
#define TFJIT_DEFINE_STATUS_BUILDER(Name, code)                                     \
  template <typename... Args>                                                       \
  absl::Status Name(const absl::FormatSpec<Args...>& format, const Args&... args) { \
    return absl::Status(code, absl::StrFormat(format, args...));                    \
  }
TFJIT_DEFINE_STATUS_BUILDER(InvalidArgument, absl::StatusCode::kInvalidArgument)
TFJIT_DEFINE_STATUS_BUILDER(Unimplemented, absl::StatusCode::kUnimplemented)
TFJIT_DEFINE_STATUS_BUILDER(NotFound, absl::StatusCode::kNotFound)
TFJIT_DEFINE_STATUS_BUILDER(FailedPrecondition, absl::StatusCode::kFailedPrecondition)
TFJIT_DEFINE_STATUS_BUILDER(Internal, absl::StatusCode::kInternal)
TFJIT_DEFINE_STATUS_BUILDER(OutOfRange, absl::StatusCode::kOutOfRange)
TFJIT_DEFINE_STATUS_BUILDER(ResourceExhausted, absl::StatusCode::kResourceExhausted)
// DATA_LOSS: a file's bytes are corrupt or truncated (checkpoint CRC mismatch, short shard).
TFJIT_DEFINE_STATUS_BUILDER(DataLoss, absl::StatusCode::kDataLoss)
#undef TFJIT_DEFINE_STATUS_BUILDER

// Prepends "context: " to the message; keeps the code and payloads. OK stays OK.
absl::Status WithContext(const absl::Status& status, absl::string_view context);

// Appends "\n\t<context>"; keeps the code, payloads and the start of the message. For
// errors whose first line users search for (TF's known-issue messages).
absl::Status AppendContext(const absl::Status& status, absl::string_view context);

// Attaches the node an error is about (see kNodePayloadUrl); keeps an existing one.
absl::Status AttachNode(absl::Status status, absl::string_view node, absl::string_view op);
// The (node, op) attached to `status`, or empty strings.
std::pair<std::string, std::string> NodeOfError(const absl::Status& status);

// TF's FAILED_PRECONDITION for reading a resource variable that holds no value (never
// assigned, or deleted), verbatim so users can search for it.
absl::Status VariableNotFoundError(absl::string_view container, absl::string_view name);

// "CODE: message", with TF's code spelling (INVALID_ARGUMENT, ...).
std::string StatusToString(const absl::Status& status);

}  // namespace tfjit

#define TFJIT_STATUS_CONCAT_INNER(a, b) a##b
#define TFJIT_STATUS_CONCAT(a, b) TFJIT_STATUS_CONCAT_INNER(a, b)

#define TFJIT_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::absl::Status _tfjit_status = (expr);         \
    if (!_tfjit_status.ok()) return _tfjit_status; \
  } while (0)

#define TFJIT_ASSIGN_OR_RETURN(lhs, expr) \
  TFJIT_ASSIGN_OR_RETURN_IMPL(TFJIT_STATUS_CONCAT(_tfjit_statusor_, __LINE__), lhs, expr)

#define TFJIT_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                \
  if (!statusor.ok()) return statusor.status();          \
  lhs = std::move(statusor).value()

#endif  // TFJIT_CORE_STATUS_H_
