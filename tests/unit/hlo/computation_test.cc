// Tests for Computation: use lists, post order, replacement and dead-code removal.
#include "compiler/hlo/computation.h"

#include <gtest/gtest.h>

#include "compiler/hlo/builder.h"
#include "compiler/hlo/module.h"

namespace tfjit::hlo {
namespace {

std::vector<std::string> Names(const std::vector<Instruction*>& insts) {
  std::vector<std::string> out;
  for (const Instruction* i : insts) out.push_back(i->name());
  return out;
}

class ComputationTest : public ::testing::Test {
 protected:
  ComputationTest() : m_("m"), c_(m_.AddComputation("main")), b_(c_) {
    x_ = b_.Parameter(0, Shape(DType::kFloat32, {4}), "x");
    y_ = b_.Parameter(1, Shape(DType::kFloat32, {4}), "y");
  }
  Module m_;
  Computation* c_;
  Builder b_;
  Instruction* x_;
  Instruction* y_;
};

TEST_F(ComputationTest, IdsNamesUsersAndParameters) {
  Instruction* a = *b_.Binary(Opcode::kAdd, x_, x_);
  Instruction* a2 = *b_.Binary(Opcode::kAdd, a, y_);
  EXPECT_EQ(a->name(), "add");
  EXPECT_EQ(a2->name(), "add.1");
  EXPECT_LT(x_->unique_id(), a->unique_id());
  EXPECT_LT(a->unique_id(), a2->unique_id());
  EXPECT_EQ(x_->users(), std::vector<Instruction*>{a});  // used twice, listed once
  EXPECT_EQ(c_->num_parameters(), 2);
  EXPECT_EQ(c_->parameter(1), y_);
  EXPECT_EQ(a->parent(), c_);
}

TEST_F(ComputationTest, PostOrderPutsOperandsFirstThenUnreachable) {
  Instruction* dead = *b_.Unary(Opcode::kNegate, y_);
  Instruction* e = *b_.Unary(Opcode::kExp, x_);
  Instruction* s = *b_.Binary(Opcode::kSubtract, e, y_);
  c_->set_root(s);
  EXPECT_EQ(Names(c_->MakePostOrder()),
            (std::vector<std::string>{"x", "exp", "y", "subtract", "negate"}));
  EXPECT_TRUE(s->IsRoot());
  EXPECT_FALSE(dead->IsRoot());
}

TEST_F(ComputationTest, ReplaceAllUsesWithRewiresUsersAndRoot) {
  Instruction* n = *b_.Unary(Opcode::kNegate, x_);
  Instruction* a = *b_.Binary(Opcode::kAdd, n, y_);
  c_->set_root(n);
  Instruction* e = *b_.Unary(Opcode::kExp, n);  // e uses n: replacing n by e keeps that use
  ASSERT_TRUE(c_->ReplaceAllUsesWith(n, e).ok());
  EXPECT_EQ(a->operand(0), e);
  EXPECT_EQ(e->operand(0), n);
  EXPECT_EQ(c_->root(), e);
  EXPECT_EQ(n->users(), std::vector<Instruction*>{e});
  Instruction* wrong = *b_.Convert(x_, DType::kInt32);
  absl::Status st = c_->ReplaceAllUsesWith(e, wrong);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ComputationTest, ReplaceOperandKeepsUseListsConsistent) {
  Instruction* a = *b_.Binary(Opcode::kAdd, x_, x_);
  c_->ReplaceOperand(a, 0, y_);
  EXPECT_EQ(a->operand(0), y_);
  EXPECT_EQ(x_->users().size(), 1u);  // still used by operand 1
  c_->ReplaceOperand(a, 1, y_);
  EXPECT_TRUE(x_->users().empty());
  EXPECT_EQ(y_->users(), std::vector<Instruction*>{a});
}

TEST_F(ComputationTest, RemoveInstructionAndDeadCode) {
  Instruction* n = *b_.Unary(Opcode::kNegate, x_);
  Instruction* n2 = *b_.Unary(Opcode::kNegate, n);
  Instruction* keep = *b_.Unary(Opcode::kExp, y_);
  c_->set_root(keep);
  EXPECT_EQ(c_->RemoveInstruction(n).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c_->RemoveInstruction(x_).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(c_->RemoveInstruction(n2).ok());
  EXPECT_TRUE(n->users().empty());
  ASSERT_TRUE(b_.Unary(Opcode::kAbs, n).ok());
  EXPECT_EQ(c_->RemoveDeadInstructions(), 2);  // n and abs; parameters stay
  EXPECT_EQ(Names(c_->instructions()), (std::vector<std::string>{"x", "y", "exp"}));
  EXPECT_TRUE(x_->users().empty());
}

}  // namespace
}  // namespace tfjit::hlo
