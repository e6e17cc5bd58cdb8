// Reading a TensorFlow checkpoint tensor bundle: `<prefix>.index` (a LevelDB table mapping
// tensor names to BundleEntryProto, the "" key holding a BundleHeaderProto) and the data files
// `<prefix>.data-NNNNN-of-MMMMM` (shared/docs/formats.md section 2). The table container is
// read with LevelDB (which also verifies block checksums and handles Snappy blocks); the
// entries and records are decoded here, each record's masked CRC32C checked.
#ifndef TFJIT_FRONTEND_TENSOR_BUNDLE_H_
#define TFJIT_FRONTEND_TENSOR_BUNDLE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/proto/saved_model.pb.h"
#include "tfjit/tensor.h"

namespace tfjit::tf {

// Thread safety: const methods may be called concurrently (each read opens its own stream).
class BundleReader {
 public:
  // Reads and checks the whole index. Errors: NOT_FOUND (no index file), DATA_LOSS (corrupt
  // or truncated index, bad entry protos), UNIMPLEMENTED (big-endian bundle), INVALID_ARGUMENT
  // (a bundle version this reader is too old for). All name the index file.
  static absl::StatusOr<std::unique_ptr<BundleReader>> Open(const std::string& prefix);

  const std::string& prefix() const { return prefix_; }
  const std::string& index_path() const { return index_path_; }
  int num_shards() const { return header_.num_shards(); }
  // "<prefix>.data-00000-of-00001".
  std::string DataPath(int shard) const;

  // Every tensor key, sorted (the header key "" excluded).
  std::vector<std::string> ListKeys() const;
  bool Contains(const std::string& key) const { return entries_.count(key) != 0; }
  // The index entry of `key`, or NOT_FOUND naming the index and some available keys.
  absl::StatusOr<const tensorflow::BundleEntryProto*> Entry(const std::string& key) const;

  // Reads a numeric tensor. DATA_LOSS (naming the data file and key) when its bytes are
  // missing, have the wrong size, or fail the CRC; UNIMPLEMENTED for string/variant/resource
  // entries (use LookupStrings for strings) and partitioned (sliced) tensors.
  absl::StatusOr<Tensor> Lookup(const std::string& key) const;

  // Reads a DT_STRING tensor's elements in row-major order (e.g. the checkpoint's
  // _CHECKPOINTABLE_OBJECT_GRAPH), with the same checks as Lookup.
  absl::StatusOr<std::vector<std::string>> LookupStrings(const std::string& key) const;
  // Lookup, or for a DT_STRING entry a string tensor (core/string_tensor.h) of its shape.
  absl::StatusOr<Tensor> LookupAny(const std::string& key) const;

 private:
  BundleReader() = default;
  // The record bytes of `entry` (size and offset checked against the data file; with
  // check_crc, the masked CRC32C of the bytes against the entry's).
  absl::StatusOr<std::string> ReadRecord(const std::string& key,
                                         const tensorflow::BundleEntryProto& entry,
                                         bool check_crc) const;

  std::string prefix_, index_path_;
  tensorflow::BundleHeaderProto header_;
  std::map<std::string, tensorflow::BundleEntryProto> entries_;
};

// Writing a checkpoint as TF's BundleWriter does (shared/docs/formats.md section 2): one data
// file `<prefix>.data-00000-of-00001` with the records in the order they were added (numeric
// tensors as their little-endian bytes, strings as varint lengths, a masked CRC32C of the
// lengths and the bytes), and `<prefix>.index`, a LevelDB table (LevelDB's TableBuilder:
// uncompressed blocks, restart interval 16) holding the BundleHeaderProto under "" and a
// BundleEntryProto per key, sorted. Both files are written under temporary names and renamed
// at Finish, so a failed save leaves no half-written checkpoint behind.
class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {}

  // Adds `tensor` (numeric, bool or string) under `key`. INVALID_ARGUMENT for an empty or
  // repeated key and for resource/variant tensors, naming the key.
  absl::Status Add(const std::string& key, const Tensor& tensor);
  // Writes both files. INVALID_ARGUMENT naming the path when a file cannot be created or
  // written (a missing folder, no permission, a full disk).
  absl::Status Finish();

 private:
  std::string prefix_;
  std::string data_;  // the data file's bytes, in Add order
  std::map<std::string, tensorflow::BundleEntryProto> entries_;
};

// The data file of shard `shard` of `num_shards` for a checkpoint prefix (TF's naming).
std::string BundleDataPath(const std::string& prefix, int shard, int num_shards);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_TENSOR_BUNDLE_H_
