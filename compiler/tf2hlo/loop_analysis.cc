// TraceLoop: a scalar interpreter for a While's control variables, plus the list-pattern
// queries the C/D auto-fixes ask. Values are held as double (exact for the integers loop
// counters take, |x| < 2^53) and rounded per the output dtype.
#include "compiler/tf2hlo/loop_analysis.h"

#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "compiler/tf2hlo/function_lowering.h"
#include "core/dtype.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using Args = std::vector<std::optional<double>>;

// Maps a body's input placeholders to their loop-variable index.
absl::flat_hash_map<const tf::Node*, int> InputIndex(const tf::FunctionBody& body) {
  absl::flat_hash_map<const tf::Node*, int> index;
  for (size_t i = 0; i < body.inputs.size(); ++i) {
    absl::StatusOr<tf::Output> o = body.graph->FindOutput(body.inputs[i]);
    if (o.ok()) index[o->node] = static_cast<int>(i);
  }
  return index;
}

bool IsIdentityLike(const std::string& op) {
  return op == "Identity" || op == "Snapshot" || op == "StopGradient";
}

double RoundTo(DType dtype, double v) {
  if (dtype == DType::kBool) return v != 0 ? 1 : 0;
  if (IsIntegerDType(dtype)) return std::trunc(v);
  if (dtype == DType::kFloat32) return static_cast<float>(v);
  return v;
}

class ScalarEvaluator {
 public:
  ScalarEvaluator(const absl::flat_hash_map<const tf::Node*, int>* inputs, const Args* args)
      : inputs_(inputs), args_(args) {}

  std::optional<double> Eval(const tf::Output& o, std::string* why) {
    const tf::Node& n = *o.node;
    if (inputs_ != nullptr) {
      auto it = inputs_->find(&n);
      if (it != inputs_->end()) {
        const std::optional<double>& v = (*args_)[static_cast<size_t>(it->second)];
        if (!v.has_value()) *why = absl::StrCat("loop variable ", it->second, " is not known");
        return v;
      }
    }
    auto memo = memo_.find(&n);
    if (memo != memo_.end()) return memo->second;
    std::optional<double> v = EvalNode(n, why);
    if (v.has_value() && n.num_outputs() > 0) v = RoundTo(n.output_types()[0], *v);
    memo_[&n] = v;
    return v;
  }

 private:
  std::optional<double> EvalNode(const tf::Node& n, std::string* why) {
    const std::string& op = n.op();
    if (op == "Const") {
      absl::StatusOr<Tensor> t = tf::GetTensorAttr(n, "value");
      if (!t.ok() || t->num_elements() != 1 || !IsNumericDType(t->dtype())) {
        *why = absl::StrCat("constant ", n.name(), " is not a numeric scalar");
        return std::nullopt;
      }
      return IsFloatingDType(t->dtype()) ? ElementAsDouble(*t, 0)
                                         : static_cast<double>(ElementAsInt64(*t, 0));
    }
    std::vector<double> in;
    for (const tf::Output& input : n.inputs()) {
      std::optional<double> v = Eval(input, why);
      if (!v.has_value()) return std::nullopt;
      in.push_back(*v);
    }
    if (IsIdentityLike(op) || op == "Cast") return in[0];
    if (in.size() == 1) {
      if (op == "LogicalNot") return in[0] == 0 ? 1 : 0;
      if (op == "Neg") return -in[0];
    }
    if (in.size() == 2) {
      const double a = in[0], b = in[1];
      if (op == "AddV2" || op == "Add") return a + b;
      if (op == "Sub") return a - b;
      if (op == "Mul") return a * b;
      if (op == "Maximum") return std::max(a, b);
      if (op == "Minimum") return std::min(a, b);
      if (op == "FloorDiv" && b != 0) return std::floor(a / b);
      if (op == "Less") return a < b;
      if (op == "LessEqual") return a <= b;
      if (op == "Greater") return a > b;
      if (op == "GreaterEqual") return a >= b;
      if (op == "Equal") return a == b;
      if (op == "NotEqual") return a != b;
      if (op == "LogicalAnd") return (a != 0 && b != 0) ? 1 : 0;
      if (op == "LogicalOr") return (a != 0 || b != 0) ? 1 : 0;
    }
    *why = absl::StrCat("node ", n.DebugName(), " is not exact scalar arithmetic");
    return std::nullopt;
  }

  const absl::flat_hash_map<const tf::Node*, int>* inputs_;
  const Args* args_;
  absl::flat_hash_map<const tf::Node*, std::optional<double>> memo_;
};

// The loop variables (body inputs) `out` depends on through data edges.
void InputsReaching(const tf::Output& out, const absl::flat_hash_map<const tf::Node*, int>& index,
                    absl::flat_hash_set<int>* vars) {
  std::vector<const tf::Node*> work = {out.node};
  absl::flat_hash_set<const tf::Node*> seen;
  while (!work.empty()) {
    const tf::Node* n = work.back();
    work.pop_back();
    if (!seen.insert(n).second) continue;
    auto it = index.find(n);
    if (it != index.end()) vars->insert(it->second);
    for (const tf::Output& in : n->inputs()) work.push_back(in.node);
  }
}

struct ParsedBody {
  tf::FunctionBody body;
  absl::flat_hash_map<const tf::Node*, int> index;
  std::vector<tf::Output> outputs;
};

std::optional<ParsedBody> Parse(const tf::Node& node, absl::string_view attr, std::string* why) {
  absl::StatusOr<tf::FunctionBody> body = InstantiateFunctionAttr(node, attr);
  if (!body.ok()) {
    *why = std::string(body.status().message());
    return std::nullopt;
  }
  ParsedBody p;
  p.body = std::move(*body);
  p.index = InputIndex(p.body);
  for (const std::string& name : p.body.outputs) {
    absl::StatusOr<tf::Output> o = p.body.graph->FindOutput(name);
    if (!o.ok()) {
      *why = std::string(o.status().message());
      return std::nullopt;
    }
    p.outputs.push_back(*o);
  }
  return p;
}

}  // namespace

std::vector<const tf::Node*> ListChain(const tf::FunctionBody& body, int var) {
  absl::flat_hash_map<const tf::Node*, int> index = InputIndex(body);
  if (var < 0 || static_cast<size_t>(var) >= body.outputs.size()) return {};
  absl::StatusOr<tf::Output> o = body.graph->FindOutput(body.outputs[var]);
  if (!o.ok()) return {};
  std::vector<const tf::Node*> chain;
  const tf::Node* n = o->node;
  while (true) {
    auto it = index.find(n);
    if (it != index.end()) return it->second == var ? chain : std::vector<const tf::Node*>{};
    const std::string& op = n->op();
    if (op != "TensorListPushBack" && op != "TensorListSetItem" && !IsIdentityLike(op)) return {};
    chain.push_back(n);
    n = n->input(0).node;
  }
}

const std::vector<double>* LoopTrace::ValuesOf(int var) const {
  for (size_t i = 0; i < control_vars.size(); ++i) {
    if (control_vars[i] == var) return &values[i];
  }
  return nullptr;
}

std::optional<double> ScalarConstantValue(const tf::Output& output) {
  std::string why;
  return ScalarEvaluator(nullptr, nullptr).Eval(output, &why);
}

std::optional<LoopTrace> TraceLoop(const tf::Node& while_node,
                                   const std::vector<std::optional<double>>& initial,
                                   std::string* why) {
  std::optional<ParsedBody> cond = Parse(while_node, "cond", why);
  std::optional<ParsedBody> body = Parse(while_node, "body", why);
  if (!cond.has_value() || !body.has_value()) return std::nullopt;
  if (cond->outputs.size() != 1 || body->outputs.size() != initial.size()) {
    *why = "the loop's cond/body signatures do not match its inputs";
    return std::nullopt;
  }
  absl::flat_hash_set<int> control;
  InputsReaching(cond->outputs[0], cond->index, &control);
  for (bool grew = true; grew;) {  // close under the body's dependencies
    grew = false;
    for (int v : std::vector<int>(control.begin(), control.end())) {
      const size_t before = control.size();
      InputsReaching(body->outputs[static_cast<size_t>(v)], body->index, &control);
      grew |= control.size() != before;
    }
  }
  LoopTrace trace;
  trace.control_vars.assign(control.begin(), control.end());
  std::sort(trace.control_vars.begin(), trace.control_vars.end());
  trace.values.resize(trace.control_vars.size());
  Args state = initial;
  for (int v : trace.control_vars) {
    if (!state[static_cast<size_t>(v)].has_value()) {
      *why = absl::StrCat("loop variable ", v,
                          " controls the loop but its initial value is not "
                          "known at compile time");
      return std::nullopt;
    }
  }
  while (true) {
    std::optional<double> go = ScalarEvaluator(&cond->index, &state).Eval(cond->outputs[0], why);
    if (!go.has_value()) return std::nullopt;
    if (*go == 0) return trace;
    if (trace.trip_count >= kMaxTracedTripCount) {
      *why = absl::StrCat("the loop runs more than ", kMaxTracedTripCount, " iterations");
      return std::nullopt;
    }
    for (size_t i = 0; i < trace.control_vars.size(); ++i) {
      trace.values[i].push_back(*state[trace.control_vars[i]]);
    }
    ScalarEvaluator step(&body->index, &state);
    Args next = state;
    for (int v : trace.control_vars) {
      next[v] = step.Eval(body->outputs[static_cast<size_t>(v)], why);
      if (!next[v].has_value()) return std::nullopt;
    }
    state = std::move(next);
    ++trace.trip_count;
  }
}

const tf::Node* ConsumingWhile(const tf::Output& list, int* var_index) {
  for (const auto& [consumer, slot] : list.node->data_consumers()) {
    if (consumer->input(slot) != list) continue;
    if (IsFunctionalWhile(consumer->op())) {
      *var_index = slot;
      return consumer;
    }
    if (IsIdentityLike(consumer->op())) {
      if (const tf::Node* w = ConsumingWhile({consumer, 0}, var_index)) return w;
    }
  }
  return nullptr;
}

std::optional<int> PushesPerIteration(const tf::FunctionBody& body, int var) {
  absl::StatusOr<tf::Output> out = var >= 0 && static_cast<size_t>(var) < body.outputs.size()
                                       ? body.graph->FindOutput(body.outputs[var])
                                       : absl::StatusOr<tf::Output>(absl::NotFoundError(""));
  if (!out.ok()) return std::nullopt;
  std::vector<const tf::Node*> chain = ListChain(body, var);
  if (chain.empty() && InputIndex(body).count(out->node) == 0) return std::nullopt;
  int pushes = 0;
  for (const tf::Node* n : chain) pushes += n->op() == "TensorListPushBack" ? 1 : 0;
  return pushes;
}

int SetItemIndexVar(const tf::FunctionBody& body, int var) {
  absl::flat_hash_map<const tf::Node*, int> index = InputIndex(body);
  int found = -1;
  for (const tf::Node* n : ListChain(body, var)) {
    if (n->op() != "TensorListSetItem") continue;
    const tf::Node* i = n->input(1).node;
    while (IsIdentityLike(i->op())) i = i->input(0).node;
    auto it = index.find(i);
    if (it == index.end() || (found >= 0 && found != it->second)) return -1;
    found = it->second;
  }
  return found;
}

}  // namespace tfjit::tf2hlo
