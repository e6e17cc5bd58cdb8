// TF.js weight shards: reading a weightsManifest's byte streams and decoding each weight the
// way TF.js does at load time (tfjs-core io_utils decodeWeight), then encoding it as the
// `value` TensorProto of the Const node it belongs to (shared/docs/formats.md 3.4).
#ifndef TFJIT_FRONTEND_TFJS_WEIGHTS_H_
#define TFJIT_FRONTEND_TFJS_WEIGHTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontend/proto/graph.pb.h"
#include "frontend/proto/tfjs_model.pb.h"

namespace tfjit::tf {

// One weight after TF.js's decoding: quantized weights are already dequantized, so only the
// five TF.js weight dtypes remain. Exactly one value vector is filled, by `dtype`.
struct TfjsWeight {
  std::string name;   // the Const node it fills
  std::string dtype;  // "float32", "int32", "bool", "string" or "complex64"
  std::vector<int64_t> shape;
  int group = 0;             // weightsManifest index, for messages
  std::vector<float> f32;    // float32; complex64 as interleaved (real, imag) pairs
  std::vector<int32_t> i32;  // int32
  std::vector<uint8_t> b;    // bool (0/1 bytes, as stored)
  std::vector<std::string> strings;
};

// Reads every group's shard files (paths relative to `dir`) as one byte stream per group and
// decodes its weights in manifest order. `model` names the model.json in messages. Errors:
// NOT_FOUND for a missing shard (naming its path), DATA_LOSS when a group's bytes end before
// a weight does (naming the weight and the last shard), INVALID_ARGUMENT for a malformed
// manifest entry (unknown dtype or quantization, missing scale/min, negative dims).
absl::StatusOr<std::vector<TfjsWeight>> ReadTfjsWeights(
    const google::protobuf::RepeatedPtrField<tfjs::WeightGroup>& manifest, const std::string& dir,
    const std::string& model);

// Decodes one weight from `bytes` at `*offset` (advanced past it). `source` says where the
// bytes come from for DATA_LOSS messages ("shards 'a.bin', 'b.bin' of group 0").
absl::StatusOr<TfjsWeight> DecodeTfjsWeight(const tfjs::WeightSpec& spec, absl::string_view bytes,
                                            size_t* offset, absl::string_view source);

// The weight as a TensorProto of dtype `target` (the Const's dtype; DT_INVALID = the weight's
// own). Casts back what the converter narrowed: float32 to double/half/bfloat16, int32 to the
// other integer types (int64 is stored as int32). INVALID_ARGUMENT when the kinds differ
// (a float32 weight for an int32 Const) or the shape differs from `declared` (when given).
absl::StatusOr<tensorflow::TensorProto> TfjsWeightToTensorProto(
    const TfjsWeight& weight, tensorflow::DataType target,
    const tensorflow::TensorShapeProto* declared);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_TFJS_WEIGHTS_H_
