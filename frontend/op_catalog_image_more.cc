// Catalog entries of the image_more ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs, allowed dtypes and attr defaults (from TF's op registry), compile-time-constant and
// host-memory inputs, statefulness.
#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {

void AddImageMoreOps(std::vector<OpDef>* ops) {
  ops->push_back(Op("ResizeNearestNeighbor")
                     .In("images: T")
                     .In("size: int32")
                     .Out("resized_images: T")
                     .Attr("align_corners", B(false))
                     .Attr("half_pixel_centers", B(false))
                     .Const({1})
                     .Types("T", {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16,
                                  DType::kInt32, DType::kInt64, DType::kFloat16, DType::kFloat32,
                                  DType::kFloat64, DType::kBFloat16})
                     .Build());
  for (const char* name : {"RGBToHSV", "HSVToRGB"}) {
    ops->push_back(Op(name)
                       .In("images: T")
                       .Out("output: T")
                       .Attr("T", T(tensorflow::DT_FLOAT))
                       .Types("T", FloatTypes())
                       .Build());
  }
  ops->push_back(Op("ExtractImagePatches")
                     .In("images: T")
                     .Out("patches: T")
                     .Types("T", AllNumericTypes())
                     .Build());
  // TF-only resizes (XLA leaves them to TF's kernels); float outputs.
  const std::vector<DType> image_types = {
      DType::kInt8,  DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,
      DType::kInt64, DType::kFloat16, DType::kFloat32, DType::kFloat64, DType::kBFloat16};
  ops->push_back(Op("ResizeArea")
                     .In("images: T")
                     .In("size: int32")
                     .Out("resized_images: float")
                     .Attr("align_corners", B(false))
                     .Types("T", image_types)
                     .Build());
  ops->push_back(Op("ResizeBicubic")
                     .In("images: T")
                     .In("size: int32")
                     .Out("resized_images: float")
                     .Attr("align_corners", B(false))
                     .Attr("half_pixel_centers", B(false))
                     .Types("T", image_types)
                     .Build());
  ops->push_back(Op("CropAndResize")
                     .In("image: T")
                     .In("boxes: float")
                     .In("box_ind: int32")
                     .In("crop_size: int32")
                     .Out("crops: float")
                     .Attr("method", S("bilinear"))
                     .Attr("extrapolation_value", F(0.0f))
                     .Types("T", image_types)
                     .Build());
  ops->push_back(Op("ScaleAndTranslate")
                     .In("images: T")
                     .In("size: int32")
                     .In("scale: float")
                     .In("translation: float")
                     .Out("resized_images: float")
                     .Attr("kernel_type", S("lanczos3"))
                     .Attr("antialias", B(true))
                     .Types("T", image_types)
                     .Build());
  const std::vector<DType> half_float = {DType::kFloat16, DType::kFloat32};
  ops->push_back(Op("DrawBoundingBoxes")
                     .In("images: T")
                     .In("boxes: float")
                     .Out("output: T")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Types("T", half_float)
                     .Build());
  ops->push_back(Op("DrawBoundingBoxesV2")
                     .In("images: T")
                     .In("boxes: float")
                     .In("colors: float")
                     .Out("output: T")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Types("T", half_float)
                     .Build());
  ops->push_back(Op("AdjustContrastv2")
                     .In("images: T")
                     .In("contrast_factor: float")
                     .Out("output: T")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Types("T", half_float)
                     .Build());
  ops->push_back(Op("AdjustHue")
                     .In("images: T")
                     .In("delta: float")
                     .Out("output: T")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Types("T", half_float)
                     .Build());
  ops->push_back(Op("AdjustSaturation")
                     .In("images: T")
                     .In("scale: float")
                     .Out("output: T")
                     .Attr("T", T(tensorflow::DT_FLOAT))
                     .Types("T", half_float)
                     .Build());
}

}  // namespace tfjit::tf::catalog
