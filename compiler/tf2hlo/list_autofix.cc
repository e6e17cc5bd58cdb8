// Auto-fixes of known issues C and D for lists filled by a loop: the list's capacity comes
// from the loop's provable trip count (loop_analysis.h), so an unbounded EmptyTensorList or a
// growing TensorArray compiles as a fixed-size buffer. Only with LoweringOptions::autofix.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/tf2hlo/function_lowering.h"
#include "compiler/tf2hlo/list_lowering.h"
#include "compiler/tf2hlo/loop_analysis.h"
#include "compiler/tf2hlo/lowering_context.h"
#include "core/dtype.h"
#include "core/logging.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

// The growing SetItem nodes on the body's path for list variable `var` (only those: other
// lists' writes are not bounded by this list's trace).
std::vector<const tf::Node*> GrowingWrites(const tf::FunctionBody& body, int var) {
  std::vector<const tf::Node*> out;
  for (const tf::Node* n : ListChain(body, var)) {
    if (n->op() == "TensorListSetItem" &&
        tf::GetBoolAttrOr(*n, "resize_if_index_out_of_bounds", false).value_or(false)) {
      out.push_back(n);
    }
  }
  return out;
}

// Straight-line code: the most PushBacks on any path of list ops from `list`; nullopt when
// the list reaches anything else that could add elements (a loop, a call, a conditional).
std::optional<int64_t> StraightLinePushes(const tf::Output& list, int depth = 0) {
  if (depth > 10000) return std::nullopt;
  int64_t best = 0;
  int list_consumers = 0;  // consumers that pass the list on
  for (const auto& [consumer, slot] : list.node->data_consumers()) {
    if (consumer->input(slot) == list &&
        (consumer->op() == "TensorListPushBack" || consumer->op() == "TensorListSetItem" ||
         consumer->op() == "TensorListPopBack" || consumer->op() == "Identity")) {
      ++list_consumers;
    }
  }
  // Two branches of pushes would need two sizes (a stack of the shorter one would carry a
  // zero row): only a single chain gets a bound.
  if (list_consumers > 1) return std::nullopt;
  for (const auto& [consumer, slot] : list.node->data_consumers()) {
    if (!(consumer->input(slot) == list)) continue;
    const std::string& op = consumer->op();
    if (op == "TensorListPushBack" || op == "TensorListSetItem" || op == "TensorListPopBack" ||
        op == "Identity") {
      if (op == "TensorListSetItem" &&
          tf::GetBoolAttrOr(*consumer, "resize_if_index_out_of_bounds", false).value_or(false)) {
        return std::nullopt;
      }
      std::optional<int64_t> rest = StraightLinePushes({consumer, 0}, depth + 1);
      if (!rest.has_value()) return std::nullopt;
      best = std::max(best, *rest + (op == "TensorListPushBack" ? 1 : 0));
    } else if (op != "TensorListGetItem" && op != "TensorListStack" && op != "TensorListLength" &&
               op != "TensorListElementShape" && op != "TensorListGather") {
      return std::nullopt;
    }
  }
  return best;
}

}  // namespace

std::optional<double> LoweringContext::KnownScalar(const tf::Output& output) const {
  auto it = values_.find(output.node);
  if (it != values_.end() && static_cast<size_t>(output.index) < it->second.size() &&
      it->second[output.index] != nullptr) {
    hlo::Instruction* v = it->second[output.index];
    if (!v->shape().IsArray() || !v->shape().dims().empty()) return std::nullopt;
    absl::StatusOr<Tensor> t = TryEvaluate(v);
    if (!t.ok()) return std::nullopt;
    return IsFloatingDType(t->dtype()) ? ElementAsDouble(*t, 0)
                                       : static_cast<double>(ElementAsInt64(*t, 0));
  }
  return ScalarConstantValue(output);
}

std::optional<int64_t> LoweringContext::ListBound(const tf::Node& list_node) {
  if (!autofix()) return std::nullopt;
  int var = -1;
  const tf::Output list{const_cast<tf::Node*>(&list_node), 0};
  const tf::Node* loop = ConsumingWhile(list, &var);
  if (loop == nullptr) {
    if (list_node.op() != "EmptyTensorList") return std::nullopt;
    std::optional<int64_t> pushes = StraightLinePushes(list);
    if (pushes.has_value()) {
      last_list_bound_reason_ = absl::StrCat(*pushes, " push(es) in straight-line code");
    }
    return pushes;
  }
  std::vector<std::optional<double>> initial;
  for (const tf::Output& in : loop->inputs()) initial.push_back(KnownScalar(in));
  std::string why;
  std::optional<LoopTrace> trace = TraceLoop(*loop, initial, &why);
  absl::StatusOr<tf::FunctionBody> body = InstantiateFunctionAttr(*loop, "body");
  if (!trace.has_value() || !body.ok()) {
    Log(LogLevel::kInfo, "autofix C/D: no bound for %s: %s", list_node.DebugName(),
        trace.has_value() ? body.status().message() : why);
    return std::nullopt;
  }
  int64_t bound = -1;
  std::string how;
  const int index_var = SetItemIndexVar(*body, var);
  if (const std::vector<double>* idx = index_var >= 0 ? trace->ValuesOf(index_var) : nullptr) {
    bound = 0;  // writes at the traced index values: capacity max + 1
    for (double i : *idx) bound = std::max(bound, static_cast<int64_t>(i) + 1);
    how = absl::StrCat("its writes' largest index (loop variable ", index_var, ") + 1");
    for (const tf::Node* w : GrowingWrites(*body, var)) {
      options()->bounded_list_writes.insert(ListWriteKey(*w));
    }
  } else if (std::optional<int> pushes = PushesPerIteration(*body, var)) {
    bound = trace->trip_count * *pushes;
    how = absl::StrCat(*pushes, " push(es) per iteration");
  } else {
    Log(LogLevel::kInfo,
        "autofix C/D: no bound for %s: the loop body's list writes are not a "
        "simple chain",
        list_node.DebugName());
    return std::nullopt;
  }
  last_list_bound_reason_ = absl::StrCat("loop ", loop->DebugName(), " runs ", trace->trip_count,
                                         " iterations (", how, ")");
  return bound;
}

bool LoweringContext::ListGrowthIsBounded(const tf::Node& set_item) {
  return autofix() && options()->bounded_list_writes.contains(ListWriteKey(set_item));
}

}  // namespace tfjit::tf2hlo
