// ObjectCache: key digest, the entry file format and its reader, writer and eviction.
#include "backends/cpu/object_cache.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backends/cpu/frame_plan.h"
#include "backends/llvm/target.h"
#include "codegen_id.h"
#include "compiler/hlo/printer.h"
#include "core/crc32c.h"
#include "core/file_system.h"
#include "core/logging.h"
#include "core/status.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/xxhash.h"

namespace tfjit::cpu {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'T', 'F', 'J', 'I', 'T', 'O', 'B', 'J'};
// 2: profile units; 3: packed constants; 4: several objects (codegen split over threads)
constexpr uint32_t kFormatVersion = 5;
constexpr char kSuffix[] = ".tfjit-obj";

// The module's array constants in a fixed order (module order of computations, post order
// within each): the key hashes their bytes in it, and plans name constants by index in it.
std::vector<const hlo::Instruction*> Constants(const hlo::Module& module) {
  std::vector<const hlo::Instruction*> out;
  for (const hlo::Computation* c : module.computations()) {
    for (const hlo::Instruction* inst : c->MakePostOrder()) {
      if (inst->opcode() == hlo::Opcode::kConstant && inst->shape().IsArray()) {
        out.push_back(inst);
      }
    }
  }
  return out;
}

void AppendDigest(std::string& out, llvm::ArrayRef<uint8_t> bytes) {
  const llvm::XXH128_hash_t h = llvm::xxh3_128bits(bytes);
  out.append(reinterpret_cast<const char*>(&h.low64), sizeof(h.low64));
  out.append(reinterpret_cast<const char*>(&h.high64), sizeof(h.high64));
}

llvm::ArrayRef<uint8_t> Bytes(absl::string_view s) {
  return llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// ---- Little-endian fields: writer and a reader that fails on truncation. ----

class Writer {
 public:
  void U32(uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void I64(int64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void F64(double v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void Str(absl::string_view s) {
    I64(static_cast<int64_t>(s.size()));
    out_.append(s.data(), s.size());
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(absl::string_view in) : in_(in) {}
  bool U32(uint32_t& v) { return Raw(&v, sizeof(v)); }
  bool I64(int64_t& v) { return Raw(&v, sizeof(v)); }
  bool F64(double& v) { return Raw(&v, sizeof(v)); }
  bool Str(std::string& s) {
    int64_t n = 0;
    if (!I64(n) || n < 0 || static_cast<uint64_t>(n) > in_.size()) return false;
    s.assign(in_.data(), static_cast<size_t>(n));
    in_.remove_prefix(static_cast<size_t>(n));
    return true;
  }
  // A count (at least `min_count`) and as many strings.
  bool Strs(std::vector<std::string>& v, int64_t min_count) {
    int64_t n = 0;
    if (!I64(n) || n < min_count || static_cast<uint64_t>(n) > in_.size()) return false;
    v.resize(static_cast<size_t>(n));
    for (std::string& s : v) {
      if (!Str(s)) return false;
    }
    return true;
  }
  bool done() const { return in_.empty(); }

 private:
  bool Raw(void* v, size_t n) {
    if (in_.size() < n) return false;
    std::memcpy(v, in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  absl::string_view in_;
};

}  // namespace

// BufferPlan's fields (a friend of BufferPlan). Constants are named by their index in
// Constants(module); output shapes come from the module's entry.
struct PlanCodec {
  static absl::Status Write(const BufferPlan& plan, const hlo::Module& module, Writer& w) {
    absl::flat_hash_map<const hlo::Instruction*, int64_t> index;
    const std::vector<const hlo::Instruction*> constants = Constants(module);
    for (size_t i = 0; i < constants.size(); ++i) index[constants[i]] = static_cast<int64_t>(i);
    auto constant_index = [&](const hlo::Instruction* c) -> absl::StatusOr<int64_t> {
      if (c == nullptr) return -1;
      auto it = index.find(c);
      if (it == index.end()) {
        return Internal("disk cache: constant '%s' is not one of module '%s'", c->name(),
                        module.name());
      }
      return it->second;
    };
    w.I64(plan.num_parameters_);
    w.I64(static_cast<int64_t>(plan.outputs_.size()));
    for (const OutputSource& o : plan.outputs_) {
      w.I64(o.written_by_kernel ? 1 : 0);
      w.I64(o.copy_from.id);
      TFJIT_ASSIGN_OR_RETURN(int64_t c, constant_index(o.copy_from.constant));
      w.I64(c);
    }
    w.I64(static_cast<int64_t>(plan.buffers_.size()));
    for (const BufferPlan::Buffer& b : plan.buffers_) {
      w.I64(b.bytes);
      w.I64(b.offset);
      w.I64(b.unit_offset);
      w.I64(b.output);
      TFJIT_ASSIGN_OR_RETURN(int64_t c, constant_index(b.is_constant ? b.constant_inst : nullptr));
      w.I64(c);
      w.I64(b.packing.blocks);
      w.I64(b.packing.k);
      w.I64(b.packing.n);
      w.I64(b.packing.stride);
    }
    w.I64(plan.arena_bytes_);
    w.I64(plan.unshared_bytes_);
    w.I64(plan.unit_bytes_);
    w.I64(plan.symbolic_ ? 1 : 0);
    return absl::OkStatus();
  }

  static bool Read(Reader& r, const hlo::Module& module, BufferPlan& plan) {
    const std::vector<const hlo::Instruction*> constants = Constants(module);
    auto constant_at = [&](int64_t i, const hlo::Instruction*& out) {
      if (i == -1) {
        out = nullptr;
        return true;
      }
      if (i < 0 || i >= static_cast<int64_t>(constants.size())) return false;
      out = constants[static_cast<size_t>(i)];
      return true;
    };
    const hlo::Computation* entry = module.entry();
    if (entry == nullptr || entry->root() == nullptr) return false;
    int64_t num_parameters = 0, num_outputs = 0, num_buffers = 0;
    if (!r.I64(num_parameters) || num_parameters != entry->num_parameters()) return false;
    const std::vector<hlo::Shape> shapes = LeafShapes(entry->root()->shape());
    if (!r.I64(num_outputs) || num_outputs != static_cast<int64_t>(shapes.size())) return false;
    plan = BufferPlan(static_cast<int>(num_parameters), shapes);
    for (OutputSource& o : plan.outputs_) {
      int64_t written = 0, slot = 0, c = 0;
      if (!r.I64(written) || !r.I64(slot) || !r.I64(c) || !constant_at(c, o.copy_from.constant)) {
        return false;
      }
      o.written_by_kernel = written != 0;
      o.copy_from.id = static_cast<int>(slot);
    }
    if (!r.I64(num_buffers) || num_buffers < 0 || num_buffers > (int64_t{1} << 24)) return false;
    for (int64_t i = 0; i < num_buffers; ++i) {
      BufferPlan::Buffer b;
      int64_t output = 0, c = 0;
      gemm::Packing& pk = b.packing;
      if (!r.I64(b.bytes) || !r.I64(b.offset) || !r.I64(b.unit_offset) || !r.I64(output) ||
          !r.I64(c) || !constant_at(c, b.constant_inst) || b.bytes < 0 || b.offset < 0 ||
          b.unit_offset < 0 || !r.I64(pk.blocks) || !r.I64(pk.k) || !r.I64(pk.n) ||
          !r.I64(pk.stride)) {
        return false;
      }
      b.output = static_cast<int>(output);
      if (b.output >= static_cast<int>(num_outputs)) return false;
      if (pk.blocks != 0) {
        // Packed again from the module's constant (the layout is this host's, as the key
        // says): it must read inside the constant and be a packing this CPU does.
        if (b.constant_inst == nullptr || pk.blocks < 0 || pk.k <= 0 || pk.n <= 0 ||
            pk.stride < 0 || b.constant_inst->shape().element_type() != DType::kFloat32 ||
            gemm::PackedBlockFloats(pk.k, pk.n) == 0 ||
            (pk.blocks - 1) * pk.stride + pk.k * pk.n > b.constant_inst->shape().num_elements()) {
          return false;
        }
        b.is_constant = true;
        b.constant = BufferPlan::PackConstant(b.constant_inst, pk);
        plan.packed_slots_[std::make_tuple(b.constant_inst, pk.blocks, pk.k, pk.n, pk.stride)] =
            plan.num_slots();
      } else if (b.constant_inst != nullptr) {
        b.is_constant = true;
        b.constant = b.constant_inst->literal().tensor();
        plan.constant_slots_[b.constant_inst] = plan.num_slots();
      }
      plan.buffers_.push_back(std::move(b));
    }
    int64_t symbolic = 0;
    if (!r.I64(plan.arena_bytes_) || !r.I64(plan.unshared_bytes_) || plan.arena_bytes_ < 0 ||
        !r.I64(plan.unit_bytes_) || plan.unit_bytes_ < 0 || !r.I64(symbolic) ||
        (symbolic != 0) != (module.batch_representative() != 0)) {
      return false;
    }
    plan.symbolic_ = symbolic != 0;
    // Every slot compiled code or Run will index must exist, and arena buffers fit the arena.
    for (const OutputSource& o : plan.outputs_) {
      if (!o.written_by_kernel && o.copy_from.constant == nullptr &&
          (o.copy_from.id < 0 || o.copy_from.id >= plan.num_slots())) {
        return false;
      }
    }
    // (A symbolic plan's at its module's representative batch size, where `bytes` holds.)
    const int64_t batch = module.batch_representative();
    if (batch < 0 || batch > (int64_t{1} << 20)) return false;
    for (const BufferPlan::Buffer& b : plan.buffers_) {
      if (!b.is_constant && b.output < 0 &&
          (b.unit_offset > (int64_t{1} << 40) || plan.unit_bytes_ > (int64_t{1} << 40) ||
           b.offset + b.unit_offset * batch + b.bytes > plan.arena_bytes(batch))) {
        return false;
      }
    }
    return true;
  }
};

ObjectCache::ObjectCache(std::string dir, int64_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {}

std::string ObjectCache::Key(const hlo::Module& module, absl::string_view options) {
  const llvm_ir::HostTarget& host = llvm_ir::GetHostTarget();
  hlo::PrintOptions print;
  print.canonical = true;
  print.print_literal_values = false;
  const std::string text =
      absl::StrCat("tfjit-cpu-object ", kFormatVersion, "\ncodegen ", TFJIT_CODEGEN_ID, "\nllvm ",
                   LLVM_VERSION_STRING, "\nhost ", host.triple, " ", host.cpu, " ", host.features,
                   "\noptions ", options, "\n", hlo::PrintModule(module, print));
  std::string digests;
  AppendDigest(digests, Bytes(text));
  for (const hlo::Instruction* c : Constants(module)) {
    const Tensor& t = c->literal().tensor();
    AppendDigest(digests, llvm::ArrayRef<uint8_t>(static_cast<const uint8_t*>(t.raw_data()),
                                                  static_cast<size_t>(t.byte_size())));
  }
  const llvm::XXH128_hash_t key = llvm::xxh3_128bits(Bytes(digests));
  return absl::StrFormat("%016x%016x", key.high64, key.low64);
}

std::string ObjectCache::ObjectsKey(absl::string_view what, absl::string_view cpu,
                                    absl::string_view features) {
  const std::string text =
      absl::StrCat("tfjit-cpu-objects ", kFormatVersion, "\ncodegen ", TFJIT_CODEGEN_ID, "\nllvm ",
                   LLVM_VERSION_STRING, "\ntriple ", llvm_ir::GetHostTarget().triple, "\ntarget ",
                   cpu, " ", features, "\n", what);
  const llvm::XXH128_hash_t key = llvm::xxh3_128bits(Bytes(text));
  return absl::StrFormat("%016x%016x", key.high64, key.low64);
}

std::string ObjectCache::PathOf(const std::string& key) const {
  return (fs::path(dir_) / absl::StrCat(key, kSuffix)).string();
}

std::optional<std::string> ObjectCache::LoadBlob(const std::string& key) const {
  const std::string path = PathOf(key);
  absl::StatusOr<std::string> read = Files().ReadFile(path);
  if (!read.ok()) {
    if (read.status().code() != absl::StatusCode::kNotFound) {  // else: not cached (yet)
      Log(LogLevel::kWarning, "disk cache: %s; compiling instead", read.status().message());
    }
    return std::nullopt;
  }
  const std::string& file = *read;
  // A damaged entry goes, so that the compile that follows can publish a good one (entries
  // are published once and never rewritten in place: StoreBlob).
  auto damaged = [&](absl::string_view why) -> std::optional<std::string> {
    Log(LogLevel::kWarning, "disk cache: ignoring '%s' (%s); compiling instead", path, why);
    (void)Files().Remove(path);
    return std::nullopt;
  };
  if (file.size() < sizeof(kMagic) ||
      file.compare(0, sizeof(kMagic), kMagic, sizeof(kMagic)) != 0) {
    return damaged("not a tfjit object file");
  }
  Reader r(absl::string_view(file).substr(sizeof(kMagic)));
  uint32_t version = 0, crc = 0;
  std::string stored_key, payload;
  if (!r.U32(version)) return damaged("truncated");
  if (version != kFormatVersion) return damaged(absl::StrCat("format version ", version));
  if (!r.Str(stored_key) || !r.Str(payload) || !r.U32(crc) || !r.done()) {
    return damaged("truncated");
  }
  if (stored_key != key) return damaged("written for another key");
  if (crc32c::Value(payload) != crc) return damaged("checksum mismatch");
  // Least recently used eviction: a hit makes the file recent.
  std::error_code ignored;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ignored);
  return payload;
}

std::optional<CachedObject> ObjectCache::Load(const std::string& key,
                                              const hlo::Module& module) const {
  std::optional<std::string> payload = LoadBlob(key);
  if (!payload.has_value()) return std::nullopt;
  auto damaged = [&]() -> std::optional<CachedObject> {
    Log(LogLevel::kWarning, "disk cache: ignoring '%s' (malformed payload); compiling instead",
        PathOf(key));
    return std::nullopt;
  };
  CachedObject entry;
  Reader p(*payload);
  backends::CompileStats& s = entry.stats;
  int64_t kernels = 0;
  if (!p.F64(s.optimize_ms) || !p.F64(s.codegen_ms) || !p.I64(kernels) || !p.I64(s.flops) ||
      !p.I64(s.temp_bytes) || !p.I64(s.temp_bytes_unshared) ||
      !PlanCodec::Read(p, module, entry.plan)) {
    return damaged();
  }
  if (!p.Strs(entry.profile_units, 0) || !p.Strs(entry.objects, 1) || !p.done()) {
    return damaged();
  }
  s.num_kernels = static_cast<int>(kernels);
  return entry;
}

std::optional<std::vector<std::string>> ObjectCache::LoadObjects(const std::string& key) const {
  std::optional<std::string> payload = LoadBlob(key);
  if (!payload.has_value()) return std::nullopt;
  std::vector<std::string> objects;
  Reader p(*payload);
  if (!p.Strs(objects, 1) || !p.done()) {
    Log(LogLevel::kWarning, "disk cache: ignoring '%s' (malformed payload); compiling instead",
        PathOf(key));
    return std::nullopt;
  }
  return objects;
}

absl::Status ObjectCache::Store(const std::string& key, const hlo::Module& module,
                                const CachedObject& entry) const {
  Writer p;
  const backends::CompileStats& s = entry.stats;
  p.F64(s.optimize_ms);
  p.F64(s.codegen_ms);
  p.I64(s.num_kernels);
  p.I64(s.flops);
  p.I64(s.temp_bytes);
  p.I64(s.temp_bytes_unshared);
  TFJIT_RETURN_IF_ERROR(PlanCodec::Write(entry.plan, module, p));
  p.I64(static_cast<int64_t>(entry.profile_units.size()));
  for (const std::string& unit : entry.profile_units) p.Str(unit);
  p.I64(static_cast<int64_t>(entry.objects.size()));
  for (const std::string& object : entry.objects) p.Str(object);
  return StoreBlob(key, p.out());
}

absl::Status ObjectCache::StoreObjects(const std::string& key,
                                       const std::vector<std::string>& objects) const {
  Writer p;
  p.I64(static_cast<int64_t>(objects.size()));
  for (const std::string& object : objects) p.Str(object);
  return StoreBlob(key, p.out());
}

absl::Status ObjectCache::StoreBlob(const std::string& key, absl::string_view payload) const {
  Writer file;
  file.out().append(kMagic, sizeof(kMagic));
  file.U32(kFormatVersion);
  file.Str(key);
  file.Str(payload);
  file.U32(crc32c::Value(payload));

  if (absl::Status dir = Files().CreateDirectories(dir_); !dir.ok()) {
    return FailedPrecondition("cannot create the disk cache directory '%s': %s", dir_,
                              dir.message());
  }
  // Published once: of several processes storing one key at a time exactly one file wins,
  // and no reader ever sees a file being written (a temporary name until it is complete).
  const std::string path = PathOf(key);
  absl::StatusOr<Published> published = WriteFileAtomically(path, file.out(), /*replace=*/false);
  if (!published.ok()) {
    return FailedPrecondition("cannot write the disk cache file '%s': %s", path,
                              published.status().message());
  }
  if (*published == Published::kExisted) {
    Log(LogLevel::kInfo, "disk cache: '%s' was stored by another compile first", path);
    return absl::OkStatus();
  }
  Evict(static_cast<int64_t>(file.out().size()));
  return absl::OkStatus();
}

namespace {

// What this process knows of a cache directory's size: its bytes at the last scan plus what
// it stored since. Scanning stats every entry, which in a folder of 10,000 entries costs more
// than the compile it follows, so a store scans only when this estimate passes the cap, or
// after kRescanEvery stores (other processes write to the folder too).
struct DirectoryTally {
  bool scanned = false;
  int64_t bytes = 0;
  int stores_since_scan = 0;
};
constexpr int kRescanEvery = 256;

// A std::mutex, not absl::Mutex: TSan sees pthread locks, not the uninstrumented abseil's
// (docs/RELIABILITY.md, "TSan and Debian's libraries").
std::mutex& TallyMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}
absl::flat_hash_map<std::string, DirectoryTally>& Tallies() {
  static auto* tallies = new absl::flat_hash_map<std::string, DirectoryTally>();
  return *tallies;
}

}  // namespace

void ObjectCache::Remove(const std::string& key) const { (void)Files().Remove(PathOf(key)); }

void ObjectCache::Evict(int64_t stored_bytes) const {
  if (max_bytes_ <= 0) return;
  std::lock_guard<std::mutex> lock(TallyMutex());
  DirectoryTally& tally = Tallies()[dir_];
  if (tally.scanned && tally.stores_since_scan < kRescanEvery &&
      tally.bytes + stored_bytes <= max_bytes_) {
    tally.bytes += stored_bytes;
    ++tally.stores_since_scan;
    return;
  }
  struct File {
    fs::file_time_type time;
    int64_t bytes;
    fs::path path;
  };
  std::vector<File> files;
  int64_t total = 0;
  std::error_code error;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, error)) {
    if (e.path().extension() != kSuffix) continue;
    std::error_code e1, e2;
    const auto size = e.file_size(e1);
    const auto time = e.last_write_time(e2);
    if (e1 || e2) continue;
    files.push_back({time, static_cast<int64_t>(size), e.path()});
    total += static_cast<int64_t>(size);
  }
  if (total > max_bytes_) {
    std::sort(files.begin(), files.end(),
              [](const File& a, const File& b) { return a.time < b.time; });
    for (const File& f : files) {
      if (total <= max_bytes_) break;
      if (fs::remove(f.path, error)) total -= f.bytes;
    }
  }
  tally = DirectoryTally{true, total, 0};
}

}  // namespace tfjit::cpu
