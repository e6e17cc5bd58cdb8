// Tensor bundle reader (see tensor_bundle.h and shared/docs/formats.md section 2).
#include "frontend/tensor_bundle.h"

#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/crc32c.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/tensor_proto.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table.h"

namespace tfjit::tf {
namespace {

// The BundleHeaderProto version this reader understands (TF writes producer 1, min_consumer 0).
constexpr int kBundleVersion = 1;
constexpr int kMaxShards = 1 << 20;

// LevelDB reports a damaged table as Corruption; anything else (I/O) keeps its own category.
absl::Status FromLevelDb(const leveldb::Status& s, const std::string& path) {
  if (s.IsCorruption()) {
    return DataLoss("checkpoint index '%s' is corrupt or truncated: %s", path, s.ToString());
  }
  if (s.IsNotFound()) return NotFound("checkpoint index '%s': %s", path, s.ToString());
  return InvalidArgument("checkpoint index '%s': cannot read: %s", path, s.ToString());
}

// A varint64 at data[*pos]; false when it runs past `size` or is longer than 10 bytes.
bool ReadVarint64(const std::string& data, size_t* pos, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *pos < data.size(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(data[(*pos)++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

uint32_t LoadLe32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // the bundle is little-endian and so is every host tfjit runs on
  return v;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(const std::string& prefix) {
  std::unique_ptr<BundleReader> reader(new BundleReader());
  reader->prefix_ = prefix;
  reader->index_path_ = absl::StrCat(prefix, ".index");
  const std::string& path = reader->index_path_;

  leveldb::Env* env = leveldb::Env::Default();
  uint64_t file_size = 0;
  leveldb::Status s = env->GetFileSize(path, &file_size);
  if (!s.ok()) {
    return NotFound("checkpoint index '%s' does not exist or cannot be read (%s)", path,
                    s.ToString());
  }
  leveldb::RandomAccessFile* raw_file = nullptr;
  s = env->NewRandomAccessFile(path, &raw_file);
  if (!s.ok()) return FromLevelDb(s, path);
  std::unique_ptr<leveldb::RandomAccessFile> file(raw_file);
  leveldb::Options options;
  options.paranoid_checks = true;
  leveldb::Table* raw_table = nullptr;
  s = leveldb::Table::Open(options, file.get(), file_size, &raw_table);
  if (!s.ok()) return FromLevelDb(s, path);
  std::unique_ptr<leveldb::Table> table(raw_table);

  leveldb::ReadOptions read_options;
  read_options.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read_options));
  bool have_header = false;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key = it->key().ToString();
    const leveldb::Slice value = it->value();
    if (key.empty()) {
      if (!reader->header_.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
        return DataLoss("checkpoint index '%s': the header entry is not a BundleHeaderProto",
                        path);
      }
      have_header = true;
      continue;
    }
    tensorflow::BundleEntryProto entry;
    if (!entry.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
      return DataLoss("checkpoint index '%s': the entry of tensor '%s' is not a "
                      "BundleEntryProto", path, key);
    }
    reader->entries_.emplace(key, std::move(entry));
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), path);
  if (!have_header) {
    return DataLoss("checkpoint index '%s' has no header entry (key \"\"); not a TF tensor "
                    "bundle index", path);
  }
  const tensorflow::BundleHeaderProto& h = reader->header_;
  if (h.endianness() != tensorflow::BundleHeaderProto::LITTLE) {
    return Unimplemented("checkpoint '%s' was written big-endian; tfjit reads little-endian "
                         "bundles only", path);
  }
  if (h.version().min_consumer() > kBundleVersion) {
    return InvalidArgument("checkpoint '%s' needs a bundle reader of version >= %d (this one "
                           "is %d); it was written by a newer TensorFlow",
                           path, h.version().min_consumer(), kBundleVersion);
  }
  for (int bad : h.version().bad_consumers()) {
    if (bad == kBundleVersion) {
      return InvalidArgument("checkpoint '%s' disallows bundle reader version %d", path, bad);
    }
  }
  if (h.num_shards() < 1 || h.num_shards() > kMaxShards) {
    return DataLoss("checkpoint index '%s': header says %d data shards", path, h.num_shards());
  }
  for (const auto& [key, entry] : reader->entries_) {
    if (entry.slices_size() == 0 && (entry.shard_id() < 0 || entry.shard_id() >= h.num_shards())) {
      return DataLoss("checkpoint index '%s': tensor '%s' is in shard %d of %d", path, key,
                      entry.shard_id(), h.num_shards());
    }
  }
  return reader;
}

std::string BundleReader::DataPath(int shard) const {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix_, shard, header_.num_shards());
}

std::vector<std::string> BundleReader::ListKeys() const {
  std::vector<std::string> keys;
  for (const auto& entry : entries_) keys.push_back(entry.first);
  return keys;
}

absl::StatusOr<const tensorflow::BundleEntryProto*> BundleReader::Entry(
    const std::string& key) const {
  auto it = entries_.find(key);
  if (it != entries_.end()) return &it->second;
  std::vector<std::string> some;
  for (const auto& e : entries_) {
    if (some.size() == 8) {
      some.push_back("...");
      break;
    }
    some.push_back(e.first);
  }
  return NotFound("checkpoint '%s' has no tensor '%s'; it has %d: %s", index_path_, key,
                  entries_.size(), absl::StrJoin(some, ", "));
}

absl::StatusOr<std::string> BundleReader::ReadRecord(
    const std::string& key, const tensorflow::BundleEntryProto& entry, bool check_crc) const {
  if (entry.slices_size() > 0) {
    return Unimplemented("checkpoint '%s': tensor '%s' is partitioned into %d slices; tfjit "
                         "reads whole tensors only", index_path_, key, entry.slices_size());
  }
  const std::string path = DataPath(entry.shard_id());
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    return DataLoss("checkpoint data file '%s' (holding tensor '%s') is missing or unreadable",
                    path, key);
  }
  const int64_t file_size = static_cast<int64_t>(in.tellg());
  if (entry.offset() < 0 || entry.size() < 0 || entry.offset() > file_size ||
      entry.size() > file_size - entry.offset()) {
    return DataLoss("checkpoint data file '%s' is truncated: tensor '%s' needs bytes [%d, %d) "
                    "but the file has %d", path, key, entry.offset(),
                    entry.offset() + entry.size(), file_size);
  }
  std::string bytes(static_cast<size_t>(entry.size()), '\0');
  in.seekg(entry.offset());
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!in) {
    return DataLoss("checkpoint data file '%s': reading tensor '%s' (%d bytes at %d) failed",
                    path, key, entry.size(), entry.offset());
  }
  const uint32_t crc = crc32c::Value(bytes);
  if (check_crc && crc32c::Mask(crc) != entry.crc32c()) {
    return DataLoss("checkpoint data file '%s' is corrupt: tensor '%s' (%d bytes at offset %d) "
                    "fails its CRC32C check (stored 0x%08x, computed 0x%08x)",
                    path, key, entry.size(), entry.offset(), crc32c::Unmask(entry.crc32c()),
                    crc);
  }
  return bytes;
}

absl::StatusOr<Tensor> BundleReader::Lookup(const std::string& key) const {
  TFJIT_ASSIGN_OR_RETURN(const tensorflow::BundleEntryProto* entry, Entry(key));
  const std::optional<DType> dtype = DTypeFromTfEnum(entry->dtype());
  if (!dtype.has_value() || !IsNumericDType(*dtype)) {
    return Unimplemented("checkpoint '%s': tensor '%s' has dtype %s; tfjit restores numeric "
                         "tensors only", index_path_, key, TfDataTypeName(entry->dtype()));
  }
  absl::StatusOr<std::vector<int64_t>> dims = ShapeFromProto(entry->shape());
  if (!dims.ok()) {
    return DataLoss("checkpoint index '%s': tensor '%s' has a bad shape: %s", index_path_, key,
                    dims.status().message());
  }
  for (int64_t d : *dims) {
    if (d < 0) {
      return DataLoss("checkpoint index '%s': tensor '%s' has an unknown dimension", index_path_,
                      key);
    }
  }
  Tensor tensor(*dtype, *dims);
  if (static_cast<int64_t>(tensor.byte_size()) != entry->size()) {
    return DataLoss("checkpoint index '%s': tensor '%s' is %s (%d bytes) but its record in '%s' "
                    "is %d bytes", index_path_, key, tensor.ShapeString(), tensor.byte_size(),
                    DataPath(entry->shard_id()), entry->size());
  }
  TFJIT_ASSIGN_OR_RETURN(std::string bytes, ReadRecord(key, *entry, /*check_crc=*/true));
  if (!bytes.empty()) std::memcpy(tensor.raw_data(), bytes.data(), bytes.size());
  return tensor;
}

absl::StatusOr<std::vector<std::string>> BundleReader::LookupStrings(
    const std::string& key) const {
  TFJIT_ASSIGN_OR_RETURN(const tensorflow::BundleEntryProto* entry, Entry(key));
  if (entry->dtype() != tensorflow::DT_STRING) {
    return InvalidArgument("checkpoint '%s': tensor '%s' has dtype %s, not string", index_path_,
                           key, TfDataTypeName(entry->dtype()));
  }
  absl::StatusOr<std::vector<int64_t>> dims = ShapeFromProto(entry->shape());
  if (!dims.ok()) {
    return DataLoss("checkpoint index '%s': tensor '%s' has a bad shape", index_path_, key);
  }
  int64_t n = 1;
  for (int64_t d : *dims) {
    if (d < 0 || (d > 0 && n > (int64_t{1} << 40) / d)) {
      return DataLoss("checkpoint index '%s': tensor '%s' has a bad shape", index_path_, key);
    }
    n *= d;
  }
  // The entry's CRC is not over the record bytes but over the decoded lengths (see below).
  TFJIT_ASSIGN_OR_RETURN(std::string bytes, ReadRecord(key, *entry, /*check_crc=*/false));
  const std::string data_path = DataPath(entry->shard_id());
  auto corrupt = [&](const char* what) {
    return DataLoss("checkpoint data file '%s' is corrupt: string tensor '%s': %s", data_path,
                    key, what);
  };
  // [varint64 len]*n [masked crc32c of the lengths as LE uint32/uint64] [bytes]*n.
  std::vector<uint64_t> lengths;
  size_t pos = 0;
  uint32_t length_crc = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    if (!ReadVarint64(bytes, &pos, &len)) return corrupt("a length runs past the record");
    if (len > 0xffffffffu) {
      length_crc = crc32c::Extend(length_crc, &len, sizeof(len));
    } else {
      const uint32_t len32 = static_cast<uint32_t>(len);
      length_crc = crc32c::Extend(length_crc, &len32, sizeof(len32));
    }
    lengths.push_back(len);
  }
  if (n > 0) {
    if (bytes.size() - pos < 4) return corrupt("the length checksum is missing");
    if (crc32c::Mask(length_crc) != LoadLe32(bytes.data() + pos)) {
      return corrupt("the element lengths fail their checksum");
    }
  }
  // The whole-record CRC runs over the lengths (as above), the 4 stored checksum bytes and
  // then the element bytes.
  uint32_t record_crc = length_crc;
  if (n > 0) {
    record_crc = crc32c::Extend(record_crc, bytes.data() + pos, 4);
    pos += 4;
  }
  std::vector<std::string> out;
  for (uint64_t len : lengths) {
    if (len > bytes.size() - pos) return corrupt("an element runs past the record");
    out.emplace_back(bytes, pos, static_cast<size_t>(len));
    record_crc = crc32c::Extend(record_crc, bytes.data() + pos, static_cast<size_t>(len));
    pos += static_cast<size_t>(len);
  }
  if (pos != bytes.size()) return corrupt("trailing bytes after the last element");
  if (crc32c::Mask(record_crc) != entry->crc32c()) {
    return corrupt("the record fails its CRC32C check");
  }
  return out;
}

}  // namespace tfjit::tf
