// Catalog entries of the special ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs, allowed dtypes and attr defaults (from TF's op registry), compile-time-constant and
// host-memory inputs, statefulness.
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddSpecialOps(std::vector<OpDef>* ops) {
  for (const char* name : {"Erfinv", "Ndtri", "BesselI0e", "BesselI1e"}) {
    ops->push_back(Op(name).In("x: T").Out("y: T").Types("T", FloatTypes()).Build());
  }
  ops->push_back(Op("Xlog1py").In("x: T").In("y: T").Out("z: T").Types("T", FloatTypes()).Build());
  const std::vector<DType> wide = {DType::kFloat32, DType::kFloat64};
  for (const char* name : {"Igamma", "Igammac"}) {
    ops->push_back(Op(name).In("a: T").In("x: T").Out("z: T").Types("T", wide).Build());
  }
  ops->push_back(
      Op("Betainc").In("a: T").In("b: T").In("x: T").Out("z: T").Types("T", wide).Build());
  ops->push_back(Op("Zeta").In("x: T").In("q: T").Out("z: T").Types("T", wide).Build());
  ops->push_back(Op("Polygamma").In("a: T").In("x: T").Out("z: T").Types("T", wide).Build());
}

}  // namespace tfjit::tf::catalog
