// Known issue E (compiler/rules/e_random_seeds.h): TF's warning per op, and which ops it is
// about.
#include "compiler/rules/e_random_seeds.h"

#include <string>

#include "tests/unit/rules/rules_test_util.h"

namespace tfjit::rules {
namespace {

std::string RandomNode(const std::string& name, const std::string& op) {
  return "node { name: '" + name + "' op: '" + op +
         "' input: 'shape' attr { key: 'T' value { type: DT_INT32 } } attr { key: 'dtype' value "
         "{ type: DT_FLOAT } } }\n";
}

TEST(RandomSeedsRuleTest, WarningIsTfsForEachOp) {
  auto g = testing::BuildGraph(testing::IntConst("shape", 2) + RandomNode("u", "RandomUniform") +
                               RandomNode("n", "RandomStandardNormal") +
                               RandomNode("t", "TruncatedNormal") + R"pb(
        node { name: "logits" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
               attr { key: "value" value { tensor { dtype: DT_FLOAT
                 tensor_shape { dim { size: 1 } dim { size: 2 } } float_val: 0 } } } }
        node { name: "k" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {}
                                                    int_val: 3 } } } }
        node { name: "m" op: "Multinomial" input: "logits" input: "k"
               attr { key: "T" value { type: DT_FLOAT } } }
      )pb");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(IgnoredSeedsWarning(*g->FindNode("u")),
            "Warning: Using tf.random.uniform with XLA compilation will ignore seeds; consider "
            "using tf.random.stateless_uniform instead if reproducible behavior is desired. u");
  EXPECT_EQ(IgnoredSeedsWarning(*g->FindNode("n")),
            "Warning: Using tf.random.normal with XLA compilation will ignore seeds; consider "
            "using tf.random.stateless_normal instead if reproducible behavior is desired. n");
  EXPECT_EQ(IgnoredSeedsWarning(*g->FindNode("t")),
            "Warning: Using tf.random.truncated_normal with XLA compilation will ignore seeds; "
            "consider using tf.random.stateless_truncated_normal instead if reproducible "
            "behavior is desired. t");
  EXPECT_EQ(IgnoredSeedsWarning(*g->FindNode("m")),
            "Warning: Using tf.random.categorical with XLA compilation will ignore seeds. m");
}

TEST(RandomSeedsRuleTest, AboutStatefulOpsOnly) {
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal",
                         "RandomUniformInt", "Multinomial"}) {
    EXPECT_TRUE(IsStatefulRandomOp(op)) << op;
  }
  // Stateless ops take their seeds as inputs, and the resource-based generators' ops
  // (StatefulUniform...) are seeded by their state: neither is the rule's concern.
  for (const char* op : {"StatelessRandomUniform", "StatelessRandomNormalV2", "StatefulUniform",
                         "RandomShuffle", "Add"}) {
    EXPECT_FALSE(IsStatefulRandomOp(op)) << op;
  }
}

}  // namespace
}  // namespace tfjit::rules
