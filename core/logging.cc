// Logging sink: one mutex-protected line per message on stderr.
#include "core/logging.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace tfjit {
namespace {

int ConfiguredLevel() {
  static const int level = [] {
    const char* env = std::getenv("TFJIT_LOG");
    return env != nullptr ? std::atoi(env) : 1;
  }();
  return level;
}

}  // namespace

bool LogEnabled(LogLevel level) { return static_cast<int>(level) <= ConfiguredLevel(); }

void LogMessage(LogLevel level, absl::string_view message) {
  static std::mutex mu;
  static const char* const kTags[] = {"E", "W", "I", "D"};
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "tfjit %s: %.*s\n", kTags[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
}

}  // namespace tfjit
