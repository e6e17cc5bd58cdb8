// TF1 TensorArrays as TensorLists (functionalize.h): TensorArrayV3 and its ops rewritten to
// the list ops XLA also represents them with, before loops become While nodes.
#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "frontend/functionalize_internal.h"

namespace tfjit::tf::functionalize_internal {
namespace {

bool IsForwarding(const tensorflow::NodeDef& n) {
  return n.op() == "Identity" || Is(n, "Enter") || Is(n, "Merge") || Is(n, "Switch") ||
         Is(n, "Exit") || Is(n, "NextIteration");
}

// TensorArrayV3 and its ops become the TensorList ops XLA also represents them with: the
// handle's uses go away and the float "flow", which already orders the ops, carries the list.
// Concat and Split become TensorListConcatV2 and TensorListSplit (a split's list replaces the
// array's). A TensorArray is left as it is when it grows (dynamic_size), or when its handle or
// flow reaches an op without a list form (gradients, or anything else).
class TensorArrayRewriter {
 public:
  explicit TensorArrayRewriter(tensorflow::GraphDef* def) : def_(def) {
    for (int i = 0; i < def_->node_size(); ++i) {
      index_[def_->node(i).name()] = i;
      for (int k = 0; k < def_->node(i).input_size(); ++k) {
        const Ref r = ParseRef(def_->node(i).input(k));
        consumers_[r.node].push_back({i, k});
      }
    }
  }

  // Returns how many TensorArrays were rewritten.
  int Run() {
    int rewritten = 0;
    for (int i = 0; i < def_->node_size(); ++i) {
      if (def_->node(i).op() != "TensorArrayV3") continue;
      if (Rewrite(i)) ++rewritten;
    }
    if (rewritten > 0) RemoveDeadHandles();
    return rewritten;
  }

 private:
  using Use = std::pair<int, int>;  // (consumer, input slot)

  // The consumers of output `port` of node `i` (data edges).
  std::vector<Use> DataUses(int i, int port) const {
    std::vector<Use> out;
    auto it = consumers_.find(def_->node(i).name());
    if (it == consumers_.end()) return out;
    for (const Use& u : it->second) {
      if (u.second >= def_->node(u.first).input_size()) continue;  // rewritten meanwhile
      const Ref r = ParseRef(def_->node(u.first).input(u.second));
      if (!r.control && r.port == port) out.push_back(u);
    }
    return out;
  }
  int Outputs(const tensorflow::NodeDef& n) const { return Is(n, "Switch") ? 2 : 1; }

  bool Rewrite(int ta) {
    const tensorflow::NodeDef& node = def_->node(ta);
    if (auto d = node.attr().find("dynamic_size"); d != node.attr().end() && d->second.b()) {
      return false;
    }
    // The handle reaches TensorArray ops (slot 0) through forwarding nodes only.
    std::set<int> handle_nodes, ops;
    if (!Reach({{ta, 0}}, tensorflow::DT_RESOURCE, &handle_nodes, [&](int c, int slot) {
          if (slot != 0 || !kListForm.contains(def_->node(c).op())) return false;
          ops.insert(c);
          return true;
        })) {
      return false;
    }
    // The flow: from the TensorArray and the ops that write, through forwarding nodes, into
    // the ops' flow inputs only.
    std::set<int> flow_nodes;
    std::vector<std::pair<int, int>> flows = {{ta, 1}};
    for (int op : ops) {
      const std::string& o = def_->node(op).op();
      if (o == "TensorArrayWriteV3" || o == "TensorArrayScatterV3" || o == "TensorArraySplitV3") {
        flows.push_back({op, 0});
      }
    }
    if (!Reach(flows, tensorflow::DT_FLOAT, &flow_nodes, [&](int c, int slot) {
          return ops.contains(c) && slot == FlowSlot(def_->node(c).op());
        })) {
      return false;
    }
    // Rewrite: the TensorArray becomes TensorListReserve; its flow output is the list.
    const tensorflow::DataType dtype = node.attr().at("dtype").type();
    const std::string name = node.name();
    const tensorflow::TensorShapeProto shape = node.attr().contains("element_shape")
                                                   ? node.attr().at("element_shape").shape()
                                                   : tensorflow::TensorShapeProto();
    {
      tensorflow::NodeDef reserve;
      reserve.set_name(name);
      reserve.set_op("TensorListReserve");
      reserve.set_device(node.device());
      const std::string es = AddElementShape(name, shape, "");
      reserve.add_input(es);
      for (const std::string& in : node.input()) reserve.add_input(in);  // size, controls
      (*reserve.mutable_attr())["element_dtype"].set_type(dtype);
      (*reserve.mutable_attr())["shape_type"].set_type(tensorflow::DT_INT32);
      *def_->mutable_node(ta) = std::move(reserve);
    }
    for (const Use& u : DataUses(ta, 1)) {
      def_->mutable_node(u.first)->set_input(u.second, name);
    }
    for (int f : flow_nodes) {
      (*def_->mutable_node(f)->mutable_attr())["T"].set_type(tensorflow::DT_VARIANT);
    }
    for (int op : ops) RewriteOp(op, shape);
    dead_handles_.insert(handle_nodes.begin(), handle_nodes.end());
    // A split replaces the array's list: when nothing reads the reserved list any more, it
    // goes (a list nobody reads would be a graph output, and leave its compiled cluster: known
    // issue B), and what was ordered after it is ordered after its inputs instead.
    bool read = false;
    for (int i = 0; i < def_->node_size() && !read; ++i) {
      if (dead_handles_.contains(i)) continue;  // forwarded the handle; removed at the end
      for (const std::string& in : def_->node(i).input()) {
        const Ref r = ParseRef(in);
        read |= !r.control && r.node == name;
      }
    }
    if (!read) {
      tensorflow::NodeDef& reserve = *def_->mutable_node(ta);
      // Its element-shape Const (input 0, added above) goes too.
      const std::string element_shape = reserve.input(0);
      added_.erase(
          std::remove_if(added_.begin(), added_.end(),
                         [&](const tensorflow::NodeDef& c) { return c.name() == element_shape; }),
          added_.end());
      std::vector<std::string> after;
      for (int k = 1; k < reserve.input_size(); ++k) {
        after.push_back(absl::StrCat("^", ParseRef(reserve.input(k)).node));
      }
      const std::string control = absl::StrCat("^", name);
      auto reorder = [&](tensorflow::NodeDef& n) {
        for (int k = 0; k < n.input_size(); ++k) {
          if (n.input(k) != control) continue;
          n.mutable_input()->erase(n.mutable_input()->begin() + k);
          for (const std::string& a : after) n.add_input(a);
          return;
        }
      };
      for (int i = 0; i < def_->node_size(); ++i) reorder(*def_->mutable_node(i));
      for (tensorflow::NodeDef& c : added_) reorder(c);
      dead_handles_.insert(ta);
    }
    return true;
  }

  // Follows the outputs `starts` (node, output) through forwarding nodes of `type` (collected
  // in `forwarding`); every other consumer must satisfy `accept(consumer, input slot)`.
  bool Reach(std::vector<std::pair<int, int>> work, tensorflow::DataType type,
             std::set<int>* forwarding, const std::function<bool(int, int)>& accept) const {
    while (!work.empty()) {
      auto [n, port] = work.back();
      work.pop_back();
      for (const Use& u : DataUses(n, port)) {
        const tensorflow::NodeDef& c = def_->node(u.first);
        if (IsForwarding(c) && TypeAttr(c) == type) {
          if (forwarding->insert(u.first).second) {
            for (int p = 0; p < Outputs(c); ++p) work.push_back({u.first, p});
          }
        } else if (!accept(u.first, u.second)) {
          return false;
        }
      }
    }
    return true;
  }

  static int FlowSlot(const std::string& op) {
    if (op == "TensorArrayWriteV3" || op == "TensorArrayScatterV3" || op == "TensorArraySplitV3") {
      return 3;
    }
    if (op == "TensorArrayReadV3" || op == "TensorArrayGatherV3") return 2;
    if (op == "TensorArraySizeV3" || op == "TensorArrayConcatV3") return 1;
    return -1;
  }

  // A new Const named after `base` + `suffix`, ordered after `after` (so that it sits in that
  // node's loop frame); returns it for its value to be filled in.
  tensorflow::NodeDef& AddConst(const std::string& base, const std::string& suffix,
                                const std::string& after, tensorflow::DataType dtype) {
    std::string name = absl::StrCat(base, "/", suffix);
    for (int k = 1; index_.contains(name); ++k) name = absl::StrCat(base, "/", suffix, "_", k);
    index_[name] = -1;
    tensorflow::NodeDef c;
    c.set_name(name);
    c.set_op("Const");
    if (!after.empty()) c.add_input(absl::StrCat("^", after));
    (*c.mutable_attr())["dtype"].set_type(dtype);
    (*c.mutable_attr())["value"].mutable_tensor()->set_dtype(dtype);
    added_.push_back(std::move(c));
    return added_.back();
  }

  // A Const holding `shape` as TensorList ops take it (-1: unknown), ordered after `after`.
  std::string AddElementShape(const std::string& base, const tensorflow::TensorShapeProto& shape,
                              const std::string& after) {
    tensorflow::NodeDef& c = AddConst(base, "element_shape", after, tensorflow::DT_INT32);
    tensorflow::TensorProto* t = (*c.mutable_attr())["value"].mutable_tensor();
    if (shape.unknown_rank()) {
      t->mutable_tensor_shape();
      t->add_int_val(-1);
    } else {
      t->mutable_tensor_shape()->add_dim()->set_size(shape.dim_size());
      for (const auto& d : shape.dim()) t->add_int_val(static_cast<int32_t>(d.size()));
    }
    return c.name();
  }

  void RewriteOp(int i, const tensorflow::TensorShapeProto& shape) {
    tensorflow::NodeDef& n = *def_->mutable_node(i);
    std::vector<std::string> data, controls;
    for (const std::string& in : n.input()) {
      (!in.empty() && in.front() == '^' ? controls : data).push_back(in);
    }
    const std::string op = n.op();
    tensorflow::NodeDef out;
    out.set_name(n.name());
    out.set_device(n.device());
    auto element_dtype = [&](tensorflow::DataType t) {
      (*out.mutable_attr())["element_dtype"].set_type(t);
    };
    const std::string flow_node = data.size() > 1 ? ParseRef(data.back()).node : "";
    if (op == "TensorArrayWriteV3") {
      out.set_op("TensorListSetItem");
      for (const std::string& in : {data[3], data[1], data[2]}) out.add_input(in);
      element_dtype(n.attr().at("T").type());
    } else if (op == "TensorArrayReadV3" || op == "TensorArrayGatherV3") {
      out.set_op(op == "TensorArrayReadV3" ? "TensorListGetItem" : "TensorListGather");
      tensorflow::TensorShapeProto es = shape;
      if (auto a = n.attr().find("element_shape");
          a != n.attr().end() && !a->second.shape().unknown_rank()) {
        es = a->second.shape();
      }
      for (const std::string& in : {data[2], data[1]}) out.add_input(in);
      out.add_input(AddElementShape(n.name(), es, flow_node));
      element_dtype(n.attr().at("dtype").type());
    } else if (op == "TensorArrayScatterV3") {
      out.set_op("TensorListScatterIntoExistingList");
      for (const std::string& in : {data[3], data[2], data[1]}) out.add_input(in);
      element_dtype(n.attr().at("T").type());
    } else if (op == "TensorArraySizeV3") {
      out.set_op("TensorListLength");
      out.add_input(data[1]);
    } else if (op == "TensorArrayConcatV3") {
      // (value, lengths) as TensorArrayConcatV3's; the element shape is [?] + except0.
      out.set_op("TensorListConcatV2");
      tensorflow::TensorShapeProto es;
      if (auto a = n.attr().find("element_shape_except0");
          a != n.attr().end() && !a->second.shape().unknown_rank()) {
        es.add_dim()->set_size(-1);
        for (const auto& d : a->second.shape().dim()) *es.add_dim() = d;
      } else {
        es.set_unknown_rank(true);
      }
      out.add_input(data[1]);
      out.add_input(AddElementShape(n.name(), es, flow_node));
      tensorflow::NodeDef& leading =
          AddConst(n.name(), "leading_dims", flow_node, tensorflow::DT_INT64);
      (*leading.mutable_attr())["value"]
          .mutable_tensor()
          ->mutable_tensor_shape()
          ->add_dim()
          ->set_size(0);
      out.add_input(leading.name());
      element_dtype(n.attr().at("dtype").type());
      (*out.mutable_attr())["shape_type"].set_type(tensorflow::DT_INT32);
    } else if (op == "TensorArraySplitV3") {
      // A new list of the pieces replaces the array's; it stays ordered after the flow in.
      out.set_op("TensorListSplit");
      tensorflow::TensorShapeProto es = shape;
      if (!es.unknown_rank() && es.dim_size() > 0) es.mutable_dim(0)->set_size(-1);
      out.add_input(data[1]);
      out.add_input(AddElementShape(n.name(), es, flow_node));
      out.add_input(data[2]);
      out.add_input(absl::StrCat("^", flow_node));
      element_dtype(n.attr().at("T").type());
      (*out.mutable_attr())["shape_type"].set_type(tensorflow::DT_INT32);
    } else {  // TensorArrayCloseV3: nothing to release
      out.set_op("NoOp");
    }
    for (const std::string& c : controls) out.add_input(c);
    n = std::move(out);
  }

  // Forwarding nodes of rewritten handles, now read by nothing, go; the new Consts come in.
  void RemoveDeadHandles() {
    google::protobuf::RepeatedPtrField<tensorflow::NodeDef> kept;
    for (int i = 0; i < def_->node_size(); ++i) {
      if (!dead_handles_.contains(i)) *kept.Add() = std::move(*def_->mutable_node(i));
    }
    for (tensorflow::NodeDef& c : added_) *kept.Add() = std::move(c);
    def_->mutable_node()->Swap(&kept);
  }

  inline static const std::set<std::string> kListForm = {
      "TensorArrayWriteV3", "TensorArrayReadV3",  "TensorArrayGatherV3", "TensorArrayScatterV3",
      "TensorArraySizeV3",  "TensorArrayCloseV3", "TensorArrayConcatV3", "TensorArraySplitV3"};

  tensorflow::GraphDef* def_;
  absl::flat_hash_map<std::string, int> index_;
  absl::flat_hash_map<std::string, std::vector<Use>> consumers_;
  std::set<int> dead_handles_;
  std::vector<tensorflow::NodeDef> added_;
};

}  // namespace

int RewriteTensorArrays(tensorflow::GraphDef* def) { return TensorArrayRewriter(def).Run(); }

}  // namespace tfjit::tf::functionalize_internal
