// Known issue E: compiled stateful random ops ignore their seeds. XLA draws from one unseeded
// stream per process and TF warns at compile time; auto-clustering keeps the ops out of
// clusters (IsStatefulRandomOp, from clustering), and must-compile code compiles them
// (compiler/tf2hlo/random_lowerings.cc, the runtime supplying each node's Philox state). Autofix:
// the seeds are honoured, the compiled stream continuing the kernel's
// (runtime/kernels/random_kernels.h).
#ifndef TFJIT_COMPILER_RULES_E_RANDOM_SEEDS_H_
#define TFJIT_COMPILER_RULES_E_RANDOM_SEEDS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "frontend/graph.h"

namespace tfjit::rules {

// TF's warning for a stateful random `node` compiled without the autofix: "Warning: Using
// tf.random.uniform with XLA compilation will ignore seeds; consider using
// tf.random.stateless_uniform instead if reproducible behavior is desired. <node>" (normal,
// truncated_normal; Multinomial in tf.random.categorical's words).
std::string IgnoredSeedsWarning(const tf::Node& node);

// Whether `op` is one of the stateful random ops the rule is about: RandomUniform,
// RandomStandardNormal, TruncatedNormal, RandomUniformInt, Multinomial.
bool IsStatefulRandomOp(absl::string_view op);

}  // namespace tfjit::rules

#endif  // TFJIT_COMPILER_RULES_E_RANDOM_SEEDS_H_
