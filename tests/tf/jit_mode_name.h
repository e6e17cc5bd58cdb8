// The --jit spelling of a JitMode, for test parameter names and messages (tests/tf).
#ifndef TFJIT_TESTS_TF_JIT_MODE_NAME_H_
#define TFJIT_TESTS_TF_JIT_MODE_NAME_H_

#include "tfjit/session.h"

namespace tfjit::testing {

inline const char* ModeName(JitMode mode) {
  switch (mode) {
    case JitMode::kNone: return "none";
    case JitMode::kOff: return "off";
    case JitMode::kAuto: return "auto";
    case JitMode::kAll: return "all";
  }
  return "?";
}

}  // namespace tfjit::testing

#endif  // TFJIT_TESTS_TF_JIT_MODE_NAME_H_
