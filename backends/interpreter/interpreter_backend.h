// The interpreter backend: "compiles" a module by optimizing it with the standard passes and
// runs it on the HLO reference evaluator. Slow; for debugging and differential testing (the
// role of XLA's interpreter platform).
#ifndef TFJIT_BACKENDS_INTERPRETER_INTERPRETER_BACKEND_H_
#define TFJIT_BACKENDS_INTERPRETER_INTERPRETER_BACKEND_H_

#include <memory>

#include "backends/backend.h"

namespace tfjit::interpreter {

std::unique_ptr<backends::Backend> CreateInterpreterBackend();

}  // namespace tfjit::interpreter

#endif  // TFJIT_BACKENDS_INTERPRETER_INTERPRETER_BACKEND_H_
