// Tensor bundle reader (see tensor_bundle.h and shared/docs/formats.md section 2).
#include "frontend/tensor_bundle.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/crc32c.h"
#include "core/dtype.h"
#include "core/file_system.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "frontend/tensor_proto.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"

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

uint32_t LoadLe32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // the bundle is little-endian and so is every host tfjit runs on
  return v;
}

// A varint32/64 in `data` at *pos (LevelDB's and protobuf's encoding); false when it runs
// past the end or is longer than 10 bytes.
bool GetVarint(absl::string_view data, size_t* pos, uint64_t* out) {
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

// LevelDB allocates every block it reads at the size its block handle claims, before reading
// (table/format.cc ReadBlock), and the footer that holds the index block's handle carries no
// checksum. So a corrupt or hostile index could make it allocate up to 2^64 bytes. This checks
// the footer's handles, and the data-block handles of an uncompressed index block, against
// the file size first. Anything this walk cannot parse is left to LevelDB, which reports it as
// corruption.
absl::Status CheckTableHandles(const std::string& path, const std::string& file) {
  constexpr size_t kFooterSize = 48;         // 2 handles of <= 20 bytes, padding, 8-byte magic
  constexpr uint64_t kBlockTrailerSize = 5;  // compression type byte + CRC32C
  if (file.size() < kFooterSize) return absl::OkStatus();
  const uint64_t size = file.size();
  auto bad = [&](const char* what, uint64_t offset, uint64_t n) {
    return DataLoss(
        "checkpoint index '%s' is corrupt: %s block at offset %d with %d bytes lies "
        "outside the %d-byte file",
        path, what, offset, n, size);
  };
  auto fits = [&](uint64_t offset, uint64_t n) {
    return n <= size && offset <= size - n && size - n - offset >= kBlockTrailerSize;
  };
  absl::string_view footer(file.data() + size - kFooterSize, kFooterSize);
  size_t pos = 0;
  uint64_t meta_offset = 0, meta_size = 0, index_offset = 0, index_size = 0;
  if (!GetVarint(footer, &pos, &meta_offset) || !GetVarint(footer, &pos, &meta_size) ||
      !GetVarint(footer, &pos, &index_offset) || !GetVarint(footer, &pos, &index_size)) {
    return absl::OkStatus();
  }
  if (!fits(meta_offset, meta_size)) return bad("the metaindex", meta_offset, meta_size);
  if (!fits(index_offset, index_size)) return bad("the index", index_offset, index_size);
  // Block trailer type 0 = uncompressed; a Snappy index block is only checked by LevelDB.
  if (file[index_offset + index_size] != 0 || index_size < 4) return absl::OkStatus();
  absl::string_view block(file.data() + index_offset, index_size);
  const uint32_t num_restarts = LoadLe32(block.data() + block.size() - 4);
  if (num_restarts > (block.size() - 4) / 4) return absl::OkStatus();
  const size_t entries_end = block.size() - 4 - 4 * static_cast<size_t>(num_restarts);
  pos = 0;
  while (pos < entries_end) {
    uint64_t shared = 0, non_shared = 0, value_len = 0;
    if (!GetVarint(block, &pos, &shared) || !GetVarint(block, &pos, &non_shared) ||
        !GetVarint(block, &pos, &value_len) || non_shared > entries_end - pos ||
        value_len > entries_end - pos - non_shared) {
      return absl::OkStatus();
    }
    pos += non_shared;
    absl::string_view value = block.substr(pos, value_len);
    pos += value_len;
    size_t vpos = 0;
    uint64_t offset = 0, n = 0;
    if (!GetVarint(value, &vpos, &offset) || !GetVarint(value, &vpos, &n)) {
      return absl::OkStatus();
    }
    if (!fits(offset, n)) return bad("a data", offset, n);
  }
  return absl::OkStatus();
}

// An index file's bytes, as the LevelDB table reader reads them.
class IndexBytes : public leveldb::RandomAccessFile {
 public:
  explicit IndexBytes(std::string bytes) : bytes_(std::move(bytes)) {}
  uint64_t size() const { return bytes_.size(); }
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* /*scratch*/) const override {
    if (offset > bytes_.size()) {
      *result = leveldb::Slice();
      return leveldb::Status::IOError("read past the end of the index");
    }
    *result = leveldb::Slice(bytes_.data() + offset, std::min<uint64_t>(n, bytes_.size() - offset));
    return leveldb::Status::OK();
  }

 private:
  std::string bytes_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(const std::string& prefix) {
  std::unique_ptr<BundleReader> reader(new BundleReader());
  reader->prefix_ = prefix;
  reader->index_path_ = absl::StrCat(prefix, ".index");
  const std::string& path = reader->index_path_;

  // Index files are small (one entry per variable): read whole through the file seam
  // (core/file_system.h), checked, then parsed by LevelDB from memory.
  absl::StatusOr<std::string> bytes = Files().ReadFile(path);
  if (!bytes.ok()) {
    return NotFound("checkpoint index '%s' does not exist or cannot be read (%s)", path,
                    bytes.status().message());
  }
  TFJIT_RETURN_IF_ERROR(CheckTableHandles(path, *bytes));
  IndexBytes file(std::move(*bytes));
  leveldb::Options options;
  options.paranoid_checks = true;
  leveldb::Table* raw_table = nullptr;
  leveldb::Status s = leveldb::Table::Open(options, &file, file.size(), &raw_table);
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
        return DataLoss("checkpoint index '%s': the header entry is not a BundleHeaderProto", path);
      }
      have_header = true;
      continue;
    }
    tensorflow::BundleEntryProto entry;
    if (!entry.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
      return DataLoss(
          "checkpoint index '%s': the entry of tensor '%s' is not a "
          "BundleEntryProto",
          path, key);
    }
    reader->entries_.emplace(key, std::move(entry));
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), path);
  if (!have_header) {
    return DataLoss(
        "checkpoint index '%s' has no header entry (key \"\"); not a TF tensor "
        "bundle index",
        path);
  }
  const tensorflow::BundleHeaderProto& h = reader->header_;
  if (h.endianness() != tensorflow::BundleHeaderProto::LITTLE) {
    return Unimplemented(
        "checkpoint '%s' was written big-endian; tfjit reads little-endian "
        "bundles only",
        path);
  }
  if (h.version().min_consumer() > kBundleVersion) {
    return InvalidArgument(
        "checkpoint '%s' needs a bundle reader of version >= %d (this one "
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
  return BundleDataPath(prefix_, shard, header_.num_shards());
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

absl::StatusOr<std::string> BundleReader::ReadRecord(const std::string& key,
                                                     const tensorflow::BundleEntryProto& entry,
                                                     bool check_crc) const {
  if (entry.slices_size() > 0) {
    return Unimplemented(
        "checkpoint '%s': tensor '%s' is partitioned into %d slices; tfjit "
        "reads whole tensors only",
        index_path_, key, entry.slices_size());
  }
  const std::string path = DataPath(entry.shard_id());
  if (entry.offset() < 0 || entry.size() < 0) {
    return DataLoss("checkpoint index '%s': tensor '%s' has a negative offset or size", index_path_,
                    key);
  }
  absl::StatusOr<std::string> read = Files().ReadFileRange(
      path, static_cast<uint64_t>(entry.offset()), static_cast<uint64_t>(entry.size()));
  if (!read.ok()) {
    if (read.status().code() == absl::StatusCode::kOutOfRange) {
      return DataLoss(
          "checkpoint data file '%s' is truncated: tensor '%s' needs bytes [%d, %d): %s", path, key,
          entry.offset(), entry.offset() + entry.size(), read.status().message());
    }
    return DataLoss("checkpoint data file '%s' (holding tensor '%s') is missing or unreadable: %s",
                    path, key, read.status().message());
  }
  std::string bytes = std::move(*read);
  const uint32_t crc = crc32c::Value(bytes);
  if (check_crc && crc32c::Mask(crc) != entry.crc32c()) {
    return DataLoss(
        "checkpoint data file '%s' is corrupt: tensor '%s' (%d bytes at offset %d) "
        "fails its CRC32C check (stored 0x%08x, computed 0x%08x)",
        path, key, entry.size(), entry.offset(), crc32c::Unmask(entry.crc32c()), crc);
  }
  return bytes;
}

absl::StatusOr<Tensor> BundleReader::Lookup(const std::string& key) const {
  TFJIT_ASSIGN_OR_RETURN(const tensorflow::BundleEntryProto* entry, Entry(key));
  const std::optional<DType> dtype = DTypeFromTfEnum(entry->dtype());
  if (!dtype.has_value() || !IsNumericOrComplexDType(*dtype)) {
    return Unimplemented(
        "checkpoint '%s': tensor '%s' has dtype %s; tfjit restores numeric "
        "tensors only",
        index_path_, key, TfDataTypeName(entry->dtype()));
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
  // The shape is checked (overflow, LoaderLimits) and matched against the record size and the
  // data file before the tensor is allocated: a corrupt index must not cost its declared size.
  absl::StatusOr<int64_t> n = CheckedNumElements(*dtype, *dims);
  if (!n.ok()) {
    const std::string context =
        absl::StrCat("checkpoint index '", index_path_, "': tensor '", key, "'");
    if (n.status().code() == absl::StatusCode::kResourceExhausted) {
      return WithContext(n.status(), context);
    }
    return DataLoss("%s has a bad shape: %s", context, n.status().message());
  }
  const int64_t byte_size = *n * static_cast<int64_t>(DTypeSize(*dtype));
  if (byte_size != entry->size()) {
    return DataLoss(
        "checkpoint index '%s': tensor '%s' is %s[%s] (%d bytes) but its record in "
        "'%s' is %d bytes",
        index_path_, key, DTypeName(*dtype), absl::StrJoin(*dims, ","), byte_size,
        DataPath(entry->shard_id()), entry->size());
  }
  TFJIT_ASSIGN_OR_RETURN(std::string bytes, ReadRecord(key, *entry, /*check_crc=*/true));
  Tensor tensor(*dtype, *dims);
  if (!bytes.empty()) std::memcpy(tensor.raw_data(), bytes.data(), bytes.size());
  return tensor;
}

absl::StatusOr<std::vector<std::string>> BundleReader::LookupStrings(const std::string& key) const {
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
    return DataLoss("checkpoint data file '%s' is corrupt: string tensor '%s': %s", data_path, key,
                    what);
  };
  // [varint64 len]*n [masked crc32c of the lengths as LE uint32/uint64] [bytes]*n.
  std::vector<uint64_t> lengths;
  size_t pos = 0;
  uint32_t length_crc = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    if (!GetVarint(bytes, &pos, &len)) return corrupt("a length runs past the record");
    if (len > 0xffffffffu) {
      length_crc = crc32c::Extend(length_crc, &len, sizeof(len));
    } else {
      const uint32_t len32 = static_cast<uint32_t>(len);
      length_crc = crc32c::Extend(length_crc, &len32, sizeof(len32));
    }
    lengths.push_back(len);
  }
  // TF writes the checksum for every string tensor, empty ones included.
  const bool has_checksum = n > 0 || bytes.size() - pos >= 4;
  if (has_checksum) {
    if (bytes.size() - pos < 4) return corrupt("the length checksum is missing");
    if (crc32c::Mask(length_crc) != LoadLe32(bytes.data() + pos)) {
      return corrupt("the element lengths fail their checksum");
    }
  }
  // The whole-record CRC runs over the lengths (as above), the 4 stored checksum bytes and
  // then the element bytes.
  uint32_t record_crc = length_crc;
  if (has_checksum) {
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

absl::StatusOr<Tensor> BundleReader::LookupAny(const std::string& key) const {
  TFJIT_ASSIGN_OR_RETURN(const tensorflow::BundleEntryProto* entry, Entry(key));
  if (entry->dtype() != tensorflow::DT_STRING) return Lookup(key);
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> values, LookupStrings(key));
  absl::StatusOr<std::vector<int64_t>> dims = ShapeFromProto(entry->shape());
  if (!dims.ok()) {
    return DataLoss("checkpoint index '%s': tensor '%s' has a bad shape", index_path_, key);
  }
  return MakeStringTensor(*std::move(dims), std::move(values));
}

std::string BundleDataPath(const std::string& prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

namespace {

void PutVarint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutLe32(std::string* out, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out->append(b, 4);
}

// A string tensor's record (formats.md 2.5, TF's WriteStringTensor): the lengths as varints,
// the masked CRC32C of the lengths (each as a little-endian uint32, or uint64 past 2^32), then
// the bytes. Returns the record's CRC: one running CRC over the lengths, the 4 stored bytes
// and the bytes.
uint32_t AppendStringRecord(const std::vector<std::string>& values, std::string* out) {
  uint32_t crc = 0;
  for (const std::string& v : values) {
    const uint64_t len = v.size();
    PutVarint64(out, len);
    if (len > 0xffffffffu) {
      crc = crc32c::Extend(crc, &len, sizeof(len));
    } else {
      const uint32_t len32 = static_cast<uint32_t>(len);
      crc = crc32c::Extend(crc, &len32, sizeof(len32));
    }
  }
  const uint32_t masked = crc32c::Mask(crc);
  PutLe32(out, masked);
  crc = crc32c::Extend(crc, &masked, sizeof(masked));
  for (const std::string& v : values) {
    out->append(v);
    crc = crc32c::Extend(crc, v.data(), v.size());
  }
  return crc;
}

// Writes `bytes` to `path` (a temporary name), naming `final_path` in errors; through the
// process's file system (core/file_system.h), so tests can make it fail.
absl::Status WriteFile(const std::string& path, const std::string& bytes,
                       const std::string& final_path) {
  absl::Status written = Files().WriteFile(path, bytes);
  if (written.ok()) return absl::OkStatus();
  (void)Files().Remove(path);
  return InvalidArgument(
      "checkpoint '%s': writing %d bytes failed: %s (is the folder there and writable, and "
      "is there room on the disk?)",
      final_path, bytes.size(), written.message());
}

absl::Status Rename(const std::string& from, const std::string& to) {
  absl::Status renamed = Files().Rename(from, to);
  if (renamed.ok()) return absl::OkStatus();
  (void)Files().Remove(from);
  return InvalidArgument("checkpoint '%s': cannot rename '%s' to it: %s", to, from,
                         renamed.message());
}

// LevelDB's table builder writing into memory: the index is then written like the data.
class StringFile : public leveldb::WritableFile {
 public:
  leveldb::Status Append(const leveldb::Slice& data) override {
    bytes_.append(data.data(), data.size());
    return leveldb::Status::OK();
  }
  leveldb::Status Close() override { return leveldb::Status::OK(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return leveldb::Status::OK(); }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace

absl::Status BundleWriter::Add(const std::string& key, const Tensor& tensor) {
  if (key.empty()) {
    return InvalidArgument(
        "checkpoint '%s': a tensor's key must not be empty (\"\" holds the "
        "header)",
        prefix_);
  }
  if (entries_.count(key) != 0) {
    return InvalidArgument("checkpoint '%s': tensor '%s' is added twice", prefix_, key);
  }
  tensorflow::BundleEntryProto entry;
  entry.set_dtype(static_cast<tensorflow::DataType>(DTypeToTfEnum(tensor.dtype())));
  *entry.mutable_shape() = ShapeToProto(tensor.dims());
  entry.set_shard_id(0);
  entry.set_offset(static_cast<int64_t>(data_.size()));
  uint32_t crc = 0;
  if (const std::vector<std::string>* strings = StringValues(tensor)) {
    crc = AppendStringRecord(*strings, &data_);
  } else if (DTypeSize(tensor.dtype()) > 0 && tensor.valid()) {
    const char* bytes = static_cast<const char*>(tensor.raw_data());
    data_.append(bytes, tensor.byte_size());
    crc = crc32c::Value(bytes, tensor.byte_size());
  } else {
    return InvalidArgument("checkpoint '%s': tensor '%s' is %s, which a checkpoint cannot hold",
                           prefix_, key, tensor.ShapeString());
  }
  entry.set_size(static_cast<int64_t>(data_.size()) - entry.offset());
  entry.set_crc32c(crc32c::Mask(crc));
  entries_.emplace(key, std::move(entry));
  return absl::OkStatus();
}

absl::Status BundleWriter::Finish() {
  const std::string data_path = BundleDataPath(prefix_, 0, 1);
  const std::string index_path = absl::StrCat(prefix_, ".index");
  // Temporary names in the same folder, so the renames stay on one file system.
  static std::atomic<int> counter{0};
  const std::string suffix =
      absl::StrFormat(".tempstate%d_%d", static_cast<int>(getpid()), counter.fetch_add(1));
  const std::string data_tmp = data_path + suffix, index_tmp = index_path + suffix;
  TFJIT_RETURN_IF_ERROR(WriteFile(data_tmp, data_, data_path));

  tensorflow::BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(tensorflow::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(1);
  StringFile index;
  leveldb::Options options;
  options.compression = leveldb::kNoCompression;  // TF's BundleWriter (formats.md 2.3)
  options.block_restart_interval = 16;
  options.block_size = 262144;
  leveldb::Status s;
  {
    leveldb::TableBuilder builder(options, &index);
    builder.Add("", header.SerializeAsString());
    for (const auto& [key, entry] : entries_) builder.Add(key, entry.SerializeAsString());
    s = builder.Finish();
  }
  if (!s.ok()) {
    (void)Files().Remove(data_tmp);
    return Internal("checkpoint '%s': building the index failed: %s", index_path, s.ToString());
  }
  if (absl::Status written = WriteFile(index_tmp, index.bytes(), index_path); !written.ok()) {
    (void)Files().Remove(data_tmp);
    return written;
  }
  // The data first, then the index that points into it: a reader that finds the new index
  // finds the new data. (A failure between the two renames leaves the new data under the old

  if (absl::Status renamed = Rename(data_tmp, data_path); !renamed.ok()) {
    (void)Files().Remove(index_tmp);
    return renamed;
  }
  return Rename(index_tmp, index_path);
}

}  // namespace tfjit::tf
