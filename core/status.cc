// Status helpers: context prefixes, node payloads and TF-style printing.
#include "core/status.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tfjit {

absl::Status WithContext(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  absl::Status out(status.code(), absl::StrCat(context, ": ", status.message()));
  status.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

absl::Status AppendContext(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  absl::Status out(status.code(), absl::StrCat(status.message(), "\n\t", context));
  status.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

absl::Status AttachNode(absl::Status status, absl::string_view node, absl::string_view op) {
  if (status.ok() || status.GetPayload(kNodePayloadUrl).has_value()) return status;
  status.SetPayload(kNodePayloadUrl, absl::Cord(absl::StrCat(node, "\t", op)));
  return status;
}

std::pair<std::string, std::string> NodeOfError(const absl::Status& status) {
  auto payload = status.GetPayload(kNodePayloadUrl);
  if (!payload.has_value()) return {};
  std::pair<std::string, std::string> parts =
      absl::StrSplit(std::string(*payload), absl::MaxSplits('\t', 1));
  return parts;
}

std::string StatusToString(const absl::Status& status) {
  if (status.ok()) return "OK";
  std::string code = absl::StatusCodeToString(status.code());
  for (char& c : code) c = (c == ' ') ? '_' : static_cast<char>(std::toupper(c));
  return absl::StrCat(code, ": ", status.message());
}

absl::Status VariableNotFoundError(absl::string_view container, absl::string_view name) {
  return absl::FailedPreconditionError(
      absl::StrCat("Could not find variable ", name,
                   ". This could mean that the variable has been deleted. "
                   "In TF1, it can also mean the variable is uninitialized. Debug info: container=",
                   container, ", status error message=Resource ", container, "/", name,
                   "/N10tensorflow3VarE does not exist."));
}

}  // namespace tfjit
