// Known issue E's warning and the ops it is about (e_random_seeds.h).
#include "compiler/rules/e_random_seeds.h"

#include "absl/strings/str_cat.h"

namespace tfjit::rules {

// TF's compile-time warning (tf2xla's random ops name the node after it). TF prints none for
// RandomStandardNormal; tfjit warns in the same words, since its seeds are ignored too.
std::string IgnoredSeedsWarning(const tf::Node& node) {
  if (node.op() == "Multinomial") {  // tf2xla's categorical op, in its words
    return absl::StrCat(
        "Warning: Using tf.random.categorical with XLA compilation will ignore "
        "seeds. ",
        node.name());
  }
  const char* api = "uniform";
  if (node.op() == "RandomStandardNormal") api = "normal";
  if (node.op() == "TruncatedNormal") api = "truncated_normal";
  return absl::StrCat("Warning: Using tf.random.", api,
                      " with XLA compilation will ignore "
                      "seeds; consider using tf.random.stateless_",
                      api,
                      " instead if "
                      "reproducible behavior is desired. ",
                      node.name());
}

bool IsStatefulRandomOp(absl::string_view op) {
  return op == "RandomUniform" || op == "RandomStandardNormal" || op == "TruncatedNormal" ||
         op == "RandomUniformInt" || op == "Multinomial";
}

}  // namespace tfjit::rules
