// Minimal leveled logging to stderr, controlled by TFJIT_LOG=0..3 (default 1 = warnings).
#ifndef TFJIT_CORE_LOGGING_H_
#define TFJIT_CORE_LOGGING_H_

#include "absl/strings/string_view.h"

#include "absl/strings/str_format.h"

namespace tfjit {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

bool LogEnabled(LogLevel level);
void LogMessage(LogLevel level, absl::string_view message);

template <typename... Args>
void Log(LogLevel level, const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (LogEnabled(level)) LogMessage(level, absl::StrFormat(format, args...));
}

}  // namespace tfjit

#endif  // TFJIT_CORE_LOGGING_H_
