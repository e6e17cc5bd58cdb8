// TF_XLA_FLAGS and XLA_FLAGS: TensorFlow's environment switches as SessionOptions.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/logging.h"
#include "core/status.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

struct Flag {
  std::string name;   // without the leading "--"
  std::string value;  // after '=', or "" for a bare flag
  bool bare = false;
};

// "--a=1 --b" -> {a, 1}, {b, bare}. INVALID_ARGUMENT for a token that is not a flag.
absl::StatusOr<std::vector<Flag>> Split(const std::string& variable, const std::string& text) {
  std::vector<Flag> flags;
  for (absl::string_view token :
       absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    if (!absl::StartsWith(token, "--")) {
      return InvalidArgument("%s: '%s' is not a flag; write --name=value", variable,
                             std::string(token));
    }
    token.remove_prefix(2);
    Flag f;
    const size_t eq = token.find('=');
    f.bare = eq == absl::string_view::npos;
    f.name = std::string(token.substr(0, eq));
    if (!f.bare) f.value = std::string(token.substr(eq + 1));
    flags.push_back(std::move(f));
  }
  return flags;
}

absl::StatusOr<int> IntFlag(const std::string& variable, const Flag& f, int min) {
  int v = 0;
  if (f.bare || !absl::SimpleAtoi(f.value, &v) || v < min) {
    return InvalidArgument("%s: --%s takes an integer >= %d, got '%s'", variable, f.name, min,
                           f.value);
  }
  return v;
}

absl::StatusOr<bool> BoolFlag(const std::string& variable, const Flag& f) {
  if (f.bare) return true;
  const std::string v = absl::AsciiStrToLower(f.value);
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return InvalidArgument("%s: --%s takes true or false, got '%s'", variable, f.name, f.value);
}

}  // namespace

StatusOr<SessionOptions> ApplyTfFlags(SessionOptions options, const std::string& tf_xla_flags,
                                      const std::string& xla_flags) {
  constexpr char kTf[] = "TF_XLA_FLAGS";
  TFJIT_ASSIGN_OR_RETURN(std::vector<Flag> tf, Split(kTf, tf_xla_flags));
  for (const Flag& f : tf) {
    if (f.name == "tf_xla_auto_jit") {
      // -1 (TF's default: off), 0 (off), 1 and 2 (on), or "single-gpu(N)" (N on one GPU).
      std::string level = f.value;
      if (absl::StartsWith(level, "single-gpu(") && absl::EndsWith(level, ")")) {
        level = level.substr(11, level.size() - 12);
      }
      int v = 0;
      if (f.bare || !absl::SimpleAtoi(level, &v) || v < -1 || v > 2) {
        return InvalidArgument(
            "%s: --tf_xla_auto_jit takes -1, 0, 1, 2 or single-gpu(N), got "
            "'%s'",
            kTf, f.value);
      }
      options.jit = v >= 1 ? JitMode::kAuto : JitMode::kOff;
    } else if (f.name == "tf_xla_cpu_global_jit") {
      TFJIT_ASSIGN_OR_RETURN(bool on, BoolFlag(kTf, f));
      if (on) options.jit = JitMode::kAuto;
    } else if (f.name == "tf_xla_min_cluster_size") {
      TFJIT_ASSIGN_OR_RETURN(options.min_cluster_size, IntFlag(kTf, f, 1));
    } else if (f.name == "tf_xla_max_cluster_size") {
      TFJIT_ASSIGN_OR_RETURN(options.max_cluster_size, IntFlag(kTf, f, 0));
    } else {
      Log(LogLevel::kWarning, "%s: --%s is not used by tfjit; ignored", kTf, f.name);
    }
  }
  constexpr char kXla[] = "XLA_FLAGS";
  TFJIT_ASSIGN_OR_RETURN(std::vector<Flag> xla, Split(kXla, xla_flags));
  bool pass_regex = false;
  for (const Flag& f : xla) {
    if (f.name == "xla_dump_to") {
      if (f.bare || f.value.empty()) {
        return InvalidArgument("%s: --xla_dump_to takes a directory", kXla);
      }
      options.dump_dir = f.value;
    } else if (f.name == "xla_dump_hlo_pass_re") {
      if (f.bare) return InvalidArgument("%s: --xla_dump_hlo_pass_re takes a regex", kXla);
      options.dump_hlo_pass_regex = f.value;
      pass_regex = true;
    } else if (f.name == "xla_backend_optimization_level") {
      TFJIT_ASSIGN_OR_RETURN(options.backend_optimization_level, IntFlag(kXla, f, 0));
      if (options.backend_optimization_level > 3) {
        return InvalidArgument("%s: --xla_backend_optimization_level takes 0, 1, 2 or 3, got '%s'",
                               kXla, f.value);
      }
    } else {
      Log(LogLevel::kWarning, "%s: --%s is not used by tfjit; ignored", kXla, f.name);
    }
  }
  // XLA dumps every pass when only --xla_dump_to is given.
  if (!options.dump_dir.empty() && !pass_regex && options.dump_hlo_pass_regex.empty() &&
      !xla_flags.empty()) {
    options.dump_hlo_pass_regex = ".*";
  }
  return options;
}

StatusOr<SessionOptions> SessionOptionsFromEnvironment(SessionOptions base) {
  const char* tf = std::getenv("TF_XLA_FLAGS");
  const char* xla = std::getenv("XLA_FLAGS");
  return ApplyTfFlags(std::move(base), tf != nullptr ? tf : "", xla != nullptr ? xla : "");
}

}  // namespace tfjit
