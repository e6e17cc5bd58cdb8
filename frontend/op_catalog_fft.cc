// Catalog entries of the fft ops (docs/DESIGN.md, "Op families"): TF's arg names, type attrs,
// allowed dtypes and attr defaults (tensorflow/core/ops/spectral_ops.cc). Kernels
// in fft_kernels.cc; compiled as DFT products (compiler/tf2hlo/fft_lowerings.cc).
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddFftOps(std::vector<OpDef>* ops) {
  const std::vector<DType> reals = {DType::kFloat32, DType::kFloat64};
  for (const char* name : {"FFT", "IFFT", "FFT2D", "IFFT2D", "FFT3D", "IFFT3D"}) {
    ops->push_back(Op(name)
                       .In("input: Tcomplex")
                       .Out("output: Tcomplex")
                       .Attr("Tcomplex", T(tensorflow::DT_COMPLEX64))
                       .Types("Tcomplex", ComplexTypes())
                       .Build());
  }
  // fft_length must be constant for tf2xla (the output shape depends on it).
  for (const char* name : {"RFFT", "RFFT2D", "RFFT3D"}) {
    ops->push_back(Op(name)
                       .In("input: Treal")
                       .In("fft_length: int32")
                       .Out("output: Tcomplex")
                       .Attr("Treal", T(tensorflow::DT_FLOAT))
                       .Attr("Tcomplex", T(tensorflow::DT_COMPLEX64))
                       .Const({1})
                       .Types("Treal", reals)
                       .Types("Tcomplex", ComplexTypes())
                       .Build());
  }
  for (const char* name : {"IRFFT", "IRFFT2D", "IRFFT3D"}) {
    ops->push_back(Op(name)
                       .In("input: Tcomplex")
                       .In("fft_length: int32")
                       .Out("output: Treal")
                       .Attr("Treal", T(tensorflow::DT_FLOAT))
                       .Attr("Tcomplex", T(tensorflow::DT_COMPLEX64))
                       .Const({1})
                       .Types("Treal", reals)
                       .Types("Tcomplex", ComplexTypes())
                       .Build());
  }
}

}  // namespace tfjit::tf::catalog
