// Catalog entries of more `state` ops (docs/DESIGN.md, "Op families"): VariableShape and the
// TF1 stacks (data_flow_ops.cc: StackV2 and friends, which TF1 gradient loops use).
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddStateMoreOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("VariableShape")
                     .In("input: resource")
                     .Out("output: out_type")
                     .Attr("out_type", T(tensorflow::DT_INT32))
                     .Types("out_type", IndexTypes())
                     .HostOut({0})
                     .Build());
  ops->push_back(Op("StackV2")
                     .In("max_size: int32")
                     .Out("handle: resource")
                     .Attr("stack_name", S(""))
                     .Const({0})
                     .Stateful()
                     .Build());
  ops->push_back(Op("StackPushV2")
                     .In("handle: resource")
                     .In("elem: T")
                     .Out("output: T")
                     .Attr("swap_memory", B(false))
                     .Stateful()
                     .Build());
  ops->push_back(Op("StackPopV2").In("handle: resource").Out("elem: elem_type").Stateful().Build());
  ops->push_back(Op("StackCloseV2").In("handle: resource").Stateful().Build());
}

}  // namespace tfjit::tf::catalog
