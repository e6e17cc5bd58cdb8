// The rules' table (compiler/rules/rule.h): each rule named once, in letter order, and the
// payload that says which rule an error came from.
#include "compiler/rules/rule.h"

#include <set>
#include <string>

#include "core/status.h"
#include "gtest/gtest.h"

namespace tfjit::rules {
namespace {

TEST(RuleTest, TableNamesEachRuleOnceInLetterOrder) {
  const std::vector<RuleInfo>& rules = AllRules();
  ASSERT_EQ(rules.size(), 7u);
  const std::string letters = "ABCDEF-";
  std::set<std::string> names;
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(rules[i].letter, std::string(1, letters[i]));
    EXPECT_EQ(Info(rules[i].id).name, rules[i].name);
    EXPECT_TRUE(names.insert(rules[i].name).second) << rules[i].name;
    EXPECT_GT(std::string(rules[i].summary).size(), 10u);
    EXPECT_GT(std::string(rules[i].autofix).size(), 3u);
  }
}

TEST(RuleTest, PayloadNamesTheRuleAndOnlyTagsErrors) {
  EXPECT_EQ(RuleOfError(Internal("no rule")), std::nullopt);
  EXPECT_EQ(RuleOfError(absl::OkStatus()), std::nullopt);
  EXPECT_TRUE(Tag(absl::OkStatus(), RuleId::kBoundedList).ok());
  const absl::Status tagged = Tag(InvalidArgument("x"), RuleId::kRandomSeeds);
  EXPECT_EQ(RuleOfError(tagged), RuleId::kRandomSeeds);
  EXPECT_EQ(RuleOfError(AppendContext(AppendContext(tagged, "a"), "b")), RuleId::kRandomSeeds);
  // Tagging again names the later rule.
  EXPECT_EQ(RuleOfError(Tag(tagged, RuleId::kConstantInputs)), RuleId::kConstantInputs);
}

}  // namespace
}  // namespace tfjit::rules
