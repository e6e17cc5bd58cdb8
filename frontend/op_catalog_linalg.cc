// Catalog entries of the linalg ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs, allowed dtypes and attr defaults (from TF's op registry), compile-time-constant and
// host-memory inputs, statefulness.
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddLinalgOps(std::vector<OpDef>* ops) {
  // ---- Structural ops: any plain dtype (TF's "type" attr; its CPU kernels take the POD types).
  const std::vector<DType> all = PodTypes();
  ops->push_back(Op("MatrixBandPart")
                     .In("input: T")
                     .In("num_lower: Tindex")
                     .In("num_upper: Tindex")
                     .Out("band: T")
                     .Attr("Tindex", T(tensorflow::DT_INT64))
                     .Types("T", all)
                     .Types("Tindex", IndexTypes())
                     .Build());
  ops->push_back(Op("MatrixDiag").In("diagonal: T").Out("output: T").Types("T", all).Build());
  ops->push_back(Op("MatrixDiagV2")
                     .In("diagonal: T")
                     .In("k: int32")
                     .In("num_rows: int32")
                     .In("num_cols: int32")
                     .In("padding_value: T")
                     .Out("output: T")
                     .Types("T", all)
                     .Const({1, 2, 3})
                     .Build());
  ops->push_back(Op("MatrixDiagV3")
                     .In("diagonal: T")
                     .In("k: int32")
                     .In("num_rows: int32")
                     .In("num_cols: int32")
                     .In("padding_value: T")
                     .Out("output: T")
                     .Attr("align", S("RIGHT_LEFT"))
                     .Types("T", all)
                     .Const({1, 2, 3})
                     .Build());
  ops->push_back(Op("MatrixDiagPart").In("input: T").Out("diagonal: T").Types("T", all).Build());
  ops->push_back(Op("MatrixDiagPartV2")
                     .In("input: T")
                     .In("k: int32")
                     .In("padding_value: T")
                     .Out("diagonal: T")
                     .Types("T", all)
                     .Const({1})
                     .Build());
  ops->push_back(Op("MatrixDiagPartV3")
                     .In("input: T")
                     .In("k: int32")
                     .In("padding_value: T")
                     .Out("diagonal: T")
                     .Attr("align", S("RIGHT_LEFT"))
                     .Types("T", all)
                     .Const({1})
                     .Build());
  ops->push_back(Op("MatrixSetDiag")
                     .In("input: T")
                     .In("diagonal: T")
                     .Out("output: T")
                     .Types("T", all)
                     .Build());
  ops->push_back(Op("MatrixSetDiagV2")
                     .In("input: T")
                     .In("diagonal: T")
                     .In("k: int32")
                     .Out("output: T")
                     .Types("T", all)
                     .Const({2})
                     .Build());
  ops->push_back(Op("MatrixSetDiagV3")
                     .In("input: T")
                     .In("diagonal: T")
                     .In("k: int32")
                     .Out("output: T")
                     .Attr("align", S("RIGHT_LEFT"))
                     .Types("T", all)
                     .Const({2})
                     .Build());
  const std::vector<DType> diag_types = {DType::kBFloat16,  DType::kFloat16,   DType::kFloat32,
                                         DType::kFloat64,   DType::kInt32,     DType::kInt64,
                                         DType::kComplex64, DType::kComplex128};
  ops->push_back(Op("Diag").In("diagonal: T").Out("output: T").Types("T", diag_types).Build());
  ops->push_back(Op("DiagPart").In("input: T").Out("diagonal: T").Types("T", diag_types).Build());
  ops->push_back(
      Op("Cross").In("a: T").In("b: T").Out("product: T").Types("T", RealTypes()).Build());
  ops->push_back(Op("SparseMatMul")
                     .In("a: Ta")
                     .In("b: Tb")
                     .Out("product: float")
                     .Attr("transpose_a", B(false))
                     .Attr("transpose_b", B(false))
                     .Attr("a_is_sparse", B(false))
                     .Attr("b_is_sparse", B(false))
                     .Attr("Ta", T(tensorflow::DT_FLOAT))
                     .Attr("Tb", T(tensorflow::DT_FLOAT))
                     .Types("Ta", {DType::kFloat32, DType::kBFloat16})
                     .Types("Tb", {DType::kFloat32, DType::kBFloat16})
                     .Build());
  // TF's registry has complex too for the tridiagonal and decomposition ops; tfjit's kernels
  // refuse complex values with their own message (tests/data/dtype_exceptions.tsv, "tfjit").
  const std::vector<DType> f32_f64 = WithComplex({DType::kFloat32, DType::kFloat64});
  ops->push_back(Op("TridiagonalMatMul")
                     .In("superdiag: T")
                     .In("maindiag: T")
                     .In("subdiag: T")
                     .In("rhs: T")
                     .Out("output: T")
                     .Types("T", f32_f64)
                     .Build());

  // ---- Decompositions and solvers (TF's registry: double, float, half, complex).
  const std::vector<DType> f16_f32_f64 =
      WithComplex({DType::kFloat16, DType::kFloat32, DType::kFloat64});
  ops->push_back(Op("Cholesky").In("input: T").Out("output: T").Types("T", f16_f32_f64).Build());
  ops->push_back(Op("MatrixTriangularSolve")
                     .In("matrix: T")
                     .In("rhs: T")
                     .Out("output: T")
                     .Attr("lower", B(true))
                     .Attr("adjoint", B(false))
                     .Types("T", WithComplex(FloatTypes()))
                     .Build());
  ops->push_back(Op("MatrixInverse")
                     .In("input: T")
                     .Out("output: T")
                     .Attr("adjoint", B(false))
                     .Types("T", f16_f32_f64)
                     .Build());
  ops->push_back(Op("MatrixSolve")
                     .In("matrix: T")
                     .In("rhs: T")
                     .Out("output: T")
                     .Attr("adjoint", B(false))
                     .Types("T", f16_f32_f64)
                     .Build());
  ops->push_back(
      Op("MatrixDeterminant").In("input: T").Out("output: T").Types("T", f16_f32_f64).Build());
  ops->push_back(Op("LogMatrixDeterminant")
                     .In("input: T")
                     .Out("sign: T")
                     .Out("log_abs_determinant: T")
                     .Types("T", f16_f32_f64)
                     .Build());
  ops->push_back(Op("Lu")
                     .In("input: T")
                     .Out("lu: T")
                     .Out("p: output_idx_type")
                     .Attr("output_idx_type", T(tensorflow::DT_INT32))
                     .Types("T", f16_f32_f64)
                     .Types("output_idx_type", IndexTypes())
                     .Build());
  ops->push_back(Op("Qr")
                     .In("input: T")
                     .Out("q: T")
                     .Out("r: T")
                     .Attr("full_matrices", B(false))
                     .Types("T", f16_f32_f64)
                     .Build());
  ops->push_back(Op("SelfAdjointEigV2")
                     .In("input: T")
                     .Out("e: T")
                     .Out("v: T")
                     .Attr("compute_v", B(true))
                     .Types("T", f16_f32_f64)
                     .Build());
  ops->push_back(Op("Svd")
                     .In("input: T")
                     .Out("s: T")
                     .Out("u: T")
                     .Out("v: T")
                     .Attr("compute_uv", B(true))
                     .Attr("full_matrices", B(false))
                     .Types("T", f16_f32_f64)
                     .Build());
  ops->push_back(Op("TridiagonalSolve")
                     .In("diagonals: T")
                     .In("rhs: T")
                     .Out("output: T")
                     .Attr("partial_pivoting", B(true))
                     .Attr("perturb_singular", B(false))
                     .Types("T", f32_f64)
                     .Build());
}

}  // namespace tfjit::tf::catalog
